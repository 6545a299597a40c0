"""Every leaderboard row resolved to its entry (qencode_nb/claims/leaderboards.py;
issue 26, item 3).

Reference values, measured on the real files: ``../shared/qencode-history``
(QEncode master a46b4ec, NOTICE.md) with ``../shared/qencode-v4/db`` (40 of the 54
v4.4 entries, ``data/qencode-v4/registry.txt``).  The four tables hold 47 + 47 + 47 + 2
= 143 rows; the 34 certified entries present and the 2 research ones resolve, hash and
equal their rows exactly (104 rows); the 13 certified entries the folder lacks are in
the registry (39 rows); no row resolves to no entry.
"""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import SHARED_DB, SHARED_HISTORY
from qencode_nb.claims.folder import open_folder, registry_ids
from qencode_nb.claims.leaderboards import NO_ENTRY, NOT_IN_FOLDER, check_leaderboards
from qencode_nb.claims.table import flagged, status_word

DATA = "website/public/data"
#: (holds, in the registry but not in the folder) per table, measured (module docstring).
MEASURED = {"leaderboard_accuracy.csv": (34, 13), "leaderboard_balanced.csv": (34, 13),
            "leaderboard_hardware_cost.csv": (34, 13), "leaderboard_research.csv": (2, 0)}
H2_PAR_UCCSD = "H2_ccpvdz_PAR_UCCSD_v4_tapered__sha256_b321a0331d6d13eb"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    """The leaderboards and the database copied (only what the rows need)."""
    root = tmp_path / "history"
    shutil.copytree(SHARED_HISTORY / DATA, root / DATA)
    db = tmp_path / "db"
    shutil.copytree(SHARED_DB, db)
    return root, db


def _by_table(rows):
    out = {}
    for r in rows:
        out.setdefault(r.where.split(":")[0].rsplit("/", 1)[-1], Counter())[r.status] += 1
    return out


def test_every_leaderboard_row_gets_a_status_and_the_counts_are_measured():
    folder = open_folder(SHARED_HISTORY, db=SHARED_DB)
    rows = check_leaderboards(folder)
    n_rows = sum(len(list(csv.DictReader(p.open()))) for p in folder.leaderboards)
    assert len(rows) == n_rows == 143
    assert {status_word(r.status) for r in rows} <= {"holds", "unverifiable"}
    assert not [r for r in rows if flagged(r)]
    got = {t: (c["holds"], c[NOT_IN_FOLDER]) for t, c in _by_table(rows).items()}
    assert got == MEASURED
    holds = next(r for r in rows if H2_PAR_UCCSD in r.claim)
    assert holds.where == f"{DATA}/leaderboard_accuracy.csv:2"
    assert "SHA-256 recomputes" in holds.evidence and "byte for byte" in holds.evidence


def test_a_removed_entry_is_told_apart_from_a_row_with_no_entry(tmp_path):
    """Deleting a v4.4 entry from the folder leaves its rows unverifiable (the registry
    names it); a row the release never held (as QEncode's withdrawn estimated rows,
    commits 685b321, 5fd3f03, c8ecc3a) and a deleted entry of a folder whose release
    registry does not list it resolve to no entry and are flagged."""
    root, db = _copy(tmp_path)
    (db / f"{H2_PAR_UCCSD}.json").unlink()
    table = root / DATA / "leaderboard_accuracy.csv"
    lines = table.read_text().splitlines()
    lines.append("48,CO_ccpvdz_JW_UCCSD_v4_tapered__sha256_0123456789abcdef,CO,cc-pvdz,hf,"
                 "jordan_wigner,UCCSD,8e-07,-0.2,-112.9,-112.9,-112.7,True,True")
    table.write_text("\n".join(lines) + "\n")
    rows = check_leaderboards(open_folder(root, db=db))
    removed = [r for r in rows if H2_PAR_UCCSD in r.claim]
    assert len(removed) == 3 and {r.status for r in removed} == {NOT_IN_FOLDER}
    estimated = [r for r in rows if " CO_ccpvdz" in r.claim]
    assert [r.status for r in estimated] == [NO_ENTRY] and flagged(estimated[0])
    assert estimated[0].where == f"{DATA}/leaderboard_accuracy.csv:49"
    # a folder without the v4.4 registry behind it: the removed entry resolves to nothing
    own = check_leaderboards(open_folder(root, db=db), registry={})
    assert {r.status for r in own if H2_PAR_UCCSD in r.claim} == {NO_ENTRY}


def test_a_changed_entry_or_row_is_flagged_naming_the_difference(tmp_path):
    import json

    root, db = _copy(tmp_path)
    path = db / f"{H2_PAR_UCCSD}.json"
    raw = json.loads(path.read_text())
    raw["results"]["vqe"]["best_energy_hartree"] -= 1e-12
    path.write_text(json.dumps(raw))
    table = root / DATA / "leaderboard_research.csv"
    table.write_text(table.read_text().replace("0.010831542693779284", "0.0108315426937793"))
    rows = check_leaderboards(open_folder(root, db=db))
    changed = [r for r in rows if H2_PAR_UCCSD in r.claim]
    assert {r.status for r in changed} == {"false: differs from its entry"}
    assert all("SHA-256 recomputes to" in r.evidence for r in changed)
    research = [r for r in rows if "leaderboard_research.csv:2" in r.where]
    assert research[0].status == "false: differs from its entry"
    assert "gap '0.0108315426937793' != entry's results.quality.abs_vqe_exact_gap" \
        in research[0].evidence


def test_a_row_in_the_wrong_table_fails_on_its_trust_level(tmp_path):
    root, db = _copy(tmp_path)
    research = (root / DATA / "leaderboard_research.csv").read_text().splitlines()
    acc = root / DATA / "leaderboard_accuracy.csv"
    acc.write_text(acc.read_text() + research[1] + "\n")
    rows = check_leaderboards(open_folder(root, db=db))
    moved = [r for r in rows if r.where == f"{DATA}/leaderboard_accuracy.csv:49"]
    assert moved[0].status == "false: differs from its entry"
    assert "trust.level is 'validated'" in moved[0].evidence


def test_the_registry_lists_the_54_entries_of_the_release():
    assert len(registry_ids()) == 54


@pytest.mark.parametrize("bad", ["missing", "file"])
def test_a_folder_that_is_not_one_is_refused(tmp_path, bad):
    from qencode_nb.errors import ClaimsError

    target = tmp_path / "x"
    if bad == "file":
        target.write_text("")
    with pytest.raises(ClaimsError, match="not a folder"):
        open_folder(target)


def test_a_changed_circuit_cost_cell_is_flagged(tmp_path):
    """The hardware-cost table's depth and two-qubit gates come from the entry's
    circuit_stats (QEncode's exporter: the v4 name, else the v3 one)."""
    root, db = _copy(tmp_path)
    table = root / DATA / "leaderboard_hardware_cost.csv"
    lines = table.read_text().splitlines()
    cells = lines[1].split(",")
    header = lines[0].split(",")
    cells[header.index("depth")] = str(int(cells[header.index("depth")]) + 1)
    lines[1] = ",".join(cells)
    table.write_text("\n".join(lines) + "\n")
    rows = check_leaderboards(open_folder(root, db=db))
    first = next(r for r in rows if r.where == f"{DATA}/leaderboard_hardware_cost.csv:2")
    assert first.status == "false: differs from its entry"
    assert "depth" in first.evidence and "circuit_stats.circuit_depth" in first.evidence
    second = next(r for r in rows if r.where == f"{DATA}/leaderboard_hardware_cost.csv:3")
    assert second.status == "holds" and "2q_gates" in second.evidence
