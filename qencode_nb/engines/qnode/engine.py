"""The engine ``"qnode"``: PennyLane QNodes on the recorded device, as the generator
runs HEA, tapered UCCSD (``run_vqe``) and ADAPT with its QNode engine
(``run_vqe_adapt``), ``scripts/generate_entry_v4.py`` of qencode-benchmark, commit
e1f44cd.  Energies are bit-identical to the generator's where the arithmetic is.

The Hamiltonian is the entry's stored one (QEncode schema 4.0.0,
``artifacts.qubit_hamiltonian.pauli_terms``) when the entry it is bound to has one, else
the rebuilt tapered operator (which entry that is, and so which operator, is decided
once: :func:`qencode_nb.engines.selection.on_hamiltonian`); the ADAPT pool and the UCCSD operators are the tapered
excitations (:func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`).  Energies in Ha
before the tapering constant correction; angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.engines.base import OnRecordedDevice
from qencode_nb.errors import NotRunnable


def qubit_hamiltonian(entry, rebuilt):
    """The PennyLane qubit Hamiltonian (Ha) the re-run uses: the stored terms, else
    the rebuilt tapered operator."""
    from qencode_nb.hamiltonian import pauli

    if entry.has_stored_hamiltonian:
        return pauli.from_pauli_terms(entry.pauli_terms, entry.tapered_num_qubits)
    tapered = rebuilt.tapering
    return tapered.H_tapered


def tapered_ops(entry, rebuilt) -> list:
    """The tapered UCCSD operators (the UCCSD circuit's, and the ADAPT pool)."""
    from qencode_nb.engines import ansatz

    tapered = rebuilt.tapering
    return ansatz.tapered_uccsd_ops(entry.active_space[0], tapered.n_qubits_full,
                                    tapered.generators, tapered.paulixops,
                                    tapered.z2_sectors)


def selection_size(entry) -> int:
    """Parameters of an ADAPT entry: its recorded selection's length
    (``encoding.adapt_metadata.selected_operator_indices``)."""
    return len((entry.adapt or {}).get("selected_operator_indices") or [])


@dataclass
class QNodeBound(OnRecordedDevice):
    """An entry on PennyLane QNodes (:class:`qencode_nb.engines.base.Bound`).

    Attributes:
        hamiltonian: the PennyLane qubit Hamiltonian (Ha) on ``wires``.
        circuit: ``circuit(params, wires)`` (HEA, UCCSD), None for ADAPT.
        pool: the tapered ADAPT pool, None for HEA and UCCSD.
        wires: tapered wire labels ``[0, ..., n - 1]``.
        hf_state: tapered HF bits, shape ``(n,)``.
        device: the recorded PennyLane device (``run_config.backend``).
    """

    hamiltonian: object
    circuit: object
    pool: list | None
    wires: list
    hf_state: list
    device: str
    num_params: int
    engine: str = "qnode"
    replay_reason: str | None = None
    trainable_replay = True       # a gradient entry's replay takes the trainable call
    hamiltonian_label: str | None = None

    @property
    def label(self) -> str:
        return "qnode" if self.pool is not None else self.device

    @property
    def pool_size(self) -> int | None:
        return None if self.pool is None else len(self.pool)

    @property
    def adapt_procedure(self) -> str | None:
        return None if self.pool is None else "qnode"

    def energy(self):
        from qencode_nb.engines.qnode.energy import qnode_energy

        if self.circuit is None:
            raise NotRunnable("an ADAPT entry's energies come from its selection "
                              "(adapt_backend)")
        return qnode_energy(self.hamiltonian, self.circuit, self.wires, self.device)

    def adapt_backend(self, inner: str):
        from qencode_nb.engines.qnode.adapt import QNodeBackend

        if inner != "cobyla":
            raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                             "COBYLA only; L-BFGS-B exists on the statevector engine")
        return QNodeBackend(self.hamiltonian, self.pool, self.hf_state, self.wires,
                            self.device)

    def replay(self, selected_indices, params) -> float:
        import numpy as np

        if self.pool is not None:
            from qencode_nb.engines.qnode.adapt import replay_energy

            return replay_energy(self.hamiltonian, self.pool, self.hf_state,
                                 selected_indices, params, self.wires, backend=self.device)
        return self.energy()(np.array(params, dtype=float))

    def findings(self, inner: str | None) -> list[str]:
        return []

    def details(self) -> dict:
        return {}


class QNodeEngine:
    """PennyLane QNodes on the recorded device (:class:`qencode_nb.engines.base.Engine`).
    Binds HEA, UCCSD and ADAPT entries whose recorded ADAPT engine is the QNode one."""

    name = "qnode"
    summary = "PennyLane QNodes on the recorded device, as the generator ran them"
    prefer = ()

    def bind(self, entry, rebuilt, hamiltonian=None) -> QNodeBound:
        from qencode_nb.engines import ansatz

        wires = list(range(entry.tapered_num_qubits))
        common = dict(hamiltonian=qubit_hamiltonian(entry, rebuilt), wires=wires,
                      hf_state=entry.hf_tapered_state, device=entry.backend)
        if entry.ansatz == "hea":
            return QNodeBound(circuit=ansatz.hea_circuit(entry.hf_tapered_state, entry.reps),
                              pool=None, num_params=ansatz.hea_num_params(len(wires),
                                                                          entry.reps),
                              **common)
        if entry.ansatz == "adapt" and (entry.optimizer.engine or "qnode") != "qnode":
            raise NotRunnable(f"recorded ADAPT engine {entry.optimizer.engine!r}: the QNode "
                              "engine runs the QNode procedure (COBYLA inner) only")
        ops = tapered_ops(entry, rebuilt)
        if entry.ansatz == "uccsd":
            return QNodeBound(circuit=ansatz.uccsd_circuit(entry.hf_tapered_state, ops),
                              pool=None, num_params=len(ops), **common)
        return QNodeBound(circuit=None, pool=ops, num_params=selection_size(entry),
                          **common)
