"""The v3 proof table: ``faithful.csv`` of ``qencode-nb study faithful`` plus, per entry,
each audit's re-run stage seconds and whether the faithful audit's re-run is the
published energy to the bit (its ``bit_identical`` record).

Usage: ``python docs/results/faithful/tabulate_v3.py runs/faithful-v3 > docs/results/faithful/v3-proof.csv``
"""

import sys
from pathlib import Path

import pandas as pd

from qencode_nb.notebook.record import read_records
from qencode_nb.studies.faithful import stage_seconds

folder = Path(sys.argv[1])
table = pd.read_csv(folder / "faithful.csv")
extra = []
for entry_id in table["entry_id"]:
    runs = folder / entry_id
    records = read_records(runs / "faithful.ipynb")
    extra.append({"plain_rerun_s": stage_seconds(runs / "plain.ipynb", "rerun"),
                  "faithful_rerun_s": stage_seconds(runs / "faithful.ipynb", "rerun"),
                  "faithful_bit_identical": records.get("bit_identical")})
extra = pd.DataFrame(extra)
for column in extra:
    table[column] = extra[column]
table["rerun_speedup"] = table["plain_rerun_s"] / table["faithful_rerun_s"]
table.to_csv(sys.stdout, index=False)
