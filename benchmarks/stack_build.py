"""A recorded stack built by uv against pip, side by side, both from a warm cache.

Usage::

    python benchmarks/stack_build.py [--repeat 2] [--entry PATH]

Resolves the entry's recorded stack at its date (:func:`qencode_nb.environment.choice.
recorded_lock`: the v3 H2 STO-3G entry by default, its lock kept from an earlier run or
resolved once here), then builds it ``--repeat`` times each way, alternating, in a
temporary folder:

- *uv*: :func:`qencode_nb.environment.build.create_stack` (``uv venv`` + ``uv pip sync``
  of the lock, ``ipykernel install``), what ``--stack recorded`` does since issue 52;
- *pip*: the way before it: a stdlib venv with pip, ``pip install -r`` the same lock
  (``--require-hashes --no-deps``: the lock holds the whole tree), ``ipykernel install``.

A first, untimed build each way warms uv's and pip's caches.  Prints the wall seconds of
each (median and range) and their ratio.  Wall-clock on a shared machine: compare the
ratio.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

V3_H2 = (harness.ROOT.parent / "shared" / "qencode-history" / "releases" / "v3" / "db"
         / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json")


def build_uv(lock, folder: Path) -> float:
    from qencode_nb.environment.build import create_stack

    start = time.perf_counter()
    create_stack("bench-uv", lock=lock, root=folder, jupyter_prefix=folder / "jupyter",
                 replace=True)
    return time.perf_counter() - start


def build_pip(lock, folder: Path) -> float:
    env_dir = folder / "bench-pip"
    start = time.perf_counter()
    if env_dir.exists():
        import shutil

        shutil.rmtree(env_dir)
    venv.EnvBuilder(with_pip=True).create(str(env_dir))
    req = folder / "lock.txt"
    req.write_text(lock.text)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                    "--no-deps", "--require-hashes", "-r", str(req)], check=True)
    subprocess.run([str(py), "-m", "ipykernel", "install", "--prefix",
                    str(folder / "jupyter"), "--name", "bench-pip"], check=True,
                   capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--entry", default=str(V3_H2))
    args = parser.parse_args()
    from qencode_nb.entry import load
    from qencode_nb.environment.choice import RECORDED, recorded_lock
    from qencode_nb.environment.recorded import of_entry

    lock = recorded_lock(of_entry(load(args.entry)), RECORDED)
    print(f"lock {lock.key} resolved at {lock.resolved_at}: {len(lock.versions())} packages",
          flush=True)
    times = {"uv": [], "pip": []}
    with tempfile.TemporaryDirectory(prefix="qnb-stack-bench-") as tmp:
        folder = Path(tmp)
        build_uv(lock, folder), build_pip(lock, folder)           # warm both caches
        for _ in range(args.repeat):
            times["uv"].append(build_uv(lock, folder))
            times["pip"].append(build_pip(lock, folder))
            print({k: [round(t, 1) for t in v] for k, v in times.items()}, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        print(f"{k:4s} median {med[k]:6.1f} s (range {min(v):.1f} - {max(v):.1f} s, "
              f"{len(v)} builds)")
    print(f"pip / uv: {med['pip'] / med['uv']:.1f}x (Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
