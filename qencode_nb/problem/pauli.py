"""QEncode ``pauli_terms``: parse, format, validate, and convert to/from PennyLane.

QEncode stores a tapered qubit Hamiltonian as a list of
``{"pauli_string": "Z0Z1X3", "coefficient": float}`` (Ha), the identity as
``"I"`` (QEncode schema 4.0.0, artifacts.qubit_hamiltonian.pauli_terms;
written by ``serialize_hamiltonian`` of the public generator).  Wires are
integers; the term order is the order of the generator's ``pauli_rep``.

Numpy and PennyLane are imported inside the functions so that
``import qencode_nb`` stays free of numpy.
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


def from_pauli_terms(pauli_terms: list[dict], num_qubits: int):
    """Build a PennyLane operator from QEncode ``pauli_terms``.

    Args:
        pauli_terms: list of ``{"pauli_string": str, "coefficient": float}``,
            coefficients in Ha.
        num_qubits: the entry's ``artifacts.qubit_hamiltonian.num_qubits``;
            every wire must lie in ``range(num_qubits)``.

    Returns:
        ``pennylane.ops.Sum`` built through ``PauliSentence.operation()``, in
        the stored term order.  This reproduces the generator's energies
        bit-for-bit (measured on LiH PAR/HEA: replay ΔE = 0.0 Ha), whereas a
        ``qml.Hamiltonian`` of the same terms differs by ~1e-14 Ha.

    Raises:
        EntryError: malformed term, duplicate Pauli string, or a wire outside
            ``range(num_qubits)``.
    """
    import pennylane as qml

    sentence = qml.pauli.PauliSentence()
    for word, coeff in validate_pauli_terms(pauli_terms, num_qubits):
        sentence[qml.pauli.PauliWord(word)] = coeff
    return sentence.operation(wire_order=list(range(num_qubits)))


def to_pauli_terms(operator) -> list[dict]:
    """Serialise a PennyLane operator the way QEncode does (real parts, Ha)."""
    import numpy as np

    terms = []
    for word, coeff in operator.pauli_rep.items():
        terms.append({"pauli_string": format_pauli_word(dict(word)),
                      "coefficient": float(np.real(coeff))})
    return terms
