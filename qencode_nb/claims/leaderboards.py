"""Every row of every leaderboard CSV resolved to its entry in the v4 database.

A row **holds** when its ``entry_id`` names an entry file in the database whose
SHA-256 recomputes (QEncode's rule, :func:`qencode_nb.entry.hashing.qencode_sha256`;
its id ends in the hash's first 16 hex digits) and whose gap, VQE, CASCI and HF
energies and trust level equal the row's, and so do the other columns the exporter
copies from the entry where the table has them (CCSD(T) correlation, circuit depth,
two-qubit gates, beats_classical; :data:`NUMBERS`).  The tolerance is **zero**:
QEncode's exporter (``scripts/export_leaderboard_v4.py``) writes the entry's own
floats with Python's ``repr``, which round-trips, so ``float(cell) == value``
exactly; a missing number must be an empty cell.  The trust level a row claims is its table's:
the accuracy, balanced and hardware-cost tables hold certified entries only
(``leaderboard_metadata.json``: ``trust_filter: certified_only``), the research table
validated (not certified) ones.

A row whose entry is not in the folder is ``unverifiable`` when the v4.4 release's
registry (``data/qencode-v4/registry.txt``) lists that entry id (the release has it,
this database folder does not), and ``false: resolves to no entry`` when no entry of
that id exists anywhere: a leaderboard row with no computed entry behind it, as the
estimated rows QEncode published and withdrew in May 2026 (its commits 685b321,
5fd3f03, c8ecc3a).
"""

from __future__ import annotations

import csv
import math

from qencode_nb.claims.folder import Folder, file_sha256, registry_ids, rel
from qencode_nb.claims.table import ClaimRow

KIND = "leaderboard"
#: The table whose rows are validated (research) entries; every other is certified.
RESEARCH_TABLE = "leaderboard_research.csv"
#: Row column -> where the v4 entry states it, first path with a value (QEncode's
#: export_leaderboard_v4.py, entry_to_row; depth and 2q gates: v4 name, else v3 name).
NUMBERS = {
    "gap": (("results", "quality", "abs_vqe_exact_gap"),),
    "vqe_energy": (("results", "vqe", "best_energy_hartree"),),
    "casci_energy": (("results", "reference", "casci_ground_energy_hartree"),),
    "hf_energy": (("results", "classical_comparison", "hf_energy_hartree"),),
    "ccsd_t_correlation": (("results", "classical_comparison", "ccsd_t_correlation"),),
    "depth": (("circuit_stats", "circuit_depth"), ("circuit_stats", "ansatz_depth")),
    "2q_gates": (("circuit_stats", "num_2q_gates"), ("circuit_stats", "ansatz_num_2q_gates")),
    "beats_classical": (("results", "quality", "beats_classical"),),
}
NOT_IN_FOLDER = "unverifiable: in the v4.4 registry, not in this database folder"
NO_ENTRY = "false: resolves to no entry"


def _get(raw: dict, path):
    for key in path:
        raw = raw.get(key) if isinstance(raw, dict) else None
    return raw


def expected_trust(csv_name: str) -> str:
    """The trust level a table's rows claim: "validated" for the research table,
    "certified" for the others."""
    return "validated" if csv_name == RESEARCH_TABLE else "certified"


def _first(raw: dict, paths):
    """The value as the exporter reads it: ``a or b`` over the paths."""
    value = _get(raw, paths[0])
    for path in paths[1:]:
        value = value or _get(raw, path)
    return value


def _same(cell: str, value) -> bool:
    if cell is None or cell.strip() == "":
        return value is None
    if isinstance(value, bool):
        return cell.strip() == str(value)
    if value is None:
        return False
    try:
        got = float(cell)
    except ValueError:
        return False
    return got == float(value) or (math.isnan(got) and math.isnan(float(value)))


def compare_row(row: dict, raw: dict, csv_name: str) -> list[str]:
    """Where a row and its entry differ, one phrase each (empty: they agree)."""
    from qencode_nb.entry.hashing import qencode_sha256

    out = []
    recorded = _get(raw, ("provenance", "entry_hash_sha256"))
    recomputed = qencode_sha256(raw)
    if recomputed != recorded:
        out.append(f"SHA-256 recomputes to {recomputed}, the entry records {recorded}")
    entry_id = row.get("entry_id", "")
    if not entry_id.endswith("__sha256_" + recomputed[:16]):
        out.append(f"entry id does not end in the hash's first 16 hex digits {recomputed[:16]}")
    for column, paths in NUMBERS.items():
        if column in row and not _same(row[column], _first(raw, paths)):
            out.append(f"{column} {row[column]!r} != entry's {'.'.join(paths[0])} "
                       f"{_first(raw, paths)!r}")
    level = _get(raw, ("trust", "level"))
    if level != expected_trust(csv_name):
        out.append(f"table lists {expected_trust(csv_name)} entries; the entry's trust.level "
                   f"is {level!r}")
    return out


def check_leaderboards(folder: Folder, registry: dict | None = None) -> list[ClaimRow]:
    """One :class:`ClaimRow` per leaderboard row (module docstring)."""
    registry = registry_ids() if registry is None else registry
    rows = []
    for path in folder.leaderboards:
        with open(path, newline="", encoding="utf-8") as fh:
            records = list(csv.DictReader(fh))
        for n, row in enumerate(records, start=2):
            rows.append(_check_row(folder, registry, path, n, row))
    return rows


def _check_row(folder, registry, path, line, row) -> ClaimRow:
    entry_id = (row.get("entry_id") or "").strip()
    cells = ", ".join(f"{c} {row[c]}" for c in ("gap", "vqe_energy", "casci_energy",
                                                 "hf_energy") if row.get(c))
    claim = f"rank {row.get('rank', '?')} {entry_id or '(no entry_id)'}: {cells}"
    where = f"{rel(folder, path)}:{line}"
    file = folder.db_entries.get(entry_id)
    if file is not None:
        raw = folder.entry(file)
        differs = compare_row(row, raw, path.name)
        if differs:
            return ClaimRow(KIND, claim, where, "false: differs from its entry",
                            f"{rel(folder, file)}: " + "; ".join(differs))
        released = registry.get(entry_id)
        byte = ("the v4.4 release's file byte for byte" if released == file_sha256(file)
                else "not byte-identical to the v4.4 release's file" if released
                else "not in the v4.4 registry")
        return ClaimRow(KIND, claim, where, "holds",
                        f"{rel(folder, file)}: SHA-256 recomputes; "
                        + ", ".join(c for c in NUMBERS if c in row)
                        + f" equal exactly; trust.level {_get(raw, ('trust', 'level'))}; {byte}")
    if entry_id in registry:
        return ClaimRow(KIND, claim, where, NOT_IN_FOLDER,
                        f"registry.txt lists db/{entry_id}.json (SHA-256 "
                        f"{registry[entry_id][:16]}...); the database folder "
                        f"{_db_name(folder)} does not hold it")
    elsewhere = folder.release_entries.get(entry_id)
    evidence = (f"no {entry_id}.json in the database folder {_db_name(folder)} nor in "
                "the v4.4 registry")
    if elsewhere:
        evidence += "; an older release holds " + ", ".join(rel(folder, p) for p in elsewhere)
    return ClaimRow(KIND, claim, where, NO_ENTRY, evidence)


def _db_name(folder) -> str:
    """The database folder as a claims table names it (:func:`~qencode_nb.claims.folder.rel`:
    ``releases/v4/db``, or ``db`` for ``--db`` elsewhere), ``(none)`` without one."""
    return rel(folder, folder.db) if folder.db else "(none)"
