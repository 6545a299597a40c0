"""A run's Jupyter kernel forked from a warm template instead of a new interpreter.

A kernel started the usual way (``python -m ipykernel_launcher -f CONNECTION``) spends
most of its start importing IPython, ipykernel, tornado, pyzmq and jupyter_client (about
0.25 CPU s of 0.3; ``benchmarks/kernel_start.py``), once per run.  A run's process
(:mod:`qencode_nb.executor.run_process`) has them imported already: it is forked from a
pool worker that imported them once (:mod:`qencode_nb.executor.warm_imports`).  So,
first thing in the run, while it still has one thread and no event loop or zmq context,
:func:`prepare` forks a *template* of it, which waits.  When papermill starts the
run's kernel, :class:`ForkProvisioner` (a jupyter_client ``LocalProvisioner``) sends the
template the kernel's command line, environment and working directory instead of
calling ``Popen``; the template takes them and becomes the kernel
(``ipykernel.kernelapp.launch_new_instance``, what ``ipykernel_launcher`` runs).

What the kernel sees is what a new interpreter would give it, except the modules already
imported: the environment replaced by the launch's (the BLAS pins of
:func:`qencode_nb.executor.papermill_engine.kernel_environment` included), the working
directory, ``sys.path`` without the run's first entry (its script's folder: an exec'd
kernel's first entry is deleted by ``ipykernel_launcher``), ``sys.argv``, a
session and process group of its own (``start_new_session``, so an interrupt reaches
it), stdin on ``/dev/null``, Python's default signal handlers, the root logger without
handlers, no inherited ``atexit`` function.  Its command line stays the run's (a fork
keeps it): its process name is ``ipykernel``
(:data:`~qencode_nb.executor.process_ties.KERNEL_PROCESS_NAME`, what ``ps``, ``pgrep
ipykernel`` and ``psutil.Process.name()`` show).  It is the run process's child, so
:func:`~qencode_nb.executor.run_process.kill_tree` reaches it and it dies with the run
(:func:`~qencode_nb.executor.process_ties.die_with_parent`).

The notebook contract holds: the pins must be in force before numpy loads, so no
template is made where this process has imported numpy or another BLAS user
(:data:`NOT_BEFORE_PINS`: a pool forked from a test process, say); a kernel command that
is not this interpreter's ``-m ipykernel_launcher`` (a package stack's kernel,
another kernelspec), a launch whose environment differs from this process's beyond the
pins and ``JPY_*`` (:func:`forkable`), a run under interpreter options a new kernel would
not have (``-O``, ``-W``, ...; :func:`why_not`), a kernelspec naming its own provisioner,
or a kernel started a second time (a restart) starts the usual way.  :envvar:`QENCODE_NB_KERNEL_START` ``exec`` turns the template off
(``fork``, the default, where it can).
"""

from __future__ import annotations

import os
import sys

from jupyter_client.provisioning import LocalProvisioner

from qencode_nb.executor.kernel_template import LAUNCHER, serve

#: Accepted values of :envvar:`QENCODE_NB_KERNEL_START`.
KERNEL_STARTS = ("fork", "exec")

#: Modules that must not be imported in a template: the kernel's pins must come before
#: numpy and every BLAS copy loads (the notebook contract, ``docs/explanations``), and a
#: replay's kernel loads no matplotlib (``tests/test_imports.py``).
NOT_BEFORE_PINS = ("numpy", "scipy", "pyscf", "numba", "threadpoolctl", "matplotlib",
                   "pandas", "openfermion", "pennylane")

#: ``sys.flags`` a run's interpreter may have from its command line (``-d``, ``-i``,
#: ``-O``, ``-B``, ``-s``, ``-S``, ``-E``, ``-v``, ``-b``, ``-q``, ``-I``, ``-X dev``,
#: ``-P``, ``-X warn_default_encoding``), each with the variable that sets it too (None:
#: the command line only).  A new kernel, started without the options but with the
#: same variables, has a flag only where its variable is set: no template where a flag
#: is set otherwise (nor where ``-W`` or ``-X`` options are).
COMMAND_LINE_FLAGS = {"debug": "PYTHONDEBUG", "inspect": "PYTHONINSPECT",
                      "interactive": None, "optimize": "PYTHONOPTIMIZE",
                      "dont_write_bytecode": "PYTHONDONTWRITEBYTECODE",
                      "no_user_site": "PYTHONNOUSERSITE", "no_site": None,
                      "ignore_environment": None, "verbose": "PYTHONVERBOSE",
                      "bytes_warning": None, "quiet": None, "isolated": None,
                      "dev_mode": "PYTHONDEVMODE", "safe_path": "PYTHONSAFEPATH",
                      "warn_default_encoding": "PYTHONWARNDEFAULTENCODING"}


def _options_a_kernel_lacks() -> list[str]:
    """This interpreter's command-line options that a new kernel with this environment
    would not have (``sys.flags``, ``sys.warnoptions``, ``sys._xoptions``)."""
    found = [f"sys.flags.{name}={getattr(sys.flags, name)}"
             for name, variable in COMMAND_LINE_FLAGS.items()
             if getattr(sys.flags, name) and not (variable and os.environ.get(variable))]
    from_env = [w.strip() for w in os.environ.get("PYTHONWARNINGS", "").split(",") if w.strip()]
    found += [f"-W {w}" for w in sys.warnoptions[len(from_env):]]
    if sys.warnoptions[:len(from_env)] != from_env:
        found.append(f"warnings {sys.warnoptions} (PYTHONWARNINGS {from_env})")
    return found + [f"-X {k}" for k in sys._xoptions]

#: Variables a kernel's environment may set or change against the run's and still be
#: forked: read only after the kernel starts (the pins, when numpy and the BLAS copies
#: load; jupyter_client's and ipykernel's ``JPY_*``).  Any other difference (a
#: kernelspec's ``TZ``, ``LC_ALL``, ``LD_PRELOAD``, ``TMPDIR``: read when a process or
#: a module starts) gets a new interpreter.
def _late_variables() -> frozenset:
    from qencode_nb.notebook.pins import BLAS_KERNEL_VARS, IDLE_WAIT_VARS, THREAD_VARS

    return frozenset(THREAD_VARS) | frozenset(BLAS_KERNEL_VARS) | frozenset(IDLE_WAIT_VARS)

#: The waiting template of this process: ``(pid, spec write fd, ack read fd)`` or None.
_TEMPLATE: tuple[int, int, int] | None = None


def kernel_start() -> str:
    """``"fork"`` or ``"exec"``: :envvar:`QENCODE_NB_KERNEL_START`, default ``fork``.

    Raises:
        ParameterError: the variable is set to another value (names it and the accepted).
    """
    from qencode_nb.options import env_choice

    return env_choice("QENCODE_NB_KERNEL_START", KERNEL_STARTS, "fork")


def why_not() -> str | None:
    """None where this process may fork a template now, else why not (one line)."""
    import threading

    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return f"no fork template on {sys.platform}"
    if kernel_start() != "fork":
        return "QENCODE_NB_KERNEL_START=exec"
    if threading.active_count() > 1:
        return f"{threading.active_count()} threads (a fork could inherit a held lock)"
    loaded = [m for m in NOT_BEFORE_PINS if m in sys.modules]
    if loaded:
        return f"{', '.join(loaded)} imported (the pins must come first)"
    flags = _options_a_kernel_lacks()
    if flags:
        return ("interpreter options a new kernel would not have: " + ", ".join(flags))
    return None


def prepare() -> bool:
    """Fork the template of this process (it waits for :func:`launch`); True if it did.

    Call it where this process has one thread and no event loop or zmq context yet (the
    start of a run's process).  A template not used is ended when this process closes
    its pipe (at exit) or ends (``PR_SET_PDEATHSIG``); a second call ends the first one's.

    Raises:
        ParameterError: :envvar:`QENCODE_NB_KERNEL_START` has a value not accepted.
    """
    global _TEMPLATE

    discard()
    if why_not() is not None:
        return False
    spec_r, spec_w = os.pipe()
    ack_r, ack_w = os.pipe()
    parent = os.getpid()
    import gc

    # Python's gc documentation for a fork: the objects alive now go to the permanent
    # generation, so that neither this process's collections nor the kernel's walk (and
    # so copy, page by page) the memory the two share; they are the run's modules.
    gc.freeze()
    pid = os.fork()
    if pid == 0:     # the template: never returns
        os.close(spec_w)
        os.close(ack_r)
        serve(spec_r, ack_w, parent)
    os.close(spec_r)
    os.close(ack_w)
    _TEMPLATE = (pid, spec_w, ack_r)
    return True


def discard() -> None:
    """End this process's waiting template, if any (it exits on the closed pipe)."""
    global _TEMPLATE

    if _TEMPLATE is None:
        return
    pid, spec_w, ack_r = _TEMPLATE
    _TEMPLATE = None
    os.close(spec_w)
    os.close(ack_r)
    _reap(pid)


def _reap(pid: int) -> None:
    """Wait for the template ``pid`` to end (it exits on its closed pipe); one reaped
    already is no error."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def forkable(cmd: list[str], env: dict | None) -> bool:
    """Whether ``cmd`` (a kernel's command line) with ``env`` is what the template can
    become: this interpreter running ``-m ipykernel_launcher``, and an environment that
    differs from this process's only in variables read after the kernel starts (the
    pins, ``JPY_*``; :func:`_late_variables`)."""
    if len(cmd) < 3 or cmd[1:3] != ["-m", LAUNCHER]:
        return False
    if os.path.abspath(cmd[0]) != os.path.abspath(sys.executable):
        return False
    env = os.environ if env is None else env
    late = _late_variables()
    differ = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)}
    return all(k in late or k.startswith("JPY_") for k in differ)


def launch(cmd: list[str], env: dict | None, cwd) -> ForkedKernel | None:
    """The kernel ``cmd`` started by this process's template, or None where it cannot
    be (no template: none prepared, or already used; :func:`forkable` false).  The
    template is used once."""
    global _TEMPLATE
    import pickle

    if _TEMPLATE is None or not forkable(cmd, env):
        return None
    pid, spec_w, ack_r = _TEMPLATE
    _TEMPLATE = None
    env = dict(os.environ if env is None else env)
    env["JPY_PARENT_PID"] = str(os.getpid())     # as jupyter_client's launcher sets it
    spec = {"args": list(cmd[3:]), "env": env, "cwd": str(cwd or os.getcwd())}
    try:
        with os.fdopen(spec_w, "wb") as pipe:
            pipe.write(pickle.dumps(spec))
        with os.fdopen(ack_r, "rb") as pipe:
            ack = pipe.read(2)
    except OSError:
        ack = b""
    if ack != b"ok":      # the template is gone: the kernel starts the usual way
        _reap(pid)
        return None
    return ForkedKernel(pid)


class ForkedKernel:
    """The forked kernel process, with the part of ``subprocess.Popen``'s interface that
    jupyter_client's ``LocalProvisioner`` uses (``pid``, ``returncode``, ``poll``,
    ``wait``, ``send_signal``, ``terminate``, ``kill``, no pipes).  It is this process's
    child, so ``os.waitpid`` reaps it."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def _reap(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:      # reaped elsewhere: gone, status unknown
                self.returncode = -9
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        """The exit code (negative: the signal) or None while it runs."""
        return self._reap(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        """Block until it ends (``timeout`` s at most; ``subprocess.TimeoutExpired``)."""
        import subprocess
        import time

        if timeout is None:
            return self._reap(0)
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(["kernel", str(self.pid)], timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        import signal

        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        import signal

        self.send_signal(signal.SIGKILL)


class ForkProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, launching through this process's template
    where :func:`launch` can (else as ``LocalProvisioner`` does)."""

    async def launch_kernel(self, cmd, **kwargs):
        extra = set(LocalProvisioner._scrub_kwargs(kwargs)) - {"env", "cwd"}
        process = None if extra else launch(cmd, kwargs.get("env"), kwargs.get("cwd"))
        if process is None:
            return await super().launch_kernel(cmd, **kwargs)
        self.process = process
        self.pid = process.pid
        self.pgid = process.pid      # the template made itself a session leader
        self.cwd = kwargs.get("cwd", os.getcwd())
        return self.connection_info


def install(km) -> None:
    """Give the kernel manager ``km`` (jupyter_client, not started) a
    :class:`ForkProvisioner` when this process has a template waiting and the kernelspec
    names no provisioner of its own (``metadata.kernel_provisioner``); else leave it."""
    import uuid

    if _TEMPLATE is None or km.provisioner is not None:
        return
    if (km.kernel_spec.metadata or {}).get("kernel_provisioner"):
        return        # the kernelspec names its own provisioner: jupyter_client's choice
    km.kernel_id = km.kernel_id or str(uuid.uuid4())
    km.provisioner = ForkProvisioner(kernel_id=km.kernel_id, kernel_spec=km.kernel_spec,
                                     parent=km)
