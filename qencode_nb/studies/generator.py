"""The generator study: QEncode's own generator as the oracle of a miss (issue 59).

For each entry, in its folder ``<out>/<entry stem>/``:

1. **the generator here**: QEncode's ``generate_entry_v4.py`` at the commit the entry
   records (:mod:`qencode_nb.studies.generator_args`), run by
   :mod:`qencode_nb.studies.generator_driver` in the Python of the stack the audit runs
   in (``--stack``), pinned to the same BLAS threads and the same kernel per OpenBLAS
   copy, every objective evaluation logged (``generator.jsonl``), the entry it assembles
   kept (``generator-entry.json``), its output in ``generator.out``;
2. **qencode-nb here**: the audit (``audit.ipynb``, mode ``rerun`` unless ``--mode full``)
   of the entry, from its stored Hamiltonian, with ``evaluation_log``
   (``qencode-nb.ipynb``, ``qencode-nb.jsonl``);
3. **qencode-nb given the generator's Hamiltonian**, where the generator's rebuilt
   Hamiltonian is not the stored one to the bit or qencode-nb's energy is not the
   generator's: the audit (mode ``full``) of ``generator-entry.json``
   (``given-generator.ipynb``, ``given-generator.jsonl``) in the same kernel and pins; its
   replay says whether the generator's own entry holds its own energy (the operator it
   optimised is the one it stored).

The kernels: the generator's process is pinned to the triple the options'
``blas_coretype`` (default ``reference``: the entry's release triple) resolves to on this
CPU, written as an explicit kernel per copy (:func:`frozen_kernels`); the two audits get
the options' own ``blas_coretype`` and resolve it in their kernels (the generator's
assembled entry reads as the same release).  What each process measured with
threadpoolctl is in the row, and a row whose runs measured different kernels is failed,
naming them.  (Handing the audit of the assembled entry the explicit triple in a stack's
kernel left its first cell waiting for a reply 3 times of 3 on 2026-12-07: a lost kernel
message, issue 62.)  Then one row per entry (:data:`GENERATOR_COLUMNS`,
``generator.csv``): the three energies' bits and ulps, nfev, restarts, parameters equal
or not, the Hamiltonian's differing coefficients, where the traces of the generator and
qencode-nb part and which input differed there, and the class
(:func:`qencode_nb.studies.generator_compare.classify`).

Targets: an entry (file or bundled name), a folder of entries (each), or a sweep's
``--out`` folder (each of its misses: :func:`qencode_nb.studies.misses.misses`).
CLI: ``qencode-nb study generator TARGET [--generator DIR] [run options] [--out DIR]``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qencode_nb.options import RunOptions, with_changes

#: Columns of ``generator.csv``: energies as ``float.hex`` (``given_generator_hex``:
#: qencode-nb given the generator's Hamiltonian, empty where that run was not needed);
#: ``ulps_*`` between two of them; ``rebuild_is_generators`` qencode-nb's own rebuild (the
#: audit's Hamiltonian stage) equal to the generator's Hamiltonian to the bit and in order
#: (``hamiltonian.rebuilt_terms_sha256``); ``generator_plus_constant`` the generator's
#: energy plus the entry's tapering constant, which the generator's own entry does not
#: carry, is the published energy to the bit; ``first_divergence`` the 1-based evaluation where the
#: generator's and qencode-nb's logs part (a log line's ``i`` is that minus 1), empty where
#: they agree at every one; ``diverged_input`` x, Hamiltonian or length;
#: ``given_first_divergence`` the same for qencode-nb given the generator's Hamiltonian and
#: ``given_compared`` the evaluations compared there (empty: no such run);
#: ``generator_replays`` the generator's own entry replays its optimum to its own energy to
#: the bit on its own stored Hamiltonian (that audit's replay; ``generator_replay_ulps``);
#: ``blas_coretype`` the triple the generator's process was pinned to and
#: ``kernels_fallback`` why it is not the one asked (``reference`` on a CPU without
#: AVX-512); ``*_kernels`` what threadpoolctl measured in the generator's process and the
#: audit's kernel; ``*_s`` wall seconds; ``folder`` the entry's folder in the study's.
#: The audits run the recorded engine on the stored Hamiltonian (the study's design, no
#: ``--engine`` or ``--hamiltonian``).
GENERATOR_COLUMNS = (
    "entry_id", "commit", "class", "reason", "published_hex", "generator_hex",
    "qencode_nb_hex", "given_generator_hex", "ulps_generator_published",
    "ulps_qencode_nb_published", "ulps_qencode_nb_generator", "ulps_given_generator",
    "nfev_published", "nfev_generator", "nfev_qencode_nb", "restarts_published",
    "restarts_generator", "restarts_qencode_nb", "params_equal", "hamiltonian_terms",
    "coefficients_differing", "largest_difference_ha", "rebuild_is_generators",
    "generator_plus_constant", "first_divergence",
    "diverged_input", "given_first_divergence", "given_compared", "generator_replays",
    "generator_replay_ulps", "evaluations_generator",
    "evaluations_qencode_nb", "stack", "blas_coretype", "kernels_fallback",
    "generator_kernels", "audit_kernels", "generator_s", "audit_s", "given_s", "folder",
    "failure")


#: The columns of whole numbers (ulps, counts, evaluation indices), written as integers
#: with every digit (ulps reach past 2**53).
COUNT_COLUMNS = tuple(c for c in GENERATOR_COLUMNS if c.startswith(
    ("ulps_", "nfev_", "restarts_", "evaluations_"))) + (
    "hamiltonian_terms", "coefficients_differing", "first_divergence",
    "given_first_divergence", "given_compared", "generator_replay_ulps")


@dataclass(frozen=True)
class GeneratorResult:
    """What the study found.

    Attributes:
        out_dir: the study folder (one folder per entry, ``generator.csv``).
        table: one row per entry (:data:`GENERATOR_COLUMNS`).
    """

    out_dir: Path
    table: Any

    def counts(self) -> dict:
        """``{class: entries}`` in :data:`~qencode_nb.studies.generator_compare.CLASSES`
        order, classes with none left out."""
        from qencode_nb.studies.generator_compare import CLASSES

        found = self.table["class"].value_counts().to_dict() if len(self.table) else {}
        return {c: int(found[c]) for c in CLASSES if c in found}


def frozen_kernels(entry_target, options: RunOptions) -> tuple:
    """``(blas_coretype, fallback)`` of the generator's process: ``options.blas_coretype``
    (default ``reference``) resolved on this CPU for the entry's release, written as an
    explicit kernel per copy (:func:`qencode_nb.notebook.blas_profiles.kernel_spec`;
    ``host`` stays ``host``, the host's own kernels whatever the release), and why it is
    not what was asked (``reference`` on a CPU without AVX-512), else None."""
    from qencode_nb.environment.choice import release_triple
    from qencode_nb.notebook import blas_profiles

    asked = options.blas_coretype or blas_profiles.default()
    res = blas_profiles.resolve(asked, release=release_triple(entry_target, options.db))
    if not all(res.coretypes.get(c) for c in blas_profiles.COPIES):
        return asked, res.fallback
    return (blas_profiles.kernel_spec(res.coretypes, numpy_avx512=not res.numpy_disable,
                                      l2=res.l2), res.fallback)


def run_generator(run, folder: Path, threads: int, coretype: str, kernelspec,
                  timeout: float | None = None) -> dict:
    """Run the generator (``run``: :class:`~qencode_nb.studies.generator_args.GeneratorRun`)
    in ``kernelspec``'s Python, pinned to ``threads`` and ``coretype``; its files in
    ``folder``.  Returns the driver's JSON (:mod:`qencode_nb.studies.generator_driver`)
    plus ``seconds`` (wall, the whole process), or ``{"failure": why, "seconds"}``."""
    import subprocess

    from qencode_nb.batch.plan import run_python
    from qencode_nb.executor.papermill_engine import kernel_environment

    folder.mkdir(parents=True, exist_ok=True)
    args = json.dumps({"script": str(run.script), "argv": list(run.argv), "threads": threads,
                       "coretype": coretype, "release": None,
                       "log": str(folder / "generator.jsonl"),
                       "entry_out": str(folder / "generator-entry.json")})
    (folder / "generator-command.txt").write_text(run.command_text() + "\n", encoding="utf-8")
    t = time.perf_counter()
    with open(folder / "generator.out", "w", encoding="utf-8") as out:
        try:
            done = subprocess.run(
                [run_python(kernelspec), "-m", "qencode_nb.studies.generator_driver", args],
                env=kernel_environment(threads, coretype), cwd=str(folder), stdout=out,
                stderr=subprocess.STDOUT, text=True, check=False, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            return {"failure": f"the generator took over {timeout:g} s (--timeout) and "
                               "was stopped", "seconds": time.perf_counter() - t}
    seconds = time.perf_counter() - t
    lines = (folder / "generator.out").read_text(encoding="utf-8").strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except ValueError:
        result = {}
    if done.returncode != 0 or not result:
        tail = [ln for ln in lines if ln.strip()][-1:]
        return {**result, "seconds": seconds,
                "failure": f"the generator failed (exit {done.returncode}): "
                           f"{' '.join(tail)[:300]} (generator.out)"}
    return {**result, "seconds": seconds}


def _audit(target, folder: Path, name: str, options: RunOptions, coretype: str,
           kernelspec, mode: str | None = None) -> dict:
    """One audit of ``target`` with an evaluation log, in ``kernelspec`` (its row and
    records; ``mode`` replaces the options')."""
    from qencode_nb.batch.study_jobs import run_one

    axis = {"evaluation_log": str(folder / f"{name}.jsonl"), "stack": None}
    if mode is not None:
        axis["mode"] = mode
    if coretype is not None:        # else the options' (default: the notebook's reference)
        axis["blas_coretype"] = coretype
    row, records = run_one(target, folder, name, axis, options, kernelspec)
    rerun = records.get("rerun") or {}
    row["result"] = None if row["status"] != "done" or rerun.get("energy") is None else {
        "energy": rerun["energy"], "nfev": rerun.get("nfev"),
        "restarts": rerun.get("restarts_run"), "params": rerun.get("params")}
    row["kernels"] = ((records.get("blas_profile") or {}).get("kernels"))
    row["rebuilt_sha256"] = (records.get("hamiltonian") or {}).get("rebuilt_terms_sha256")
    replay = records.get("replay") or {}
    row["replay"] = ({"identical": bool(replay["identical"]), "ulps": replay.get("ulps")}
                     if replay.get("identical") is not None else
                     {"identical": None, "reason": replay["reason"]}
                     if replay.get("status") == "n/a" and replay.get("reason") else None)
    return row


def _published(entry) -> dict:
    return {"energy": entry.published_energy, "nfev": entry.published_nfev,
            "restarts": entry.published_restarts_run, "params": entry.optimal_params}


def study_entry(target, out: Path, options: RunOptions, *, generator=None,
                kernelspec=None) -> dict:
    """The generator study of one entry: its three runs and its row (module docstring).

    Raises:
        ParameterError, EntryError: as :func:`qencode_nb.studies.generator_args.generator_run`
            (no tree of the commit, a field the generator cannot take), before any run.
    """
    from qencode_nb.entry import load
    from qencode_nb.rerun.evaluation_log import read_log
    from qencode_nb.studies import generator_compare as cmp
    from qencode_nb.studies.generator_args import generator_run

    entry = load(target, db=options.db)
    run = generator_run(entry, generator)
    folder = out / Path(str(entry.source)).stem
    _clear(folder)
    coretype, fallback = frozen_kernels(target, options)
    gen = run_generator(run, folder, options.blas_threads, coretype, kernelspec,
                        options.timeout)
    ours = _audit(target, folder, "qencode-nb", options, None, kernelspec)
    produced = folder / "generator-entry.json"
    gen_entry = load(str(produced)) if produced.is_file() and "failure" not in gen else None
    generated = _published(gen_entry) if gen_entry is not None else None
    ham = (cmp.hamiltonian_difference(entry.pauli_terms, gen_entry.pauli_terms)
           if gen_entry is not None else None)
    given = None
    q_energy = (ours["result"] or {}).get("energy")
    if ham is not None and (not ham["identical"] or not cmp.same_bits(
            q_energy, (generated or {}).get("energy"))):
        # the generator's own entry, re-run and its optimum replayed: qencode-nb given the
        # generator's Hamiltonian, and whether that entry holds its own energy
        given = _audit(str(produced), folder, "given-generator", options, None, kernelspec,
                       mode="full")
    gen_log = read_log(folder / "generator.jsonl")
    our_log = read_log(folder / "qencode-nb.jsonl")
    parted = cmp.first_divergence(gen_log, our_log)
    given_parted = (cmp.first_divergence(gen_log, read_log(folder / "given-generator.jsonl"))
                    if given is not None else None)
    pub = _published(entry)
    q, b = ours["result"], (given or {}).get("result")
    klass, reason = cmp.classify(pub["energy"], generated, q, b, ham,
                                 environment=_not_recorded(options, fallback),
                                 generator_replay=(given or {}).get("replay"))
    with_constant = cmp.constant_added(pub["energy"], generated, entry, gen_entry)
    if with_constant:
        reason += (f"; the generator's energy plus the entry's tapering constant "
                   f"({entry.bk_constant_correction_ha!r} Ha), which it did not add, is the "
                   "published energy to the bit")
    e = {k: (v or {}).get("energy") for k, v in
         (("g", generated), ("q", q), ("b", b))}
    failures = [f for f in (gen.get("failure"), ours.get("failure"),
                            (given or {}).get("failure"), _kernels_differ(gen, ours, given))
                if f]
    return {
        "entry_id": entry.entry_id, "commit": run.commit, "class": klass, "reason": reason,
        "published_hex": float(pub["energy"]).hex(),
        "generator_hex": None if e["g"] is None else float(e["g"]).hex(),
        "qencode_nb_hex": None if e["q"] is None else float(e["q"]).hex(),
        "given_generator_hex": None if e["b"] is None else float(e["b"]).hex(),
        "ulps_generator_published": cmp.ulps(e["g"], pub["energy"]),
        "ulps_qencode_nb_published": cmp.ulps(e["q"], pub["energy"]),
        "ulps_qencode_nb_generator": cmp.ulps(e["q"], e["g"]),
        "ulps_given_generator": cmp.ulps(e["b"], e["g"]),
        "nfev_published": pub["nfev"], "nfev_generator": (generated or {}).get("nfev"),
        "nfev_qencode_nb": (q or {}).get("nfev"), "restarts_published": pub["restarts"],
        "restarts_generator": (generated or {}).get("restarts"),
        "restarts_qencode_nb": (q or {}).get("restarts"),
        "params_equal": _params_equal(generated, q),
        "hamiltonian_terms": (ham or {}).get("terms"),
        "coefficients_differing": (ham or {}).get("coefficients_differing"),
        "rebuild_is_generators": _same_rebuild(ours, gen_entry),
        "generator_plus_constant": with_constant,
        "largest_difference_ha": (ham or {}).get("largest_difference_ha"),
        "first_divergence": parted["evaluation"], "diverged_input": parted["input"],
        "given_first_divergence": None if given_parted is None else given_parted["evaluation"],
        "given_compared": None if given_parted is None else given_parted["compared"],
        "generator_replays": ((given or {}).get("replay") or {}).get("identical"),
        "generator_replay_ulps": ((given or {}).get("replay") or {}).get("ulps"),
        "evaluations_generator": len(gen_log), "evaluations_qencode_nb": len(our_log),
        "stack": options.stack, "blas_coretype": coretype, "kernels_fallback": fallback,
        "generator_kernels": _kernels(gen.get("kernels")), "audit_kernels": _kernels(ours["kernels"]),
        "generator_s": gen.get("seconds"), "audit_s": ours.get("seconds_total"),
        "given_s": None if given is None else given.get("seconds_total"),
        "folder": folder.name, "failure": "; ".join(failures) or None}


#: The files one entry's runs write in its folder (cleared before they run, so a row never
#: reads an earlier run's file).
RUN_FILES = ("generator-command.txt", "generator.out", "generator.jsonl",
             "generator-entry.json", "qencode-nb.*", "given-generator.*")


def _clear(folder: Path) -> None:
    for pattern in RUN_FILES:
        for path in folder.glob(pattern):
            path.unlink()


def _not_recorded(options: RunOptions, fallback) -> str | None:
    """What of the recorded environment this study did not run in (None: all of it that
    qencode-nb reproduces: the recorded stack and the release's kernels)."""
    parts = []
    if options.stack != "recorded":
        parts.append(f"the stack was {options.stack!r}, not the recorded one (--stack recorded)")
    if fallback:
        parts.append(f"the kernels were not the release triple ({fallback})")
    elif options.blas_coretype not in (None, "reference"):
        parts.append(f"the kernels were {options.blas_coretype!r}, not the release triple")
    return "; ".join(parts) or None


def _kernels_differ(gen: dict, ours: dict, given: dict | None) -> str | None:
    """Why the runs' measured kernels are not one triple, or None: the audits resolve the
    options' ``blas_coretype`` in their kernels, the generator's process was handed the
    frozen triple (:func:`frozen_kernels`); the row is only a comparison where threadpoolctl
    measured the same kernel per copy in all of them."""
    seen = {"generator": _kernels(gen.get("kernels")), "qencode-nb": _kernels(ours["kernels"])}
    if given is not None:
        seen["given-generator"] = _kernels(given["kernels"])
    known = {v for v in seen.values() if v}
    if len(known) <= 1:
        return None
    return "the runs measured different kernels: " + "; ".join(f"{k} {v}" for k, v in seen.items())


def _same_rebuild(ours: dict, gen_entry) -> bool | None:
    """qencode-nb's own rebuild (the audit's ``hamiltonian.rebuilt_terms_sha256``) is the
    generator's Hamiltonian to the bit and in order; None where either is missing."""
    from qencode_nb.hamiltonian.hamcheck import pauli_terms_sha256

    if gen_entry is None or not ours.get("rebuilt_sha256") or not gen_entry.pauli_terms:
        return None
    return ours["rebuilt_sha256"] == pauli_terms_sha256(gen_entry.pauli_terms)


def _params_equal(a: dict | None, b: dict | None):
    if not a or not b or a.get("params") is None or b.get("params") is None:
        return None
    return [float(x).hex() for x in a["params"]] == [float(x).hex() for x in b["params"]]


def _kernels(kernels) -> str | None:
    return None if not kernels else ",".join(f"{k}={v}" for k, v in sorted(kernels.items()))


def targets_of(target) -> list:
    """The entries a target names: an entry or bundled name itself, each entry of a
    folder of entries, or each miss of a sweep folder (its audit notebooks)."""
    from qencode_nb.batch.targets import resolve_targets
    from qencode_nb.readout.collect import audit_notebooks

    path = Path(str(target))
    if path.is_dir() and audit_notebooks(path):
        from qencode_nb.studies.misses import misses

        _, found = misses(path)
        return [rec["parameters"].get("entry") or rec["entry_source"] for _, rec in found]
    return resolve_targets([str(target)])


def generator_study(target, out_dir="runs/generator", options: RunOptions | None = None,
                    *, generator=None, **changes) -> GeneratorResult:
    """Run the generator study of every entry ``target`` names; write ``generator.csv``.

    Args:
        target: an entry file or bundled name, a folder of entries, or a sweep folder
            (its misses).
        out_dir: the study folder.
        options: :class:`~qencode_nb.options.RunOptions` (default mode ``rerun``):
            ``stack`` (the generator runs in that stack's Python, the audits in its
            kernel), ``blas_threads``, ``blas_coretype`` (frozen per entry,
            :func:`frozen_kernels`), ``engine``, ``db``, ``timeout`` (per run, s).
        generator: the ``--generator`` folder
            (:func:`qencode_nb.studies.generator_args.generator_tree`).
        **changes: fields of ``options`` replaced.

    Raises:
        ParameterError, EntryError: before any run, for the first target whose generator
            run cannot be derived (:func:`qencode_nb.studies.generator_args.generator_run`).
    """
    import pandas as pd

    from qencode_nb.entry import load
    from qencode_nb.environment.choice import kernels_for
    from qencode_nb.readout.published import published_csv
    from qencode_nb.studies.generator_args import generator_run
    from qencode_nb.studies.misses import whole_numbers

    from qencode_nb.batch.run_folder import writable_folder
    from qencode_nb.errors import ParameterError
    from qencode_nb.options import check_mode

    opts = with_changes(options, changes, mode="rerun")
    check_mode(opts.mode, study=True)
    for field, default in (("engine", None), ("hamiltonian", "stored"), ("scheduler", None)):
        if getattr(opts, field) != default:
            raise ParameterError(f"{getattr(opts, field)!r} is not accepted here: the study "
                                 "compares the recorded engine on the stored Hamiltonian, "
                                 "one run at a time, with the generator; accepted: "
                                 f"{default!r}", parameter=field)
    entries = targets_of(target)
    for t in entries:                      # every refusal before any run
        generator_run(load(t, db=opts.db), generator)
    out = writable_folder(Path(out_dir))      # a file there: refused, naming it
    kernels = kernels_for(opts.stack, entries, opts.db)
    rows = []
    table = pd.DataFrame(rows, columns=list(GENERATOR_COLUMNS))   # a sweep without misses
    for t in entries:
        rows.append(study_entry(t, out, opts, generator=generator, kernelspec=kernels[t]))
        table = whole_numbers(pd.DataFrame(rows, columns=list(GENERATOR_COLUMNS)), rows,
                              COUNT_COLUMNS)
        (out / "generator.csv").write_text(published_csv(table, out), encoding="utf-8")
    if not rows:
        (out / "generator.csv").write_text(published_csv(table, out), encoding="utf-8")
    return GeneratorResult(out_dir=out, table=table)
