"""The re-run's problem: what a replay and a re-run of an entry share, and the
engines chosen for them (:func:`qencode_nb.engines.selection.choose`).

:func:`build_problem` checks that the rebuild's structure is the entry's, takes the
Hamiltonian's origin (the stored terms when the entry has them, else the rebuilt
operator; audit.ipynb ``hamiltonian = "rebuilt"``: the rebuilt one, decided by
:func:`qencode_nb.engines.selection.on_hamiltonian`), the early-stop target and the
tapering constant, and binds the engines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Problem:
    """What a replay and a re-run need.  Energies in Ha.

    Attributes:
        hamiltonian_origin: "stored" or "rebuilt (of_bridge)" (the qubit Hamiltonian
            the replay and the re-run run on).
        wires: tapered wire labels ``[0, ..., n - 1]``.
        constant_ha: the tapering constant correction added to every energy
            after optimisation (encoding.tapering.bk_constant_correction_ha).
        e_target: early-stop target, the CASCI energy (generator ``main()``).
        ansatz: the ansatz: hea, uccsd or adapt.
        reps: HEA repetitions (None otherwise).
        z2_sectors: the Z2 tapering sectors (+-1 each) the tapered operators
            were built in (not the (N_alpha, N_beta) determinant space).
        engines: the :class:`~qencode_nb.engines.selection.Choice`: the engine that
            re-runs, the one that replays, and why any other was not used.
    """

    hamiltonian_origin: str
    wires: list
    constant_ha: float
    e_target: float
    ansatz: str
    reps: int | None
    z2_sectors: list
    engines: object

    @property
    def is_adapt(self) -> bool:
        """The ansatz is grown operator by operator (ADAPT-VQE)."""
        return self.ansatz == "adapt"

    @property
    def num_params(self) -> int:
        """Ansatz parameters on the engine that re-runs (ADAPT: the recorded
        selection's length)."""
        return self.engines.rerun.num_params

    def engine_record(self) -> dict:
        """The ``engine`` record (:meth:`qencode_nb.engines.selection.Choice.to_record`)."""
        return self.engines.to_record()


@dataclass
class NoEngine:
    """The engine slot of a problem no engine can bind (``label`` None)."""

    num_params: int | None
    label: None = None
    replay_reason: str | None = None


@dataclass
class NoEngines:
    """The engines of a problem no engine can bind: the ansatz cannot be rebuilt
    (``Entry.not_checkable["replay"]``, a Qiskit QPY ansatz); ``reason`` says why."""

    requested: str | None
    reason: str
    num_params: int | None

    @property
    def rerun(self) -> NoEngine:
        return NoEngine(self.num_params, replay_reason=self.reason)

    replay = rerun

    def to_record(self) -> dict:
        """The ``engine`` record: no engine used, and why."""
        return {"requested": self.requested, "used": None, "reason": self.reason,
                "replay_reason": self.reason}


def build_problem(entry, rebuilt, engine: str | None = None,
                  hamiltonian=None, *, rerun: bool = True, operator: str = "stored") -> Problem:
    """The problem of an entry and the engines that replay and re-run it.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt: the rebuild (:func:`qencode_nb.hamiltonian.check.rebuild`).
        engine: the ``engine`` parameter: None (the recorded engine) or a registered
            name (:func:`qencode_nb.engines.registry.names`), checked here
            (:func:`qencode_nb.options.check_engine`).
        hamiltonian: the audit's Hamiltonian check (``None`` counts as "not
            checked"): it decides whether stored angles may be replayed on a
            rebuilt problem.
        rerun: the entry is re-run (``mode`` full or rerun); in replay mode an
            engine's preferred engines are not built.
        operator: the ``hamiltonian`` parameter, checked here
            (:func:`qencode_nb.options.check_hamiltonian`): "stored" (the stored terms
            where the entry has them, else the rebuild) or "rebuilt" (the rebuilt
            operator even where it stores terms): the replay and the re-run run on it.

    Raises:
        ParameterError: an engine name that is not registered (lists the registered ones);
            a ``hamiltonian`` not accepted, or "rebuilt" for an entry that cannot be
            rebuilt (:func:`qencode_nb.engines.selection.on_hamiltonian`).
        RebuildMismatch: the rebuild's Z2 symmetry count or tapered qubits are not
            the entry's (:func:`qencode_nb.hamiltonian.check.check_structure`).
    """
    from qencode_nb.engines.selection import choose, on_hamiltonian
    from qencode_nb.options import check_engine, check_hamiltonian
    from qencode_nb.hamiltonian.check import check_structure

    requested = check_engine(engine)
    origin, bound_entry = on_hamiltonian(entry, rebuilt, check_hamiltonian(operator))
    if getattr(rebuilt, "tapering", True) is None:      # NotRebuilt: no engine can bind
        return Problem(hamiltonian_origin=origin, wires=list(range(entry.tapered_num_qubits)),
                       constant_ha=0.0, e_target=entry.casci_target, ansatz=entry.ansatz,
                       reps=entry.reps if entry.ansatz == "hea" else None, z2_sectors=[],
                       engines=NoEngines(requested, entry.not_checkable.get(
                           "replay", rebuilt.reason), entry.num_params))
    check_structure(entry, rebuilt)      # a Z2-count mismatch says so first
    tapered = rebuilt.tapering
    return Problem(
        hamiltonian_origin=origin,
        wires=list(range(entry.tapered_num_qubits)),
        constant_ha=bound_entry.bk_constant_correction_ha or 0.0,
        e_target=entry.casci_target, ansatz=entry.ansatz,
        reps=entry.reps if entry.ansatz == "hea" else None,
        z2_sectors=[int(x) for x in tapered.z2_sectors],
        engines=choose(bound_entry, rebuilt, requested, hamiltonian, rerun=rerun))
