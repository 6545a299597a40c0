"""The QNode ADAPT procedure (``run_vqe_adapt``, COBYLA inner) on the faithful engine:
:class:`qencode_nb.engines.qnode.adapt.QNodeBackend` whose energies and states run
:class:`qencode_nb.engines.faithful.circuit.FaithfulCircuit` (one per selection, the
Hamiltonian's measurement structures shared by all).  Screening is the QNode
backend's own sparse arithmetic on that state.  Energies in Ha, angles in radians."""

from __future__ import annotations

from qencode_nb.engines.qnode.adapt import QNodeBackend, selection_circuit


class FaithfulBackend(QNodeBackend):
    """The QNode ADAPT backend with faithful energies and states (same arguments)."""

    def __init__(self, H, pool, hf_state, wires, backend, bound=None):
        super().__init__(H, pool, hf_state, wires, backend)
        self.H, self.bound = H, bound
        self._observable = None

    def _circuit(self, selected):
        import numpy as np

        from qencode_nb.engines.faithful.circuit import FaithfulCircuit

        fc = FaithfulCircuit(selection_circuit(self.pool, self.hf, selected), self.wires,
                             self.H, np.zeros(len(selected)), self._observable)
        self._observable = fc.observable
        if self.bound is not None:
            self.bound.measurement = fc.measurement
        return fc

    def state(self, selected, params):
        import numpy as np

        fc = self._circuit(list(selected))
        return np.asarray(fc.state(params), dtype=complex).ravel()

    def energy(self, selected):
        return self._circuit(list(selected))
