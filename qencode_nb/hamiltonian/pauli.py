"""QEncode ``pauli_terms`` to and from PennyLane operators.

QEncode stores a tapered qubit Hamiltonian as a list of
``{"pauli_string": "Z0Z1X3", "coefficient": float}`` (Ha), the identity as
``"I"`` (QEncode schema 4.0.0, artifacts.qubit_hamiltonian.pauli_terms;
written by ``serialize_hamiltonian`` of the public generator; the format is
:mod:`qencode_nb.entry.pauli_strings`).  Wires are integers; the term order is
the order of the generator's ``pauli_rep``.

Numpy and PennyLane are imported inside the functions so that
``import qencode_nb`` stays free of numpy.
"""

from __future__ import annotations

from qencode_nb.entry.pauli_strings import format_pauli_word, validate_pauli_terms


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
