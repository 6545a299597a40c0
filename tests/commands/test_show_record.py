"""``qencode-nb show`` on a record sweep's --out whose release folders hold no audit
notebook (every entry refused before a run, or the sweep not run yet): each release
says so and the exit status is 2, as for any folder without an executed audit.  The
folders with runs are shown in tests/batch/test_history.py (a real record sweep)."""

from __future__ import annotations

import json

from qencode_nb.cli import main
from qencode_nb.studies.history_sweep import HISTORY_MANIFEST


def test_a_record_sweep_without_runs_is_shown_release_by_release(tmp_path, capsys):
    (tmp_path / "v4").mkdir()
    (tmp_path / HISTORY_MANIFEST).write_text(json.dumps({"groups": [
        {"label": "v4", "folder": "v4"}, {"label": "v2/trusted", "folder": "v2-trusted"}]}))
    assert main(["show", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "release v4 (v4/): no audit notebook (every entry refused, or not run yet)",
        "release v2/trusted (v2-trusted/): no audit notebook (every entry refused, or not run yet)"]
    assert "holds no executed audit notebook in any release folder" in err


def test_a_folder_that_is_no_record_sweep_names_what_is_accepted(tmp_path, capsys):
    (tmp_path / HISTORY_MANIFEST).write_text("not json")
    assert main(["show", str(tmp_path)]) == 2
    assert "accepted: a sweep's --out, a record sweep's --out" in capsys.readouterr().err
