"""The engine ``"sector"``: the statevector ADAPT procedure in the fixed
(N_alpha, N_beta) determinant space of the rebuilt CASCI active space, with PySCF's
FCI machinery (:mod:`qencode_nb.engines.sector.space`).  Which entries map, and how
their stored angles act there, is :mod:`qencode_nb.engines.sector.mapping`.

Energies agree with the generator's statevector engine to rounding, not bit for
bit.  Energies in Ha (the CI space's include the core energy, comparable with
the uncorrected tapered energy of a jordan_wigner entry); angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import NotRunnable


@dataclass
class SectorBound:
    """An ADAPT entry on the sector engine (:class:`qencode_nb.engines.base.Bound`).

    Attributes:
        problem: the :class:`~qencode_nb.engines.sector.mapping.SectorProblem`.
        recorded_engine: the entry's recorded ADAPT engine ("statevector").
        device: the entry's recorded ``run_config.backend``.
        replay_reason: why the stored angles are not replayed on the rebuilt
            sector (:func:`qencode_nb.engines.sector.mapping.replay_reason`).
    """

    problem: object
    recorded_engine: str
    device: str
    num_params: int
    replay_reason: str | None
    engine: str = "sector"
    label: str = "sector"
    backend: str = "sector"
    checkpoint_label: str = "sector"
    adapt_procedure: str = "sector"
    hamiltonian_label: str = "rebuilt sector (PySCF CASCI integrals)"

    @property
    def pool_size(self) -> int:
        return len(self.problem.excitations)

    def energy(self):
        raise NotRunnable("the sector engine runs ADAPT only")

    def adapt_backend(self, inner: str):
        from qencode_nb.engines.sector.adapt import CISpaceBackend

        return CISpaceBackend(self.problem.ci_space, self.problem.generators)

    def replay(self, selected_indices, params) -> float:
        from qencode_nb.engines.sector.mapping import replay_energy

        return replay_energy(self.problem, selected_indices, params)

    def findings(self, inner: str | None) -> list[str]:
        space = self.problem.ci_space
        out = [f"re-run on the sector engine ({space.dim} determinants, H·ψ by "
               f"{space.hop_method}) instead of the recorded {self.recorded_engine} engine "
               f"on {self.device}: same procedure, different arithmetic (agrees to "
               "rounding)"]
        if self.replay_reason:
            out.append("the sector re-run used the rebuilt active-space Hamiltonian, which "
                       "is not the stored one: " + self.replay_reason
                       + "; energies are gauge-invariant, the ADAPT path may differ")
        return out

    def details(self) -> dict:
        return {"sector_build_seconds": self.problem.seconds,
                "sector_pool_cache": self.problem.pool_cache}


class SectorEngine:
    """The sector engine (:class:`qencode_nb.engines.base.Engine`): binds the ADAPT
    entries :func:`qencode_nb.engines.sector.mapping.unmappable_reason` accepts."""

    name = "sector"
    summary = ("ADAPT in the (N_alpha, N_beta) determinant space, for the entries that "
               "map to it, qencode_nb.engines.sector.mapping")
    prefer = ()

    def bind(self, entry, rebuilt, hamiltonian=None) -> SectorBound:
        from qencode_nb.engines.qnode.engine import selection_size
        from qencode_nb.engines.sector import mapping

        recorded = entry.optimizer.engine or "qnode"
        problem = mapping.build(entry, rebuilt, circuit=recorded)
        return SectorBound(problem=problem, recorded_engine=recorded, device=entry.backend,
                           num_params=selection_size(entry),
                           replay_reason=mapping.replay_reason(hamiltonian))
