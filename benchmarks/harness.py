"""What every benchmark script shares: the thread pin, deadlines, timings, JSON
rows and child processes.

Import it first (``import harness``, the scripts run from ``benchmarks/``): on
import it puts the checkout on ``sys.path`` and sets all six pin variables
(:func:`qencode_nb.notebook.pins.pin_environment`) at one count, 1 or the count
already in ``OMP_NUM_THREADS``, before anything loads numpy.  It imports no numpy
itself.

Timings are wall-clock ``time.perf_counter`` seconds (and ``time.process_time``
CPU seconds) on a shared machine: compare ratios, not absolute numbers, across
machines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The checkout (``benchmarks/..``) and this folder.
ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from qencode_nb.notebook.pins import pin_environment  # noqa: E402  (imports no numpy)

#: The environment as the script inherited it, before the pins below (for a script that
#: launches a process which must see the host as it is, such as ``ci_duration.py``).
INHERITED_ENV = dict(os.environ)
os.environ.update(pin_environment(int(os.environ.get("OMP_NUM_THREADS", "1"))))

import json  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402

#: The shared QEncode v4 entries (``../shared/qencode-v4/db``, never copied here).
DB = ROOT.parent / "shared" / "qencode-v4" / "db"

#: A call slower than this (s) is timed once after its warm-up call.
SLOW_CALL_S = 20.0


class Timeout(Exception):
    """A timed call ran past its :func:`deadline`."""


@contextmanager
def deadline(seconds: float):
    """Raise :class:`Timeout` in the body after ``seconds`` (SIGALRM, whole seconds,
    at least 1; main thread only).  The previous handler is restored on exit."""
    def handler(signum, frame):
        raise Timeout(f"exceeded {seconds:g} s")
    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(max(1, int(seconds)))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def timed(fn, timeout: float | None = None):
    """``(value, seconds)`` of one call of ``fn()``; ``timeout`` in seconds (None or
    0: none).

    Raises:
        Timeout: the call ran past ``timeout``.
    """
    start = time.perf_counter()
    if timeout:
        with deadline(timeout):
            value = fn()
    else:
        value = fn()
    return value, time.perf_counter() - start


def bench(fn, timeout: float, budget: float = 2.0, min_reps: int = 3, max_reps: int = 50,
          slow_call_s: float = SLOW_CALL_S) -> dict:
    """One warm-up call of ``fn()``, then repeats: at least ``min_reps`` (1 when the
    warm-up took over ``slow_call_s``), at most ``max_reps``, until ``budget``
    seconds of repeats.

    Returns:
        ``{"first", "median", "cpu_median", "reps", "value"}``: the warm-up's
        seconds, the median wall and CPU seconds per repeat, the repeats, and the
        last call's value.

    Raises:
        Timeout: one call ran past ``timeout`` seconds.
    """
    value, first = timed(fn, timeout)
    times, cpu = [], []
    reps = 1 if first > slow_call_s else min_reps
    while len(times) < max_reps and (len(times) < reps or sum(times) < budget):
        with deadline(timeout):
            t, c = time.perf_counter(), time.process_time()
            value = fn()
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return {"first": first, "median": statistics.median(times),
            "cpu_median": statistics.median(cpu), "reps": len(times), "value": value}


def reason(exc: BaseException, limit: int = 120) -> str:
    """``"TypeName: message"`` of an exception, the message cut at ``limit`` characters
    (a row's ``reason``)."""
    return f"{type(exc).__name__}: {str(exc)[:limit]}"


def db_path(pattern: str, db: Path = DB) -> Path:
    """The one entry file of ``db`` matching the glob ``pattern``.

    Raises:
        FileNotFoundError: none or several match.
    """
    hits = sorted(db.glob(pattern))
    if len(hits) != 1:
        raise FileNotFoundError(f"{pattern}: {len(hits)} files in {db}")
    return hits[0]


def peak_mib() -> float:
    """This process's peak resident memory in MiB (``VmHWM``, reset at exec, unlike
    ``ru_maxrss`` which a child inherits from its parent); NaN without /proc."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child_env(extra: dict | None = None) -> dict:
    """This process's environment with the checkout and ``benchmarks/`` first on
    ``PYTHONPATH`` (so a child imports ``qencode_nb`` and ``harness``), plus ``extra``."""
    env = dict(os.environ, **(extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE), str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def run_json(args: list, timeout: float | None = None, env: dict | None = None) -> dict:
    """Run ``python ARGS`` (a script path or ``-c CODE``, then its arguments) in a child
    process and parse the last line of its stdout as a JSON object.

    Args:
        args: arguments after the interpreter (``str()`` of each is passed).
        timeout: seconds allowed (None: no limit).
        env: the child's environment (default :func:`child_env`).

    Returns:
        The parsed object, or ``{"reason": ...}`` when the child failed (its last
        stderr line) or ran past ``timeout``.
    """
    try:
        proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True,
                              text=True, timeout=timeout, env=env or child_env())
    except subprocess.TimeoutExpired:
        return {"reason": f"exceeded {timeout:g} s"}
    if proc.returncode:
        return {"reason": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"reason": f"no JSON line on stdout: {proc.stdout[-200:]!r}"}


def run_function(module: str, function: str, args: list, timeout: float | None = None,
                 env: dict | None = None) -> dict:
    """``module.function(*args)`` (a benchmark module, string arguments) in a child
    process that imports :mod:`harness` first (the pins) and prints the returned
    dict as its last line; :func:`run_json`'s result."""
    code = (f"import sys, harness, {module}; "
            f"harness.print_row({module}.{function}(*sys.argv[1:]))")
    return run_json(["-c", code, *args], timeout, env)


def print_row(row: dict) -> None:
    """One result row as a JSON line on stdout, flushed (progress of a long run)."""
    print(json.dumps(row), flush=True)


def write_json(path, obj) -> None:
    """``obj`` as indented JSON at ``path`` (None: nothing written)."""
    if path:
        Path(path).write_text(json.dumps(obj, indent=1))
