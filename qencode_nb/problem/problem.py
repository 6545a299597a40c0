"""The qubit problem of an entry: rebuilt (through the disk cache), checked
against the stored Hamiltonian, and assembled for replay and re-run.

:func:`rebuild` runs PySCF -> OpenFermion -> mapping -> Z2 tapering as the
generator does; :func:`hamiltonian_check` compares the result with the entry;
:func:`build_problem` picks the stored (or rebuilt) Hamiltonian and builds the
recorded ansatz, the ADAPT pool and, when ``engine="sector"`` is asked for,
the sector engine's problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.notebook.parameters import check_engine
from qencode_nb.rules import LIGHT_REBUILD_ABOVE_QUBITS


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
        engine_requested: None (the recorded backend) or "sector".
        sector_problem: :class:`qencode_nb.rerun.ci_space_map.SectorProblem`
            when the sector engine runs, else None.
        sector_reason: why the sector engine does not run (it was asked for).
        sector_replay_reason: why the stored angles are not replayed on it.
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

    def engine_used(self, backend: str) -> str:
        """The engine the re-run uses: "sector" when the sector engine's problem
        was built, else the recorded ADAPT engine or the recorded ``backend``."""
        return "sector" if self.sector_problem is not None else (self.adapt_engine or backend)

    def replay_engine(self, backend: str) -> tuple[str, str | None]:
        """``(engine, fallback reason)`` of the replay: the sector engine unless
        it was not built or the stored angles may not be replayed on it."""
        fallback = None
        if self.engine_requested == "sector":
            fallback = self.sector_reason or self.sector_replay_reason
        if self.sector_problem is not None and fallback is None:
            return "sector", None
        return self.adapt_engine or backend, fallback

    def engine_record(self, backend: str) -> dict:
        """The ``engine`` record: requested, used, and why the sector engine
        did not run (``reason``) or did not replay (``replay_reason``)."""
        return {"requested": self.engine_requested, "used": self.engine_used(backend),
                "reason": self.sector_reason, "replay_reason": self.sector_replay_reason}


def rebuild(entry):
    """Rebuild the entry's problem from its declared procedure, through the disk cache.

    PySCF (RHF, CASSCF orbitals when declared, CASCI) -> OpenFermion ->
    qubit mapping -> Z2 tapering, as the generator does (of_bridge path).
    Above :data:`qencode_nb.rules.LIGHT_REBUILD_ABOVE_QUBITS` untapered qubits
    (H10, 20) the rebuild is light: no diagonalisation in the qubit space,
    the CASCI energy as the exact one.

    Returns:
        ``(ChemSummary, TaperResult)`` (:func:`qencode_nb.problem.cache.cached_rebuild`).

    Raises:
        CapabilityMissing: a ``hamiltonian_source`` that cannot be rebuilt, or
            a large non-jordan_wigner problem.
    """
    from qencode_nb.problem.cache import cached_rebuild_entry

    full_qubits = 2 * entry.active_space[1]
    return cached_rebuild_entry(entry, light=full_qubits > LIGHT_REBUILD_ABOVE_QUBITS)


def hamiltonian_check(entry, rebuilt) -> dict:
    """Audit stage "hamiltonian": the rebuilt Hamiltonian against the entry.

    With a stored Hamiltonian: :func:`qencode_nb.problem.hamcheck.compare_hamiltonian`
    (term sets, largest |Δ coefficient|, exact ground energies stored vs
    rebuilt, fingerprint |E_exact - E_CASCI| and the inferred
    ``hamiltonian_source``).  Without one (a params/ entry without ``db``) the
    rebuilt ground energy is compared with the published exact ground energy
    and the fingerprint is taken from the rebuild.  Both add the chemistry
    checks: rebuilt HF and CASCI energies minus the published ones (Ha).
    """
    from qencode_nb.problem import hamcheck
    from qencode_nb.problem.pauli import to_pauli_terms

    chem, tap = rebuilt
    if entry.has_stored_hamiltonian:
        out = hamcheck.check_entry(entry, rebuilt=rebuilt)
    else:
        ground = chem.e_exact_qubit_ha
        fingerprint = abs(ground - entry.casci_energy)
        inferred = hamcheck.infer_source(fingerprint)
        out = {"n_terms": len(to_pauli_terms(tap.H_tapered)), "n_terms_stored": None,
               "terms_match": None, "max_abs_dcoeff": None, "ground_energy": ground,
               "ground_energy_stored": entry.exact_ground_energy,
               "ground_energy_diff": ground - entry.exact_ground_energy,
               "fingerprint_ha": fingerprint, "hamiltonian_source_inferred": inferred,
               "hamiltonian_source_recorded": entry.hamiltonian_source,
               "source_matches": (None if entry.hamiltonian_source is None
                                  else entry.hamiltonian_source == inferred),
               "note": "no stored Hamiltonian (pass db=FOLDER to compare terms)"}
    out.update({"e_hf_rebuilt": chem.e_hf, "e_hf_diff": chem.e_hf - entry.hf_energy,
                "e_casci_rebuilt": chem.e_casci,
                "e_casci_diff": chem.e_casci - entry.casci_energy,
                "sectors_rebuilt": [int(x) for x in tap.z2_sectors],
                "sectors_match": [int(x) for x in tap.z2_sectors] == entry.tapering_sectors,
                "cache_hit": chem.cache_hit, "cache_key": chem.cache_key})
    return out


def build_problem(entry, rebuilt, engine: str | None = None,
                  hamiltonian: dict | None = None) -> Problem:
    """Hamiltonian and ansatz circuit of an entry.

    The stored qubit Hamiltonian is used when the entry has one, else the
    rebuilt one.  Tapered UCCSD operators are tapered with the symmetry
    generators of the rebuilt full Hamiltonian (``rebuilt`` from
    :func:`rebuild`).

    ADAPT entries get their operator pool (the tapered UCCSD excitations,
    :func:`qencode_nb.rerun.ansatz.tapered_uccsd_ops`) and the recorded engine
    (the optimiser string, e.g. "ADAPT-VQE (L-BFGS-B inner, statevector
    engine)"; "qnode" when it names none).

    ``engine="sector"`` also builds the sector problem
    (:func:`qencode_nb.rerun.ci_space_map.build`) when the entry maps; otherwise
    ``sector_reason`` says why and the recorded backend runs.  ``hamiltonian``
    (the Hamiltonian check; ``None`` counts as "not checked") decides whether
    the stored angles may be replayed on the rebuilt sector
    (:func:`qencode_nb.rerun.ci_space_map.replay_reason`); when not, the tapered pool
    is built and the replay runs on the recorded engine.

    Raises:
        EntryError: an engine other than None or "sector".
    """
    from qencode_nb.problem import pauli
    from qencode_nb.rerun import ansatz

    engine_requested = check_engine(engine)

    _, tapered = rebuilt
    if entry.has_stored_hamiltonian:
        H = pauli.from_pauli_terms(entry.pauli_terms, entry.tapered_num_qubits)
        origin = "stored"
    else:
        H = tapered.H_tapered
        origin = "rebuilt (of_bridge)"
    wires = list(range(entry.tapered_num_qubits))
    pool = adapt_engine = sector = sector_reason = replay_reason = None
    if engine_requested == "sector":
        from qencode_nb.rerun import ci_space_map as sector_map

        try:
            sector = sector_map.build(entry, rebuilt, circuit=entry.optimizer.engine or "qnode")
            replay_reason = sector_map.replay_reason(hamiltonian)
        except sector_map.NotMappable as exc:
            sector_reason = exc.reason
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
    return Problem(hamiltonian=H, hamiltonian_origin=origin, circuit=circuit, wires=wires,
                      num_params=n_params, constant_ha=entry.bk_constant_correction_ha or 0.0,
                      e_target=entry.casci_energy, pool=pool, adapt_engine=adapt_engine,
                      ansatz=entry.ansatz, reps=entry.reps if entry.ansatz == "hea" else None,
                      z2_sectors=[int(x) for x in tapered.z2_sectors],
                      engine_requested=engine_requested, sector_problem=sector,
                      sector_reason=sector_reason, sector_replay_reason=replay_reason)
