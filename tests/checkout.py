"""A clean copy of this checkout for tests that must not touch the real one.

:func:`copy_checkout` copies the files git tracks (as they are in the working tree, so
uncommitted edits are tested too) into a new folder and commits them there in a fresh
repository: what a fresh clone would hold.  A test can then run JupyterLab or
repo2docker on it, save notebooks, and check ``git status`` / ``git diff`` of the copy;
whatever it leaves behind is in a temporary folder, never in the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: git without this machine's or the user's hooks and identity.
GIT = ("git", "-c", "core.hooksPath=/dev/null", "-c", "user.name=qencode-nb tests",
       "-c", "user.email=tests@qencode-nb.invalid", "-c", "commit.gpgsign=false")


def tracked_files(root: Path = ROOT) -> list[str]:
    """The paths git tracks in ``root`` that exist in its working tree."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                         capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p and (root / p).is_file()]


def git(dest: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``git ARGS`` in ``dest`` (text output captured)."""
    return subprocess.run([*GIT, *args], cwd=dest, check=check, capture_output=True,
                          text=True)


def copy_checkout(dest: Path, root: Path = ROOT) -> Path:
    """Copy ``root``'s tracked files to ``dest`` (created) and commit them there.

    Returns:
        ``dest``, a git repository whose ``git status`` is clean.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for rel in tracked_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "copy of the checkout")
    assert git(dest, "status", "--porcelain").stdout == ""
    return dest
