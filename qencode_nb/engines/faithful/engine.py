"""The engine ``"faithful"``: the recorded ``default.qubit`` arithmetic at speed.

It binds what the ``qnode`` engine binds (HEA, tapered UCCSD, the QNode ADAPT
procedure) and computes every energy through
:class:`qencode_nb.engines.faithful.circuit.FaithfulCircuit`: the same floating-point
operations as the plain QNode, in the same order, on the same values, with the work
that cannot change done once.  Records, checkpoints and COBYLA paths name the
recorded device, as the ``qnode`` engine's do: the bits are the same.

Gradients (L-BFGS-B, Adam) are ``qml.grad`` of the faithful circuit's backprop path
(:meth:`~qencode_nb.engines.faithful.circuit.FaithfulCircuit.trainable`: the same autograd
primitives as the QNode's, the tape, preprocessing and each term's diagonalising gates and
eigenvalues done once), which :func:`qencode_nb.rerun.vqe.gradient_fn` and the Adam loop
reach through the energy's ``qnode``.  It runs under the PennyLane versions of
:data:`qencode_nb.engines.faithful.proven.PROVEN` only, on ``default.qubit`` only.
Energies in Ha before the tapering constant correction; angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.engines.qnode.energy import Energy
from qencode_nb.errors import NotRunnable

#: The device whose arithmetic the engine reproduces.
DEVICE = "default.qubit"


class FaithfulEnergy(Energy):
    """:class:`~qencode_nb.engines.qnode.energy.Energy` whose calls run the faithful
    circuit.  ``qnode`` is what the gradient optimisers call on trainable parameters
    (:func:`qencode_nb.rerun.vqe.trainable_value`, ``qml.grad``, Adam's
    ``step_and_cost``): the faithful circuit's backprop path
    (:meth:`~qencode_nb.engines.faithful.circuit.FaithfulCircuit.trainable`);
    ``plain_qnode`` the plain QNode."""

    def __init__(self, plain_qnode, backend, wires, fast):
        super().__init__(qnode=fast.trainable, backend=backend, wires=list(wires))
        self.plain_qnode = plain_qnode
        self.fast = fast

    def __call__(self, params) -> float:
        self.calls += 1
        return self.fast(params)


@dataclass
class FaithfulBound:
    """An entry on the faithful engine (:class:`qencode_nb.engines.base.Bound`): the
    ``qnode`` engine's binding (``plain``) with faithful energies."""

    plain: object
    engine: str = "faithful"
    measurement: str | None = None
    """The measurement function ``default.qubit`` picks (known once an energy was made)."""
    trainable_replay = True

    def __getattr__(self, name):          # label, device, num_params, pool, ... as bound
        if name == "plain":
            raise AttributeError(name)
        return getattr(self.plain, name)

    def _circuit(self, circuit, probe, observable=None):
        from qencode_nb.engines.faithful.circuit import FaithfulCircuit

        p = self.plain
        return FaithfulCircuit(circuit, p.wires, p.hamiltonian, probe, observable)

    def energy(self):
        import numpy as np

        p = self.plain
        plain = p.energy()                    # raises NotRunnable for ADAPT
        fast = self._circuit(p.circuit, np.zeros(p.num_params))
        self.measurement = fast.measurement
        return FaithfulEnergy(plain.qnode, plain.backend, plain.wires, fast)

    def adapt_backend(self, inner: str):
        from qencode_nb.engines.faithful.adapt import FaithfulBackend

        if inner != "cobyla":
            raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                             "COBYLA only; L-BFGS-B exists on the statevector engine")
        p = self.plain
        return FaithfulBackend(p.hamiltonian, p.pool, p.hf_state, p.wires, p.device,
                               bound=self)

    def replay(self, selected_indices, params) -> float:
        import numpy as np

        from qencode_nb.engines.base import check_selection

        p = self.plain
        if p.pool is not None:
            selected = check_selection(p.pool, selected_indices, params)
            backend = self.adapt_backend("cobyla")
            return backend.energy(selected)(np.array([float(x) for x in params]))
        return self.energy()(np.array(params, dtype=float))

    def findings(self, inner: str | None) -> list[str]:
        return []

    def details(self) -> dict:
        from qencode_nb.engines.faithful.proven import pennylane_version

        return {"faithful": {"pennylane": pennylane_version(),
                             "measurement": self.measurement,
                             "gradients": "qml.grad of the faithful backprop path"}}


class FaithfulEngine:
    """``default.qubit``'s arithmetic without PennyLane's per-call overhead
    (:class:`qencode_nb.engines.base.Engine`)."""

    name = "faithful"
    summary = ("default.qubit's own arithmetic, the work that cannot change done once "
               "(bit-equal to qnode; the recorded engine where proven)")
    prefer = ()

    def bind(self, entry, rebuilt, hamiltonian=None) -> FaithfulBound:
        from qencode_nb.engines.faithful.proven import why_not
        from qencode_nb.engines.qnode.engine import QNodeEngine
        from qencode_nb.entry import vocabulary

        why = why_not()
        if why:
            raise NotRunnable(why)
        device = vocabulary.backend(entry.backend, "run_config.backend")
        if device != DEVICE:
            raise NotRunnable(f"recorded device {device!r}: the faithful engine "
                              f"reproduces {DEVICE} only")
        return FaithfulBound(QNodeEngine().bind(entry, rebuilt, hamiltonian))
