"""The local pool of a sweep or study: warm worker processes, where a dead worker
fails only its own run.

:func:`run_pool` replaces :class:`concurrent.futures.ProcessPoolExecutor` for
:func:`qencode_nb.batch.sweep.run_local`.  That executor marks the whole pool
broken when one worker dies (killed, out of memory): every pending run raises
``BrokenProcessPool``, the other workers are terminated mid-run, and the sweep
ends in a traceback with nothing recorded.  Here each worker is a process of its
own with a pipe; the dispatcher watches the pipes and the processes' sentinels, so
a worker that dies hands its job to ``lost(args, reason)`` (the sweep records a
failed row with the reason), is replaced by a fresh warm worker, and the other
runs go on.  Workers are forked (the platform's default start method) and die
with the dispatcher (:func:`qencode_nb.executor.process_ties.die_with_parent`).
:func:`longest_first` orders the jobs (the longest expected re-runs first).
"""

from __future__ import annotations

import os
import signal


def _serve(conn, fn, initializer, parent_pid):
    """A worker: run ``fn(*args)`` for each ``(index, args)`` received, answer
    ``(index, ok, result or exception)``, stop at None or when the pipe closes."""
    from qencode_nb.executor.process_ties import die_with_parent

    die_with_parent(parent_pid)
    if initializer is not None:
        initializer()
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        index, args = message
        try:
            answer = (index, True, fn(*args))
        except Exception as exc:  # noqa: BLE001 - re-raised in the dispatcher
            answer = (index, False, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # noqa: BLE001 - e.g. an exception that does not pickle
            conn.send((index, False, RuntimeError(f"{type(exc).__name__}: {exc}")))


def death(exitcode) -> str:
    """How a process ended, from its exit code: "killed by SIGKILL", "exit status 1"."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def run_pool(fn, jobs, workers: int, *, lost, initializer=None, apart=None):
    """Run ``fn(*args)`` for every ``args`` of ``jobs`` on ``workers`` processes;
    yield the results as they complete (not in job order).

    Args:
        fn: a module-level function (it runs in the workers).
        jobs: argument tuples, picklable.
        workers: processes (at least 1; no more than there are jobs).
        lost: ``lost(args, reason) -> result``, called here for a job whose worker
            died before answering; ``reason`` names the worker's pid and how it
            ended.  Its result is yielded in place of ``fn``'s.
        initializer: called once in each worker before its first job.
        apart: ``apart(args) -> key`` (hashable, or None): two jobs with the same key
            never run at once (the later one waits, its worker takes the next job that
            may run); e.g. two runs of one entry file under one environment, which
            would share a re-run checkpoint.  None: any jobs run together.

    Raises:
        Exception: what ``fn`` raised, as the executor's ``Future.result`` does
            (the remaining workers are stopped first).
    """
    import multiprocessing
    from multiprocessing.connection import wait

    from qencode_nb.executor.run_process import kill_tree

    jobs = list(jobs)
    queue = list(range(len(jobs)))[::-1]   # pop() takes the first job first
    keys = [None if apart is None else apart(job) for job in jobs]
    ctx = multiprocessing.get_context()
    busy = {}                               # connection -> (process, job index or None)

    def start():
        parent_end, child_end = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child_end, fn, initializer, os.getpid()),
                           daemon=False)
        proc.start()
        child_end.close()
        busy[parent_end] = (proc, None)

    def next_job():
        """The first queued job whose key no running job holds (None: none may run)."""
        running = {keys[i] for _, i in busy.values() if i is not None} - {None}
        for pos in range(len(queue) - 1, -1, -1):
            if keys[queue[pos]] is None or keys[queue[pos]] not in running:
                return queue.pop(pos)
        return None

    def feed(conn):
        proc, _ = busy[conn]
        if queue:
            index = next_job()
            if index is None:       # what is left waits for a running job: stay idle
                busy[conn] = (proc, None)
                return
            try:
                conn.send((index, jobs[index]))
            except OSError:   # the worker died before it took the job: another one will
                queue.append(index)
                busy[conn] = (proc, None)
                return
            busy[conn] = (proc, index)
        else:
            try:
                conn.send(None)
            except OSError:
                pass
            del busy[conn]
            conn.close()
            proc.join()

    def feed_idle():
        for conn in [c for c, (_, i) in busy.items() if i is None]:
            if conn in busy and busy[conn][1] is None:
                feed(conn)

    finished = False
    try:
        for _ in range(min(max(1, workers), len(jobs))):
            start()
        for conn in list(busy):
            feed(conn)
        while busy:
            sentinels = {busy[c][0].sentinel: c for c in busy}
            for ready in wait(list(busy) + list(sentinels)):
                conn = sentinels.get(ready, ready)
                if conn not in busy:
                    continue
                proc, index = busy[conn]
                try:
                    answer, closed = (conn.recv() if conn.poll() else None), False
                except (EOFError, OSError):   # the worker is gone (or going)
                    answer, closed = None, True
                if answer is not None:
                    _, ok, value = answer
                    if not ok:
                        raise value
                    busy[conn] = (proc, None)
                    feed(conn)
                    feed_idle()
                    yield value
                    continue
                if not closed and proc.is_alive():
                    continue   # nothing to read yet
                proc.join()
                del busy[conn]
                conn.close()
                if queue:
                    start()
                    feed(list(busy)[-1])
                feed_idle()
                if index is not None:
                    yield lost(jobs[index], f"the sweep worker (pid {proc.pid}) running it "
                                            f"died ({death(proc.exitcode)})")
        finished = True
    finally:
        if not finished:   # fn raised, or the caller stopped early: stop every worker
            for conn, (proc, _) in list(busy.items()):
                kill_tree(proc.pid)
                proc.join()
                conn.close()


def expected_cost(target) -> float:
    """A rough re-run cost of an entry, to start the longest runs first (a pool
    then finishes with short ones instead of one long straggler): optimiser
    steps times the square of the parameter count ``n`` (COBYLA's own work per
    step grows so; N2 JW/UCCSD, 10,000 steps at n = 404, is the longest on the
    fast engine).  Steps are the published ``results.vqe.nfev``, divided by the
    generator's per-step count for L-BFGS-B (``1 + 2n``; ADAPT: ``1 + n``).
    0 for a target that cannot be read (it fails in its own run instead)."""
    from qencode_nb.entry import load

    try:
        entry = load(target)
    except Exception:  # noqa: BLE001 - the run itself reports the reason
        return 0.0
    n = max(1, len(entry.optimal_params or ()))
    opt = entry.optimizer
    per_step = 1
    if opt.name == "l-bfgs-b":
        per_step = 1 + 2 * n
    elif opt.name == "adapt" and (opt.inner or "") == "l-bfgs-b":
        per_step = 1 + n
    return float(entry.published_nfev or 0) / per_step * n * n


def cobyla_path_key(target) -> str | None:
    """``apart`` of a study's runs (:func:`run_pool`): the entry's SHA-256 when its COBYLA
    restarts are expected to keep their paths (:mod:`qencode_nb.rerun.cobyla_path`), so
    that the first run of the entry stores them and its other runs verify them instead of
    running COBYLA beside it; None (no constraint) for any other entry.  Expected: COBYLA
    and :func:`expected_cost` per restart (of those the publication ran) at least
    :data:`qencode_nb.rules.COBYLA_PATH_APART_COST`."""
    from qencode_nb.entry import load
    from qencode_nb.rules import COBYLA_PATH_APART_COST

    try:
        entry = load(target)
    except Exception:  # noqa: BLE001 - the run itself reports the reason
        return None
    if entry.optimizer.name != "cobyla":
        return None
    restarts = max(1, int(entry.published_restarts_run or entry.restarts_requested or 1))
    return entry.sha256 if expected_cost(target) / restarts >= COBYLA_PATH_APART_COST else None


def longest_first(jobs, target=lambda job: job[0]) -> list:
    """``jobs`` sorted by :func:`expected_cost` of their target, largest first
    (stable: equal costs keep their order)."""
    costs = {id(job): expected_cost(target(job)) for job in jobs}
    return sorted(jobs, key=lambda job: -costs[id(job)])
