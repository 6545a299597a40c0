"""The papermill engine ``qencode-nb``: pins set in the kernel's environment at launch.

Registered under the entry-point group ``papermill.engine`` (pyproject.toml),
so ``papermill --engine qencode-nb in.ipynb out.ipynb -p blas_threads 2``
works too.  It reads ``blas_threads`` and ``blas_coretype`` from the
notebook's parameters and starts the kernel with the six thread variables
(and ``OPENBLAS_CORETYPE``) already in its environment: the pins then hold
even when an IPython startup file imports numpy before the pin cell runs.
Every run starts its own kernel process; concurrent runs never share one.  The kernel
and its client talk over Unix sockets in a folder of the run's own
(:func:`kernel_socket_dir`), not over TCP ports on localhost: jupyter_client picks a
kernel's five TCP ports by binding and releasing them, and the kernel binds them
later, so a kernel another process starts in between can take one first (jupyter_client
issue #154).  ipykernel 7 then exits when the shell, stdin or control port is taken, but
hangs when the IOPub or heartbeat port is: its threads keep the process alive, and the
run fails after nbclient's 60 s start timeout ("Kernel didn't respond in 60 seconds";
met under two test workers, 1 run in about 40).  Where pyzmq has no ``ipc`` transport
(Windows) or the folder's path is too long for a socket, the kernel uses TCP, and a
kernel that dies before its first reply is started again with new ports
(:data:`KERNEL_START_ATTEMPTS`).

Its client (:func:`_build_client`) also keeps two messages of the kernel's own off the
terminal of a successful run:

- ``[IPKernelApp] WARNING | Kernel is running over TCP without encryption ...``
  (ipykernel ``kernelapp.py``, ``init_sockets``): jupyter_client's kernel manager
  provisions no CurveZMQ keys unless its ``transport_encryption`` is ``auto`` or
  ``required`` (default ``disabled``).  The client sets ``auto``: the kernel is
  launched with Curve keys where its kernelspec declares ``supported_encryption:
  curve`` (ipykernel's own kernelspecs do) and pyzmq has Curve.
- ``[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.`` (ipykernel
  ``kernelbase.py``, ``dispatch_shell``): jupyter_client's ``shutdown_kernel``
  always interrupts the kernel (SIGINT to its process group) before it stops it,
  and papermill stops it right after the *reply* to its last ``kernel_info_request``,
  while the kernel may still be inside that request's handler, where ipykernel
  installs Python's SIGINT handler (elsewhere it ignores SIGINT).  Before the
  kernel is stopped, the client waits until the kernel reports itself idle
  (:meth:`~QuietClient.set_widgets_metadata`), so the interrupt finds it outside
  any handler and is ignored.

Papermill loads the entry point while ``papermill.engines`` is still being
imported, so this module imports no papermill at module level: the class is
built on first access (PEP 562 ``__getattr__``), by which time
``NBClientEngine`` exists whichever module was imported first.
"""

from __future__ import annotations

import contextlib
import logging
import os

from qencode_nb.errors import ParameterError, PinError, QencodeNbError
from qencode_nb.notebook.pins import pin_environment
from qencode_nb.options import check_coretype, check_threads

ENGINE_NAME = "qencode-nb"


def _notebook_parameters(nb) -> dict:
    """Defaults of the ``parameters`` cell, overridden by papermill's injected values.

    Raises:
        ParameterError: no cell tagged ``parameters`` (says so); a statement in it that
            is not a literal assignment (names it,
            :func:`qencode_nb.notebook.contract.literal_assignments`); an injected name
            the notebook does not declare (papermill itself only warns).
    """
    from qencode_nb.notebook.contract import literal_assignments, tagged_source

    values = literal_assignments(tagged_source(nb))
    injected = (nb.metadata.get("papermill") or {}).get("parameters") or {}
    unknown = sorted(set(injected) - set(values))
    if unknown:
        raise ParameterError(f"unknown parameter(s) {', '.join(unknown)}; accepted: "
                             + ", ".join(values))
    values.update(injected)
    return values


def kernel_environment(blas_threads=1, blas_coretype=None, base=None, release=None) -> dict:
    """The kernel's launch environment: ``base`` (default os.environ) plus the pins.

    Without ``blas_coretype`` an inherited ``OPENBLAS_CORETYPE`` is left as it is
    (some machines set it so that old OpenBLAS builds run correctly); the
    provenance records whatever BLAS kernel was in force.  ``release``: the audited
    entry's release triple (:func:`qencode_nb.environment.choice.release_triple`, what
    the pin cell pins too), so ``reference`` launches a v3 entry's kernel under v3's.
    A value :mod:`qencode_nb.options` refuses leaves the pins out.
    """
    env = dict(os.environ if base is None else base)
    try:
        env.update(pin_environment(check_threads(blas_threads), check_coretype(blas_coretype),
                                   release=release))
    except (ParameterError, PinError) as exc:
        # Start the kernel anyway: the notebook's frame cell raises the same error
        # and records it, so the executed notebook says why the run failed.
        logging.getLogger("papermill").warning("qencode-nb engine: %s", exc)
    return env


#: How long the client waits for the kernel to report idle before it stops it (s);
#: a kernel that does not answer by then is stopped anyway.
IDLE_WAIT_S = 5.0

#: How many kernels a run starts before a kernel that dies before its first reply fails
#: the run.  Over TCP, jupyter_client picks the kernel's five ports by binding and
#: releasing them, and the kernel binds them later: a kernel another process starts in
#: between can take one first ("Address already in use"; jupyter_client issue #154),
#: which concurrent runs (a sweep's workers, test workers) meet.  Each new kernel gets
#: new ports.  (Over the Unix sockets of :func:`kernel_socket_dir` no port is shared.)
KERNEL_START_ATTEMPTS = 3

#: The longest socket path the kernel's folder may lead to: a Unix socket's path holds
#: at most 107 bytes on Linux (``sun_path``, 104 on macOS); jupyter_client names a
#: socket ``<folder>/kernel-<n>`` with n up to five digits.
MAX_SOCKET_PATH = 100


@contextlib.contextmanager
def kernel_socket_dir():
    """A fresh private folder for one run's kernel sockets (removed afterwards, with any
    socket a killed kernel left), or None where the kernel must use TCP: pyzmq without
    the ``ipc`` transport (Windows), or a temporary folder whose socket paths would
    exceed :data:`MAX_SOCKET_PATH`.  Yields the path prefix to give the kernel manager
    as its ``ip`` (``<folder>/kernel``) or None."""
    import tempfile

    import zmq

    if not zmq.has("ipc"):
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="qnb-kernel-") as folder:
        prefix = os.path.join(folder, "kernel")
        yield prefix if len(prefix) + 6 <= MAX_SOCKET_PATH else None

#: The kernel client of every run of this engine (``qencode-nb audit``, sweeps, studies,
#: ``papermill --engine qencode-nb``; plain ``papermill`` keeps its own engine): ready
#: when the kernel reports idle after its ``kernel_info_request``, without
#: jupyter_client's fixed 0.2 s IOPub flush (:mod:`qencode_nb.executor.ready_client`).
READY_CLIENT = "qencode_nb.executor.ready_client.ReadyKernelClient"

#: jupyter_client's words when the kernel process ended before answering
#: ``kernel_info`` (``KernelClient.wait_for_ready``); a kernel that is merely slow
#: (``Kernel didn't respond in N seconds``) is not started again.
DIED_STARTING = "Kernel died before replying to kernel_info"


def _progress_save(nb_man, **kwargs) -> None:
    """The save papermill's execution manager makes as each cell starts and ends, so
    that a run killed mid-way leaves its notebook with what ran (the sweep's per-run
    timeout reads it): the notebook as one line of JSON, C-encoded, without
    nbformat's copy, validation and indented layout (``nbformat.writes``: about
    10 ms a save for an audit notebook, 26 saves a run: the start and end of its 12
    cells with papermill's, and of the notebook; this: under 1 ms).
    ``papermill.execute_notebook`` writes the finished notebook (and one that failed
    in a cell) once more with ``nbformat.writes``, so every notebook that ends is in
    nbformat's own layout; a killed run's is still a valid notebook (nbformat reads
    both)."""
    import json

    from nbformat.v4.nbjson import BytesEncoder
    from papermill.iorw import papermill_io

    if "nb" in kwargs:       # papermill's catch_nb_assignment, as its own save takes it
        nb_man.nb = kwargs["nb"]
    if nb_man.output_path:
        papermill_io.write(json.dumps(nb_man.nb, cls=BytesEncoder, ensure_ascii=False),
                           nb_man.output_path)
    nb_man.last_save_time = nb_man.now()


def _build_client():
    from queue import Empty
    from time import monotonic

    from nbclient.util import ensure_async, run_sync
    from papermill.clientwrap import PapermillNotebookClient

    class QuietClient(PapermillNotebookClient):
        """Papermill's client with the kernel on Unix sockets in ``socket_prefix``'s
        folder (None: TCP), a kernel client ready without a fixed wait
        (:data:`READY_CLIENT`), an encrypted kernel transport where the kernel
        supports it, a kernel that is idle when it is stopped (module docstring), and a
        kernel that died before its first reply started again
        (:data:`KERNEL_START_ATTEMPTS` kernels at most)."""

        socket_prefix = None

        def start_new_kernel(self, **kwargs):
            self._start_kwargs = dict(kwargs)    # the same launch for a kernel started again
            return super().start_new_kernel(**kwargs)

        def start_new_kernel_client(self):
            for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
                try:
                    return super().start_new_kernel_client()
                except RuntimeError as exc:
                    if DIED_STARTING not in str(exc) or attempt == KERNEL_START_ATTEMPTS:
                        raise
                    # nbclient has stopped the dead kernel's client and dropped its manager
                    self.log.warning("kernel %d of %d died before its first reply; starting "
                                     "another with new ports", attempt, KERNEL_START_ATTEMPTS)
                    self.km = self.create_kernel_manager()
                    super().start_new_kernel(**self._start_kwargs)

        def create_kernel_manager(self):
            import zmq

            from qencode_nb.executor import kernel_fork

            km = super().create_kernel_manager()
            km.client_class = READY_CLIENT
            kernel_fork.install(km)      # the run's template, where it has one
            if self.socket_prefix is not None:
                km.transport = "ipc"     # before ip: jupyter_client reads the pair together
                km.ip = self.socket_prefix
            if km.has_trait("transport_encryption") and zmq.has("curve"):
                km.transport_encryption = "auto"
            return km

        def set_widgets_metadata(self):
            # Papermill's execute() and nbclient's both call this last, with the kernel
            # still running, right before it is shut down.
            if self.kc is not None:
                run_sync(self._async_wait_idle)()
            super().set_widgets_metadata()

        async def _async_wait_idle(self):
            """Send one ``kernel_info_request`` and read IOPub until the kernel
            reports idle after it: the kernel handles shell requests in order, so it
            is then outside every handler (SIGINT ignored)."""
            msg_id = self.kc.kernel_info()
            deadline = monotonic() + IDLE_WAIT_S
            while (left := deadline - monotonic()) > 0:
                try:
                    msg = await ensure_async(self.kc.get_iopub_msg(timeout=left))
                except Empty:
                    return
                if (msg["parent_header"].get("msg_id") == msg_id
                        and msg["msg_type"] == "status"
                        and msg["content"].get("execution_state") == "idle"):
                    return

    return QuietClient


def _build_engine():
    from papermill.engines import NBClientEngine
    from papermill.utils import merge_kwargs, remove_args

    client_class = _build_client()

    class PinnedEngine(NBClientEngine):
        """nbclient engine whose kernel starts with the BLAS pins in its environment, in
        the package stack the parameters ask for."""

        @classmethod
        def nb_kernel_name(cls, nb, name=None):
            """The kernel to run: ``-k`` where given, else the kernelspec the ``stack``
            parameter chooses for the entry (:func:`qencode_nb.environment.choice.
            kernelspec_of_parameters`: ``-p stack recorded`` builds or attaches the
            entry's recorded stack), else the notebook's own.  A run the stack cannot be
            chosen for (bad parameters) runs in the notebook's kernel, whose cells raise
            and record why."""
            from qencode_nb.environment.choice import kernelspec_of_parameters

            if name:
                return name
            try:
                chosen = kernelspec_of_parameters(_notebook_parameters(nb))
            except (QencodeNbError, OSError, ValueError) as exc:
                logging.getLogger("papermill").warning("qencode-nb engine: %s", exc)
                chosen = None
            return chosen or super().nb_kernel_name(nb, name)

        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None,
                                     **kwargs):
            from qencode_nb.environment.choice import release_triple

            params = _notebook_parameters(nb_man.nb)
            env = kernel_environment(params.get("blas_threads", 1), params.get("blas_coretype"),
                                     release=release_triple(params.get("entry"),
                                                            params.get("db")))
            kwargs = remove_args(["input_path"], **kwargs)
            safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
            final_kwargs = merge_kwargs(
                safe_kwargs,
                timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
                startup_timeout=start_timeout, kernel_name=kernel_name,
                log=logging.getLogger("papermill"), log_output=log_output,
                stdout_file=stdout_file, stderr_file=stderr_file)
            # Every output is in the notebook when the last cell ends, and the kernel
            # holds nothing to save: it is stopped at once, not asked to shut down
            # (nbclient's "graceful" default waits about 1 s per notebook).
            final_kwargs.setdefault("shutdown_kernel", "immediate")
            nb_man.save = _progress_save.__get__(nb_man)
            with kernel_socket_dir() as socket_prefix:
                client = client_class(nb_man, **final_kwargs)
                client.socket_prefix = socket_prefix
                return client.execute(env=env)

    return PinnedEngine


_ENGINE = None


def __getattr__(name):
    global _ENGINE
    if name == "PinnedEngine":
        if _ENGINE is None:
            _ENGINE = _build_engine()
        return _ENGINE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
