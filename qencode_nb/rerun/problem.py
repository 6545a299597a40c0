"""The re-run's problem: the qubit Hamiltonian (stored, or rebuilt) and the
recorded ansatz of an entry, assembled for replay and re-run.

:func:`build_problem` picks the stored Hamiltonian when the entry has one (else
the rebuilt one), builds the recorded ansatz (HEA, tapered UCCSD) or the ADAPT
pool, and, when ``engine="sector"`` is asked for, the sector engine's problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.notebook.parameters import check_engine


@dataclass
class Problem:
    """What a replay and a re-run need.  Energies in Ha.

    Attributes:
        hamiltonian: the PennyLane qubit Hamiltonian (Ha) on ``wires``.
        hamiltonian_origin: "stored" or "rebuilt (of_bridge)".
        circuit: ``circuit(params, wires)``; None for ADAPT (grown operator
            by operator).
        wires: tapered wire labels ``[0, ..., n - 1]``.
        num_params: ansatz parameters (ADAPT: selected operators, when recorded).
        constant_ha: the tapering constant correction added to every energy
            after optimisation (encoding.tapering.bk_constant_correction_ha).
        e_target: early-stop target, the CASCI energy (generator ``main()``).
        pool: the ADAPT operator pool (tapered), or None.
        adapt_engine: the recorded ADAPT engine, "qnode" or "statevector".
        ansatz: the ansatz built: hea, uccsd or adapt.
        reps: HEA repetitions built (None otherwise).
        z2_sectors: the Z2 tapering sectors (+-1 each) the tapered operators
            were built in (not the (N_alpha, N_beta) determinant space).
        engine_requested: None (the recorded backend), "sector" or "fast".
        sector_problem: :class:`qencode_nb.rerun.ci_space_map.SectorProblem`
            when the sector engine runs, else None.
        sector_reason: why the sector engine does not run (it was asked for).
        sector_replay_reason: why the stored angles are not replayed on it.
        fast_problem: :class:`qencode_nb.rerun.fast_problem.FastProblem` when
            the compiled statevector engine runs (``engine="fast"``), else
            None; ``hamiltonian`` and ``circuit`` are then not built (None:
            no PennyLane object is needed).
        fast_reason: why the compiled statevector engine does not run (it was
            asked for and the sector engine does not run either).
    """

    hamiltonian: object
    hamiltonian_origin: str
    circuit: object
    wires: list
    num_params: int
    constant_ha: float
    e_target: float
    pool: list | None = None
    adapt_engine: str | None = None
    ansatz: str = ""
    reps: int | None = None
    z2_sectors: list | None = None
    engine_requested: str | None = None
    sector_problem: object = None
    sector_reason: str | None = None
    sector_replay_reason: str | None = None
    fast_problem: object = None
    fast_reason: str | None = None

    @property
    def is_adapt(self) -> bool:
        """The ansatz is grown operator by operator (ADAPT-VQE)."""
        return self.ansatz == "adapt"

    @property
    def fallback_reason(self) -> str | None:
        """Why the requested engine does not run (None when it runs, or when
        none was requested): the sector engine's reason, and for "fast" the
        compiled statevector engine's too."""
        if self.engine_requested is None or self.sector_problem is not None \
                or self.fast_problem is not None:
            return None
        if self.engine_requested == "fast":
            return "; ".join(r for r in (self.sector_reason, self.fast_reason) if r) or None
        return self.sector_reason

    def engine_used(self, backend: str) -> str:
        """The engine the re-run uses: "sector" when the sector engine's problem
        was built, else the recorded ADAPT engine or the recorded ``backend``."""
        if self.sector_problem is not None:
            return "sector"
        if self.fast_problem is not None:
            from qencode_nb.rerun.fast_engine import NAME

            return NAME
        return self.adapt_engine or backend

    def replay_engine(self, backend: str) -> tuple[str, str | None]:
        """``(engine, fallback reason)`` of the replay: the sector engine unless
        it was not built or the stored angles may not be replayed on it; the
        compiled statevector engine when it was built."""
        if self.fast_problem is not None:
            from qencode_nb.rerun.fast_engine import NAME

            return NAME, None
        fallback = self.fallback_reason or self.sector_replay_reason
        if self.sector_problem is not None and fallback is None:
            return "sector", None
        return self.adapt_engine or backend, fallback

    def engine_record(self, backend: str) -> dict:
        """The ``engine`` record: requested, used, and why the requested engine
        did not run (``reason``) or the sector engine did not replay
        (``replay_reason``)."""
        return {"requested": self.engine_requested, "used": self.engine_used(backend),
                "reason": self.fallback_reason,
                "replay_reason": self.sector_replay_reason}


def build_problem(entry, rebuilt, engine: str | None = None,
                  hamiltonian: dict | None = None, *, rerun: bool = True) -> Problem:
    """Hamiltonian and ansatz circuit of an entry.

    The stored qubit Hamiltonian is used when the entry has one, else the
    rebuilt one.  Tapered UCCSD operators are tapered with the symmetry
    generators of the rebuilt full Hamiltonian (``rebuilt`` from
    :func:`qencode_nb.problem.check.rebuild`).

    ADAPT entries get their operator pool (the tapered UCCSD excitations,
    :func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`) and the recorded engine
    (the optimiser string, e.g. "ADAPT-VQE (L-BFGS-B inner, statevector
    engine)"; "qnode" when it names none).

    ``engine="fast"`` builds the sector problem where the entry maps, else
    the compiled statevector engine's (:func:`qencode_nb.rerun.fast_problem.build`;
    HEA, tapered UCCSD and the Pauli-word ADAPT pools); then no PennyLane
    object is built.  ``fast_reason`` says why neither runs.

    ``engine="sector"`` also builds the sector problem
    (:func:`qencode_nb.rerun.ci_space_map.build`) when the entry maps; otherwise
    ``sector_reason`` says why and the recorded backend runs.  ``hamiltonian``
    (the Hamiltonian check; ``None`` counts as "not checked") decides whether
    the stored angles may be replayed on the rebuilt sector
    (:func:`qencode_nb.rerun.ci_space_map.replay_reason`); when not, the tapered pool
    is built and the replay runs on the recorded engine.  ``rerun=False`` (an
    audit in replay mode) skips the sector engine's problem for ``engine="fast"``,
    whose replay runs on the compiled statevector engine.

    Raises:
        EntryError: an engine other than None, "sector" or "fast".
        RebuildMismatch: the rebuild's Z2 symmetry count or tapered qubits are not
            the entry's and the ansatz is built on them
            (:func:`qencode_nb.problem.check.check_structure`).
    """
    from qencode_nb.rerun import ansatz

    engine_requested = check_engine(engine)
    from qencode_nb.problem.check import check_structure

    check_structure(entry, rebuilt)      # a Z2-count mismatch says so first (issue 22)
    tapered = rebuilt.tapering
    origin = "stored" if entry.has_stored_hamiltonian else "rebuilt (of_bridge)"
    wires = list(range(entry.tapered_num_qubits))
    pool = adapt_engine = sector = sector_reason = replay_reason = None
    fast = fast_reason = None
    # engine="fast" without a re-run (mode=replay) replays on the compiled
    # statevector engine: the sector engine's problem is not built.
    if engine_requested == "sector" or (engine_requested == "fast" and rerun):
        from qencode_nb.rerun import ci_space_map as sector_map

        try:
            sector = sector_map.build(entry, rebuilt, circuit=entry.optimizer.engine or "qnode")
            replay_reason = sector_map.replay_reason(hamiltonian)
        except sector_map.NotMappable as exc:
            sector_reason = exc.reason
    if engine_requested == "fast" and (sector is None or replay_reason is not None):
        # The compiled statevector engine runs what the sector engine does not,
        # and replays the stored angles where the sector engine may not.
        from qencode_nb.rerun import fast_problem

        try:
            fast = fast_problem.build(entry, rebuilt)
        except fast_problem.NotFast as exc:
            fast_reason = exc.reason
    common = dict(hamiltonian_origin=origin, wires=wires,
                  constant_ha=entry.bk_constant_correction_ha or 0.0,
                  e_target=entry.casci_target, ansatz=entry.ansatz,
                  reps=entry.reps if entry.ansatz == "hea" else None,
                  z2_sectors=[int(x) for x in tapered.z2_sectors],
                  engine_requested=engine_requested, sector_problem=sector,
                  sector_reason=sector_reason, sector_replay_reason=replay_reason,
                  fast_problem=fast, fast_reason=fast_reason)
    if fast is not None:
        # Nothing of PennyLane is built: the replay runs on the fast engine, the
        # re-run on the sector engine where it maps, else on the fast engine.
        if entry.ansatz == "hea":
            n_params = ansatz.hea_num_params(len(wires), entry.reps)
        elif entry.ansatz == "uccsd":
            n_params = len(fast.words)
        else:
            adapt_engine = entry.optimizer.engine or "qnode"
            n_params = len((entry.adapt or {}).get("selected_operator_indices") or [])
        return Problem(hamiltonian=None, circuit=None, num_params=n_params,
                       adapt_engine=adapt_engine, **common)
    from qencode_nb.problem import pauli

    if entry.has_stored_hamiltonian:
        H = pauli.from_pauli_terms(entry.pauli_terms, entry.tapered_num_qubits)
    else:
        H = tapered.H_tapered
    if entry.ansatz == "hea":
        circuit = ansatz.hea_circuit(entry.hf_tapered_state, entry.reps)
        n_params = ansatz.hea_num_params(len(wires), entry.reps)
    else:
        # When the sector engine replays, the pool is its excitations: the
        # tapered operators (~1 min at H10) are not built.
        ops = sector.excitations if sector is not None and replay_reason is None else \
            ansatz.tapered_uccsd_ops(
            entry.active_space[0], tapered.n_qubits_full, tapered.generators,
            tapered.paulixops, tapered.z2_sectors)
        if entry.ansatz == "uccsd":
            circuit = ansatz.uccsd_circuit(entry.hf_tapered_state, ops)
            n_params = len(ops)
        else:
            circuit, pool = None, ops
            adapt_engine = entry.optimizer.engine or "qnode"
            n_params = len((entry.adapt or {}).get("selected_operator_indices") or [])
    return Problem(hamiltonian=H, circuit=circuit, num_params=n_params, pool=pool,
                   adapt_engine=adapt_engine, **common)
