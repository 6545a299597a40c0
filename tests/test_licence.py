"""The licence of the QEncode files this repository bundles (issue 23 item 8).

QEncode's data is MIT (its ``CITATION.cff`` on branch master says ``license: MIT``; its
main branch's LICENSE is the MIT text, "Copyright (c) 2026"; see
../shared/qencode-history/NOTICE.md).  Every folder holding a QEncode file ships the MIT
text and a NOTICE naming the repository, the branch and the 40-hex commit the files were
copied from, and nothing in the repository says QEncode's data is Apache-licensed.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: A QEncode entry file: its entry_id ends in ``__sha256_`` + 16 hex digits.
QENCODE_FILE = re.compile(r"__sha256_[0-9a-f]{16}\.json$")
REPOSITORY = "https://github.com/qencode-benchmark/qencode-benchmark"

#: The MIT License's own sentences (SPDX "MIT"), each of which the LICENSE must hold.
MIT_CLAUSES = (
    "MIT License",
    "Copyright (c) 2026",
    "Permission is hereby granted, free of charge, to any person obtaining a copy",
    "The above copyright notice and this permission notice shall be included in all",
    'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND',
)


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                         check=True).stdout.decode()
    return [ROOT / name for name in out.split("\0") if name]


def qencode_folders() -> list[Path]:
    """Every folder of the checkout that bundles a QEncode entry file."""
    return sorted({p.parent for p in tracked_files() if QENCODE_FILE.search(p.name)})


def test_the_bundled_qencode_folders_are_the_known_ones():
    """The search finds the two folders the issue names (a new one is checked below)."""
    found = [p.relative_to(ROOT).as_posix() for p in qencode_folders()]
    assert "data/qencode-v4" in found and "tests/data/qencode-v3" in found, found


def test_each_qencode_folder_ships_the_mit_text_and_a_notice():
    for folder in qencode_folders():
        licence = (folder / "LICENSE").read_text(encoding="utf-8")
        missing = [c for c in MIT_CLAUSES if c not in " ".join(licence.split())
                   and c not in licence]
        assert not missing, f"{folder}/LICENSE lacks {missing}"
        assert licence.startswith("MIT License\n"), f"{folder}/LICENSE is not the MIT text"
        notice = (folder / "NOTICE").read_text(encoding="utf-8")
        assert REPOSITORY in notice, f"{folder}/NOTICE does not name {REPOSITORY}"
        assert re.search(r"branch:?\s+master\b", notice), f"{folder}/NOTICE names no branch"
        assert re.search(r"commit:?\s+[0-9a-f]{40}\b", notice), \
            f"{folder}/NOTICE names no 40-hex commit"
        assert "MIT" in notice
        for entry in folder.glob("*.json"):
            if QENCODE_FILE.search(entry.name):
                assert entry.name in notice, f"{folder}/NOTICE does not list {entry.name}"


def test_no_apache_text_remains_about_qencode_data():
    """No file in a QEncode folder mentions Apache, and no tracked text file says
    Apache within three lines of QEncode's name, its folders or a NOTICE/LICENSE."""
    for folder in qencode_folders():
        for path in folder.iterdir():
            if path.is_file():
                assert "apache" not in path.read_text(encoding="utf-8",
                                                      errors="replace").lower(), path
    near = re.compile(r"qencode|data/|notice|licen[cs]e", re.I)
    for path in tracked_files():
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(lines):
            if "apache" in line.lower():
                window = " ".join(lines[max(0, i - 3):i + 4])
                assert not near.search(window), f"{path.relative_to(ROOT)}:{i + 1}: {line}"
