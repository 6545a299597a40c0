"""A proof table: the ``faithful.csv`` of one or more ``qencode-nb study faithful`` folders
(a later folder's row replaces an earlier one's for the same entry: a run again after a
failure) plus, per entry, each audit's re-run stage seconds and whether the faithful
audit's re-run is the published energy to the bit (its ``bit_identical`` record).

Usage::

    python docs/results/faithful/tabulate.py runs/faithful-v3 > docs/results/faithful/v3-proof.csv
    python docs/results/faithful/tabulate.py runs/faithful-v4 runs/faithful-v4-h4adapt > docs/results/faithful/v4-proof.csv
"""

import sys
from pathlib import Path

import pandas as pd

from qencode_nb.notebook.record import read_records
from qencode_nb.studies.faithful import stage_seconds

rows = {}
for arg in sys.argv[1:]:
    folder = Path(arg)
    for row in pd.read_csv(folder / "faithful.csv").to_dict("records"):
        runs = folder / row["entry_id"]
        try:
            records = read_records(runs / "faithful.ipynb")
        except (OSError, ValueError):
            records = {}
        row.update({"plain_rerun_s": stage_seconds(runs / "plain.ipynb", "rerun"),
                    "faithful_rerun_s": stage_seconds(runs / "faithful.ipynb", "rerun"),
                    "faithful_bit_identical": records.get("bit_identical"),
                    "stack": (records.get("stack") or {}).get("name")})
        rows[row["entry_id"]] = row
table = pd.DataFrame(list(rows.values()))
table["rerun_speedup"] = table["plain_rerun_s"] / table["faithful_rerun_s"]
table.to_csv(sys.stdout, index=False)
