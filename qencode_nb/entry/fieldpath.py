"""How an entry error names a field and shows a value: one place for both.

A field is named by its full path from the file's root (``results.vqe.nfev``), a list
item by its index (``artifacts.qubit_hamiltonian.pauli_terms[3].coefficient``) and a key
that is not a plain name by its repr (``problem['a.b']``); a value is shown shortened
(:func:`shown`: long strings, big containers, deep nesting and integers of thousands of
digits cut to a few dozen characters), so that an error message stays one line.
:func:`fits_float` is the reader's one rule for a number's size.
"""

from __future__ import annotations

import re
import reprlib

#: A key written after a dot; any other key is written as ``['key']``.
PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

#: The longest key written after a dot (a longer one is written shortened, as a repr).
MAX_NAME = 40

#: Characters a value takes in a message at most.
SHOWN_CHARS = 60


def join_field(where: str, key) -> str:
    """The path of member ``key`` of the field at ``where`` (``""``: the file's root;
    a key longer than :data:`MAX_NAME` is shown shortened):
    ``join_field("results.vqe", "nfev") == "results.vqe.nfev"``,
    ``join_field("a.pauli_terms", 3) == "a.pauli_terms[3]"``,
    ``join_field("problem", "a.b") == "problem['a.b']"``."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{where}[{key}]"
    if isinstance(key, str) and len(key) <= MAX_NAME and PLAIN_NAME.match(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{shown(key, MAX_NAME)}]"


def shown(value, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters (nested containers to two levels and
    four members, an integer too long for Python to write in full by its bit length)."""
    short = reprlib.Repr()
    short.maxlevel = 2
    short.maxdict = short.maxlist = short.maxtuple = 4
    short.maxstring = short.maxother = limit    # a string keeps both quotes
    short.maxlong = min(40, limit)
    try:
        text = short.repr(value)
    except ValueError:      # an int over sys.get_int_max_str_digits() digits
        text = f"<an integer of {value.bit_length()} bits>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fits_float(value) -> bool:
    """``value`` (an int or a float) converts to a float: a float (NaN and infinities
    included: the checks that read a number name them), or an integer within the float
    range (``float(10**400)`` raises OverflowError)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True
