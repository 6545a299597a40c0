"""One study run read back: the measured values of one executed audit notebook.

:func:`run_row` reads a run's records (:data:`READ_RECORDS`, never cell indices)
into one row of a study table (:mod:`qencode_nb.studies.blas`,
:mod:`~qencode_nb.studies.optimizers`, :mod:`~qencode_nb.studies.environments`) or
the base of a robustness row (:func:`qencode_nb.readout.robustness_tables.robustness_row`).
Units: energies in Ha, errors in mHa, seconds wall.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.notebook.stages import failure_line

#: The audit records :func:`run_row` reads (names of
#: :data:`qencode_nb.verdict.records.AUDIT_RECORDS`, plus ``error``).
READ_RECORDS = ("done", "error", "rerun_energy", "provenance", "tiers", "published_error_mha",
                "blas_threads", "rerun", "error_mha", "threshold_mha")


def run_row(out: Path, outcome: dict) -> dict:
    """The measured values of one executed audit notebook (records, not cell indices).

    Args:
        out: the study folder holding ``<outcome["name"]>.ipynb``.
        outcome: :func:`qencode_nb.batch.sweep.run_one`'s result for the run.

    Returns:
        ``{"kernelspec", "python", "packages", "blas", "bit_identical",
        "published_error_mha", "measured_threads", "engine", "kernel",
        "energy", "energy_hex", "error_mha", "nfev", "seconds", "status",
        "failure", "notebook", "threshold_mha", "optimizer_used"}``: energy
        the ``rerun_energy`` record (Ha) and its ``float.hex()``, errors in
        mHa, ``seconds`` the run's wall time, ``measured_threads`` the
        ``blas_threads`` record (what threadpoolctl measured), ``kernel`` the
        OpenBLAS CPU kernels (architectures) threadpoolctl reported, joined by
        ",".  ``status`` is "done" only when the run recorded ``done`` and
        the runner saw no failure; else "failed" with the reason.
    """
    from qencode_nb.notebook.record import read_records

    nb = out / f"{outcome['name']}.ipynb"
    try:
        r = read_records(nb)
    except (OSError, ValueError):
        r = {}
    failure = outcome.get("failure")
    if r.get("done") is not True and not failure:
        err = r.get("error")
        failure = failure_line(err) if err else "the notebook has no done record"
    energy = r.get("rerun_energy")
    energy = float(energy) if isinstance(energy, (int, float)) else None
    prov = r.get("provenance") or {}
    pools = (prov.get("blas") or {}).get("pools") or []
    blas_kernels = sorted({str(p.get("architecture")) for p in pools
                           if p.get("library") == "openblas"})
    config = (r.get("rerun") or {}).get("config") or {}
    return {
        "kernelspec": outcome.get("kernelspec") or "python3",
        "python": prov.get("python"),
        "packages": prov.get("packages") or prov.get("installed") or {},
        "blas": ";".join(sorted({f"{p.get('library')} {p.get('version')} {p.get('architecture')}"
                                 for p in pools})) or None,
        "bit_identical": ((r.get("tiers") or {}).get("bit_identical") or {}).get("status"),
        "published_error_mha": r.get("published_error_mha"),
        "measured_threads": r.get("blas_threads"),
        "engine": config.get("backend"),
        "kernel": ",".join(blas_kernels) or None,
        "energy": energy,
        "energy_hex": energy.hex() if energy is not None else None,
        "error_mha": r.get("error_mha"),
        "nfev": (r.get("rerun") or {}).get("nfev"),
        "seconds": outcome.get("seconds"),
        "status": "done" if r.get("done") is True and not failure else "failed",
        "failure": failure,
        "notebook": str(nb),
        "threshold_mha": r.get("threshold_mha"),
        "optimizer_used": config.get("optimizer"),
    }
