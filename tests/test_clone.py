"""What a fresh clone shows a newcomer (issue 25 item 7): the outputs the README's commands
write are ignored by git, and pytest without ``../shared`` says how to get the data."""

from __future__ import annotations

import subprocess
import sys

from checkout import copy_checkout, git

#: What the README's recipes and the site's tutorials write into the checkout, as
#: a user runs them from its root (main job, ``show``, sweep/report, figures, own entry,
#: the docs build).
WRITTEN = ("out.ipynb", "bh.ipynb", "figures.ipynb", "threading.ipynb", "robustness.ipynb",
           "report.html", "report.csv", "report_notebooks/lih.html", "runs/ci/lih.ipynb",
           "runs/audit/lih.attestation.json", "figures/margins.pdf",
           "docs/_build/html/index.html", "docs/jupyter_execute/x.ipynb",
           "notebooks/figures/margins.svg")


def test_readme_outputs_are_ignored_and_pytest_names_the_data(tmp_path):
    repo = copy_checkout(tmp_path / "qencode-nb")      # no ../shared beside it
    for name in WRITTEN:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x")
    assert git(repo, "status", "--porcelain").stdout == ""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_layout.py"],
                          cwd=repo, capture_output=True, text=True)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    shared = tmp_path / "shared" / "qencode-v4"
    assert f"{shared / 'db'}, which does not exist" in said, said
    assert (f"`.venv/bin/qencode-nb data fetch --dir {shared} --only $(grep -v '^#' "
            "tests/data/shared-v4.txt)`") in said, said


def test_the_list_of_shared_entries_is_what_the_tests_read_and_the_release_holds(shared_db):
    """``data fetch --only <tests/data/shared-v4.txt>`` rebuilds ../shared/qencode-v4: every
    name is in the pinned registry with the SHA-256 of the shared file."""
    import hashlib

    from conftest import SHARED_LIST
    from qencode_nb.entry.database import registry, select

    names = [line for line in SHARED_LIST.read_text().splitlines() if not line.startswith("#")]
    files = select(names)                 # every name known to the registry, or EntryError
    assert len(files) == 43 and len([f for f in files if f.startswith("db/")]) == 40
    on_disk = sorted(p.relative_to(shared_db.parent).as_posix()
                     for p in shared_db.parent.rglob("*") if p.is_file())
    assert sorted(files) == on_disk
    reg = registry()
    for name in files:
        digest = hashlib.sha256((shared_db.parent / name).read_bytes()).hexdigest()
        assert reg[name][0] == digest, name
