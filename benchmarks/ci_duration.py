"""CI's duration on a clean clone: ``.ci/run`` timed from a fresh ``git clone``.

Usage::

    python benchmarks/ci_duration.py                  # clone HEAD of this checkout
    python benchmarks/ci_duration.py --ref main --keep /tmp/ci-clone --slowest 10

Clones the committed tree (nothing untracked, no ``.venv``: the clone sets itself up as
README.md says, ``pip install -r requirements.lock``, which reuses pip's wheel cache when
the host has one) beside this checkout (the tests read ``../shared``), runs ``.ci/run`` there with
``QNB_CI_DURATIONS=N`` (``.ci/run`` passes it to pytest's ``--durations``), and prints the wall-clock minutes of the whole
run and of its phases (set-up, the main pytest run, the bit-level run, the site test),
then the N slowest tests of the main run as pytest reports them.  CI's own budget is 30
minutes for everything ``.ci/run`` does (issue 37); the exit status is ``.ci/run``'s.

A wall-clock figure on a shared 2-core host: compare it with another run of this script
on the same host (for example before and after a change), not across machines.
"""

from __future__ import annotations

import harness  # noqa: F401  (first, as every script here; CI gets harness.INHERITED_ENV)

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = harness.ROOT


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="HEAD", help="commit to clone (default HEAD)")
    ap.add_argument("--keep", type=Path, default=None,
                    help="clone here and keep it (default: ../ci-clone-PID beside this "
                         "checkout, where ../shared is found; removed when CI passes)")
    ap.add_argument("--slowest", type=int, default=10, help="slowest tests to print")
    args = ap.parse_args(argv)

    # Beside this checkout, as CI's checkout sits beside ../shared (the tests read it).
    where = args.keep or ROOT.parent / f"ci-clone-{os.getpid()}"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "--quiet", args.ref], check=True)
    # The host as inherited, not the pins harness set: CI pins its own tests.
    env = {k: v for k, v in harness.INHERITED_ENV.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS")}
    log = where / "ci.log"
    start = time.perf_counter()
    marks = []
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", ".ci/run"], cwd=where, env={
            **env, "QNB_CI_DURATIONS": str(args.slowest)}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            out.write(line)
            if re.search(r"(passed|failed|error).* in [0-9.]+s", line) or \
                    line.startswith(("bit-level tests again", "documentation built")):
                marks.append((time.perf_counter() - start, line.strip()))
        rc = proc.wait()
    total = time.perf_counter() - start
    print(f".ci/run on a clean clone of {args.ref}: {total / 60:.1f} min (exit {rc}); log {log}")
    for t, line in marks:
        print(f"  at {t / 60:5.1f} min: {line}")
    text = log.read_text()
    block = re.search(r"=+ slowest (\d+) durations =+\n(.*?)\n\n", text, re.S)
    if block:
        print("\nslowest tests of the main run:")
        for line in block.group(2).splitlines()[:args.slowest]:
            print("  " + line)
    if args.keep is None and rc == 0:
        shutil.rmtree(where)
    return rc


if __name__ == "__main__":
    sys.exit(main())
