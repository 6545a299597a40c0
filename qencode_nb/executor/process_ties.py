"""What ties a run's processes together on Linux: each dies with the process that
started it, and a forked kernel is named as a kernel (``prctl``; elsewhere nothing).

Used by the pool's workers (:mod:`qencode_nb.batch.pool`), a run's process
(:mod:`qencode_nb.executor.run_process`) and a forked kernel
(:mod:`qencode_nb.executor.kernel_fork`).  Imports nothing of the project.
"""

from __future__ import annotations

import os
import sys

#: ``prctl`` options (linux/prctl.h).
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15

#: The process name a forked kernel takes (``/proc/PID/comm``, what ``ps``, ``top``,
#: ``pgrep ipykernel`` and ``psutil.Process.name()`` show): its command line stays the
#: run's, since a forked process keeps its parent's; 15 bytes at most.
KERNEL_PROCESS_NAME = "ipykernel"


def _prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
    except (OSError, AttributeError):   # pragma: no cover - no libc prctl
        return None


#: libc's prctl, resolved once (a subprocess's preexec step calls it between fork and exec).
_PRCTL = _prctl()


def die_with_parent(parent_pid: int) -> None:
    """Have this process killed (SIGKILL) when its parent ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``; elsewhere nothing), and end now if the parent
    ``parent_pid`` is already gone.  Called first in a forked run and, between
    fork and exec, in a runner subprocess.  (The signal follows the thread that
    started the process: a pool worker's main thread, or the Dask worker thread
    blocked on the run until it ends.)"""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, 9)   # SIGKILL
    if os.getppid() != parent_pid:
        os._exit(1)


def set_process_name(name: str) -> None:
    """This process's name (``prctl(PR_SET_NAME)``, 15 bytes kept; elsewhere nothing)."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_NAME, name.encode()[:15])
