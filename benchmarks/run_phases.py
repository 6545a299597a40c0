"""Where the time of a sweep's or a study's runs goes, read from their executed notebooks.

Usage::

    .venv/bin/python benchmarks/run_phases.py RUNS_DIR [RUNS_DIR ...] [--top 15]

For every executed ``audit.ipynb`` under the folders (recursively) it reads the run's
wall seconds (``<name>.outcome.json``: the whole run, process fork to notebook written)
and papermill's and nbclient's timings in the notebook (``metadata.papermill`` and each
cell's ``metadata.execution``), and splits each run into phases (s):

- ``start``: papermill start to the first cell's execution (kernel launch);
- ``frame``: the parameters and pin cells (numpy, scipy and PySCF's BLAS copies load);
- ``entry``, ``hamiltonian`` (the rebuild and the Hamiltonian check: chemistry, cache,
  the proof of the source), ``problem``, ``replay``, ``rerun`` (the VQE), ``verdict``,
  ``figure``, ``done``: the audit's stage cells, named by their first comment line;
- ``other``: the run's wall seconds minus the phases (fork, papermill's own work, writing
  the notebook, the kernel's shutdown).

It prints the slowest runs with their phases, then the sum of every phase over all runs
and its share.  Nothing is asserted; a measurement aid for issue 37.
"""

from __future__ import annotations

import harness  # noqa: F401,I001  (first, as every benchmark script: pins before numpy)

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

#: A stage cell's phase, by the first words of its first comment line (audit.ipynb).
PHASES = (("# Parameters", "frame"), ("# Injected", "frame"), ("# The frame", "frame"),
          ("# Entry", "entry"), ("# Problem", "hamiltonian"),
          ("# The re-run's problem", "problem"), ("# Replay", "replay"),
          ("# Re-run", "rerun"), ("# Verdict", "verdict"), ("# Figure", "figure"))
ORDER = ("start", "frame", "entry", "hamiltonian", "problem", "replay", "rerun", "verdict",
         "figure", "done", "other")


def _time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def phases(nb_path: Path) -> dict:
    """``{phase: seconds}`` of one executed notebook, plus ``wall`` (outcome.json)."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    pm = nb["metadata"].get("papermill") or {}
    out = {p: 0.0 for p in ORDER}
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = next((c["metadata"].get("papermill", {}).get("start_time") for c in cells
                  if c["metadata"].get("papermill", {}).get("start_time")), None)
    if pm.get("start_time") and first:
        out["start"] = _time(first) - _time(pm["start_time"])
    for cell in cells:
        meta = cell["metadata"].get("papermill") or {}
        seconds = meta.get("duration") or 0.0
        source = "".join(cell["source"]).lstrip()
        tags = cell["metadata"].get("tags") or []
        phase = "frame" if ("parameters" in tags or "injected-parameters" in tags) else next(
            (name for prefix, name in PHASES if source.startswith(prefix)), "done")
        out[phase] += seconds
    try:
        outcome = json.loads(nb_path.with_suffix(".outcome.json").read_text())
        wall = outcome.get("seconds")
    except (OSError, ValueError):
        wall = None
    wall = wall if wall is not None else pm.get("duration") or 0.0
    out["other"] = max(0.0, wall - sum(out[p] for p in ORDER if p != "other"))
    out["wall"] = wall
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    rows = []
    for folder in args.folders:
        for nb in sorted(Path(folder).rglob("*.ipynb")):
            if nb.with_suffix(".outcome.json").is_file():
                rows.append((str(nb.relative_to(folder)), phases(nb)))
    if not rows:
        print("no executed runs found", file=sys.stderr)
        return 1
    rows.sort(key=lambda r: -r[1]["wall"])
    short = {"hamiltonian": "hamil"}
    head = " ".join(f"{short.get(p, p)[:7]:>7}" for p in ORDER)
    print(f"{'run':60} {'wall':>7} {head}")
    for name, ph in rows[:args.top]:
        print(f"{name[-60:]:60} {ph['wall']:7.1f} " + " ".join(f"{ph[p]:7.1f}" for p in ORDER))
    total = sum(ph["wall"] for _, ph in rows)
    print(f"\n{len(rows)} runs, {total:.1f} run-seconds in all "
          f"({total / len(rows):.2f} s per run)")
    for p in ORDER:
        s = sum(ph[p] for _, ph in rows)
        print(f"  {p:12} {s:8.1f} s  {100 * s / total:5.1f} %  ({s / len(rows):.2f} s per run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
