"""The audit: integrity, replay, re-run and the verdict (three tiers and margin).

Definitions (DESIGN.md, "What reproducible means here"):

- error = |E - E_ref| with E_ref the exact ground energy of the qubit
  Hamiltonian (QEncode schema 4.0.0, results.quality.gap_reference
  "exact_qubit_hamiltonian"); certified when error < threshold
  (results.quality.gap_threshold, 0.01 Ha in QEncode v4).
- margin = (threshold - error) / threshold; a certified entry with margin
  below :data:`FRAGILE_MARGIN` is fragile.
- bit-identical: the re-run energy equals the published one to the last bit
  (compared as floats and as ``float.hex``); claimed only on the reference
  environment, ``n/a`` with the reasons elsewhere.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from qencode_nb.entry import model as entries_mod
from qencode_nb.errors import CapabilityMissing, EntryError
from qencode_nb.problem.rebuild import LIGHT_ABOVE_QUBITS
from qencode_nb.notebook.record import record

#: A certified entry with margin below this is fragile (DESIGN.md).
FRAGILE_MARGIN = 0.20
#: Replay must agree with the published energy to this (Ha) to pass.
REPLAY_TOL_HA = 1e-9
#: Largest untapered qubit count :func:`rebuild` treats in full (H8, 16 qubits,
#: fits in 24 GiB); above it (H10, 20 qubits: ~32 GB of sparse matrices) the
#: rebuild is light.
MAX_REBUILD_QUBITS = LIGHT_ABOVE_QUBITS
#: Audit modes (notebook parameter ``mode``).
MODES = ("full", "replay", "rerun")


def check_mode(mode) -> str:
    """Validate the ``mode`` parameter; raises EntryError listing the accepted modes."""
    if mode not in MODES:
        raise EntryError(f"{mode!r} is not accepted; accepted: {', '.join(MODES)}",
                         field="mode")
    return mode


@contextlib.contextmanager
def stage(name: str):
    """Run one notebook stage; on failure record ``error`` (stage, type, message), re-raise.

    A failed run thus keeps its executed notebook *and* a record of why it
    failed, readable with :func:`qencode_nb.read_records`.
    """
    try:
        yield
    except BaseException as exc:
        message = str(exc)
        if isinstance(exc, KeyboardInterrupt) and not message:
            message = "interrupted (a cell timeout or a user interrupt)"
        record("error", {"stage": name, "type": type(exc).__name__, "message": message})
        raise


def check_strict(provenance: dict, blas_threads: int) -> None:
    """``strict=True``: refuse drift, a dirty tree or more than one BLAS thread.

    Audits never need this (drift never blocks an audit); it is for writing
    entries, where the generator refused the same three things (its
    ``--allow-env-drift`` and ``--allow-dirty`` flags).

    Args:
        provenance: :func:`qencode_nb.notebook.provenance.collect` output.
        blas_threads: the measured BLAS thread count.

    Raises:
        StrictRefused: listing every reason (drifted packages as have/want).
    """
    from qencode_nb.errors import StrictRefused

    reasons = [f"{k} {v['have'] or 'not installed'} (want {v['want']})"
               for k, v in provenance["versions"].items() if not v["match"]]
    if reasons:
        reasons = ["environment drift: " + ", ".join(reasons)]
    git = provenance.get("git") or {}
    if git.get("dirty") is not False:
        reasons.append("git tree dirty" if git.get("dirty") else
                       "git state unknown (not a git checkout)")
    if blas_threads != 1:
        reasons.append(f"{blas_threads} BLAS threads measured (strict needs 1)")
    if reasons:
        raise StrictRefused("strict=True refuses to run: " + "; ".join(reasons))


# ---------------------------------------------------------------------------
# Integrity
# ---------------------------------------------------------------------------
def integrity(entry) -> dict:
    """SHA-256 by QEncode's rule, recomputed where the JSON is at hand.

    Returns ``{"status": "pass"|"fail"|"n/a", "recorded", "recomputed",
    "id_matches_hash", "signature", "reasons"}``.  The entry id ends in the
    first 16 hex digits of the hash (generator ``assemble_entry``).
    """
    reasons = []
    id_ok = entry.entry_id.endswith("__sha256_" + entry.sha256[:16])
    if not id_ok:
        reasons.append(f"entry_id {entry.entry_id} does not end in sha256[:16] "
                       f"{entry.sha256[:16]}")
    recomputed = None
    if entry.raw is not None:
        recomputed = entries_mod.qencode_sha256(entry.raw)
        if recomputed != entry.sha256:
            reasons.append(f"recomputed SHA-256 {recomputed} != recorded {entry.sha256}")
        status = "pass" if not reasons else "fail"
    else:
        reasons.append("no QEncode JSON at hand (pass db=FOLDER) to recompute the SHA-256")
        status = "fail" if not id_ok else "n/a"
    signature = "absent"
    if entry.raw is not None and (entry.raw.get("trust") or {}).get("signature_b64"):
        signature = "present, not verified (no key given)"
    return {"status": status, "recorded": entry.sha256, "recomputed": recomputed,
            "id_matches_hash": id_ok, "signature": signature, "reasons": reasons}


# ---------------------------------------------------------------------------
# The qubit problem: Hamiltonian, circuit, energy
# ---------------------------------------------------------------------------
@dataclass
class Problem:
    """What a replay and a re-run need.  Energies in Ha.

    ``constant_ha`` is the tapering constant correction added to every
    energy after optimisation (encoding.tapering.bk_constant_correction_ha).
    """

    hamiltonian: object
    hamiltonian_origin: str       # "stored" or "rebuilt (of_bridge)"
    circuit: object               # None for ADAPT (grown operator by operator)
    wires: list
    num_params: int               # ADAPT: number of selected operators, when recorded
    constant_ha: float
    e_target: float               # early-stop target: CASCI energy (generator main())
    pool: list | None = None      # ADAPT operator pool
    engine: str | None = None     # ADAPT engine: "qnode" or "statevector"
    ansatz: str = ""              # the ansatz built: hea, uccsd or adapt
    reps: int | None = None       # HEA repetitions built
    sectors: list | None = None   # Z2 sectors the tapered operators were built in
    engine_requested: str | None = None  # None (the recorded backend) or "sector"
    sector: object = None         # sector_map.SectorProblem when the sector engine runs
    sector_reason: str | None = None         # why the sector engine does not run
    sector_replay_reason: str | None = None  # why stored angles are not replayed on it


def rebuild(entry):
    """Rebuild the entry's problem from its declared procedure, through the disk cache.

    PySCF (RHF, CASSCF orbitals when declared, CASCI) -> OpenFermion ->
    qubit mapping -> Z2 tapering, as the generator does (of_bridge path).
    Above :data:`MAX_REBUILD_QUBITS` untapered qubits (H10, 20) the rebuild is
    light (:func:`qencode_nb.problem.rebuild.rebuild_tapered_light`): no
    diagonalisation in the qubit space, the CASCI energy as the exact one.

    Returns:
        ``(ChemSummary, TaperResult)`` (:func:`qencode_nb.problem.cache.cached_rebuild`).

    Raises:
        CapabilityMissing: a ``hamiltonian_source`` that cannot be rebuilt, or
            a large non-jordan_wigner problem.
    """
    from qencode_nb.problem.cache import cached_rebuild_entry

    full_qubits = 2 * entry.active_space[1]
    return cached_rebuild_entry(entry, light=full_qubits > MAX_REBUILD_QUBITS)


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
    from qencode_nb.problem.hamiltonian import to_pauli_terms

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
                "sectors_rebuilt": [int(x) for x in tap.sectors],
                "sectors_match": [int(x) for x in tap.sectors] == entry.tapering_sectors,
                "cache_hit": chem.cache_hit, "cache_key": chem.cache_key})
    return out


ENGINES = ("sector",)
"""Engines an audit may request instead of the recorded backend (``engine``
parameter; ``None`` runs the recorded one)."""


def check_engine(engine):
    """``None`` or a name of :data:`ENGINES` (case-insensitive).

    Raises:
        EntryError: naming the field ``engine``, the value and the accepted values.
    """
    if engine is None:
        return None
    name = str(engine).strip().lower()
    if name not in ENGINES:
        raise EntryError(f"engine {engine!r} is not accepted; accepted: None (the recorded "
                         f"backend), {', '.join(ENGINES)}", field="engine")
    return name


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
    from qencode_nb.rerun import ansatz
    from qencode_nb.problem import hamiltonian as hamiltonian_mod

    engine_requested = check_engine(engine)

    _, tapered = rebuilt
    if entry.has_stored_hamiltonian:
        H = hamiltonian_mod.from_pauli_terms(entry.pauli_terms, entry.tapered_num_qubits)
        origin = "stored"
    else:
        H = tapered.H_tapered
        origin = "rebuilt (of_bridge)"
    wires = list(range(entry.tapered_num_qubits))
    pool = engine = sector = sector_reason = replay_reason = None
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
            tapered.paulixops, tapered.sectors)
        if entry.ansatz == "uccsd":
            circuit = ansatz.uccsd_circuit(entry.hf_tapered_state, ops)
            n_params = len(ops)
        else:
            circuit, pool = None, ops
            engine = entry.optimizer.engine or "qnode"
            n_params = len((entry.adapt or {}).get("selected_operator_indices") or [])
    problem = Problem(hamiltonian=H, hamiltonian_origin=origin, circuit=circuit, wires=wires,
                      num_params=n_params, constant_ha=entry.bk_constant_correction_ha or 0.0,
                      e_target=entry.casci_energy, pool=pool, engine=engine,
                      ansatz=entry.ansatz, reps=entry.reps if entry.ansatz == "hea" else None,
                      sectors=[int(x) for x in tapered.sectors],
                      engine_requested=engine_requested, sector=sector,
                      sector_reason=sector_reason, sector_replay_reason=replay_reason)
    return problem


def energy_function(entry, problem: Problem):
    """The entry's recorded backend as a :class:`~qencode_nb.rerun.backends.Energy`."""
    from qencode_nb.rerun.backends import qnode_energy

    return qnode_energy(problem.hamiltonian, problem.circuit, problem.wires, entry.backend)


# ---------------------------------------------------------------------------
# Replay and re-run
# ---------------------------------------------------------------------------
def compare(energy: float, published: float) -> dict:
    """Bit-level comparison of two energies (Ha).

    Returns ``{"energy", "published", "delta_ha" (energy - published),
    "abs_delta_ha", "ulps", "energy_hex", "published_hex", "identical"}``;
    ``ulps`` counts representable doubles between the two.
    """
    delta = energy - published
    return {
        "energy": energy, "published": published, "delta_ha": delta,
        "abs_delta_ha": abs(delta), "ulps": ulp_distance(energy, published),
        "energy_hex": float(energy).hex(), "published_hex": float(published).hex(),
        "identical": float(energy).hex() == float(published).hex(),
    }


def ulp_distance(a: float, b: float) -> int:
    """Number of representable doubles between ``a`` and ``b`` (0 when equal)."""
    import struct

    def ordered(x: float) -> int:
        i = struct.unpack("<q", struct.pack("<d", x))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)

    return abs(ordered(a) - ordered(b))


def replay(entry, problem: Problem) -> dict:
    """Energy of the stored optimal parameters on the problem's Hamiltonian.

    Returns the :func:`compare` dict plus ``status`` ("pass" when
    |ΔE| <= :data:`REPLAY_TOL_HA`, else "fail"; "n/a" with ``reason`` when
    the entry stores no parameters) and ``hamiltonian`` (stored/rebuilt).
    """
    if entry.optimal_params is None:
        return {"status": "n/a", "energy": None, "published": entry.published_energy,
                "delta_ha": None,
                "reason": f"{entry.source.name} stores no optimal parameters; pass "
                          "db=FOLDER of QEncode JSON files to replay them"}
    import numpy as np

    if len(entry.optimal_params) != problem.num_params:
        raise EntryError(f"{len(entry.optimal_params)} stored parameters but the "
                         f"{entry.ansatz} ansatz has {problem.num_params}",
                         field="results.vqe.optimal_params", path=entry.source)
    fallback = None
    if problem.engine_requested == "sector":
        fallback = problem.sector_reason or problem.sector_replay_reason
    if problem.pool is not None:
        from qencode_nb.rerun import adapt

        n_pool = entry.adapt.get("n_operators_pool")
        if n_pool is not None and n_pool != len(problem.pool):
            raise EntryError(f"records a pool of {n_pool} operators; the rebuilt pool has "
                             f"{len(problem.pool)}",
                             field="encoding.adapt_metadata.n_operators_pool", path=entry.source)
        if problem.sector is not None and fallback is None:
            energy = _sector_replay(entry, problem)
        else:   # the recorded engine (the pool is then the tapered one)
            energy = adapt.replay_energy(problem.hamiltonian, problem.pool,
                                         entry.hf_tapered_state,
                                         entry.adapt["selected_operator_indices"],
                                         entry.optimal_params, problem.wires,
                                         engine=problem.engine, backend=entry.backend)
    else:
        energy = energy_function(entry, problem)(np.array(entry.optimal_params, dtype=float))
    out = compare(energy + problem.constant_ha, entry.published_energy)
    out["engine"] = ("sector" if problem.sector is not None and fallback is None
                     else (problem.engine or entry.backend))
    if fallback:
        out["engine_fallback"] = fallback
    out["status"] = "pass" if out["abs_delta_ha"] <= REPLAY_TOL_HA else "fail"
    out["tolerance_ha"] = REPLAY_TOL_HA
    out["hamiltonian"] = problem.hamiltonian_origin
    return out


def _sector_replay(entry, problem: Problem) -> float:
    """Stored ADAPT angles on the sector engine (Ha, uncorrected)."""
    from qencode_nb.rerun import ci_space as S

    from qencode_nb.rerun.adapt import _check_selection

    sp = problem.sector
    selected = _check_selection(sp.generators, entry.adapt["selected_operator_indices"],
                                entry.optimal_params)
    params = [sp.angle_factor * float(x) for x in entry.optimal_params]
    c = S.build_state(sp.sector, sp.generators, selected, params)
    return sp.sector.energy(c.reshape(sp.sector.shape))


def rerun(entry, problem: Problem, optimizer: str | None = None) -> dict:
    """Re-run the recorded optimiser with the recorded budgets.

    On the sector engine when the problem was built with ``engine="sector"``
    and the entry maps (the configuration's ``backend`` is then "sector", so
    tier 1 lists the deviation); otherwise on the recorded backend, with
    ``engine_fallback`` giving the reason when the sector engine was asked for.

    ``optimizer`` (a study's override, e.g. "l-bfgs-b" or "Adam(lr=0.1)";
    vocabulary as ``run_config.optimizer``) replaces the recorded optimiser
    of a non-ADAPT entry; the configuration records what ran, so tier 1
    reports the deviation.

    Uses ``run_config.max_iterations`` (never capped), ``multistart_requested``
    restarts, the seed, the backend, and QEncode's early stop against the
    CASCI energy on the energy *before* the constant correction (see
    :mod:`qencode_nb.rerun.vqe`).

    Returns a dict: ``energy`` (Ha, constant included), ``raw_energy``,
    ``nfev``, ``restarts_run``, ``stopped_early``, ``restart_energies``,
    ``restart_nfev``, the configuration used, and ``findings`` (quirks of
    the generator's procedure that this run reproduced).
    """
    out = _rerun(entry, problem, optimizer)
    if problem.engine_requested == "sector" and problem.sector is None:
        out["engine_fallback"] = problem.sector_reason
    return out


def _rerun(entry, problem: Problem, optimizer: str | None) -> dict:
    from qencode_nb.rerun.vqe import run_vqe

    opt = entry.optimizer
    if optimizer is not None:
        from qencode_nb.entry import vocabulary

        opt = vocabulary.optimizer(optimizer, "optimizer")
        if problem.pool is not None or opt.name == "adapt":
            raise EntryError(f"{optimizer!r} is not accepted for an ADAPT entry or as an "
                             "override; accepted: COBYLA, L-BFGS-B, Adam(lr=<float>) on "
                             "a hea or uccsd entry", field="optimizer")
    if problem.pool is not None and problem.sector is not None:
        return _rerun_adapt_sector(entry, problem)
    if problem.pool is not None:
        return _rerun_adapt(entry, problem)
    energy = energy_function(entry, problem)
    res = run_vqe(energy, problem.num_params, optimizer=opt.name,
                  max_iterations=entry.max_iterations, restarts=entry.restarts_requested,
                  seed=entry.seed, e_target=problem.e_target, early_stop=entry.early_stop,
                  learning_rate=opt.learning_rate or 0.05)
    findings = _constant_finding(
        problem, f"; early stop cannot fire: {res.restarts_run} of "
                 f"{entry.restarts_requested} restarts ran")
    return {
        **_outcome(problem, res.best_energy, res.best_params, res.nfev, res.restarts_run,
                   res.stopped_early),
        "energy_calls": energy.calls,
        "restart_energies": res.restart_energies,
        "restart_nfev": res.restart_nfev,
        "config": {"optimizer": res.optimizer, "max_iterations": res.max_iterations,
                   "restarts_requested": res.restarts_requested, "seed": res.seed,
                   "early_stop": entry.early_stop,
                   "backend": energy.backend, "early_stop_target_ha": problem.e_target,
                   "early_stop_threshold_ha": 0.01, "num_params": problem.num_params,
                   "hamiltonian": problem.hamiltonian_origin},
        "published": {"nfev": entry.published_nfev,
                      "restarts_run": entry.published_restarts_run,
                      "early_stopped": entry.published_early_stopped},
        "findings": findings,
    }


def _outcome(problem: Problem, raw_energy: float, params, nfev: int, restarts_run: int,
             stopped_early: bool) -> dict:
    """The part of a re-run record every optimiser shares (energies in Ha)."""
    return {"energy": raw_energy + problem.constant_ha, "raw_energy": raw_energy,
            "constant_ha": problem.constant_ha, "params": params, "nfev": nfev,
            "restarts_run": restarts_run, "stopped_early": stopped_early}


def _constant_finding(problem: Problem, consequence: str = "") -> list[str]:
    """The generator's early-stop quirk, when the entry has a constant correction."""
    if not abs(problem.constant_ha) > 0:
        return []
    return ["the generator's early-stop check compares the energy before the tapering "
            f"constant correction ({problem.constant_ha:+.6f} Ha) with the CASCI energy"
            + consequence]


def _rerun_adapt(entry, problem: Problem) -> dict:
    """ADAPT-VQE re-run with the recorded threshold, operator cap, inner
    optimiser, engine and ``max_iterations`` (see :func:`qencode_nb.rerun.adapt.run_adapt`)."""
    from qencode_nb.rerun import adapt

    meta = entry.adapt
    res = adapt.run_adapt(problem.hamiltonian, problem.pool, entry.hf_tapered_state,
                          problem.wires, gradient_threshold=meta["gradient_threshold"],
                          max_operators=meta["max_operators"],
                          max_iterations=entry.max_iterations, seed=entry.seed,
                          e_target=problem.e_target, early_stop=entry.early_stop,
                          inner=entry.optimizer.inner or "cobyla", engine=problem.engine,
                          backend=entry.backend)
    return _adapt_record(entry, problem, res, entry.backend)


def _rerun_adapt_sector(entry, problem: Problem) -> dict:
    """The ADAPT re-run of :func:`_rerun_adapt` on the sector engine
    (:func:`qencode_nb.rerun.adapt.run_adapt_sector`): same pool order, rules and
    budgets; the backend is "sector"."""
    from qencode_nb.rerun import adapt

    meta = entry.adapt
    sp = problem.sector
    res = adapt.run_adapt_sector(sp.sector, sp.generators,
                                 gradient_threshold=meta["gradient_threshold"],
                                 max_operators=meta["max_operators"],
                                 max_iterations=entry.max_iterations, seed=entry.seed,
                                 e_target=problem.e_target, early_stop=entry.early_stop,
                                 inner=entry.optimizer.inner or "cobyla")
    out = _adapt_record(entry, problem, res, "sector")
    out["findings"].append(
        f"re-run on the sector engine ({sp.sector.dim} determinants, H·ψ by "
        f"{sp.sector.hop_method}) instead of the recorded {problem.engine} engine on "
        f"{entry.backend}: same procedure, different arithmetic (agrees to rounding)")
    out["sector_build_seconds"] = sp.seconds
    if problem.sector_replay_reason:
        out["findings"].append("the sector re-run used the rebuilt active-space Hamiltonian, "
                               "which is not the stored one: " + problem.sector_replay_reason
                               + "; energies are gauge-invariant, the ADAPT path may differ")
    return out


def _adapt_record(entry, problem: Problem, res, backend: str) -> dict:
    """The re-run record of an ADAPT run (:class:`qencode_nb.rerun.adapt.AdaptResult`)."""
    meta = entry.adapt
    recorded = meta.get("selected_operator_indices")
    findings = ["the generator's ADAPT draws no random numbers: the recorded seed has no "
                f"effect (run_config.seed={entry.seed}, multistart_requested="
                f"{entry.restarts_requested} unused)"]
    findings += _constant_finding(problem)
    if res.tied_iterations:
        findings.append("operator selection tied at outer iteration(s) "
                        f"{res.tied_iterations}; the lowest pool index won, a choice "
                        "last-digit differences can flip")
    if res.engine in ("statevector", "sector") and res.inner == "l-bfgs-b":
        findings.append(f"the {res.engine} engine's nfev counts optimiser steps x (1 + "
                        "n_params), not energy evaluations; not comparable with COBYLA nfev")
    return {
        **_outcome(problem, res.best_energy, res.params, res.nfev, 1, res.stopped_early),
        "selected_operator_indices": res.selected_indices,
        "selection_matches": None if recorded is None else res.selected_indices == recorded,
        "converged": res.converged,
        "n_iterations": res.n_iterations,
        "max_gradients": res.max_gradients,
        "tied_iterations": res.tied_iterations,
        "optimizer_label": res.optimizer_label,
        "wall_s": res.wall_s,
        "config": {"optimizer": "adapt", "inner": res.inner, "engine": res.engine,
                   "gradient_threshold": res.gradient_threshold,
                   "max_operators": res.max_operators, "max_iterations": res.max_iterations,
                   "seed": res.seed, "early_stop": entry.early_stop,
                   "pool": res.n_pool, "backend": backend,
                   "early_stop_target_ha": problem.e_target, "early_stop_threshold_ha": 0.01,
                   "hamiltonian": ("rebuilt sector (PySCF CASCI integrals)"
                                   if res.engine == "sector" else problem.hamiltonian_origin)},
        "published": {"nfev": entry.published_nfev, "early_stopped": entry.published_early_stopped,
                      "selected_operator_indices": recorded,
                      "converged": meta.get("converged"), "n_iterations": meta.get("n_iterations")},
        "findings": findings,
    }


# ---------------------------------------------------------------------------
# Tier 1: what the stages used
# ---------------------------------------------------------------------------
def procedure_used(entry, rebuilt, hamiltonian: dict | None, problem: Problem,
                   rerun: dict | None) -> dict:
    """What the audit's stages actually used, per tier-1 field.

    Sources: the rebuild inputs (``ChemSummary.inputs``, the arguments the
    PySCF build ran with, also its cache key), the problem that was built
    (ansatz, reps, Z2 sectors), the Hamiltonian check (the source inferred
    from the fingerprint when the stored Hamiltonian is used) and the
    re-run's recorded configuration (what the optimiser received).

    Returns:
        ``{field: {"value", "source"[, "not_used"]}}`` for
        :func:`qencode_nb.verdict.procedure.table`; run fields are absent without a
        re-run.
    """
    chem, _ = rebuilt
    inputs = chem.inputs or {}
    used = {}
    for name in ("geometry", "basis", "charge", "spin", "active_space",
                 "orbital_optimization", "mapping"):
        if name in inputs:
            used[name] = {"value": inputs[name], "source": "PySCF rebuild input"}
    used["tapering_sectors"] = {"value": problem.sectors,
                                "source": "Z2 sectors of the rebuilt tapering"}
    if problem.hamiltonian_origin == "stored":
        h = hamiltonian or {}
        inferred = h.get("hamiltonian_source_inferred")
        used["hamiltonian_source"] = {
            "value": inferred, "unverified": inferred is None,
            "source": "stored Hamiltonian; source inferred from "
                      + (h.get("inference_basis") or "the Hamiltonian check")}
    else:
        used["hamiltonian_source"] = {"value": inputs.get("hamiltonian_source"),
                                      "source": "Hamiltonian rebuilt by qencode-nb"}
    used["ansatz"] = {"value": problem.ansatz, "source": "ansatz built"}
    if problem.ansatz == "hea":
        used["reps"] = {"value": problem.reps, "source": "ansatz built"}
    if rerun is None or "config" not in rerun:
        return used
    cfg = rerun["config"]
    src = "re-run configuration"
    for name, key in (("optimizer", "optimizer"), ("max_iterations", "max_iterations"),
                      ("seed", "seed"), ("backend", "backend"), ("early_stop", "early_stop")):
        used[name] = {"value": cfg[key], "source": src}
    if problem.pool is not None:
        used["adapt.gradient_threshold"] = {"value": cfg["gradient_threshold"], "source": src}
        used["adapt.max_operators"] = {"value": cfg["max_operators"], "source": src}
        used["adapt.inner_optimizer"] = {"value": cfg["inner"], "source": src}
        used["adapt.engine"] = {"value": cfg["engine"], "source": src}
        used["restarts_requested"] = {
            "value": None, "not_used": True,
            "source": "the generator's ADAPT runs once: multistart is not used"}
    else:
        used["restarts_requested"] = {"value": cfg["restarts_requested"], "source": src}
    return used


def procedure(entry, rebuilt, hamiltonian, problem, rerun, mode: str = "full") -> dict:
    """Tier 1: ``{"fields": table rows, "tier": {"status", "reasons"}}``
    (:mod:`qencode_nb.verdict.procedure`)."""
    from qencode_nb.verdict import procedure as proc

    rows = proc.table(entry, procedure_used(entry, rebuilt, hamiltonian, problem, rerun), mode)
    return {"fields": rows, "tier": proc.tier(rows)}


# ---------------------------------------------------------------------------
# Verdict
# ---------------------------------------------------------------------------
def margin(error: float, threshold: float) -> float:
    """(threshold - error) / threshold; both in Ha (DESIGN.md)."""
    return (threshold - error) / threshold


#: Energies this far below the exact ground energy (Ha) break the variational
#: bound: the Hamiltonian, the reference or the published energy is inconsistent.
VARIATIONAL_TOL_HA = 1e-9
#: Relative tolerance when recomputing the published gap from the published energies.
GAP_CONSISTENCY_REL = 1e-9


def consistency(entry, rerun_energy: float | None) -> dict:
    """Internal consistency of the published numbers and of the re-run (Ha).

    - ``published_gap_recomputed`` = |E_published - E_exact| must equal the
      stated ``abs_vqe_exact_gap`` (relative :data:`GAP_CONSISTENCY_REL`);
    - the published and re-run energies must not lie more than
      :data:`VARIATIONAL_TOL_HA` below the exact ground energy.

    Returns ``{"status": "pass"|"fail", "reasons": [...], ...}``.
    """
    exact = entry.exact_ground_energy
    gap = abs(entry.published_energy - exact)
    reasons = []
    if abs(gap - entry.published_error) > GAP_CONSISTENCY_REL * max(gap, 1e-12) + 1e-15:
        reasons.append(f"stated published error {entry.published_error:.9e} Ha but "
                       f"|E_published - E_exact| = {gap:.9e} Ha")
    for label, energy in (("published", entry.published_energy), ("re-run", rerun_energy)):
        if energy is not None and energy < exact - VARIATIONAL_TOL_HA:
            reasons.append(f"{label} energy {energy:.12f} Ha lies {exact - energy:.3e} Ha "
                           "below the exact ground energy (variational bound broken)")
    return {"status": "fail" if reasons else "pass", "reasons": reasons,
            "published_gap_recomputed": gap, "published_gap_stated": entry.published_error}


def verdict(entry, rerun_energy: float | None, provenance: dict, blas_threads: int,
            blas_coretype: str | None = None, integrity: dict | None = None,
            replay: dict | None = None, procedure: dict | None = None,
            rerun_reason: str | None = None) -> dict:
    """The three tiers, margins and the one-line summary.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rerun_energy: the re-run energy (Ha), or None in replay mode.
        provenance: :func:`qencode_nb.notebook.provenance.collect` output.
        blas_threads: the measured BLAS thread count.
        blas_coretype: the OPENBLAS_CORETYPE in force, if any.
        integrity, replay: the stage results; a failure of either is named
            in the summary line.
        procedure: :func:`procedure` output (tier 1); None: tier 1 n/a.
        rerun_reason: why there is no re-run energy (tiers 2 and 3 then read
            n/a with it); default "no re-run (mode=replay)".

    Returns a dict with ``error_mha``, ``published_error_mha``,
    ``movement_mha`` (signed: regenerated - published error),
    ``margin_regenerated``, ``margin_published``, ``certified``, ``fragile``, ``certification_change``,
    ``bit_identical`` (the measured fact: re-run energy equal to the
    published one to the last bit, whatever tier 3 says), ``difference``
    (:func:`compare`), ``consistency`` (:func:`consistency`), ``tiers``,
    ``alerts`` and ``summary``.
    """
    thr = entry.threshold
    pub_err = entry.published_error
    cons = consistency(entry, rerun_energy)
    alerts = []
    if integrity and integrity.get("status") == "fail":
        alerts.append("INTEGRITY FAIL")
    if replay and replay.get("status") == "fail":
        alerts.append(f"REPLAY FAIL ({replay.get('abs_delta_ha', float('nan')):.3e} Ha)")
    if cons["status"] == "fail":
        alerts.append("INCONSISTENT: " + "; ".join(cons["reasons"]))
    alert_text = "".join(f"; {a}" for a in alerts)
    out = {"threshold_mha": thr * 1e3, "published_error_mha": pub_err * 1e3,
           "published_certified": entry.published_certified,
           "margin_published": margin(pub_err, thr), "reference_energy": entry.exact_ground_energy,
           "consistency": cons, "alerts": alerts}
    tiers = {"procedure": (procedure or {}).get("tier") or
             {"status": "n/a", "reasons": ["tier 1 was not evaluated"]},
             "certification": {"status": "n/a",
                               "reasons": [rerun_reason or "no re-run (mode=replay)"]},
             "bit_identical": {"status": "n/a",
                               "reasons": [rerun_reason or "no re-run (mode=replay)"]}}
    if rerun_energy is None:
        out.update({"error_mha": None, "movement_mha": None, "margin_regenerated": None,
                    "certified": None, "fragile": None, "certification_change": None,
                    "bit_identical": None, "difference": None, "tiers": tiers,
                    "summary": f"{entry.entry_id}: no re-run; published error "
                               f"{pub_err * 1e3:.6f} mHa; tiers: {tier_line(tiers)}"
                               f"{alert_text}"})
        return out
    err = abs(rerun_energy - entry.exact_ground_energy)
    cert = err < thr
    m = margin(err, thr)
    change = None
    if cert != entry.published_certified:
        change = "gained certification" if cert else "lost certification"
    tiers["certification"] = {
        "status": "pass" if cert else "fail",
        "reasons": [f"regenerated error {err * 1e3:.6f} mHa "
                    f"{'<' if cert else '>='} threshold {thr * 1e3:.3f} mHa"]}
    diff = compare(rerun_energy, entry.published_energy)
    reasons = []
    drift = [f"{k} {v['have'] or 'not installed'} (want {v['want']})"
             for k, v in provenance["versions"].items() if not v["match"]]
    if not provenance["versions"]:
        reasons.append("the entry records no package pins (provenance.tool_versions), so "
                       "no environment can be called its reference")
    if drift:
        reasons.append("not the reference environment: " + ", ".join(drift))
    if blas_threads != 1:
        reasons.append(f"{blas_threads} BLAS threads measured (reference: 1)")
    for row in (procedure or {}).get("fields") or []:
        if row.get("field") == "backend" and row.get("status") == "differs":
            reasons.append(f"re-run on {row['used']}, not the recorded {row['declared']}: "
                           "other arithmetic, bit identity is not expected")
    kernels = sorted({str(p.get("architecture")) for p in provenance["blas"]["pools"]
                      if p.get("library") == "openblas"})
    kernel_note = ("BLAS kernel not recorded by the entry; this run used "
                   + (", ".join(kernels) or "no OpenBLAS")
                   + (f" (OPENBLAS_CORETYPE={blas_coretype})" if blas_coretype else ""))
    measured = (f"measured: re-run {diff['energy_hex']} vs published {diff['published_hex']}, "
                f"ΔE {diff['delta_ha']:+.3e} Ha, {diff['ulps']} ulps")
    if reasons:
        tiers["bit_identical"] = {"status": "n/a", "reasons": reasons + [kernel_note, measured]}
    else:
        tiers["bit_identical"] = {"status": "pass" if diff["identical"] else "fail",
                                  "reasons": [kernel_note, measured]}
    label = "certified" if cert else "NOT certified"
    fragile = cert and m < FRAGILE_MARGIN
    bits = ("bit-identical to the published energy" if diff["identical"]
            else f"differs from the published energy by {diff['delta_ha']:+.3e} Ha "
                 f"({diff['ulps']} ulps)")
    bits += f" (tier 3 {tiers['bit_identical']['status']})"
    out.update({
        "error_mha": err * 1e3, "movement_mha": (err - pub_err) * 1e3, "margin_regenerated": m,
        "certified": cert, "fragile": fragile, "certification_change": change,
        "bit_identical": diff["identical"], "difference": diff, "tiers": tiers,
        "summary": (f"{entry.entry_id}: {label}, error {err * 1e3:.6f} mHa (published "
                    f"{pub_err * 1e3:.6f}), margin {m:.1%}{' FRAGILE' if fragile else ''}"
                    f"{'; ' + change if change else ''}; {bits}; tiers: "
                    + tier_line(tiers) + alert_text),
    })
    return out


def tier_line(tiers: dict) -> str:
    """``procedure fail, certification pass, bit-identical n/a`` from a tiers dict."""
    return ", ".join(f"{name.replace('_', '-')} {tiers[name]['status']}"
                     for name in ("procedure", "certification", "bit_identical"))
