"""The faithful study: the proof that the faithful engine is the recorded arithmetic.

For each entry, the audit (mode ``rerun``, stored Hamiltonian) runs twice in the same
kernel, stack, threads and kernels: once on the plain QNode (``-p engine qnode``), once
on the faithful engine (``-p engine faithful``), each writing every objective evaluation
to its evaluation log (:mod:`qencode_nb.rerun.evaluation_log`; ADAPT: every inner
evaluation).  Kept COBYLA paths are switched off for both
(``QENCODE_NB_COBYLA_PATHS=off``): each runs COBYLA itself.  The logs are compared line
by line (:func:`qencode_nb.studies.generator_compare.first_divergence`): the faithful
engine is proven for that entry, stack and host when the two agree at **every**
evaluation, to the bit, and the two re-runs end with the same energy, parameters and
nfev.  No tolerance enters.

One row per entry (:data:`FAITHFUL_COLUMNS`, ``faithful.csv``), with each run's wall
seconds and their ratio.  :func:`prove` is the same check in this process (two engines
bound here, budgets optionally capped), which the tests run on :data:`PROOF_SET` and on a
deliberately broken variant.

CLI: ``qencode-nb study faithful TARGET [run options] [--out DIR]``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from qencode_nb.options import RunOptions, with_changes

#: The proof set: v4 entries (file name prefixes in QEncode's v4 db) covering every
#: ansatz, mapping and measurement path ``default.qubit`` picks by size (fewer than 8
#: wires: ``state_diagonalizing_gates``; 8 or more: ``csr_dot_products``) of the recorded
#: releases, with what each covers.
PROOF_SET = {
    "LiH_ccpvdz_PAR_HEA": "HEA, parity, 5 qubits (diagonalising gates)",
    "H2_ccpvdz_BK_UCCSD": "UCCSD, Bravyi-Kitaev, 1 qubit",
    "BeH2_ccpvdz_PAR_UCCSD": "UCCSD, parity, 3 qubits",
    "H4_ccpvdz_JW_UCCSD": "UCCSD, Jordan-Wigner, 5 qubits (Exp copies queued twice)",
    "H4_ccpvdz_JW_ADAPT": "ADAPT (QNode procedure), Jordan-Wigner, 5 qubits",
    "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_ebc": "HEA, Jordan-Wigner, 8 qubits (CSR)",
    "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254": "HEA, Jordan-Wigner, 9 qubits (CSR)",
    "H6_ccpvdz_JW_ADAPT": "ADAPT (QNode procedure), Jordan-Wigner, 9 qubits (CSR)",
    "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_178": "HEA, L-BFGS-B (qml.grad on the "
                                                       "backprop path), 8 qubits",
}

#: Columns of ``faithful.csv``: ``proven`` the logs agree at every evaluation and the
#: results are the same bits; ``evaluations`` compared; ``first_divergence`` the 1-based
#: evaluation where the logs part (empty: none) and ``diverged_input`` there ("x": the
#: points differ, "energy": the same point gave another energy, "length"); energies as
#: ``float.hex``; ``faithful_ran`` the faithful engine re-ran (the ``engine`` record),
#: else ``faithful_reason``; wall seconds of each audit and their ratio (``speedup``; the
#: first audit of an entry also fills the rebuild cache the second reads), and of each
#: audit's re-run stage alone (the cell running ``stage("rerun")``, papermill's duration)
#: and theirs (``rerun_speedup``).
FAITHFUL_COLUMNS = ("entry_id", "ansatz", "mapping", "optimizer", "qubits", "proven",
                    "evaluations", "first_divergence", "diverged_input", "plain_hex",
                    "faithful_hex", "same_result", "faithful_ran", "faithful_reason",
                    "pennylane", "kernels", "plain_s", "faithful_s", "speedup",
                    "plain_rerun_s", "faithful_rerun_s", "rerun_speedup", "failure")


@dataclass
class FaithfulResult:
    """The study's table (:data:`FAITHFUL_COLUMNS`) and folder."""

    table: object
    out_dir: Path

    def counts(self) -> dict:
        t = self.table
        return {"proven": int((t["proven"] == True).sum()),       # noqa: E712
                "not proven": int((t["proven"] == False).sum()),  # noqa: E712
                "entries": len(t)}


class _Recorder:
    """An in-memory evaluation log (the lines :func:`read_log` gives)."""

    def __init__(self):
        self.lines = []

    def write(self, restart, x, energy):
        self.lines.append({"i": len(self.lines), "restart": int(restart),
                           "x": tuple(float.hex(float(v)) for v in x),
                           "energy": float.hex(float(energy))})


def prove(entry, rebuilt=None, *, max_iterations: int | None = None,
          restarts: int | None = None, optimizer: str | None = None) -> dict:
    """The proof in this process: the entry's recorded optimiser on the plain QNode and
    on the faithful engine, every evaluation recorded, compared line by line.

    Args:
        entry: an :class:`~qencode_nb.entry.model.Entry` whose recorded engine is the
            QNode one (HEA, UCCSD with COBYLA; ADAPT with the QNode procedure).
        rebuilt: its rebuild (:func:`qencode_nb.hamiltonian.check.rebuild`; None: made).
        max_iterations: COBYLA's budget (None: the entry's ``run_config.max_iterations``);
            ADAPT: the operator cap (None: the recorded one).
        restarts: restarts run (None: the entry's ``run_config.multistart_requested``).
        optimizer: "cobyla", "l-bfgs-b" or "adam" instead of the recorded one (HEA and
            UCCSD; as audit.ipynb's ``optimizer``), None: the recorded one.  A gradient
            optimiser's evaluations are its energies on trainable parameters, each with
            ``qml.grad`` of it; the gradients are compared through the path they give.

    Returns:
        ``{"divergence": first_divergence(...), "plain": {...}, "faithful": {...},
        "same_result": bool, "measurement": str}``; each run's ``energy`` (Ha), ``params``,
        ``nfev``, ``seconds``, ``log``; ADAPT also ``selected`` and ``gradients`` (the
        largest and runner-up screening gradients of every step, as ``float.hex``),
        which ``same_result`` compares too.

    Raises:
        NotRunnable: the faithful engine does not bind the entry (the reason).
    """
    from qencode_nb.engines import registry
    from qencode_nb.hamiltonian.check import rebuild
    from qencode_nb.studies.generator_compare import first_divergence

    rebuilt = rebuilt if rebuilt is not None else rebuild(entry)
    runs = {}
    measurement = None
    for name in ("qnode", "faithful"):
        bound = registry.get(name).bind(entry, rebuilt)
        log = _Recorder()
        t = time.perf_counter()
        runs[name] = _run(entry, bound, log, max_iterations, restarts,
                          optimizer or entry.optimizer.name)
        runs[name]["seconds"] = time.perf_counter() - t
        runs[name]["log"] = log.lines
        measurement = getattr(bound, "measurement", None) or measurement
    a, b = runs["qnode"], runs["faithful"]
    same = (float(a["energy"]).hex() == float(b["energy"]).hex() and a["nfev"] == b["nfev"]
            and [float(x).hex() for x in a["params"]] == [float(x).hex() for x in b["params"]]
            and a.get("selected") == b.get("selected")
            and a.get("gradients") == b.get("gradients"))
    return {"divergence": first_divergence(a["log"], b["log"]), "plain": a, "faithful": b,
            "same_result": same, "measurement": measurement}


class _Observed:
    """An energy whose every evaluation reaches ``log``: plain calls (COBYLA) and, for the
    gradient optimisers, each trainable evaluation through ``observe`` (as
    :class:`qencode_nb.rerun.progress.Progress` sees them)."""

    def __init__(self, energy, log):
        self.energy, self.log = energy, log
        self.qnode = energy.qnode

    @property
    def calls(self):
        return self.energy.calls

    def __call__(self, p):
        e = self.energy(p)
        self.log.write(0, p, e)
        return e

    def observe(self, e, p=None):
        self.log.write(0, p, e)


def _run(entry, bound, log, max_iterations, restarts, optimizer) -> dict:
    from qencode_nb.rerun.adapt import AdaptBudget, run_adapt
    from qencode_nb.rerun.vqe import run_vqe

    if entry.ansatz == "adapt":
        budget = AdaptBudget.of(entry, entry.reference_energy)
        if max_iterations is not None:
            from dataclasses import replace

            budget = replace(budget, max_operators=max_iterations)
        res = run_adapt(bound, budget, log=log)
        return {"energy": res.best_energy, "params": list(res.params), "nfev": res.nfev,
                "selected": list(res.selected_indices),
                "gradients": [float(g).hex() for g in res.max_gradients + res.runner_up_gradients]}
    res = run_vqe(_Observed(bound.energy(), log), bound.num_params, optimizer=optimizer,
                  max_iterations=max_iterations or entry.max_iterations,
                  restarts=restarts or entry.restarts_requested, seed=entry.seed,
                  e_target=entry.reference_energy, early_stop=entry.early_stop)
    return {"energy": res.best_energy, "params": list(res.best_params), "nfev": res.nfev}


def _audit(target, folder: Path, engine: str, options: RunOptions, kernelspec) -> dict:
    """The audit of ``target`` on ``engine`` with an evaluation log: its row, record
    values and log."""
    from qencode_nb.batch.study_jobs import run_one
    from qencode_nb.rerun.evaluation_log import read_log

    name = "plain" if engine == "qnode" else engine
    axis = {"evaluation_log": str(folder / f"{name}.jsonl"), "engine": engine,
            "stack": None, "mode": "rerun"}
    row, records = run_one(target, folder, name, axis, options, kernelspec)
    rerun = records.get("rerun") or {}
    row["result"] = None if row["status"] != "done" or rerun.get("energy") is None else {
        "energy": rerun.get("raw_energy", rerun["energy"]), "nfev": rerun.get("nfev"),
        "params": rerun.get("params")}
    row["engine_record"] = records.get("engine") or {}
    row["kernels"] = (records.get("blas_profile") or {}).get("kernels")
    row["pennylane"] = ((records.get("provenance") or {}).get("packages") or {}).get(
        "pennylane")
    row["log"] = read_log(folder / f"{name}.jsonl")
    row["rerun_s"] = stage_seconds(folder / f"{name}.ipynb", "rerun")
    return row


def stage_seconds(notebook, stage: str) -> float | None:
    """Seconds the cell running ``stage(<stage>)`` took in an executed notebook
    (papermill's ``duration``), or None (no such cell, or not run)."""
    import nbformat

    from qencode_nb.notebook.stages import stages_in

    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except (OSError, ValueError):
        return None
    for cell in nb.cells:
        if cell.cell_type == "code" and stage in stages_in(cell.source):
            return (cell.metadata.get("papermill") or {}).get("duration")
    return None


def study_entry(target, out: Path, options: RunOptions, *, kernelspec=None) -> dict:
    """The faithful study of one entry: its two audits and its row (module docstring)."""
    from qencode_nb.entry import load
    from qencode_nb.studies.generator_compare import first_divergence

    entry = load(target, db=options.db)
    folder = out / Path(str(entry.source)).stem
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.jsonl"):
        stale.unlink()
    saved = os.environ.get("QENCODE_NB_COBYLA_PATHS")
    os.environ["QENCODE_NB_COBYLA_PATHS"] = "off"       # each run runs COBYLA itself
    try:
        plain = _audit(target, folder, "qnode", options, kernelspec)
        fast = _audit(target, folder, "faithful", options, kernelspec)
    finally:
        if saved is None:
            os.environ.pop("QENCODE_NB_COBYLA_PATHS", None)
        else:
            os.environ["QENCODE_NB_COBYLA_PATHS"] = saved
    parted = first_divergence(plain["log"], fast["log"])
    a, b = plain["result"], fast["result"]
    same = (a is not None and b is not None
            and float(a["energy"]).hex() == float(b["energy"]).hex()
            and a["nfev"] == b["nfev"]
            and [float(x).hex() for x in a["params"] or []]
            == [float(x).hex() for x in b["params"] or []])
    ran = bool(fast["engine_record"].get("faithful"))
    failure = "; ".join(f"{name}: {r.get('failure') or r['status']}"
                        for name, r in (("plain", plain), ("faithful", fast))
                        if r["status"] != "done") or None
    if failure is None and not ran:
        failure = f"the faithful engine did not run: {fast['engine_record'].get('reason')}"
    proven = (failure is None and parted["evaluation"] is None and same
              and parted["compared"] > 0)
    inputs = {"Hamiltonian": "energy"}
    return {
        "entry_id": Path(str(entry.source)).stem, "ansatz": entry.ansatz, "mapping": entry.mapping,
        "optimizer": entry.optimizer.name, "qubits": entry.tapered_num_qubits,
        "proven": proven, "evaluations": parted["compared"],
        "first_divergence": parted["evaluation"],
        "diverged_input": inputs.get(parted["input"], parted["input"]),
        "plain_hex": None if a is None else float(a["energy"]).hex(),
        "faithful_hex": None if b is None else float(b["energy"]).hex(),
        "same_result": same, "faithful_ran": ran,
        "faithful_reason": fast["engine_record"].get("reason"),
        "pennylane": fast["pennylane"] or plain["pennylane"],
        "kernels": _kernels(fast["kernels"]),
        "plain_s": plain["seconds_total"], "faithful_s": fast["seconds_total"],
        "speedup": plain["seconds_total"] / fast["seconds_total"]
        if fast["seconds_total"] else None,
        "plain_rerun_s": plain["rerun_s"], "faithful_rerun_s": fast["rerun_s"],
        "rerun_speedup": plain["rerun_s"] / fast["rerun_s"]
        if plain["rerun_s"] and fast["rerun_s"] else None,
        "failure": failure}


def _kernels(kernels) -> str | None:
    from qencode_nb.notebook.blas_profiles import triple_text

    return triple_text(kernels) if kernels else None


def faithful_study(target, out_dir="runs/faithful", options: RunOptions | None = None,
                   **changes) -> FaithfulResult:
    """Run the faithful study of every entry ``target`` names; write ``faithful.csv``.

    Args:
        target: an entry file or bundled name, or a folder of entries.
        out_dir: the study folder (one subfolder per entry).
        options: :class:`~qencode_nb.options.RunOptions` (mode ``rerun``): ``stack``
            (both audits run in its kernel), ``blas_threads``, ``blas_coretype``, ``db``,
            ``timeout`` (per run, s).
        **changes: fields of ``options`` replaced.

    Raises:
        ParameterError: an engine, Hamiltonian or scheduler asked for (the study fixes
            them), or a file where the folder goes.
        EntryError: a target that names no entry.
    """
    import pandas as pd

    from qencode_nb.batch.run_folder import writable_folder
    from qencode_nb.environment.choice import kernels_for
    from qencode_nb.errors import ParameterError
    from qencode_nb.studies.generator import targets_of

    opts = with_changes(options, changes, mode="rerun")
    for field, default in (("engine", None), ("hamiltonian", "stored"), ("scheduler", None)):
        if getattr(opts, field) != default:
            raise ParameterError(f"{getattr(opts, field)!r} is not accepted here: the study "
                                 "runs the plain QNode and the faithful engine on the "
                                 "stored Hamiltonian, one run at a time; accepted: "
                                 f"{default!r}", parameter=field)
    entries = targets_of(target)
    out = writable_folder(Path(out_dir))
    kernels = kernels_for(opts.stack, entries, opts.db)
    rows = []
    for t in entries:
        rows.append(study_entry(t, out, opts, kernelspec=kernels[t]))
        table = pd.DataFrame(rows, columns=list(FAITHFUL_COLUMNS))
        table.to_csv(out / "faithful.csv", index=False)
    table = pd.DataFrame(rows, columns=list(FAITHFUL_COLUMNS))
    table.to_csv(out / "faithful.csv", index=False)
    return FaithfulResult(table=table, out_dir=out)
