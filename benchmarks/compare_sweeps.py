"""Behaviour check: two sweep folders compared record by record, and their summary.csv.

Usage::

    .venv/bin/python benchmarks/compare_sweeps.py BEFORE_DIR AFTER_DIR

Run the same ``qencode-nb sweep`` with two versions of the code (e.g.
``PYTHONPATH=<snapshot of the old tree> qencode-nb sweep ... --out BEFORE_DIR``)
and compare: every record of every executed audit notebook, deep, floats
exactly (``float.hex``), and every ``summary.csv`` cell as text.  Skipped: the
``provenance`` record (git state, paths of the checkout), timings and cache
identities (the rebuild cache key hashes the code).  Exit status 1 on any
difference.

The procedure of a behaviour-preserving change: ``git worktree add --detach BEFORE
<old commit>`` and ``AFTER <new commit>``, then from each (``PYTHONPATH=<tree>
.venv/bin/python -m qencode_nb.cli sweep ../shared/qencode-v4/db ...``) four sweeps
with ``--workers 2``: ``--mode replay`` (the 40 shared entries on their recorded
engines), ``--mode replay --engine fast``, ``--mode full --subset ci`` and ``--mode
full --subset ci --engine fast``; compare each pair with this script.
"""

from __future__ import annotations

import harness  # noqa: F401, I001  (first: the checkout on sys.path, the BLAS pins)

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

from qencode_nb import read_records
from qencode_nb.readout.summary_csv import read_summary

SKIP_RECORDS = {"provenance"}
SKIP_KEYS = {"wall_s", "seconds", "cache_key", "cache_hit", "cache_status", "cache_path",
             "sector_build_seconds", "build_seconds", "elapsed_s", "time_s", "rebuild_seconds"}
SKIP_COLUMNS = {"notebook", "seconds", "cache_hit"}


def diff(a, b, path, out):
    """Append to ``out`` one line per difference between records ``a`` and ``b``
    (JSON values, deep; floats bit for bit; ``path`` names the place)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k in SKIP_KEYS or "seconds" in str(k):
                continue
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'after' if k not in a else 'before'}")
                continue
            diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}"); return
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out)
    elif isinstance(a, float) and isinstance(b, float):
        if not (a == b or (math.isnan(a) and math.isnan(b))) or a.hex() != b.hex():
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {a!r} != {b!r}")


def main(before, after) -> int:
    """Compare two sweep folders (module docstring); 0 when identical, else 1."""
    before, after = Path(before), Path(after)
    names = sorted(p.name for p in before.glob("*.ipynb"))
    assert names == sorted(p.name for p in after.glob("*.ipynb")), "different notebook sets"
    total = 0
    for name in names:
        ra, rb = read_records(before / name), read_records(after / name)
        out = []
        for k in sorted(set(ra) | set(rb)):
            if k in SKIP_RECORDS:
                continue
            if k not in ra or k not in rb:
                out.append(f"record {k}: only in {'after' if k not in ra else 'before'}")
                continue
            diff(ra[k], rb[k], k, out)
        total += len(out)
        print(f"{name}: {len(ra)} records, {'identical' if not out else f'{len(out)} differences'}")
        for line in out[:15]:
            print("   ", line)
    # as text, statuses as the records name them (a summary.csv of either spelling of n/a)
    sa = read_summary(before / "summary.csv", dtype=str, na_values=None)
    sb = read_summary(after / "summary.csv", dtype=str, na_values=None)
    cols = [c for c in sa.columns if c not in SKIP_COLUMNS]
    assert list(sa.columns) == list(sb.columns), "summary columns differ"
    sa = sa.sort_values("entry_id").reset_index(drop=True)[cols]
    sb = sb.sort_values("entry_id").reset_index(drop=True)[cols]
    neq = (sa != sb)
    ndiff = int(neq.to_numpy().sum())
    print(f"summary.csv: {len(sa)} rows x {len(cols)} columns compared as text, {ndiff} cells differ")
    for i, c in zip(*neq.to_numpy().nonzero()):
        print("   ", sa.loc[i, "entry_id"], cols[c], repr(sa.iloc[i, c]), "!=", repr(sb.iloc[i, c]))
    print(f"TOTAL record differences: {total}; summary cells differing: {ndiff}")
    return 0 if total == 0 and ndiff == 0 else 1

def cli(argv=None) -> int:
    """The command line of the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="sweep folder of the old code")
    ap.add_argument("after", type=Path, help="sweep folder of the new code")
    args = ap.parse_args(argv)
    return main(args.before, args.after)


if __name__ == "__main__":
    sys.exit(cli())
