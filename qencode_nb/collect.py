"""Executed notebooks -> one pandas DataFrame, a row per run.

Records are found by mimetype (:mod:`qencode_nb.record`), never by cell
index.  A notebook without the final ``done`` record is a failed run,
whatever papermill wrote in its metadata (DESIGN.md, notebook contract); its
row says so and carries the recorded ``error`` when there is one.
"""

from __future__ import annotations

from pathlib import Path

#: Columns of :func:`audit_table`, in order.  Energies in Ha, errors in mHa,
#: times in s.  ``seconds`` is the wall time of the run (the sweep's
#: ``<name>.outcome.json``, else papermill's duration).
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
    "verdict",
)


def _get(d, *path):
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def _kernel(records) -> str | None:
    pools = _get(records, "provenance", "blas", "pools") or []
    arch = sorted({str(p.get("architecture")) for p in pools if p.get("library") == "openblas"})
    coretype = records.get("blas_coretype")
    text = ",".join(arch) if arch else None
    return f"{text} (OPENBLAS_CORETYPE={coretype})" if coretype else text


def audit_row(path) -> dict:
    """One row of :data:`AUDIT_COLUMNS` from an executed audit notebook.

    ``status`` is "done" (the run recorded ``done``) or "failed" (with
    ``failure`` = the recorded error, or papermill's, or "no done record").
    """
    import nbformat

    from qencode_nb.record import iter_records

    nb = nbformat.read(str(path), as_version=4)
    r = dict(iter_records(nb))
    pm = nb.metadata.get("papermill") or {}
    done = r.get("done") is True
    failure = None
    if not done:
        err = r.get("error")
        failure = (f"{err['stage']}: {err['type']}: {err['message']}" if err else
                   (pm.get("exception") and "papermill recorded an exception")
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
        "notebook": str(path), "entry_id": r.get("entry_id"),
        "status": "done" if done else "failed", "failure": failure, "seconds": seconds,
        "mode": r.get("mode"), "blas_threads": r.get("blas_threads"), "kernel": _kernel(r),
        "tier_procedure": _get(tiers, "procedure", "status"),
        "tier_certification": _get(tiers, "certification", "status"),
        "tier_bit_identical": _get(tiers, "bit_identical", "status"),
        "undeclared": ";".join(f["field"] for f in fields if f["status"] == "undeclared")
        or None,
        "fields_differ": ";".join(f["field"] for f in fields if f["status"] == "differs")
        or None,
        "integrity": _get(r, "integrity", "status"),
        "replay_status": rep.get("status"), "replay_abs_delta_ha": rep.get("abs_delta_ha"),
        "replay_identical": rep.get("identical"),
        "terms_match": h.get("terms_match"), "n_terms": h.get("n_terms"),
        "n_terms_stored": h.get("n_terms_stored"), "max_abs_dcoeff": h.get("max_abs_dcoeff"),
        "ground_energy_diff": h.get("ground_energy_diff"),
        "fingerprint_ha": h.get("fingerprint_ha"),
        "hamiltonian_source_inferred": h.get("hamiltonian_source_inferred"),
        "hamiltonian_source_recorded": h.get("hamiltonian_source_recorded"),
        "cache_hit": h.get("cache_hit"),
        "rerun_nfev": rerun.get("nfev"), "published_nfev": _get(rerun, "published", "nfev"),
        "rerun_restarts_run": rerun.get("restarts_run"),
        "published_certified": r.get("published_certified"),
        "delta_ha": diff.get("delta_ha"), "ulps": diff.get("ulps"),
        "findings": " | ".join(rerun.get("findings") or []) or None,
    }
    if row["published_certified"] is None and r.get("certified") is not None:
        row["published_certified"] = r["certified"] != bool(r.get("certification_change"))
    for name in ("rerun_energy", "error_mha", "published_error_mha", "movement_mha",
                 "threshold_mha", "margin_regenerated", "margin_published", "certified",
                 "certification_change", "fragile", "bit_identical", "verdict"):
        row[name] = r.get(name)
    return row


def _outcome(nb_path: Path) -> dict | None:
    """The sweep's ``<name>.outcome.json`` beside a notebook, if any."""
    import json

    side = nb_path.with_suffix(".outcome.json")
    try:
        return json.loads(side.read_text())
    except (OSError, ValueError):
        return None


def audit_table(paths):
    """A DataFrame with one :func:`audit_row` per executed notebook.

    Args:
        paths: executed ``.ipynb`` files, or a folder (all ``*.ipynb`` in it).
    """
    import pandas as pd

    if isinstance(paths, (str, Path)) and Path(paths).is_dir():
        paths = sorted(Path(paths).glob("*.ipynb"))
    return pd.DataFrame([audit_row(p) for p in paths], columns=list(AUDIT_COLUMNS))
