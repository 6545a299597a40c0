"""The template side of a forked kernel (:mod:`qencode_nb.executor.kernel_fork`): the
process forked first thing in a run waits for the kernel's launch, makes itself what a
new interpreter started with that launch would be, and becomes the kernel.

Everything here runs in the forked process only; :func:`serve` never returns.
"""

from __future__ import annotations

import os
import sys

#: The module a kernel command runs (``python -m ipykernel_launcher -f ...``).
LAUNCHER = "ipykernel_launcher"


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def serve(spec_r: int, ack_w: int, parent: int) -> None:
    """The forked template: wait for the launch, become the kernel, exit with its code
    (``os._exit``: nothing of the run it was forked from runs in it).  Never returns."""
    import atexit

    atexit._clear()   # first: the run's (multiprocessing's, logging's) never run here
    code = 1
    try:
        from qencode_nb.executor.process_ties import die_with_parent

        die_with_parent(parent)
        data = _read_all(spec_r)
        os.close(spec_r)
        if not data:          # the run ended without a kernel, or started it the usual way
            os._exit(0)
        import pickle

        spec = pickle.loads(data)
        _become_fresh(spec)
        os.write(ack_w, b"ok")
        os.close(ack_w)
        code = _run_kernel(spec["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the kernel's traceback, as an exec'd one prints
        import traceback

        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()    # the kernel's own (IPython's history, ...)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _become_fresh(spec: dict) -> None:
    """What a new interpreter started with ``spec`` would have, where the fork differs."""
    import logging
    import signal

    from qencode_nb.executor.process_ties import KERNEL_PROCESS_NAME, set_process_name

    set_process_name(KERNEL_PROCESS_NAME)   # its command line stays the run's
    os.setsid()              # jupyter_client's launcher: start_new_session=True
    devnull = os.open(os.devnull, os.O_RDONLY)   # the launcher gives stdin a pipe
    os.dup2(devnull, 0)
    os.close(devnull)
    os.chdir(spec["cwd"])
    os.environ.clear()
    os.environ.update(spec["env"])
    if sys.path and not sys.flags.safe_path:
        # The run's own first entry (its script's folder); an exec'd kernel's (``-m``:
        # the working directory, as "") is deleted by ipykernel_launcher, and IPython
        # puts "" (the working directory) back when the shell starts.
        del sys.path[0]
    import importlib.util

    sys.argv = [importlib.util.find_spec(LAUNCHER).origin, *spec["args"]]
    _fresh_process_state()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1,
                signal.SIGUSR2, signal.SIGALRM):
        # as exec does: a caught signal back to its default, an ignored one stays ignored
        # (a run under nohup: a new interpreter inherits SIGHUP ignored)
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


def _fresh_process_state() -> None:
    """What the modules the run imported hold of the run's processes, made the kernel's
    own, as each would be on a first import in a new interpreter:

    - tqdm's write lock is a multiprocessing lock (a semaphore shared with every
      process forked after it was made: the sweep's dispatcher draws its bar with it) and
      its live bars; a kernel killed while its re-run bar held the lock left the
      dispatcher waiting forever.  Dropped: the kernel's first bar makes new ones.
    - multiprocessing's current process is the kernel's main process, with no parent
      and no children (as ``multiprocessing``'s own bootstrap does for its children);
    - ``atexit``: the functions a first import of logging and multiprocessing registers
      (:func:`serve` cleared the run's);
    - the time zone of the kernel's ``TZ`` (the ``time`` module read the run's).
    """
    import atexit
    import itertools
    import threading
    import time
    from weakref import WeakSet

    tqdm_std = sys.modules.get("tqdm.std")
    if tqdm_std is not None:
        lock_class = tqdm_std.TqdmDefaultWriteLock
        if "mp_lock" in vars(lock_class):
            del lock_class.mp_lock
        lock_class.th_lock = threading.RLock()
        bar = tqdm_std.tqdm
        if "_lock" in vars(bar):
            del bar._lock
        bar._instances = WeakSet()
        bar.monitor = None
    process = sys.modules.get("multiprocessing.process")
    if process is not None:      # what multiprocessing.process sets up on its import
        me = process._current_process
        me._identity, me._name, me._parent_pid, me._popen = (), "MainProcess", None, None
        me._config = {"authkey": process.AuthenticationString(os.urandom(32)),
                      "semprefix": "/mp"}
        process._parent_process = None
        process._children = set()
        process._process_counter = itertools.count(1)
    if "logging" in sys.modules:
        atexit.register(sys.modules["logging"].shutdown)
    util = sys.modules.get("multiprocessing.util")
    if util is not None:
        atexit.register(util._exit_function)
    time.tzset()


def _run_kernel(args: list[str]) -> int:
    """``ipykernel_launcher``'s body with ``args`` (``-f CONNECTION ...``)."""
    from ipykernel import kernelapp

    kernelapp.launch_new_instance(argv=args)
    return 0
