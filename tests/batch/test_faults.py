"""The fault catalogue (issue 16 item 7): what a sweep does when something breaks.

One test per fault, each on real entries (the bundled H2 JW/UCCSD and LiH PAR/HEA,
the shared H2 BK/UCCSD): the kernel killed with SIGKILL mid re-run, a local pool
worker killed, a Dask worker killed, two sweeps started on one folder at once, an
output folder that cannot be written, a corrupt checkpoint, a truncated rebuild-cache
file.  Each asserts what a user needs: the broken run is a failed row whose
``failure`` says what happened (or, where the documented behaviour is to recover,
a done row that records what was recovered from), its siblings complete, its
executed notebook is kept, and nothing done is lost: a second sweep on the folder
skips the done runs (their notebooks untouched) and re-runs only the failed one.

Each test has its own rebuild cache (``QENCODE_NB_CACHE``, so checkpoints never mix
with another run's), seeded with a copy of the default cache's rebuild files when it
has them (cache hits are checked like any file; a cold copy only costs the PySCF
rebuilds).  A fault is injected from a thread of the test while the sweep runs in the
test process; which process runs which entry is read from the run's lock file
(``<name>.lock``: pid of the worker holding it, :mod:`qencode_nb.batch.run_folder`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest

from conftest import ROOT, SHARED_DB, pinned_env
from qencode_nb.notebook.record import read_records
from qencode_nb.batch.run_folder import lock_holder
from qencode_nb.batch.sweep import sweep

H2_BK = SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json"
EXE = str(ROOT / ".venv" / "bin" / "qencode-nb")
FAST = {"mode": "replay", "engine": "fast", "progress": False, "plot": False}


# --------------------------------------------------------------------------- helpers

@pytest.fixture(scope="session")
def warm_rebuilds(tmp_path_factory) -> Path:
    """The default cache's rebuild files (if any), copied once per session."""
    from qencode_nb.hamiltonian.cache import SUBDIR, cache_root

    seed = tmp_path_factory.mktemp("warm-cache")
    src = cache_root() / SUBDIR
    (seed / SUBDIR).mkdir()
    for f in (src.glob("*.json") if src.is_dir() else ()):
        shutil.copy2(f, seed / SUBDIR / f.name)
    return seed


def _own_cache(folder: Path, warm: Path, monkeypatch) -> Path:
    cache = folder / "cache"
    shutil.copytree(warm, cache, dirs_exist_ok=True)
    monkeypatch.setenv("QENCODE_NB_CACHE", str(cache))
    monkeypatch.setenv("QENCODE_NB_PROGRESS", "0")
    return cache


@pytest.fixture
def cache(tmp_path, warm_rebuilds, monkeypatch) -> Path:
    return _own_cache(tmp_path, warm_rebuilds, monkeypatch)


def _rows(table) -> dict:
    return {Path(nb).stem: row for nb, row in zip(table["notebook"],
                                                  table.to_dict("records"))}


def _stamps(out: Path) -> dict:
    return {p.stem: p.stat().st_mtime_ns for p in out.glob("*.ipynb")}


def _wait(predicate, what: str, limit_s: float = 240):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _holder(out: Path, name: str) -> psutil.Process | None:
    """The process holding run ``name``'s lock (the worker running it), or None."""
    held = lock_holder(out, name)
    try:
        return psutil.Process(held["pid"]) if held else None
    except psutil.NoSuchProcess:
        return None


def _is_kernel(proc: psutil.Process) -> bool:
    """A Jupyter kernel: started as ``python -m ipykernel_launcher``, or forked from its
    run's template (qencode_nb.executor.kernel_fork), named ``ipykernel``."""
    from qencode_nb.executor.process_ties import KERNEL_PROCESS_NAME

    return proc.name() == KERNEL_PROCESS_NAME or "ipykernel" in " ".join(proc.cmdline())


def _kernel_under(proc: psutil.Process | None) -> psutil.Process | None:
    try:
        for child in proc.children(recursive=True) if proc else ():
            if _is_kernel(child):
                return child
    except psutil.NoSuchProcess:
        pass
    return None


def _in_thread(fn):
    """Run ``fn`` in a thread now; the returned ``join()`` re-raises what it raised
    and gives what it returned."""
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join():
        thread.join(timeout=300)
        if "error" in box:
            raise box["error"]
        return box.get("value")
    return join


def _gone(pids, limit_s: float = 15) -> list[int]:
    """The pids of ``pids`` still alive after ``limit_s`` (zombies count as gone)."""
    def alive(pid):
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def _checkpoint_parts(cache: Path, entry_prefix: str) -> int:
    folder = cache / "checkpoints"
    for f in folder.glob("[!.]*.json") if folder.is_dir() else ():
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if doc["material"]["entry_id"].startswith(entry_prefix):
            return len(doc["parts"])
    return 0


def _checkpoint_file(cache: Path, entry_prefix: str) -> Path:
    for f in (cache / "checkpoints").glob("[!.]*.json"):   # not a write's .tmp- file
        if json.loads(f.read_text())["material"]["entry_id"].startswith(entry_prefix):
            return f
    raise AssertionError(f"no checkpoint of {entry_prefix}")


# ------------------------------------------- 1 and 5: a kernel killed mid re-run of LiH

@pytest.fixture(scope="module")
def killed_lih(tmp_path_factory, warm_rebuilds):
    """A sweep of LiH PAR/HEA and H2 JW/UCCSD (bundled, mode rerun, recorded backend,
    2 workers) whose LiH kernel is killed with SIGKILL once its first restart is
    checkpointed (LiH runs 2 of its 10 restarts, ~10 s each here).  Yields the
    folder, its cache, the table and how many restarts the checkpoint held."""
    mp = pytest.MonkeyPatch()
    base = tmp_path_factory.mktemp("killed-lih")
    cache = _own_cache(base, warm_rebuilds, mp)
    out = base / "runs"

    def kill():
        _wait(lambda: _checkpoint_parts(cache, "LiH") >= 1, "LiH's first restart")
        held = _checkpoint_parts(cache, "LiH")
        kernel = _kernel_under(_holder(out, "lih"))
        assert kernel is not None, "no kernel under the worker holding lih.lock"
        os.kill(kernel.pid, signal.SIGKILL)
        return held
    try:
        join = _in_thread(kill)
        table = sweep(["lih", "h2"], out, mode="rerun", workers=2, progress=False,
                      plot=False)
        yield out, cache, table, join()
    finally:
        mp.undo()


def _copy_of(killed, tmp_path, monkeypatch):
    out, cache, table, held = killed
    shutil.copytree(out, tmp_path / "runs")
    shutil.copytree(cache, tmp_path / "cache")
    monkeypatch.setenv("QENCODE_NB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "runs", tmp_path / "cache", table, held


@pytest.mark.notebook
@pytest.mark.slow
def test_kernel_killed_mid_rerun_is_a_failed_row_and_the_next_sweep_resumes_it(
        killed_lih, tmp_path, monkeypatch):
    """Before: already handled (the runner records the dead kernel).  The killed run
    is failed with DeadKernelError, H2 completes, the partial LiH notebook keeps what
    ran; the next sweep skips H2 and resumes LiH from its checkpointed restart."""
    out, cache, table, held = _copy_of(killed_lih, tmp_path, monkeypatch)
    rows = _rows(table)
    assert rows["lih"]["status"] == "failed"
    assert "DeadKernelError" in rows["lih"]["failure"], rows["lih"]["failure"]
    assert rows["h2"]["status"] == "done", rows["h2"]["failure"]
    rec = read_records(out / "lih.ipynb")
    assert rec["entry_id"].startswith("LiH_") and "hamiltonian" in rec and "done" not in rec
    assert rec["error"]["type"] == "DeadKernelError"
    assert _checkpoint_parts(cache, "LiH") >= held >= 1
    stamps = _stamps(out)
    again = _rows(sweep(["lih", "h2"], out, mode="rerun", workers=2, progress=False,
                        plot=False))
    assert _stamps(out)["h2"] == stamps["h2"], "a done run must not run again"
    assert again["lih"]["status"] == "done" and again["h2"]["status"] == "done"
    resumed = read_records(out / "lih.ipynb")
    assert resumed["rerun"]["resumed_parts"] >= held
    assert resumed["rerun"]["restarts_run"] >= 2
    assert again["lih"]["tier_certification"] == "pass"
    assert _checkpoint_parts(cache, "LiH") == 0, "a completed run deletes its checkpoint"


@pytest.mark.notebook
@pytest.mark.slow
def test_a_corrupt_checkpoint_is_set_aside_with_a_warning_and_the_run_starts_over(
        killed_lih, tmp_path, monkeypatch):
    """Before: the resumed run failed at every sweep with CheckpointCorrupt (stage
    rerun) until the file was deleted by hand.  Now the checkpoint of the killed LiH
    run, overwritten with garbage, is moved to ``<key>.json.corrupt``, the warning is
    in the notebook and the ``rerun`` record (``checkpoint_discarded``), and LiH
    completes from restart 0."""
    out, cache, _, _ = _copy_of(killed_lih, tmp_path, monkeypatch)
    path = _checkpoint_file(cache, "LiH")
    path.write_bytes(b'{"format": 1, "parts": [{"energy": -7.8\x00\xff garbage')
    stamps = _stamps(out)
    rows = _rows(sweep(["lih", "h2"], out, mode="rerun", workers=2, progress=False,
                       plot=False))
    assert rows["lih"]["status"] == "done", rows["lih"]["failure"]
    assert _stamps(out)["h2"] == stamps["h2"]
    rec = read_records(out / "lih.ipynb")
    why = rec["rerun"]["checkpoint_discarded"]
    assert str(path) in why and "is unreadable" in why and "starts over" in why
    assert rec["rerun"]["resumed_parts"] == 0
    aside = path.with_name(path.name + ".corrupt")
    assert b"garbage" in aside.read_bytes(), "the corrupt file is kept for inspection"
    assert not path.exists()
    text = (out / "lih.ipynb").read_text()
    assert "CheckpointWarning" in text
    assert rows["lih"]["tier_certification"] == "pass"


# --------------------------------------------------------- 2a: a local pool worker killed

@pytest.mark.notebook
def test_a_killed_pool_worker_fails_its_run_only_and_the_others_complete(cache, tmp_path):
    """Before: ProcessPoolExecutor raised BrokenProcessPool out of the sweep (a
    traceback, no summary.csv), terminated the other worker mid-run and left the
    killed worker's forked run going on.  Now the run is a failed row (WorkerLost,
    the worker's pid, SIGKILL), the run and its kernel die with the worker, a fresh
    worker takes the remaining entries, and the next sweep re-runs only that one."""
    out = tmp_path / "runs"
    seen = {}

    def kill():
        worker = _wait(lambda: _kernel_under(_holder(out, "lih")) and _holder(out, "lih"),
                       "the kernel of the lih run")
        seen["run"] = [p.pid for p in worker.children(recursive=True)]
        seen["worker"] = worker.pid
        os.kill(worker.pid, signal.SIGKILL)
    join = _in_thread(kill)
    table = sweep(["lih", "h2", str(H2_BK)], out, workers=2, **FAST)
    join()
    rows = _rows(table)
    lih = rows["lih"]
    assert lih["status"] == "failed"
    assert f"WorkerLost: the sweep worker (pid {seen['worker']}) running it died (killed " \
           "by SIGKILL)" in lih["failure"], lih["failure"]
    assert rows["h2"]["status"] == rows[H2_BK.stem]["status"] == "done"
    assert read_records(out / "lih.ipynb")["error"]["type"] == "WorkerLost"   # kept, marked
    assert json.loads((out / "lih.outcome.json").read_text())["status"] == "failed"
    assert not _gone(seen["run"]), "the killed worker's run and kernel must die with it"
    stamps = _stamps(out)
    again = _rows(sweep(["lih", "h2", str(H2_BK)], out, workers=2, **FAST))
    assert {k: v for k, v in _stamps(out).items() if k != "lih"} == \
        {k: v for k, v in stamps.items() if k != "lih"}
    assert {r["status"] for r in again.values()} == {"done"}
    assert again["lih"]["replay_status"] == "pass"


# ------------------------------------------------------------ 2b: a Dask worker killed

@pytest.mark.notebook
@pytest.mark.slow
def test_a_killed_dask_worker_is_a_failed_row_when_dask_gives_up_else_a_done_retry(
        cache, tmp_path):
    """Dask reschedules a task whose worker died, up to
    ``distributed.scheduler.allowed-failures`` times.  The documented outcome: a
    retry that completes is a done row (its notebook complete, another worker's);
    when Dask gives up (KilledWorker) the row is failed with the reason and the
    partial notebook kept.  Before: KilledWorker was raised out of the sweep (a
    traceback, no summary.csv), and the dead worker's runner subprocess went on
    writing the notebook beside the retry.  Both cases on one LocalCluster: first
    with allowed-failures 0 (give up), then the default (retry)."""
    import dask
    from distributed import Client, LocalCluster

    out = tmp_path / "runs"

    def kill_lih_worker(seen):
        def kill():
            worker = _wait(lambda: _kernel_under(_holder(out, "lih")) and _holder(out, "lih"),
                           "the kernel of the lih run on a Dask worker")
            seen["run"] = [p.pid for p in worker.children(recursive=True)]
            seen["worker"] = worker.pid
            os.kill(worker.pid, signal.SIGKILL)
        return _in_thread(kill)

    # One task per worker at a time (no task queued behind lih on the worker killed).
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        client.run_on_scheduler(lambda dask_scheduler: setattr(
            dask_scheduler, "allowed_failures", 0))
        first = {}
        join = kill_lih_worker(first)
        rows = _rows(sweep(["lih", "h2"], out, scheduler=cluster.scheduler_address, **FAST))
        join()
        lih = rows["lih"]
        assert lih["status"] == "failed" and "WorkerLost" in lih["failure"]
        assert "KilledWorker" in lih["failure"], lih["failure"]
        assert rows["h2"]["status"] == "done"
        assert read_records(out / "lih.ipynb")["error"]["type"] == "WorkerLost"
        assert not _gone(first["run"]), "the dead worker's runner must die with it"

        client.run_on_scheduler(lambda dask_scheduler: setattr(
            dask_scheduler, "allowed_failures", 3))
        client.wait_for_workers(2, timeout=120)   # the nanny restarted the killed one
        stamps = _stamps(out)
        second = {}
        join = kill_lih_worker(second)
        rows = _rows(sweep(["lih", "h2"], out, scheduler=cluster.scheduler_address, **FAST))
        join()
    assert _stamps(out)["h2"] == stamps["h2"], "the done run is not run again"
    assert rows["lih"]["status"] == "done", rows["lih"]["failure"]
    outcome = json.loads((out / "lih.outcome.json").read_text())
    assert outcome["worker_pid"] != second["worker"], "the retry ran on another worker"
    assert read_records(out / "lih.ipynb")["done"] is True
    assert not _gone(second["run"])


# ------------------------------------------------ 3: two sweeps on one folder at once

@pytest.mark.notebook
def test_two_sweeps_on_one_folder_at_once_leave_every_file_whole(cache, tmp_path):
    """Before: both sweeps ran every entry at the same time into the same notebooks
    (papermill rewriting one file from two processes) and wrote summary.csv over each
    other.  Now each run holds ``<name>.lock``: the second sweep to reach a run waits,
    then finds it done with the same inputs and skips it; summary.csv is written
    atomically under the folder's lock.  Both end with every row done."""
    import nbformat
    import pandas as pd

    out = tmp_path / "runs"
    env = {**pinned_env(1), "QENCODE_NB_CACHE": str(cache), "QENCODE_NB_PROGRESS": "0"}
    cmd = [EXE, "sweep", "h2", "lih", "--mode", "replay", "--engine", "fast",
           "--workers", "2", "--out", str(out)]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    kernels = set()   # every kernel either sweep starts (each lives for seconds)
    while any(p.poll() is None for p in procs):
        for p in procs:
            try:
                kernels |= {k.pid for k in psutil.Process(p.pid).children(recursive=True)
                            if _is_kernel(k)}
            except psutil.Error:
                pass
        time.sleep(0.1)
    results = [p.communicate(timeout=60) for p in procs]
    for proc, (stdout, stderr) in zip(procs, results):
        assert proc.returncode == 0, stdout + stderr
        assert "2/2 audits done" in stdout, stdout
        assert "Traceback" not in stderr, stderr
    csv = pd.read_csv(out / "summary.csv")
    assert sorted(csv["notebook"].map(lambda p: Path(p).stem)) == ["h2", "lih"]
    assert set(csv["status"]) == {"done"} and (csv["replay_status"] == "pass").all()
    for name in ("h2", "lih"):
        nbformat.validate(nbformat.read(str(out / f"{name}.ipynb"), as_version=4))
        assert read_records(out / f"{name}.ipynb")["done"] is True
        assert json.loads((out / f"{name}.outcome.json").read_text())["status"] == "done"
        assert lock_holder(out, name) is None, "a finished run leaves its lock free"
    assert not list(out.glob(".tmp-*")), "no half-written file is left"
    assert len(kernels) == 2, f"each entry runs once, not once per sweep: {len(kernels)} kernels"


# ------------------------------------------------- 4: an output folder that cannot be written

@pytest.mark.notebook
def test_an_output_folder_that_cannot_be_written_is_refused_before_any_run(tmp_path):
    """Before: ``--out`` under a regular file ended in a FileExistsError /
    NotADirectoryError traceback from ``mkdir``; a read-only folder failed only after
    the runs (each notebook write failing in its run).  Now the sweep refuses it
    first, naming the folder and why (exit status 2).  Tests may run as root, where
    chmod 0555 does not stop writes: the read-only case is then skipped inside the
    test and the path under a regular file (which stops root too) carries it."""
    from qencode_nb.errors import OutputFolderError

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a regular file\n")
    out = blocker / "runs"
    proc = subprocess.run([EXE, "sweep", "h2", "--mode", "replay", "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"output folder {out} cannot be written: {blocker} is a file, not a folder" \
        in proc.stderr, proc.stderr
    assert not list(tmp_path.rglob("*.ipynb")), "nothing ran"

    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        probe = ro / "probe"
        try:
            probe.write_text("x")
            probe.unlink()
            chmod_stops_writes = False   # root: permissions do not apply
        except PermissionError:
            chmod_stops_writes = True
        if chmod_stops_writes:
            with pytest.raises(OutputFolderError, match=f"output folder {ro} cannot be "
                                                        "written: Permission denied"):
                sweep(["h2"], ro, mode="replay", progress=False)
            assert not list(ro.iterdir())
    finally:
        ro.chmod(0o755)


# ------------------------------------------------------ 6: a truncated rebuild-cache file

@pytest.mark.notebook
def test_a_truncated_cache_file_is_rebuilt_with_the_warning_recorded(cache, tmp_path):
    """The documented behaviour (qencode_nb.hamiltonian.cache; before and after): a cache
    file that does not parse is reported (CacheWarning, in the notebook), rebuilt and
    replaced; the audit completes and its ``hamiltonian`` record says so
    (``cache_status`` "corrupt: not valid JSON ...", ``cache_hit`` False; before,
    the record had only ``cache_hit``).  The sibling's cache hit is untouched."""
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.cache import cache_key, entry_fields, path_for

    path = path_for(cache_key(**entry_fields(load("h2"))), cache)
    whole = path.read_bytes() if path.is_file() else b'{"format": "qencode-nb-rebuild"}'
    path.write_bytes(whole[: len(whole) // 2])
    out = tmp_path / "runs"
    rows = _rows(sweep(["h2", str(H2_BK)], out, workers=2, **FAST))
    assert rows["h2"]["status"] == rows[H2_BK.stem]["status"] == "done", rows
    ham = read_records(out / "h2.ipynb")["hamiltonian"]
    assert ham["cache_status"].startswith("corrupt: not valid JSON"), ham["cache_status"]
    assert ham["cache_hit"] is False and ham["terms_match"] is True
    assert "CacheWarning" in (out / "h2.ipynb").read_text()
    assert json.loads(path.read_bytes())["key"] == ham["cache_key"], "the file was replaced"
    assert read_records(out / f"{H2_BK.stem}.ipynb")["hamiltonian"]["cache_status"] in \
        ("hit", "absent")
    stamps = _stamps(out)
    sweep(["h2", str(H2_BK)], out, workers=2, **FAST)
    assert _stamps(out) == stamps, "both are done: the second sweep runs nothing"


# ------------------------------------------------------ the pool itself (no kernel, fast)

def _job(name: str, seconds: float, folder: str):
    Path(folder, name).write_text(str(os.getpid()))   # who runs it
    if name == "raises":
        raise KeyError(name)
    time.sleep(seconds)
    return name, os.getpid()


def test_run_pool_hands_a_dead_workers_job_to_lost_and_the_others_go_on(tmp_path):
    """The pool under the sweep (qencode_nb.batch.pool): the worker running "slow" is
    killed; its job goes to ``lost`` with the pid and the signal, a fresh worker takes
    the jobs left, and an exception of the job function is raised in the caller."""
    from qencode_nb.batch.pool import run_pool

    def pid_of_slow():
        try:
            return int((tmp_path / "slow").read_text())
        except (OSError, ValueError):   # not written yet
            return None

    def kill():
        pid = _wait(pid_of_slow, "the worker running slow")
        os.kill(pid, signal.SIGKILL)
        return pid
    join = _in_thread(kill)
    jobs = [("slow", 30, str(tmp_path)), ("a", 0.5, str(tmp_path)),
            ("b", 0.1, str(tmp_path)), ("c", 0.1, str(tmp_path))]
    got = list(run_pool(_job, jobs, 2, lost=lambda args, why: ("lost", args[0], why)))
    killed = join()
    lost = [g for g in got if g[0] == "lost"]
    assert lost == [("lost", "slow", f"the sweep worker (pid {killed}) running it died "
                                     "(killed by SIGKILL)")]
    assert sorted(g[0] for g in got if g[0] != "lost") == ["a", "b", "c"]
    with pytest.raises(KeyError, match="raises"):
        list(run_pool(_job, [("raises", 0, str(tmp_path)), ("a", 0, str(tmp_path))], 1,
                      lost=lambda args, why: None))


def _span(name: str, seconds: float, folder: str):
    """A job that records when it ran: ``(name, start, end)`` (monotonic seconds)."""
    start = time.monotonic()
    time.sleep(seconds)
    return name, start, time.monotonic()


def test_run_pool_keeps_jobs_of_one_key_apart_and_idles_no_worker_needlessly(tmp_path):
    """``apart``: the two "x" jobs (one entry file in two release folders of a record
    sweep) never overlap, though they are first in the queue and two workers are free;
    the second worker takes "y" meanwhile, and every job runs once."""
    from qencode_nb.batch.pool import run_pool

    jobs = [("x1", 0.6, "x"), ("x2", 0.6, "x"), ("y", 0.3, "y"), ("z", 0.1, None)]
    got = list(run_pool(_span, jobs, 2, lost=lambda args, why: None,
                        apart=lambda args: args[2]))
    spans = {name: (start, end) for name, start, end in got}
    assert sorted(spans) == ["x1", "x2", "y", "z"]
    first, second = sorted((spans["x1"], spans["x2"]))
    assert first[1] <= second[0], "the two x jobs ran at once"
    assert spans["y"][0] < first[1], "the second worker waited instead of taking y"
