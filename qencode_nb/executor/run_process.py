"""One notebook run in its own killable process, under a wall-clock limit.

A sweep, study or robustness run executes :func:`qencode_nb.executor.execute.run_notebook`
in a process of its own, so that a run past its timeout can be killed with its
kernel (the whole process tree) and the study goes on.  Two ways to start it
(:func:`start_method`):

- **fork** of the dispatching process, where that is safe: one thread, not
  daemonic (a local pool worker).  The pool's workers import papermill and the
  runner once (:func:`warm_up`, :mod:`qencode_nb.executor.warm_imports`), so a
  run starts in milliseconds instead of paying a new interpreter and
  papermill's imports each time (``benchmarks/overhead.py`` measures both).
- **subprocess**, ``python -m qencode_nb.executor.execute``: anywhere else (a
  Dask worker, which is daemonic and threaded; a caller with threads), or when
  :envvar:`QENCODE_NB_RUN_PROCESS` is ``subprocess``.

Both get the caller's environment and a working directory, and report the
same one-line reason when a run fails.  Both die with the process that started
them (:func:`~qencode_nb.executor.process_ties.die_with_parent`): a sweep worker killed
mid-run takes its run with
it (the kernel, polling its parent, ends too), so no orphan goes on writing the
notebook that the sweep records as failed or that a retry writes again.
"""

from __future__ import annotations

import os
import sys

from qencode_nb.errors import RunTimedOut
from qencode_nb.executor.process_ties import die_with_parent

#: Accepted values of :envvar:`QENCODE_NB_RUN_PROCESS`.
START_METHODS = ("fork", "subprocess")


def start_method() -> str:
    """``"fork"`` or ``"subprocess"``: :envvar:`QENCODE_NB_RUN_PROCESS` when set,
    else fork where this process has one thread and is not daemonic
    (multiprocessing refuses children of a daemonic process; a fork of a
    threaded one can inherit a held lock).

    Raises:
        ParameterError: :envvar:`QENCODE_NB_RUN_PROCESS` is set to another value.
    """
    import multiprocessing
    import threading

    from qencode_nb.errors import ParameterError

    chosen = os.environ.get("QENCODE_NB_RUN_PROCESS")
    if chosen:
        if chosen not in START_METHODS:
            raise ParameterError(f"QENCODE_NB_RUN_PROCESS {chosen!r} is not accepted; "
                                 "accepted: " + ", ".join(START_METHODS))
        return chosen
    if multiprocessing.current_process().daemon or threading.active_count() > 1:
        return "subprocess"
    return "fork"


def warm_up() -> None:
    """Import papermill and the runner in this process (a pool worker's
    initializer), so runs forked from it start without them."""
    import qencode_nb.executor.warm_imports  # noqa: F401


def kill_tree(pid: int) -> None:
    """Kill a process and all its descendants (papermill and its kernel)."""
    import psutil

    try:
        parent = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    procs = parent.children(recursive=True) + [parent]
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


def run_isolated(notebook, output, parameters: dict, *, timeout: float | None = None,
                 cell_timeout: int | None = None, kernel: str | None = None,
                 cwd: str | None = None) -> str | None:
    """Execute ``notebook`` into ``output`` in a process of its own; never raises
    for a failed run.

    Args:
        notebook, output: input and executed .ipynb paths.
        parameters: papermill parameters (``run_notebook`` checks the names).
        timeout: wall-clock limit of the whole run in seconds (None: none); on
            expiry the process tree is killed and :class:`RunTimedOut` raised.
        cell_timeout: per-cell limit in seconds (None: none).
        kernel: Jupyter kernelspec (None: the notebook's).
        cwd: working directory of the run (None: the caller's).

    Returns:
        None when the run recorded ``done``; else the reason, one line (a
        stage's error, a dead kernel, a process that died).

    Raises:
        RunTimedOut: the run was killed at ``timeout``.
        ParameterError: :envvar:`QENCODE_NB_RUN_PROCESS` or
            :envvar:`QENCODE_NB_KERNEL_START` has a value not accepted (before any run).
    """
    from qencode_nb.executor.kernel_fork import kernel_start

    kernel_start()        # a bad QENCODE_NB_KERNEL_START refused here, as a bad start method
    cwd = str(cwd or os.getcwd())
    if start_method() == "subprocess":
        return _run_subprocess(notebook, output, parameters, timeout, cell_timeout, kernel, cwd)
    return _run_forked(notebook, output, parameters, timeout, cell_timeout, kernel, cwd)


def _last_line(text: str) -> str | None:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else None


def _run_subprocess(notebook, output, parameters, timeout, cell_timeout, kernel, cwd):
    import json
    import subprocess

    cmd = [sys.executable, "-m", "qencode_nb.executor.execute", str(notebook), str(output),
           json.dumps(parameters)]
    if cell_timeout:
        cmd += ["--cell-timeout", str(int(cell_timeout))]
    if kernel:
        cmd += ["--kernel", str(kernel)]
    import functools

    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=functools.partial(die_with_parent, os.getpid()))
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid)
        proc.communicate()
        raise RunTimedOut from None
    if proc.returncode == 0:
        return None
    return _last_line(err) or f"runner exited with status {proc.returncode}"


def _child(conn, notebook, output, parameters, cell_timeout, kernel, cwd, parent_pid):
    """The forked run: the working directory, output discarded as the subprocess
    path discards it (the kernel inherits it), then run_notebook; sends None or
    the reason (one line) and exits 0 / 1; it dies with the worker that forked it."""
    die_with_parent(parent_pid)
    os.chdir(cwd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.modules.setdefault("rfc3987_syntax", None)   # qencode_nb.executor.warm_imports
    from qencode_nb.errors import ParameterError, RunFailed
    from qencode_nb.executor import kernel_fork
    from qencode_nb.executor.execute import run_notebook

    try:
        kernel_fork.prepare()     # while this process has one thread: the kernel's template
        run_notebook(notebook, output, parameters, timeout=cell_timeout, kernel_name=kernel)
    except (RunFailed, ParameterError) as exc:
        conn.send(_last_line(str(exc)) or type(exc).__name__)
        sys.exit(1)
    except BaseException as exc:  # noqa: BLE001 - the reason must reach the study
        conn.send(f"{type(exc).__name__}: {_last_line(str(exc)) or ''}".rstrip(": "))
        sys.exit(1)
    finally:
        kernel_fork.discard()     # a template no kernel used: ended and reaped
    conn.send(None)


def _run_forked(notebook, output, parameters, timeout, cell_timeout, kernel, cwd):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, str(notebook), str(output),
                                            dict(parameters), cell_timeout, kernel, cwd,
                                            os.getpid()))
    proc.start()
    child.close()
    proc.join(timeout)
    if proc.is_alive():
        kill_tree(proc.pid)
        proc.join()
        parent.close()
        raise RunTimedOut
    try:
        message = parent.recv() if parent.poll() else None
    except EOFError:   # it died before it could say why
        message = None
    parent.close()
    if proc.exitcode == 0 and message is None:
        return None
    return message or f"runner exited with status {proc.exitcode}"
