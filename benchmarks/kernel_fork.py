"""One warm run with its kernel forked from the run's template against a new interpreter.

Usage::

    python benchmarks/kernel_fork.py [ENTRY.json] [--repeat 6] [--mode replay]

Does what a sweep's pool worker does (:mod:`qencode_nb.executor.warm_imports`, no numpy
imported), then runs ``audit.ipynb`` on the entry (default: H2 cc-pVDZ JW/UCCSD v4,
``--engine fast``) through :func:`qencode_nb.executor.run_process.run_isolated`
``--repeat`` times with each kernel start, alternating:

- *exec*: ``QENCODE_NB_KERNEL_START=exec``, the kernel a new interpreter
  (``python -m ipykernel_launcher``), as before;
- *fork*: the default, the kernel forked from the run process's template
  (:mod:`qencode_nb.executor.kernel_fork`).

Prints per start the run's wall seconds (median and range) and CPU seconds (the run
process and its kernel, ``RUSAGE_CHILDREN``), and the ratio exec / fork; checks that both
runs recorded the same replay energy (``energy_hex``).  Wall-clock on a shared machine:
compare the ratio.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

H2 = "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"
STARTS = ("exec", "fork")


def cpu_seconds() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("entry", nargs="?", default=str(harness.ROOT.parent / "shared" /
                                                    "qencode-v4" / "db" / H2))
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--mode", default="replay")
    args = ap.parse_args()

    sys.modules.setdefault("rfc3987_syntax", None)
    import qencode_nb.executor.warm_imports  # noqa: F401  (a pool worker's imports)
    from qencode_nb.executor import kernel_fork, run_process
    from qencode_nb.notebook.record import read_records
    from qencode_nb.paths import NOTEBOOKS

    if kernel_fork.why_not() not in (None, "QENCODE_NB_KERNEL_START=exec"):
        print(f"no template here: {kernel_fork.why_not()}")
        return 1
    out = Path(tempfile.mkdtemp(prefix="bench-kernel-fork-"))
    walls = {s: [] for s in STARTS}
    cpus = {s: [] for s in STARTS}
    energies = {s: set() for s in STARTS}
    params = {"entry": str(Path(args.entry).resolve()), "mode": args.mode, "engine": "fast"}
    for i in range(args.repeat + 1):          # the first round warms the caches, unmeasured
        for start in STARTS:
            os.environ["QENCODE_NB_KERNEL_START"] = start
            nb = out / f"{start}{i}.ipynb"
            began, cpu = time.perf_counter(), cpu_seconds()
            reason = run_process.run_isolated(NOTEBOOKS / "audit.ipynb", nb, params,
                                              cwd=str(harness.ROOT))
            wall, cpu = time.perf_counter() - began, cpu_seconds() - cpu
            if reason is not None:
                print(f"{start}: run failed: {reason}")
                return 1
            energies[start].add(read_records(nb)["replay"]["energy_hex"])
            if i:
                walls[start].append(wall)
                cpus[start].append(cpu)
    for start in STARTS:
        w = walls[start]
        print(f"{start:5s} run {statistics.median(w):.3f} s median ({min(w):.3f}-{max(w):.3f}, "
              f"{len(w)} runs); CPU {statistics.median(cpus[start]):.3f} s")
    print(f"ratio exec / fork: wall {statistics.median(walls['exec']) / statistics.median(walls['fork']):.2f}, "
          f"CPU {statistics.median(cpus['exec']) / statistics.median(cpus['fork']):.2f}")
    same = energies["exec"] == energies["fork"] and len(energies["exec"]) == 1
    print(f"replay energy the same bits in every run: {same} ({sorted(energies['exec'] | energies['fork'])})")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
