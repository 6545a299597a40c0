"""A run's kernel forked from its template (qencode_nb.executor.kernel_fork): it sees
what a kernel started as a new interpreter sees (environment and pins, working
directory, sys.path, signals, session, logging, no numpy before the pin cell), it is
refused where the pins could not come first, and it ends with its run.  The runs go
through a fresh interpreter (the test process has numpy imported, where no template is
made), as a sweep's pool workers do.  No test asserts a wall-clock time
(benchmarks/kernel_start.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import nbformat
import psutil
import pytest

from qencode_nb.errors import ParameterError
from qencode_nb.executor import kernel_fork
from qencode_nb.paths import ROOT

#: A notebook whose kernel writes what it sees (its fingerprint) to FINGERPRINT.
FINGERPRINT_CELL = textwrap.dedent("""\
    import json, logging, os, signal, sys, warnings
    fingerprint = {
        "forked": "papermill" in sys.modules,     # imported by the run, not by a kernel
        "numpy_loaded": "numpy" in sys.modules,
        "env": {k: v for k, v in os.environ.items()
            if k not in ("QENCODE_NB_KERNEL_START", "FINGERPRINT")},
        "cwd": os.getcwd(), "path": sys.path, "argv0": sys.argv[0],
        "session_leader": os.getsid(0) == os.getpid() == os.getpgid(0),
        "parent_is_jpy_parent": os.environ["JPY_PARENT_PID"] == str(os.getppid()),
        "signals": {int(s): str(signal.getsignal(s)) for s in
                    (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD, signal.SIGHUP)},
        "root_logger": [len(logging.getLogger().handlers), logging.getLogger().level],
        "stdin": os.readlink("/proc/self/fd/0"),
        "main": sys.modules["__main__"].__name__,
        "pid": os.getpid(),
        "name": open("/proc/self/comm").read().strip(),
        "mp_process": [__import__("multiprocessing").current_process().name,
                       __import__("multiprocessing").parent_process() is None],
    }
    with open(os.environ["FINGERPRINT"], "w") as f:
        json.dump(fingerprint, f)
    import time
    time.sleep(float(os.environ.get("KERNEL_SLEEP", "0")))
    from qencode_nb import record
    record("done", True)
""")

#: The run as a sweep's pool worker makes it: papermill and the kernel's modules
#: imported once (warm_imports), no numpy, then a forked run per kernel start.
RUNNER = textwrap.dedent("""\
    import json, os, sys
    import qencode_nb.executor.warm_imports
    from qencode_nb.errors import RunTimedOut
    from qencode_nb.executor import run_process
    notebook, out, start, timeout = sys.argv[1:5]
    os.environ["QENCODE_NB_KERNEL_START"] = start
    os.environ["FINGERPRINT"] = out + ".json"
    try:
        reason = run_process.run_isolated(notebook, out, {}, timeout=float(timeout) or None,
                                          cwd=os.path.dirname(notebook))
    except RunTimedOut:
        reason = "timed out"
    print(json.dumps({"reason": reason}))
""")


def _notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(FINGERPRINT_CELL)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "fingerprint.ipynb"
    nbformat.write(nb, str(path))
    return path


def _run(tmp_path, start, *, timeout=0.0, sleep=0.0):
    """``(reason, fingerprint)`` of one run whose kernel started by ``start``."""
    out = tmp_path / f"{start}.ipynb"
    env = dict(os.environ, KERNEL_SLEEP=str(sleep))
    env.pop("QENCODE_NB_RUN_PROCESS", None)
    done = subprocess.run([sys.executable, "-c", RUNNER, str(_notebook(tmp_path)), str(out),
                           start, str(timeout)], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    reason = json.loads(done.stdout.strip().splitlines()[-1])["reason"]
    return reason, json.loads((tmp_path / f"{start}.ipynb.json").read_text())


def test_kernel_start_accepts_fork_and_exec_only(monkeypatch):
    monkeypatch.delenv("QENCODE_NB_KERNEL_START", raising=False)
    assert kernel_fork.kernel_start() == "fork"
    monkeypatch.setenv("QENCODE_NB_KERNEL_START", "exec")
    assert kernel_fork.kernel_start() == "exec"
    assert kernel_fork.why_not() in ("QENCODE_NB_KERNEL_START=exec",
                                     f"no fork template on {sys.platform}")
    monkeypatch.setenv("QENCODE_NB_KERNEL_START", "spawn")
    with pytest.raises(ParameterError, match="QENCODE_NB_KERNEL_START 'spawn' is not "
                                             "accepted; accepted: fork, exec"):
        kernel_fork.kernel_start()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_no_template_where_numpy_is_already_imported(monkeypatch):
    """This test process has numpy imported: a kernel forked from it would have numpy
    loaded before its pin cell, so none is made."""
    import threading

    import numpy  # noqa: F401

    monkeypatch.delenv("QENCODE_NB_KERNEL_START", raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)   # xdist's threads aside
    assert "numpy" in kernel_fork.why_not()
    assert kernel_fork.prepare() is False
    assert kernel_fork._TEMPLATE is None


def test_only_this_interpreter_s_ipykernel_launcher_with_variables_read_later():
    cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "/tmp/k.json"]
    assert kernel_fork.forkable(cmd, dict(os.environ))
    assert kernel_fork.forkable(cmd, None)
    assert not kernel_fork.forkable(["/opt/stack/bin/python", *cmd[1:]], None)  # a stack's
    assert not kernel_fork.forkable([sys.executable, "-m", "other_kernel", "-f", "k"], None)
    # read when a process or a module starts: a new interpreter
    for name, value in (("PYTHONPATH", "/elsewhere"), ("PYTHONHASHSEED", "7"),
                        ("TZ", "Asia/Tokyo"), ("LC_ALL", "C"), ("LD_PRELOAD", "/x.so"),
                        ("TMPDIR", "/var/tmp/k")):
        assert not kernel_fork.forkable(cmd, dict(os.environ, **{name: value})), name
    without_path = {k: v for k, v in os.environ.items() if k != "PATH"}
    assert not kernel_fork.forkable(cmd, without_path)
    # read after the kernel starts (the pins, when numpy loads; jupyter_client's)
    assert kernel_fork.forkable(cmd, dict(os.environ, OPENBLAS_CORETYPE="Haswell",
                                          OMP_NUM_THREADS="2", NPY_DISABLE_CPU_FEATURES="",
                                          QENCODE_NB_BLAS_PROFILE="portable",
                                          JPY_SESSION_NAME="audit.ipynb"))


@pytest.mark.parametrize("options, named", [(["-O"], "sys.flags.optimize=1"),
                                            (["-P"], "sys.flags.safe_path=True"),
                                            (["-W", "error"], "-W error"),
                                            (["-X", "importtime"], "-X importtime")])
def test_no_template_under_interpreter_options_a_new_kernel_would_not_have(options, named):
    code = "from qencode_nb.executor import kernel_fork; print(kernel_fork.why_not())"
    env = {k: v for k, v in os.environ.items() if k != "QENCODE_NB_KERNEL_START"}
    done = subprocess.run([sys.executable, *options, "-c", code], capture_output=True,
                          text=True, env=env, cwd=str(ROOT), timeout=60)
    assert done.returncode == 0, done.stderr
    assert named in done.stdout.strip().splitlines()[-1]
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=str(ROOT), timeout=60)
    assert plain.stdout.strip().splitlines()[-1] == "None"


def test_a_kernelspec_s_own_provisioner_is_left_to_jupyter_client(monkeypatch):
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    monkeypatch.setattr(kernel_fork, "_TEMPLATE", (0, -1, -1))    # a template waiting
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    own = AsyncKernelManager()
    own._kernel_spec = KernelSpec(argv=argv, display_name="x", language="python", metadata={
        "kernel_provisioner": {"provisioner_name": "local-provisioner"}})
    kernel_fork.install(own)
    assert own.provisioner is None
    plain = AsyncKernelManager()
    plain._kernel_spec = KernelSpec(argv=argv, display_name="x", language="python")
    kernel_fork.install(plain)
    assert type(plain.provisioner).__name__ == "ForkProvisioner"


def test_a_bad_kernel_start_is_refused_before_any_run(monkeypatch, tmp_path):
    from qencode_nb.executor import run_process

    monkeypatch.setenv("QENCODE_NB_KERNEL_START", "Fork")
    with pytest.raises(ParameterError, match="QENCODE_NB_KERNEL_START 'Fork' is not "
                                             "accepted; accepted: fork, exec"):
        run_process.run_isolated(tmp_path / "in.ipynb", tmp_path / "out.ipynb", {})
    assert not (tmp_path / "out.ipynb").exists()


@pytest.mark.notebook
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_a_forked_kernel_sees_what_a_new_interpreter_sees(tmp_path):
    reason_exec, exec_ = _run(tmp_path, "exec")
    reason_fork, fork = _run(tmp_path, "fork")
    assert reason_exec is None and reason_fork is None
    assert exec_.pop("forked") is False and fork.pop("forked") is True
    assert exec_.pop("pid") != fork.pop("pid")
    assert exec_.pop("name") != "ipykernel" and fork.pop("name") == "ipykernel"   # ps, pgrep
    assert fork["mp_process"] == ["MainProcess", True]
    env_exec, env_fork = exec_.pop("env"), fork.pop("env")
    # jupyter_client's launcher sets JPY_PARENT_PID to the run's pid, which differs
    assert env_exec.pop("JPY_PARENT_PID") != env_fork.pop("JPY_PARENT_PID")
    assert env_fork == env_exec
    assert env_fork["OPENBLAS_NUM_THREADS"] == "1"       # the engine's pins, in both
    # no input either way: jupyter_client gives a new kernel a pipe nobody writes to,
    # the template /dev/null
    assert exec_.pop("stdin").startswith("pipe:") and fork.pop("stdin") == "/dev/null"
    assert fork == exec_
    assert fork["numpy_loaded"] is False and fork["session_leader"] is True
    assert fork["parent_is_jpy_parent"] is True


@pytest.mark.notebook
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_a_forked_kernel_ends_with_its_run_past_its_timeout(tmp_path):
    reason, fork = _run(tmp_path, "fork", timeout=20, sleep=600)
    assert reason == "timed out" and fork["forked"] is True
    deadline = time.monotonic() + 10
    while psutil.pid_exists(fork["pid"]) and time.monotonic() < deadline:
        try:
            if psutil.Process(fork["pid"]).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    alive = psutil.pid_exists(fork["pid"]) and (
        psutil.Process(fork["pid"]).status() != psutil.STATUS_ZOMBIE)
    assert not alive, "the forked kernel outlived its run"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_an_unused_template_ends_when_discarded_or_with_its_process():
    script = textwrap.dedent("""\
        import os, sys
        from qencode_nb.executor import kernel_fork
        assert kernel_fork.prepare(), kernel_fork.why_not()
        first = kernel_fork._TEMPLATE[0]
        assert kernel_fork.prepare()          # a second one ends the first
        second = kernel_fork._TEMPLATE[0]
        try:
            os.kill(first, 0)
            print("first alive")
        except ProcessLookupError:
            pass
        print(second)
    """)
    env = dict(os.environ)
    env.pop("QENCODE_NB_KERNEL_START", None)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "first alive" not in done.stdout
    second = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 10
    while psutil.pid_exists(second) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not psutil.pid_exists(second), "the template outlived the process that made it"


#: The CLI in a fresh interpreter, with the pool's start and each run's template logged.
CLI_LOGGED = textwrap.dedent("""\
    import os, sys
    import qencode_nb.batch.pool as pool
    from qencode_nb.executor import kernel_fork
    log = os.environ["POOL_LOG"]
    run_pool, prepare = pool.run_pool, kernel_fork.prepare

    def logged_pool(fn, *args, **kwargs):
        with open(log, "a") as f:
            f.write(f"pool {fn.__name__} numpy={'numpy' in sys.modules}\\n")
        return run_pool(fn, *args, **kwargs)

    def logged_prepare():
        made = prepare()
        with open(log, "a") as f:
            f.write(f"template {made} {kernel_fork.why_not() if not made else ''}\\n")
        return made

    pool.run_pool, kernel_fork.prepare = logged_pool, logged_prepare
    from qencode_nb.cli import main
    sys.argv = ["qencode-nb", *sys.argv[1:]]
    sys.exit(main())
""")


@pytest.mark.notebook
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
@pytest.mark.parametrize("command", [["sweep", "--mode", "replay"],
                                     ["robustness", "--threads", "1", "--mode", "full"]])
def test_the_cli_forks_its_runs_pool_before_numpy_so_kernels_come_from_templates(
        command, tmp_path):
    """The commands that run a pool import pandas (numpy) only after their runs: a pool
    forked from a process with numpy cannot fork its kernels (the record sweep and the
    robustness study did, and got no template)."""
    from conftest import SHARED_DB

    entry = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"
    log = tmp_path / "pool.log"
    env = dict(os.environ, POOL_LOG=str(log), QENCODE_NB_PROGRESS="0")
    env.pop("QENCODE_NB_KERNEL_START", None)
    env.pop("QENCODE_NB_RUN_PROCESS", None)
    done = subprocess.run([sys.executable, "-c", CLI_LOGGED, command[0], str(entry),
                           *command[1:], "--workers", "1", "--engine", "fast",
                           "--out", str(tmp_path / "out")],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = log.read_text().splitlines()
    assert "pool run_one numpy=False" in lines
    templates = [ln for ln in lines if ln.startswith("template")]
    assert templates and all(ln.startswith("template True") for ln in templates), lines


#: A dispatcher with a tqdm bar (its write lock is a multiprocessing lock, shared with
#: every process forked after it), a run whose kernel takes that lock and is killed at
#: the run's timeout, then the dispatcher's bar again.
TQDM_RUNNER = textwrap.dedent("""\
    import json, os, sys
    import qencode_nb.executor.warm_imports
    import tqdm
    from qencode_nb.errors import RunTimedOut
    from qencode_nb.executor import run_process
    tqdm.tqdm.monitor_interval = 0     # no monitor thread: the run is forked from here,
    bar = tqdm.tqdm(total=2, file=open(os.devnull, "w"))   # as from a sweep's pool worker
    assert run_process.start_method() == "fork"
    notebook, out = sys.argv[1:3]
    try:
        run_process.run_isolated(notebook, out, {}, timeout=float(sys.argv[3]),
                                 cwd=os.path.dirname(notebook))
        reason = None
    except RunTimedOut:
        reason = "timed out"
    tqdm.tqdm.get_lock()
    free = tqdm.std.TqdmDefaultWriteLock.mp_lock.acquire(timeout=5)   # the shared one
    print(json.dumps({"reason": reason, "lock_free": free}))
""")


@pytest.mark.notebook
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_a_kernel_killed_holding_tqdm_s_lock_leaves_the_dispatcher_s_bar_free(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(
                    "import os, time, tqdm\n"
                    "tqdm.tqdm.get_lock().acquire()      # as a re-run bar redrawing\n"
                    "open(os.environ['FINGERPRINT'], 'w').write(str('papermill' in "
                    "__import__('sys').modules))\n"
                    "time.sleep(600)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "holds.ipynb"
    nbformat.write(nb, str(path))
    env = {k: v for k, v in os.environ.items()
           if k not in ("QENCODE_NB_KERNEL_START", "QENCODE_NB_RUN_PROCESS")}
    env["FINGERPRINT"] = str(tmp_path / "forked")
    done = subprocess.run([sys.executable, "-c", TQDM_RUNNER, str(path),
                           str(tmp_path / "out.ipynb"), "20"], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=150)   # a held lock: hangs
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "forked").read_text() == "True"     # the kernel was the template
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"reason": "timed out",
                                                                "lock_free": True}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is Linux's")
def test_a_run_that_ends_before_its_kernel_starts_reaps_its_template(tmp_path):
    """Under a subreaper (a container's PID 1), an unused template that only exits
    would stay a zombie of it; the run ends and reaps it."""
    code = textwrap.dedent("""\
        import ctypes, subprocess, sys, time
        import psutil
        ctypes.CDLL(None).prctl(36, 1)          # PR_SET_CHILD_SUBREAPER
        done = subprocess.run([sys.executable, "-m", "qencode_nb.executor.execute",
                               sys.argv[1], sys.argv[2], '{"not_a_parameter": 1}'],
                              capture_output=True, text=True)
        time.sleep(1.0)
        zombies = [p.pid for p in psutil.Process().children()
                   if p.status() == psutil.STATUS_ZOMBIE]
        print(done.returncode, len(zombies))
    """)
    env = {k: v for k, v in os.environ.items() if k != "QENCODE_NB_KERNEL_START"}
    done = subprocess.run([sys.executable, "-c", code, str(_notebook(tmp_path)),
                           str(tmp_path / "out.ipynb")], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1", "0"]     # the run refused, no zombie left
