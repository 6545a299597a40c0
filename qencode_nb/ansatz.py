"""Ansätze as QEncode builds them (public generator ``generate_entry_v4.py``).

Each builder returns a circuit function ``circuit(params, wires)`` that
prepares the tapered Hartree-Fock state and applies the ansatz; it is called
inside a PennyLane QNode.
"""

from __future__ import annotations


def hea_num_params(num_qubits: int, reps: int) -> int:
    """Parameter count of QEncode's HEA: ``num_qubits * (reps + 1)``."""
    return num_qubits * (reps + 1)


def hea_circuit(hf_state, reps: int):
    """QEncode's hardware-efficient ansatz (``build_hea_circuit``).

    ``reps + 1`` layers of RY on every wire (in wire order), with a CNOT
    ladder ``(w0,w1), (w1,w2), ...`` between consecutive layers.  The circuit
    starts from ``qml.BasisState(hf_state)``.

    Args:
        hf_state: tapered HF occupation, shape ``(num_qubits,)`` of 0/1
            (artifacts.circuits.hf_state).
        reps: ``encoding.ansatz_reps``.

    Returns:
        ``circuit(params, wires)`` with ``params`` of shape
        ``(len(wires) * (reps + 1),)`` in radians.
    """
    import numpy as np
    import pennylane as qml

    hf = np.array(hf_state, dtype=int)

    def circuit(params, wires):
        n = len(wires)
        qml.BasisState(hf, wires=wires)
        idx = 0
        for layer in range(reps + 1):
            for w in wires:
                qml.RY(params[idx], wires=w)
                idx += 1
            if layer < reps:
                for i in range(n - 1):
                    qml.CNOT(wires=[wires[i], wires[i + 1]])

    return circuit
