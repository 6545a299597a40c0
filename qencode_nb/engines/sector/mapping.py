"""Which entries the sector engine can run, and the mapping of their tapered
circuit parameters to generators in its CI space.

The mapping, written down once (conventions of :mod:`qencode_nb.engines.sector.space`):

- QEncode's ADAPT pool above 12 untapered qubits (``_get_tapered_uccsd_ops``,
  :func:`qencode_nb.engines.ansatz.tapered_pool_excitations`) keeps whole excitations:
  pool entry ``k`` is ``qml.exp(G_tap, 0j)`` with ``G_tap`` the Z2-tapered
  generator of ``DoubleExcitation``/``SingleExcitation(0.0, wires)``.  Its
  untapered generator ``G = qml.generator(gate(0.0, wires), "observable")``
  maps to :func:`qencode_nb.engines.sector.generators.generator`, ``B = 2iG`` on
  the CI space.
- Angles: the statevector engine applies ``exp((theta/2) B_tap)``; tapering a
  jordan_wigner problem is an exact change of basis on the Z2 symmetry sector,
  so the sector engine applies ``exp((theta/2) B)`` with the same ``theta``
  (:data:`ANGLE_FACTOR` ``["statevector"] = 1``).  The QNode engine (and the
  UCCSD circuit) queue ``qml.exp(G_tap, 1j * theta)`` twice
  (:func:`qencode_nb.engines.ansatz.apply_tapered_op`): ``exp(2i theta G)``, i.e.
  factor 2.  Tested against default.qubit on the H8 pool.
- At 12 or fewer untapered qubits the generator tapers each excitation with
  ``qchem.taper_operation``, which returns one rotation per Pauli word, each
  with its own angle: those rotations do not conserve particle number, so
  no entry of that kind maps (the reason is recorded and the recorded
  backend runs instead).
- The CI-space Hamiltonian is the rebuilt CASCI active space; a replay of the
  stored angles is valid only if the rebuilt qubit Hamiltonian equals the
  stored one (orbital signs fix the meaning of an angle).

Every rule lives in :func:`unmappable_reason`.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import NotRunnable
from qencode_nb.rules import SECTOR_REPLAY_MAX_DCOEFF_HA, TAPER_OPERATION_MAX_QUBITS

ANGLE_FACTOR = {"statevector": 1.0, "qnode": 2.0}
"""CI-space angle = factor x stored angle, per circuit convention (module docstring)."""

@dataclass
class SectorProblem:
    """An entry on the sector engine.

    Attributes:
        ci_space: :class:`qencode_nb.engines.sector.space.CISpace` of the rebuilt active space.
        generators: the pool as :class:`qencode_nb.engines.sector.generators.Generator`, in pool
            order (ADAPT) or circuit order (UCCSD).
        excitations: ``[(gate name, wires)]`` behind each generator.
        angle_factor: CI-space angle per stored angle (:data:`ANGLE_FACTOR`).
        seconds: wall-clock seconds to build (pool and generators).
        pool_cache: how the pool was had
            (:func:`qencode_nb.engines.sector.pool_store.sector_pool`: ``"hit"``,
            ``"built"`` ...).
    """

    ci_space: object
    generators: list
    excitations: list
    angle_factor: float
    seconds: float = 0.0
    pool_cache: str = "built"


def unmappable_reason(entry, n_qubits_full: int) -> str | None:
    """Why ``entry`` cannot run on the sector engine, or ``None`` when it can.

    Args:
        entry: :class:`qencode_nb.entry.model.Entry`.
        n_qubits_full: untapered qubit count (``encoding.tapering.original_num_qubits``).
    """
    if entry.ansatz == "hea":
        return ("hea (RY layers and CNOT ladders) does not conserve particle number: no "
                "(N_alpha, N_beta) sector holds its states")
    if entry.mapping != "jordan_wigner":
        return (f"mapping {entry.mapping}: the sector sign map is written for "
                "jordan_wigner only")
    if n_qubits_full <= TAPER_OPERATION_MAX_QUBITS:
        return (f"{n_qubits_full} untapered qubits: the generator's pool at <= "
                f"{TAPER_OPERATION_MAX_QUBITS} qubits (qchem.taper_operation) splits every "
                "excitation into single Pauli-word rotations with their own angles, which "
                "do not conserve particle number")
    if entry.ansatz != "adapt":
        return (f"{entry.ansatz} on the sector engine is not wired: no QEncode {entry.ansatz} "
                f"entry has more than {TAPER_OPERATION_MAX_QUBITS} untapered qubits, where its "
                "operators would be whole excitations")
    recorded = entry.optimizer.engine or "qnode"
    if recorded != "statevector":
        return (f"recorded ADAPT engine {recorded!r}: only the statevector engine's procedure "
                "(L-BFGS-B inner, |<H psi|B psi>| screening) is reproduced on the sector engine")
    if entry.spin != 0:
        return f"spin {entry.spin}: only closed-shell (spin 0) sectors are built"
    return None


def build(entry, rebuilt, *, circuit: str = "statevector") -> SectorProblem:
    """The sector-engine problem of an entry: CI space, pool generators, angle factor.

    Args:
        entry: :class:`qencode_nb.entry.model.Entry`.
        rebuilt: the :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` of
            :func:`qencode_nb.hamiltonian.check.rebuild` (its ``chemistry`` must carry
            ``integrals``).
        circuit: the stored angles' convention, a key of :data:`ANGLE_FACTOR`.

    Raises:
        NotRunnable: with the reason of :func:`unmappable_reason`.
    """
    import time

    chem, tap = rebuilt.chemistry, rebuilt.tapering
    reason = unmappable_reason(entry, tap.n_qubits_full)
    if reason:
        raise NotRunnable(reason)
    from qencode_nb.engines.sector import space as S
    from qencode_nb.engines.ansatz import uccsd_excitations
    from qencode_nb.engines.sector.pool_store import sector_pool
    start = time.perf_counter()
    sec = S.from_summary(chem)
    excitations = uccsd_excitations(entry.active_space[0], tap.n_qubits_full)
    kept, gens, status = sector_pool(entry, rebuilt, sec, excitations)
    return SectorProblem(ci_space=sec, generators=gens,
                         excitations=[(excitations[i][0].__name__, list(excitations[i][1]))
                                      for i in kept],
                         angle_factor=ANGLE_FACTOR[circuit],
                         seconds=time.perf_counter() - start, pool_cache=status)


def replay_reason(hamiltonian) -> str | None:
    """Why the stored angles cannot be replayed on the rebuilt CI space, or ``None``.

    Args:
        hamiltonian: the audit's HamiltonianCheck (``terms_match``,
            ``max_abs_dcoeff``), or ``None`` when there was none.
    """
    if hamiltonian is None:
        return "no Hamiltonian check was given: the stored angles are not replayed unchecked"
    if hamiltonian.terms_match is None:   # no stored Hamiltonian to compare with
        return None
    d = hamiltonian.max_abs_dcoeff
    if not hamiltonian.terms_match or d is None or d > SECTOR_REPLAY_MAX_DCOEFF_HA:
        return ("the rebuilt Hamiltonian differs from the stored one (max |Δ coefficient| "
                f"{d if d is not None else 'n/a'} Ha > {SECTOR_REPLAY_MAX_DCOEFF_HA:g}): the "
                "stored angles belong to the stored orbitals (try blas_coretype='reference', the entry's release triple)")
    return None


def replay_energy(problem: SectorProblem, selected_indices, params) -> float:
    """Energy (Ha, before the tapering constant correction) of stored ADAPT
    angles on the sector engine: the recorded selection of the pool, each
    angle scaled by ``problem.angle_factor`` (the circuit's convention).

    Raises:
        ValueError: a selected index outside the pool, or not as many angles
            as selected operators (:func:`qencode_nb.engines.base.check_selection`).
    """
    from qencode_nb.engines.sector import space as S
    from qencode_nb.engines.base import check_selection

    selected = check_selection(problem.generators, selected_indices, params)
    angles = [problem.angle_factor * float(x) for x in params]
    c = S.build_state(problem.ci_space, problem.generators, selected, angles)
    return problem.ci_space.energy(c.reshape(problem.ci_space.shape))
