"""Executed notebooks -> one pandas DataFrame, a row per run.

Records are found by mimetype (:mod:`qencode_nb.notebook.record`), never by cell
index.  A notebook without the final ``done`` record is a failed run,
whatever papermill wrote in its metadata (docs/explanations/notebook-contract.md); its
row says so and carries the recorded ``error`` when there is one.

:func:`audit_table` reads audit notebooks into fixed columns
(:data:`AUDIT_COLUMNS`); :func:`collect` reads any executed notebooks into
one wide table (parameters, every record, papermill's duration and
exception).  :func:`adapt_operator_table` tabulates the ADAPT entries of a
folder of QEncode JSON files; :func:`resolve_path` finds a folder given
relative to the working directory or to the repository root.  The audit
record names are those of :data:`qencode_nb.verdict.records.AUDIT_RECORDS`
(:data:`READ_RECORDS`, :data:`COPIED_RECORDS`).
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.notebook.stages import failure_line
from qencode_nb.readout.manifest import audit_notebooks
from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

#: Columns of :func:`audit_table`, in order (new ones are appended: tools outside
#: read them; ``engine_used`` / ``replay_engine`` name the engines of the re-run and
#: the replay; ``active_space_warning`` the Hamiltonian stage's warning that the
#: active space splits near-degenerate orbitals; ``blas_profile`` the kernel
#: profile used and ``numeric_fingerprint`` the short hash of the numeric fingerprint,
#: ``hamiltonian_status`` pass / fail / unverified and ``hamiltonian_source`` the
#: generator path the stored terms were proven equal to; ``stack`` the package stack that
#: ran, ``stack_key`` the key of its recorded packages' versions and ``stack_not_used`` why
#: the stack asked for did not run, ``stack_lock`` the key of its lock and
#: ``stack_resolved_at`` the date it was resolved at (None: undated, or the current
#: environment), qencode_nb.environment.in_force.stack_in_force).  Energies in Ha, errors in mHa,
#: times in s.  ``seconds`` is the wall time of the run (the sweep's
#: ``<name>.outcome.json``, else papermill's duration).  The status columns (tiers,
#: ``integrity``, ``replay_status``, ``hamiltonian_status``) hold the records' statuses;
#: in the file ``summary.csv`` a status ``n/a`` is spelt ``not applicable``, which
#: ``pandas.read_csv`` keeps (:mod:`qencode_nb.readout.summary_csv`).
AUDIT_COLUMNS = (
    "notebook", "entry_id", "status", "failure", "seconds", "mode", "blas_threads", "kernel",
    "tier_procedure", "tier_certification", "tier_bit_identical", "undeclared",
    "fields_differ", "integrity",
    "replay_status", "replay_abs_delta_ha", "replay_identical",
    "terms_match", "n_terms", "n_terms_stored", "max_abs_dcoeff", "ground_energy_diff",
    "fingerprint_ha", "hamiltonian_source_inferred", "hamiltonian_source_recorded",
    "cache_hit", "rerun_energy", "rerun_nfev", "published_nfev", "rerun_restarts_run",
    "error_mha", "published_error_mha", "movement_mha", "threshold_mha",
    "margin_regenerated", "margin_published", "certified", "published_certified",
    "certification_change", "fragile", "bit_identical", "delta_ha", "ulps", "findings",
    "verdict", "engine_used", "replay_engine", "active_space_warning",
    "blas_profile", "numeric_fingerprint", "hamiltonian_status", "hamiltonian_source",
    "stack", "stack_key", "stack_not_used", "stack_lock", "stack_resolved_at",
)

#: The audit records :func:`audit_row` reads (names from
#: :data:`qencode_nb.verdict.records.AUDIT_RECORDS`, the one list; plus the
#: ``error`` record of a failed stage), so a renamed record cannot silently empty a
#: column.
READ_RECORDS = ("entry_id", "mode", "blas_threads", "blas_coretype", "blas_profile",
                "provenance",
                "tiers", "fields", "integrity", "replay", "hamiltonian", "rerun",
                "difference", "published_certified", "certified", "certification_change",
                "engine", "stack", "done", ERROR_RECORD)

#: The columns of :data:`AUDIT_COLUMNS` that are audit records copied as recorded
#: (derived: the columns that name a record, less those :func:`audit_row` computes
#: from a record: ``undeclared`` from ``fields``, ``integrity`` its status,
#: ``published_certified`` with its fallback, ``blas_profile`` the profile used).
COPIED_RECORDS = tuple(c for c in AUDIT_COLUMNS if c in AUDIT_RECORDS
                       and c not in ("undeclared", "integrity", "published_certified",
                                     "blas_profile", "stack"))


def _get(d, *path):
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _blas_kernel(records) -> str | None:
    """The ``kernel`` column: the OpenBLAS CPU kernels (architectures) threadpoolctl
    reported in the run's provenance, joined by ",", with the requested
    ``OPENBLAS_CORETYPE`` in brackets when one was set; None when no OpenBLAS pool."""
    pools = _get(records, "provenance", "blas", "pools") or []
    arch = sorted({str(p.get("architecture")) for p in pools if p.get("library") == "openblas"})
    coretype = records.get("blas_coretype")
    text = ",".join(arch) if arch else None
    return f"{text} (OPENBLAS_CORETYPE={coretype})" if coretype else text


def audit_row(path) -> dict:
    """One row of :data:`AUDIT_COLUMNS` from an executed audit notebook.

    ``status`` is "done" (the run recorded ``done``), "inconsistent" (its recorded
    parameter values contradict papermill's metadata, :func:`inconsistent_parameters`;
    never done) or "failed" (with ``failure`` = the recorded error, or papermill's, or
    "no done record"; a notebook that cannot be read, e.g. cut short by a full disk, is a
    failed row naming the run's ``<name>.outcome.json`` failure or the read error).
    """
    import nbformat

    from qencode_nb.notebook.record import iter_records

    try:
        nb = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError) as exc:   # cut short (a full disk), or not a notebook
        outcome = _outcome(Path(path)) or {}
        return {"notebook": str(path), "status": "failed", "seconds": outcome.get("seconds"),
                "failure": outcome.get("failure") or
                f"the executed notebook cannot be read ({type(exc).__name__}: "
                f"{str(exc)[:200]})"}
    r = dict(iter_records(nb))
    pm = nb.metadata.get("papermill") or {}
    inconsistent = inconsistent_parameters(r, nb)
    done = r.get("done") is True and inconsistent is None
    failure = None if done else (inconsistent or _recorded_failure(r, nb)
                                 or "the notebook has no done record")
    h = r.get("hamiltonian") or {}
    rep = r.get("replay") or {}
    rerun = r.get("rerun") or {}
    tiers = r.get("tiers") or {}
    fields = r.get("fields") or []
    diff = r.get("difference") or {}
    outcome = _outcome(Path(path))
    if outcome and outcome.get("failure") and not failure:
        failure = outcome["failure"]
    seconds = (outcome or {}).get("seconds") or pm.get("duration")
    row = {
        "notebook": str(path),
        "status": "done" if done else ("inconsistent" if inconsistent else "failed"),
        "failure": failure, "seconds": seconds,
        "kernel": _blas_kernel(r),
        "blas_profile": _get(r, "blas_profile", "used"),
        "numeric_fingerprint": _get(r, "provenance", "numeric", "hash"),
        "stack": _get(r, "stack", "name"), "stack_key": _get(r, "stack", "key"),
        "stack_not_used": _get(r, "stack", "not_used"),
        "stack_lock": _get(r, "stack", "lock_key"),
        "stack_resolved_at": _get(r, "stack", "resolved_at"),
        "tier_procedure": _get(tiers, "procedure", "status"),
        "tier_certification": _get(tiers, "certification", "status"),
        "tier_bit_identical": _get(tiers, "bit_identical", "status"),
        "undeclared": ";".join(f["field"] for f in fields if f["status"] == "undeclared")
        or None,
        "fields_differ": ";".join(f["field"] for f in fields if f["status"] == "differs")
        or None,
        "integrity": _get(r, "integrity", "status"),
        "engine_used": _get(r, "engine", "used"), "replay_engine": rep.get("engine"),
        "replay_status": rep.get("status"), "replay_abs_delta_ha": rep.get("abs_delta_ha"),
        "replay_identical": rep.get("identical"),
        "terms_match": h.get("terms_match"), "n_terms": h.get("n_terms"),
        "n_terms_stored": h.get("n_terms_stored"), "max_abs_dcoeff": h.get("max_abs_dcoeff"),
        "ground_energy_diff": h.get("ground_energy_diff"),
        "fingerprint_ha": h.get("fingerprint_ha"),
        "hamiltonian_source_inferred": h.get("hamiltonian_source_inferred"),
        "hamiltonian_status": h.get("status"), "hamiltonian_source": h.get("hamiltonian_source"),
        "hamiltonian_source_recorded": h.get("hamiltonian_source_recorded"),
        "cache_hit": h.get("cache_hit"),
        "rerun_nfev": rerun.get("nfev"), "published_nfev": _get(rerun, "published", "nfev"),
        "rerun_restarts_run": rerun.get("restarts_run"),
        "published_certified": r.get("published_certified"),
        "delta_ha": diff.get("delta_ha"), "ulps": diff.get("ulps"),
        "findings": " | ".join(rerun.get("findings") or []) or None,
        "active_space_warning": (h.get("active_space_boundary") or {}).get("warning"),
    }
    if row["published_certified"] is None and r.get("certified") is not None:
        row["published_certified"] = r["certified"] != bool(r.get("certification_change"))
    for name in COPIED_RECORDS:
        row[name] = r.get(name)
    return row


def inconsistent_parameters(records: dict, nb) -> str | None:
    """Why a run's recorded parameter values (``parameters_in_force``, taken at the pin
    cell) contradict papermill's ``metadata.papermill.parameters``, or None when they
    agree (or either is absent: a notebook run without papermill, or older)."""
    in_force = records.get("parameters_in_force")
    given = (nb.metadata.get("papermill") or {}).get("parameters") or {}
    if not isinstance(in_force, dict) or not given:
        return None
    differ = {k: (v, in_force[k]) for k, v in given.items()
              if k in in_force and in_force[k] != v}
    if not differ:
        return None
    return "inconsistent parameters: " + "; ".join(
        f"{k}={a!r} in papermill's metadata but {b!r} in force" for k, (a, b) in differ.items())


def _recorded_failure(records: dict, nb) -> str | None:
    """Why a run failed, as the notebook says it: the ``error`` record
    ("stage: type: message"), else papermill's exception (with the error
    output's "name: value" when a cell has one), else a cell the kernel never
    answered in a run papermill ended (:func:`stopped_failure`); None when it says
    nothing."""
    err = records.get("error")
    if isinstance(err, dict):
        return failure_line(err)
    if (nb.metadata.get("papermill") or {}).get("exception"):
        outputs = [o for c in nb.cells for o in (c.get("outputs") or [])
                   if o.get("output_type") == "error"]
        detail = f": {outputs[-1].get('ename')}: {outputs[-1].get('evalue')}" if outputs else ""
        return "papermill recorded an exception" + detail
    return stopped_failure(nb)


#: The type named by :func:`stopped_failure`: the kernel never answered a cell.
NO_REPLY = "NoReply"


def stopped_failure(nb) -> str | None:
    """``"<stage>: NoReply: ..."`` for a run that papermill ended (its ``end_time`` is
    set) while a cell was still waiting for the kernel's reply
    (:func:`qencode_nb.notebook.stages.stopped_cell`): the kernel died or was killed
    during that cell (or the cell timed out) and nothing recorded why, as under stock
    papermill, whose ``DeadKernelError`` leaves no trace in the notebook.  None
    otherwise (a run still going, or cut short with no cell left waiting)."""
    from qencode_nb.notebook.stages import stopped_cell

    if not (nb.metadata.get("papermill") or {}).get("end_time"):
        return None
    stopped = stopped_cell(nb)
    if stopped is None:
        return None
    where = "this stage's cell" if stopped["stage"] else f"cell {stopped['cell']}"
    return failure_line({"stage": stopped["stage"] or "run", "type": NO_REPLY,
                         "message": f"the kernel never answered {where}: it died or was "
                                    "killed (or the cell timed out) and the run ended "
                                    "without a done record"})


def _outcome(nb_path: Path) -> dict | None:
    """The sweep's ``<name>.outcome.json`` beside a notebook, if any."""
    import json

    side = nb_path.with_suffix(".outcome.json")
    try:
        return json.loads(side.read_text())
    except (OSError, ValueError):
        return None


def audit_table(paths):
    """A DataFrame with one :func:`audit_row` per executed audit notebook.

    Args:
        paths: executed ``.ipynb`` files (read as given), or a folder (its
            audit notebooks, :func:`audit_notebooks`).
    """
    import pandas as pd

    if isinstance(paths, (str, Path)) and Path(paths).is_dir():
        paths = audit_notebooks(paths)
    return pd.DataFrame([audit_row(p) for p in _notebooks(paths)], columns=list(AUDIT_COLUMNS))


def _notebooks(paths) -> list[Path]:
    """A folder -> its ``*.ipynb`` files (sorted); anything else -> its paths."""
    if isinstance(paths, (str, Path)):
        path = Path(paths)
        return sorted(path.glob("*.ipynb")) if path.is_dir() else [path]
    return [Path(p) for p in paths]


#: The bookkeeping columns of :func:`collect`, first in every table.  A record
#: with one of these names goes to ``record.<name>`` instead.
COLLECT_COLUMNS = ("notebook", "status", "failure", "done", "duration", "exception",
                   "kernelspec")


def collect_row(path) -> dict:
    """One :func:`collect` row from an executed notebook (any notebook, not only audits).

    ``status``: "done" (the ``done`` record is true and the recorded parameter values
    agree with papermill's metadata), "inconsistent" (they do not,
    :func:`inconsistent_parameters`: never done), "failed" (not done, and
    the notebook says why: an ``error`` record, papermill's exception, a cell the
    kernel never answered in a run papermill ended (a dead or killed kernel:
    :func:`stopped_failure`), or the sweep's ``<name>.outcome.json``; the reason,
    "stage: type: message", is in ``failure``), or "partial" (not done and no
    reason: execution stopped early or is still running; also a failed run under
    the contract).  A file that is
    not a readable notebook is "failed" with the reason.  ``duration`` is
    papermill's (s), ``exception`` papermill's flag, ``kernelspec`` the Jupyter
    kernelspec it ran in (an environment study's package stack).  Papermill parameters
    become ``parameters.<name>``; a dict record ``name`` becomes
    ``name.<key>`` columns (one level), any other record value stays as is.
    """
    import nbformat

    from qencode_nb.notebook.record import iter_records

    row = {"notebook": str(path)}
    try:
        nb = nbformat.read(str(path), as_version=4)
        records = dict(iter_records(nb))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return {**row, "status": "failed", "done": False,
                "failure": f"not a readable notebook: {type(exc).__name__}: {exc}"}
    pm = nb.metadata.get("papermill") or {}
    inconsistent = inconsistent_parameters(records, nb)
    done = records.get("done") is True and inconsistent is None
    failure = inconsistent or (None if done else (_recorded_failure(records, nb)
                                                  or (_outcome(Path(path)) or {}).get("failure")))
    row.update({"status": "done" if done else ("inconsistent" if inconsistent else
                                               "failed" if failure else "partial"),
                "failure": failure if done or failure else "the notebook has no done record",
                "done": done, "duration": pm.get("duration"), "exception": pm.get("exception"),
                "kernelspec": (nb.metadata.get("kernelspec") or {}).get("name")})
    for name, value in (pm.get("parameters") or {}).items():
        row[f"parameters.{name}"] = value
    for name, value in records.items():
        key = f"record.{name}" if name in COLLECT_COLUMNS and name != "done" else name
        if isinstance(value, dict):
            row.update({f"{key}.{k}": v for k, v in value.items()})
        elif name != "done":
            row[key] = value
    return row


def collect(folder):
    """A DataFrame with one :func:`collect_row` per executed notebook in ``folder``.

    Failed and partial runs are kept and marked in ``status``, never dropped.
    Columns: :data:`COLLECT_COLUMNS`, then ``parameters.*`` and the records
    in order of first appearance (a value a notebook lacks is NaN).

    Args:
        folder: a folder (all ``*.ipynb`` in it, sorted by name), or a list
            of notebook paths.

    Raises:
        FileNotFoundError: ``folder`` is given as a str or Path and does not exist.
    """
    import pandas as pd

    if isinstance(folder, (str, Path)) and not Path(folder).exists():
        raise FileNotFoundError(f"no such folder of executed notebooks: {folder}")
    rows = [collect_row(p) for p in _notebooks(folder)]
    columns = list(COLLECT_COLUMNS)
    params = dict.fromkeys(k for r in rows for k in r if k.startswith("parameters."))
    others = dict.fromkeys(k for r in rows for k in r
                           if k not in COLLECT_COLUMNS and k not in params)
    return pd.DataFrame(rows, columns=columns + list(params) + list(others))


def resolve_path(path) -> Path:
    """An existing file or folder: ``path`` as given (absolute, or relative to
    the working directory), else relative to the repository root (where
    ``../shared/qencode-v4/db`` is meant from).

    Raises:
        FileNotFoundError: neither exists (names both places tried).
    """
    from qencode_nb.paths import ROOT

    given = Path(path).expanduser()
    for candidate in (given, ROOT / given):
        if candidate.exists():
            return candidate.resolve()
    raise FileNotFoundError(f"{str(path)!r} exists neither relative to {Path.cwd()} nor to "
                            f"the repository root {ROOT}")


#: Columns of :func:`adapt_operator_table`.
ADAPT_COLUMNS = ("system", "entry_id", "hydrogen_chain", "n_atoms", "n_h_atoms",
                 "active_electrons", "active_orbitals", "n_operators", "n_operators_pool",
                 "max_operators", "capped", "converged", "n_iterations", "file")


def adapt_operator_table(folder):
    """The ADAPT entries of a folder of QEncode JSON files, one row each.

    ``n_operators`` is ``len(encoding.adapt_metadata.selected_operator_indices)``;
    ``n_operators_pool``, ``max_operators`` (the cap), ``converged`` and
    ``n_iterations`` are the entry's; ``capped`` is n_operators >= max_operators.
    ``hydrogen_chain`` is true when every atom of ``problem.geometry`` is H
    (``n_h_atoms`` counts them); ``active_orbitals`` is the active space's
    number of spatial orbitals.  Rows are ordered chains first, then by
    active orbitals and name.  Entries of other ansatze are skipped; a folder
    without ADAPT entries gives an empty table.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
        EntryError: a JSON file that is not a valid QEncode entry (names it).
    """
    import pandas as pd

    from qencode_nb.entry.readers import read_qencode_json
    from qencode_nb.entry.release_files import folder_entries

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{str(folder)!r} is not a folder of QEncode JSON entries")
    rows = []
    for path in folder_entries(folder)[0]:   # a release's index.json etc. are no entries
        e = read_qencode_json(path)
        if e.ansatz != "adapt":
            continue
        atoms = [a.split()[0] for a in e.geometry.split(";") if a.strip()]
        n_ops = len(e.adapt.get("selected_operator_indices") or [])
        cap = e.adapt.get("max_operators")
        rows.append({
            "system": e.name, "entry_id": e.entry_id,
            "hydrogen_chain": bool(atoms) and all(a.upper() == "H" for a in atoms),
            "n_atoms": len(atoms), "n_h_atoms": sum(a.upper() == "H" for a in atoms),
            "active_electrons": e.active_space[0], "active_orbitals": e.active_space[1],
            "n_operators": n_ops, "n_operators_pool": e.adapt.get("n_operators_pool"),
            "max_operators": cap, "capped": cap is not None and n_ops >= cap,
            "converged": e.adapt.get("converged"), "n_iterations": e.adapt.get("n_iterations"),
            "file": str(path),
        })
    table = pd.DataFrame(rows, columns=list(ADAPT_COLUMNS))
    if len(table):
        table = table.sort_values(["hydrogen_chain", "active_orbitals", "system"],
                                  ascending=[False, True, True], ignore_index=True)
    return table
