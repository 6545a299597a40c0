"""One row per entry of a release re-run in its recorded environment (issue 53).

    .venv/bin/python docs/results/v4-recorded/tabulate.py RUNS DB OUT.csv [PLAN.csv]

RUNS is the sweep's --out folder (its executed audits, ``plan.csv`` and
``misses/misses.csv`` where they exist), DB the release's folder of entry files, PLAN a
plan of every entry (default ``RUNS/plan.csv``, whose done runs have no prediction when
it was made after them).  Every
entry of DB gets a row: ``measured`` (its audit is done), ``failed`` (its audit failed:
``failure`` says why), ``running`` (a notebook without its sweep's ``.outcome.json`` yet)
or ``waiting`` (not run yet; ``predicted_s`` from the plan).  The
columns are the audit's (qencode_nb.readout.collect.AUDIT_COLUMNS) as the issue asks for
them, plus ``host`` (the CPU the run measured, from its provenance record), ``kernels``
(the OpenBLAS kernel of each copy, measured), ``certification_as_published`` (empty where
the re-run's certification is undecided: the entry's reference cannot judge its energy,
which lies below it or belongs to a stored Hamiltonian with another ground energy) and,
for a
miss, ``cause`` (qencode_nb.studies.misses).  Nothing here computes a result; it selects.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from qencode_nb.notebook.record import read_records
from qencode_nb.readout.collect import audit_table
from qencode_nb.readout.published import published_csv

COLUMNS = ["entry_id", "state", "host", "tier_bit_identical", "bit_identical", "ulps",
           "delta_ha", "certified", "published_certified", "certification_as_published",
           "error_mha", "published_error_mha", "seconds", "predicted_s", "rerun_nfev",
           "published_nfev", "same_nfev", "replay_identical", "hamiltonian_status", "stack",
           "stack_lock", "stack_resolved_at", "kernels", "cause", "failure"]


def host_and_kernels(notebook: Path) -> tuple[str | None, str | None]:
    """``("AMD EPYC (znver4), AVX-512", "numpy=SkylakeX,scipy=SkylakeX,pyscf=Prescott")``
    from the run's provenance record (what it measured)."""
    try:
        numeric = (read_records(notebook).get("provenance") or {}).get("numeric") or {}
    except (OSError, ValueError):
        return None, None
    cpu = numeric.get("cpu") or {}
    avx512 = any(f.startswith("AVX512") for f in (numeric.get("numpy") or {}).get("enabled", []))
    host = f"{cpu.get('model')} ({numeric.get('numba_cpu')}), " + (
        "AVX-512" if avx512 else "no AVX-512")
    kernels = ",".join(f"{c['copy']}={c['kernel']}" for c in numeric.get("openblas") or [])
    return host, kernels or None


def tabulate(runs: Path, db: Path, plan_file: Path | None = None):
    entries = sorted(p.stem for p in db.glob("*.json"))
    table = audit_table(sorted(runs.glob("*.ipynb")))
    table = table[table["entry_id"].isin(entries)].set_index("entry_id")
    plan_file = plan_file or runs / "plan.csv"
    misses_file = runs / "misses" / "misses.csv"
    plan = (pd.read_csv(plan_file).set_index("run") if plan_file.exists() else None)
    causes = (pd.read_csv(misses_file).set_index("entry_id")["cause"].to_dict()
              if misses_file.exists() else {})
    rows = []
    for entry in entries:
        row = {"entry_id": entry}
        if entry in table.index:
            audit = table.loc[entry].to_dict()
            row.update({k: audit.get(k) for k in COLUMNS if k in audit})
            running = not Path(audit["notebook"]).with_suffix(".outcome.json").exists()
            row["state"] = ("measured" if audit["status"] == "done" else
                            "running" if running else "failed")
            row["host"], row["kernels"] = host_and_kernels(Path(audit["notebook"]))
            if audit["status"] == "done":
                undecided = audit["certified"] is None or pd.isna(audit["certified"])
                row["certification_as_published"] = (
                    None if undecided else audit["certified"] == audit["published_certified"])
                row["same_nfev"] = audit["rerun_nfev"] == audit["published_nfev"]
        else:
            row["state"] = "waiting"
        if plan is not None and entry in plan.index:
            row["predicted_s"] = plan.loc[entry].get("predicted_seconds")
        row["cause"] = causes.get(entry)
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


if __name__ == "__main__":
    runs, db, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    result = tabulate(runs, db, Path(sys.argv[4]) if len(sys.argv) > 4 else None)
    out.write_text(published_csv(result, out.parent), encoding="utf-8")
    counts = result["state"].value_counts().to_dict()
    done = result[result["state"] == "measured"]
    decided = done["certification_as_published"].dropna()
    print(f"{len(result)} entries: {counts}; bit-identical "
          f"{int((done['bit_identical'] == True).sum())} / {len(done)}; "  # noqa: E712
          f"certification as published {int(decided.astype(bool).sum())} / {len(decided)} "
          f"decided ({len(done) - len(decided)} undecided)")
