"""The engine ``"statevector"``: the generator's sparse statevector ADAPT engine
(``run_vqe_adapt_statevector``, ``scripts/generate_entry_v4.py`` of
qencode-benchmark, commit e1f44cd), which QEncode records for ADAPT entries above
:data:`~qencode_nb.rules.ADAPT_QNODE_MAX_QUBITS` tapered qubits.  Energies are
bit-identical to the generator's where the arithmetic is.  Energies in Ha before
the tapering constant correction; angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.engines.base import OnRecordedDevice
from qencode_nb.errors import NotRunnable


@dataclass
class StatevectorBound(OnRecordedDevice):
    """An ADAPT entry on the generator's statevector engine
    (:class:`qencode_nb.engines.base.Bound`).

    Attributes:
        hamiltonian: the PennyLane qubit Hamiltonian (Ha) on ``wires``.
        pool: the tapered ADAPT pool.
        wires: tapered wire labels ``[0, ..., n - 1]``.
        hf_state: tapered HF bits, shape ``(n,)``.
        device: the recorded ``run_config.backend`` (the configuration's backend;
            the statevector engine needs no device).
    """

    hamiltonian: object
    pool: list
    wires: list
    hf_state: list
    device: str
    num_params: int
    engine: str = "statevector"
    label: str = "statevector"
    adapt_procedure: str = "statevector"
    replay_reason: str | None = None
    hamiltonian_label: str | None = None

    @property
    def pool_size(self) -> int:
        return len(self.pool)

    def energy(self):
        raise NotRunnable("the statevector engine runs ADAPT only")

    def adapt_backend(self, inner: str):
        from qencode_nb.engines.statevector.adapt import StatevectorBackend

        return StatevectorBackend(self.hamiltonian, self.pool, self.hf_state, self.wires)

    def replay(self, selected_indices, params) -> float:
        from qencode_nb.engines.statevector.adapt import replay_energy

        return replay_energy(self.hamiltonian, self.pool, self.hf_state, selected_indices,
                             params, self.wires)

    def findings(self, inner: str | None) -> list[str]:
        return []

    def details(self) -> dict:
        return {}


class StatevectorEngine:
    """The generator's statevector ADAPT engine (:class:`qencode_nb.engines.base.Engine`):
    binds ADAPT entries whose recorded engine it is."""

    name = "statevector"
    summary = "the generator's sparse statevector ADAPT engine"
    prefer = ()

    def bind(self, entry, rebuilt, hamiltonian=None) -> StatevectorBound:
        from qencode_nb.engines.qnode.engine import (
            qubit_hamiltonian,
            selection_size,
            tapered_ops,
        )

        if entry.ansatz != "adapt":
            raise NotRunnable(f"{entry.ansatz}: the generator's statevector engine runs "
                              "ADAPT only")
        if (entry.optimizer.engine or "qnode") != "statevector":
            raise NotRunnable(f"recorded ADAPT engine {entry.optimizer.engine or 'qnode'!r}: "
                              "the statevector engine runs its own procedure only")
        return StatevectorBound(hamiltonian=qubit_hamiltonian(entry, rebuilt),
                                pool=tapered_ops(entry, rebuilt),
                                wires=list(range(entry.tapered_num_qubits)),
                                hf_state=entry.hf_tapered_state, device=entry.backend,
                                num_params=selection_size(entry))
