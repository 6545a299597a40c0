"""QEncode's Pauli-string format (QEncode schema 4.0.0,
artifacts.qubit_hamiltonian.pauli_terms): ``{"pauli_string": "Z0Z1X3",
"coefficient": float}`` (Ha), the identity as ``"I"``; parsed, formatted and
validated here without PennyLane (written by ``serialize_hamiltonian`` of the
public generator).  Conversion to PennyLane operators is
:mod:`qencode_nb.hamiltonian.pauli`.
"""

from __future__ import annotations

import numbers
import operator
import re

from qencode_nb.entry.fieldpath import fits_float, shown
from qencode_nb.errors import EntryError

_TERM = re.compile(r"([XYZ])(\d+)")
_STRING = re.compile(r"^(I|([XYZ]\d+)+)$")


#: Where a stored Hamiltonian's terms are (QEncode schema 4.0.0 and 3.0.0).
TERMS_FIELD = "artifacts.qubit_hamiltonian.pauli_terms"

#: The accepted form of a Pauli string, as the messages say it.
ACCEPTED_STRING = ("'I' or a product such as 'Z0Z1X3' (letters X/Y/Z, integer wires, "
                   "each wire once)")


def parse_pauli_string(pauli_string: str,
                       field: str = f"{TERMS_FIELD}[].pauli_string") -> dict[int, str]:
    """Parse one QEncode Pauli string into ``{wire: "X"|"Y"|"Z"}``.

    ``"I"`` is the identity (empty dict).

    Raises:
        EntryError: the string is malformed or names a wire twice (naming ``field``,
            the value and the accepted form).
    """
    if not isinstance(pauli_string, str) or not _STRING.match(pauli_string):
        raise EntryError(f"{shown(pauli_string)} is not a QEncode Pauli string; accepted: "
                         + ACCEPTED_STRING, field=field)
    word: dict[int, str] = {}
    for op, wire in _TERM.findall(pauli_string):
        w = int(wire)
        if w in word:
            raise EntryError(f"{shown(pauli_string)} names wire {w} twice; accepted: "
                             + ACCEPTED_STRING, field=field)
        word[w] = op
    return word


def format_pauli_word(word: dict) -> str:
    """Inverse of :func:`parse_pauli_string`: ``{wire: "X"|"Y"|"Z"}`` as ``"Z0X1Z3"``,
    wires sorted, ``"I"`` if empty.

    A wire is written as the integer it is: PennyLane 0.45.0's ``bravyi_kitaev`` labels
    some wires of its words with floats (``numpy.float64(3.0)``; measured on LiH STO-3G
    [2e,3o], in ``qchem.molecular_hamiltonian`` and ours alike, issue 51), which would
    otherwise be written ``Z3.0``, a string no reader accepts and no stored term equals.

    Raises:
        ValueError: a wire that is not an integer (``2.5``, ``"a"``), naming the word.
    """
    if not word:
        return "I"
    wires = {_integer_wire(label, word): op for label, op in word.items()}
    return "".join(f"{wires[w]}{w}" for w in sorted(wires))


def _integer_wire(label, word) -> int:
    """The integer wire ``label`` stands for (an int, a numpy integer, or a float that is
    integral), else ValueError naming ``word``."""
    try:
        return operator.index(label)
    except TypeError:
        pass
    if isinstance(label, numbers.Real) and float(label).is_integer():
        return int(label)
    raise ValueError(f"Pauli word {word!r}: wire {label!r} is not an integer; accepted: "
                     "integer wires (0, 1, ...)")


def validate_pauli_terms(pauli_terms, num_qubits: int) -> list[tuple[dict, float]]:
    """Check QEncode ``pauli_terms`` without importing PennyLane.

    Returns ``[(word, coefficient)]`` in the stored order, ``word`` as from
    :func:`parse_pauli_string`, coefficients in Ha.

    Raises:
        EntryError: a term that is not ``{"pauli_string", "coefficient"}``, a
            coefficient that is not a number a float holds, a malformed string, a wire
            outside ``range(num_qubits)``, or a repeated Pauli string; each names the
            term's field (``artifacts.qubit_hamiltonian.pauli_terms[3].coefficient``).
    """
    if not isinstance(pauli_terms, list):
        raise EntryError(f"{shown(pauli_terms)} has type {type(pauli_terms).__name__}; "
                         "accepted: a list", field=TERMS_FIELD)
    out, seen = [], {}
    for i, term in enumerate(pauli_terms):
        at = f"{TERMS_FIELD}[{i}]"
        if not isinstance(term, dict) or set(term) != {"pauli_string", "coefficient"}:
            raise EntryError(f"{shown(term)} is not accepted; accepted: an object with "
                             "exactly 'pauli_string' and 'coefficient'", field=at)
        coeff = term["coefficient"]
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)) \
                or not fits_float(coeff):
            raise EntryError(f"{shown(coeff)} is not accepted; accepted: a number a float "
                             "holds (Ha)", field=f"{at}.coefficient")
        word = parse_pauli_string(term["pauli_string"], f"{at}.pauli_string")
        bad = [w for w in word if w >= num_qubits]
        if bad:
            n = shown(num_qubits)
            raise EntryError(f"{shown(term['pauli_string'])} acts on wire {bad[0]}, outside "
                             f"range({n}) of num_qubits; accepted: wires in range({n})",
                             field=f"{at}.pauli_string")
        key = format_pauli_word(word)
        if key in seen:
            raise EntryError(f"{shown(term['pauli_string'])} repeats the Pauli string of "
                             f"term {seen[key]}; accepted: each Pauli string once",
                             field=f"{at}.pauli_string")
        seen[key] = i
        out.append((word, float(coeff)))
    return out
