"""QEncode's Pauli-string format (QEncode schema 4.0.0,
artifacts.qubit_hamiltonian.pauli_terms): ``{"pauli_string": "Z0Z1X3",
"coefficient": float}`` (Ha), the identity as ``"I"``; parsed, formatted and
validated here without PennyLane (written by ``serialize_hamiltonian`` of the
public generator).  Conversion to PennyLane operators is
:mod:`qencode_nb.problem.pauli`.
"""

from __future__ import annotations

import re

from qencode_nb.errors import EntryError

_TERM = re.compile(r"([XYZ])(\d+)")
_STRING = re.compile(r"^(I|([XYZ]\d+)+)$")


def parse_pauli_string(pauli_string: str) -> dict[int, str]:
    """Parse one QEncode Pauli string into ``{wire: "X"|"Y"|"Z"}``.

    ``"I"`` is the identity (empty dict).  Raises :class:`EntryError` naming
    the value and the accepted form when the string is malformed or a wire
    appears twice.
    """
    if not isinstance(pauli_string, str) or not _STRING.match(pauli_string):
        raise EntryError(
            f"pauli_string {pauli_string!r} is not a QEncode Pauli string; "
            "accepted: 'I' or a product such as 'Z0Z1X3' (letters X/Y/Z, integer wires)",
            field="artifacts.qubit_hamiltonian.pauli_terms[].pauli_string",
        )
    word: dict[int, str] = {}
    for op, wire in _TERM.findall(pauli_string):
        w = int(wire)
        if w in word:
            raise EntryError(
                f"pauli_string {pauli_string!r} names wire {w} twice",
                field="artifacts.qubit_hamiltonian.pauli_terms[].pauli_string",
            )
        word[w] = op
    return word


def format_pauli_word(word: dict) -> str:
    """Inverse of :func:`parse_pauli_string`: wires sorted, ``"I"`` if empty."""
    if not word:
        return "I"
    return "".join(f"{word[w]}{w}" for w in sorted(word))


def validate_pauli_terms(pauli_terms, num_qubits: int) -> list[tuple[dict, float]]:
    """Check QEncode ``pauli_terms`` without importing PennyLane.

    Returns ``[(word, coefficient)]`` in the stored order, ``word`` as from
    :func:`parse_pauli_string`, coefficients in Ha.

    Raises:
        EntryError: a term that is not ``{"pauli_string", "coefficient"}``, a
            non-numeric coefficient, a malformed string, a wire outside
            ``range(num_qubits)``, or a repeated Pauli string.
    """
    field = "artifacts.qubit_hamiltonian.pauli_terms"
    if not isinstance(pauli_terms, list):
        raise EntryError(f"{type(pauli_terms).__name__} is not accepted; accepted: a list",
                         field=field)
    out, seen = [], set()
    for i, term in enumerate(pauli_terms):
        if not isinstance(term, dict) or set(term) != {"pauli_string", "coefficient"}:
            raise EntryError(
                f"term {i} is {term!r}; accepted: an object with exactly "
                "'pauli_string' and 'coefficient'", field=field)
        coeff = term["coefficient"]
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            raise EntryError(
                f"term {i} coefficient {coeff!r} is not a number (Ha)", field=field)
        word = parse_pauli_string(term["pauli_string"])
        bad = [w for w in word if w >= num_qubits]
        if bad:
            raise EntryError(
                f"term {i} {term['pauli_string']!r} acts on wire {bad[0]}, outside "
                f"range({num_qubits}) of num_qubits", field=field)
        key = format_pauli_word(word)
        if key in seen:
            raise EntryError(
                f"term {i} repeats Pauli string {term['pauli_string']!r}", field=field)
        seen.add(key)
        out.append((word, float(coeff)))
    return out
