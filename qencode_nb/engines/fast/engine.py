"""The engine ``"fast"``: per entry the fastest engine computing the same energies.
Asked for a re-run, it prefers the sector engine where the entry maps; itself it is
the compiled statevector engine (:mod:`qencode_nb.engines.fast.compiled`, label
:data:`~qencode_nb.engines.fast.compiled.NAME`): HEA, tapered UCCSD and both
ADAPT pools on the stored Hamiltonian, numba kernels, no PennyLane.

Energies agree with the recorded engine's to rounding, not bit for bit.  Energies
in Ha before the tapering constant correction; angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FastBound:
    """An entry on the compiled statevector engine (:class:`qencode_nb.engines.base.Bound`).

    Attributes:
        problem: the :class:`~qencode_nb.engines.fast.problem.FastProblem`.
        device: the entry's recorded ``run_config.backend``.
    """

    problem: object
    device: str
    num_params: int
    engine: str = "fast"
    checkpoint_label: str = "fast"
    replay_reason: str | None = None
    hamiltonian_label: str | None = None

    @property
    def label(self) -> str:
        from qencode_nb.engines.fast.compiled import NAME

        return NAME

    @property
    def backend(self) -> str:
        return self.label

    @property
    def pool_size(self) -> int | None:
        return len(self.problem.words) if self.problem.ansatz == "adapt" else None

    @property
    def adapt_procedure(self) -> str | None:
        return self.problem.convention if self.problem.ansatz == "adapt" else None

    def energy(self):
        return self.problem.energy()

    def adapt_backend(self, inner: str):
        if self.problem.convention == "qnode" and inner != "cobyla":
            raise ValueError("the generator's QNode ADAPT engine (run_vqe_adapt) runs "
                             "COBYLA only; L-BFGS-B exists on the statevector engine")
        return self.problem.adapt_backend()

    def replay(self, selected_indices, params) -> float:
        import numpy as np

        selected = None
        if self.problem.ansatz == "adapt":
            from qencode_nb.engines.base import check_selection

            selected = check_selection(self.problem.words, selected_indices, params)
        return self.problem.energy(selected)(np.array(params, dtype=float))

    def findings(self, inner: str | None) -> list[str]:
        out = [f"re-run on the compiled statevector engine ({self.label}) instead of the "
               f"recorded {self.device}: same procedure, budgets and seed, different "
               "arithmetic (energies agree to rounding; a COBYLA trajectory may part from "
               "the recorded one after many steps)"]
        if inner == "l-bfgs-b":
            out.append("the inner L-BFGS-B uses the compiled engine's exact adjoint "
                       "gradient, as the statevector engine does")
        return out

    def details(self) -> dict:
        return {}


class FastEngine:
    """The compiled statevector engine (:class:`qencode_nb.engines.base.Engine`),
    preferring the sector engine for a re-run."""

    name = "fast"
    summary = ("every entry on the fastest engine computing the same energies, sector "
               "where the entry maps, else the compiled statevector engine, "
               "qencode_nb.engines.fast")
    prefer = ("sector",)

    def bind(self, entry, rebuilt, hamiltonian=None) -> FastBound:
        from qencode_nb.engines import ansatz
        from qencode_nb.engines.fast import problem as fast_problem
        from qencode_nb.engines.qnode.engine import selection_size

        problem = fast_problem.build(entry, rebuilt)
        if entry.ansatz == "hea":
            n_params = ansatz.hea_num_params(entry.tapered_num_qubits, entry.reps)
        elif entry.ansatz == "uccsd":
            n_params = len(problem.words)
        else:
            n_params = selection_size(entry)
        return FastBound(problem=problem, device=entry.backend, num_params=n_params)
