"""``qencode-nb claims FOLDER`` and ``qencode-nb report RUNS --claims CLAIMS.csv``
(qencode_nb/commands/claims.py, qencode_nb/readout/report_claims.py; issue 26, item 3).

The counts are those measured on ``../shared/qencode-history`` with
``../shared/qencode-v4/db`` (test_leaderboards.py, test_receipts.py, test_stated.py):
143 leaderboard rows (104 hold, 39 unverifiable), 62 receipts (hash and signature
unverifiable), 17 stated claims (6 hold, 8 stale, 3 false).
"""

from __future__ import annotations

import shutil

import pytest

from conftest import SHARED_DB, SHARED_HISTORY
from qencode_nb.claims.table import COLUMNS, read_csv
from qencode_nb.cli import main

MEASURED = {"leaderboard": {"holds": 104, "unverifiable": 39},
            "receipt hash": {"unverifiable": 62}, "receipt signature": {"unverifiable": 62},
            "stated": {"holds": 6, "stale": 8, "false": 3}}


def test_the_real_history_exits_3_and_writes_claims_csv(tmp_path, capsys):
    from qencode_nb.claims.table import counts

    rc = main(["claims", str(SHARED_HISTORY), "--db", str(SHARED_DB), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 3
    rows = read_csv(tmp_path / "claims.csv")
    assert counts(rows) == MEASURED and len(rows) == 143 + 124 + 17
    assert (tmp_path / "claims.csv").read_text().splitlines()[0] == ",".join(COLUMNS)
    assert out.splitlines()[0].startswith("[stale] stated | README.md:25")
    assert "stated: 6 holds, 8 stale, 3 false" in out
    assert f"claims: {tmp_path / 'claims.csv'}" in out


def test_a_folder_where_nothing_is_flagged_exits_0(tmp_path, capsys):
    data = tmp_path / "repo" / "website" / "public" / "data"
    data.mkdir(parents=True)
    shutil.copy(SHARED_HISTORY / "website/public/data/leaderboard_research.csv", data)
    assert main(["claims", str(tmp_path / "repo"), "--db", str(SHARED_DB)]) == 0
    out = capsys.readouterr().out
    assert "leaderboard: 2 holds" in out and "stated: 17 unverifiable" in out


def test_the_default_database_is_releases_v4_db(tmp_path, capsys):
    repo = tmp_path / "repo"
    shutil.copytree(SHARED_HISTORY / "website", repo / "website")
    shutil.copytree(SHARED_DB, repo / "releases" / "v4" / "db")
    assert main(["claims", str(repo)]) == 0       # no README etc.: nothing flagged
    out = capsys.readouterr().out
    assert "leaderboard: 104 holds, 39 unverifiable" in out
    assert "stated: 1 holds, 16 unverifiable" in out


@pytest.mark.parametrize("argv, message", [
    (["claims", "/nonexistent/qencode"], "not a folder"),
    (["claims", "{history}", "--db", "/nonexistent/db"], "--db /nonexistent/db: not a folder"),
    (["claims", "{empty}"], "holds no leaderboard"),
    (["claims", "{history}", "--public-key", "{badkey}"], "not a PEM file"),
])
def test_bad_input_exits_2_naming_it(tmp_path, capsys, argv, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.pub").write_text("no key here")
    argv = [a.format(history=SHARED_HISTORY, empty=tmp_path / "empty",
                     badkey=tmp_path / "bad.pub") for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_the_claims_section_lists_every_row_flagged_first_escaped(tmp_path):
    from bs4 import BeautifulSoup

    from qencode_nb.claims.table import ClaimRow, write_csv
    from qencode_nb.readout.report_claims import claims_section

    rows = [ClaimRow("leaderboard", "rank 1 <b>x</b>", "a.csv:2", "holds", "ok"),
            ClaimRow("stated", "readme: \u201c7 molecules\u201d", "README.md:25", "stale", "16"),
            ClaimRow("receipt signature", "r", "c.json, receipt 1",
                     "unverifiable: no public key", "no key")]
    html = claims_section(write_csv(rows, tmp_path))
    soup = BeautifulSoup(html, "html.parser")
    trs = soup.select("#qnb-claims tr.qnb-claim")
    assert [tr["data-status"] for tr in trs] == ["stale", "holds", "unverifiable"]
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert trs[0].select_one(".badge")["class"] == ["badge", "b-warn"]
    assert "1 stale" in soup.select_one(".qnb-claims-source").get_text()


@pytest.mark.notebook
def test_the_report_shows_the_claims_table_as_its_own_section(tmp_path, capsys):
    """One real audit (replay, fast engine), then ``qencode-nb report --claims``."""
    from bs4 import BeautifulSoup

    from qencode_nb.batch.sweep import sweep
    from conftest import H2_JW_UCCSD

    runs = tmp_path / "runs"
    sweep([str(H2_JW_UCCSD)], runs, mode="replay", engine="fast", progress=False, plot=False)
    assert main(["claims", str(SHARED_HISTORY), "--db", str(SHARED_DB),
                 "--out", str(tmp_path)]) == 3
    page = tmp_path / "page" / "report.html"
    assert main(["report", str(runs), "--no-notebooks", "--out", str(page),
                 "--claims", str(tmp_path / "claims.csv")]) == 0
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    section = soup.select_one("section#qnb-claims")
    assert section.h2.get_text() == "Claims"
    assert len(section.select("tr.qnb-claim")) == 284
    assert section.select("tr.qnb-claim")[0]["data-status"] == "stale"
    assert soup.select("tr.qnb-row")          # the audits' table is still there
    assert str(tmp_path) not in section.get_text()   # no absolute path in the section
    capsys.readouterr()
    assert main(["report", str(runs), "--no-notebooks", "--out", str(page),
                 "--claims", str(page)]) == 2
    assert "not a claims table" in capsys.readouterr().err
