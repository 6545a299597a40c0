"""Regenerate one kernel profile's rows of ``before-hamiltoniancheck.json``.

The rows are what the dict-returning ``hamiltonian_check`` of commit df5138a wrote
(tests/hamiltonian/test_hamiltonian_record.py), so this runs *that* commit's code, in a
fresh process pinned to the profile before numpy loads, with an empty rebuild cache::

    git worktree add /tmp/df5138a df5138a
    QENCODE_NB_CACHE=$(mktemp -d) PYTHONPATH=/tmp/df5138a \\
        .venv/bin/python tests/data/hamiltonian-record/regenerate.py reference

(``reference`` needs a CPU with AVX-512; ``portable`` runs on any AVX2 CPU.)  The
profile's row in the JSON file is replaced, the other rows are kept.  It refuses to
run when the imported ``qencode_nb`` is not df5138a's (``hamiltonian_check`` must
return a dict) or when the pin did not give the profile asked for.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SHARED_DB = ROOT.parent / "shared" / "qencode-v4" / "db"
OUT = HERE / "before-hamiltoniancheck.json"
H6 = "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254551c7b5295e51.json"


def main(profile: str) -> None:
    from qencode_nb.notebook.pins import pin

    pinned = pin(1, profile)["profile"]
    if pinned["used"] != profile:
        sys.exit(f"asked for the {profile!r} profile, the pin gave {pinned['used']!r}: "
                 f"{pinned['fallback']}")
    import qencode_nb
    from qencode_nb.entry.lookup import load
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        entries = {"lih": load("lih"), H6: load(SHARED_DB / H6),
                   "h2-without-db": load(shutil.copy(ROOT / "params" / "h2.yaml",
                                                     Path(tmp) / "h2.yaml"))}
        for name, entry in entries.items():
            record = hamiltonian_check(entry, rebuild(entry))
            if not isinstance(record, dict):
                sys.exit(f"{qencode_nb.__file__} is not the dict-returning code of df5138a "
                         "(set PYTHONPATH to its worktree)")
            rows[name] = json.loads(json.dumps(record))
    table = json.loads(OUT.read_text()) if OUT.exists() else {}
    table[profile] = rows
    OUT.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{OUT}: {profile} rows for {', '.join(rows)} (kernels {pinned['kernels']}, "
          f"code {qencode_nb.__file__})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "reference")
