"""Distributed runs get their stacks (issue 52 item 7): ``--stack recorded --scheduler
ADDR`` ships each run's locked stack (its name and lock,
:func:`qencode_nb.environment.build.stack_description`) with the task, and the Dask
worker builds or attaches it in its own stacks folder before the run
(:func:`qencode_nb.environment.build.ensure_described`,
:func:`qencode_nb.batch.sweep.run_one_in_stack`)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from conftest import SHARED_HISTORY, private_stacks
from qencode_nb.environment import build
from qencode_nb.environment import store as stacks
from qencode_nb.environment.lock import LOCKS_FOLDER, Lock

H2_STO3G = (SHARED_HISTORY / "releases" / "v3" / "db"
            / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json")


def _lock(text: str = "numpy==1.26.4 \\\n    --hash=sha256:" + "1" * 64 + "\n") -> Lock:
    return Lock(text, hashlib.sha256(text.encode()).hexdigest()[:12], "2026-05-11T08:54:39Z",
                "2026-12-07", None, "3.11.14")


def _seed(root, name: str, lock: Lock | None, status: str = "ready") -> None:
    """A stack record as build.create_stack leaves it, without building anything."""
    folder = root / name
    folder.mkdir(parents=True)
    stacks.write_record(folder, {"name": name, "kernelspec": stacks.kernelspec_name(name),
                                 "path": str(folder), "status": status,
                                 "lock": None if lock is None else lock.to_record()})
    if lock is not None:
        (folder / stacks.LOCK_FILE).write_text(lock.text, encoding="utf-8")
        (root / LOCKS_FOLDER).mkdir(exist_ok=True)
        (root / LOCKS_FOLDER / "0123456789abcdef.json").write_text(json.dumps(lock.__dict__))


def test_a_locked_stack_is_described_and_rebuilt_from_its_description(tmp_path, monkeypatch):
    """Offline: the driver describes a ready locked stack of its store (None for anything
    else); the worker gets back the same Lock, keeps it as the driver did, and asks
    ensure_stack for the stack by the same name; a description whose text does not give
    its key is refused, saying why."""
    driver, lock = tmp_path / "driver", _lock()
    _seed(driver, "v3-" + lock.key, lock)
    _seed(driver, "latest", None)                     # a recipe's stack: no lock
    _seed(driver, "v3-broken", lock, status="failed")
    desc = build.stack_description(stacks.kernelspec_name("v3-" + lock.key), root=driver)
    assert desc == {"name": "v3-" + lock.key, "lock": {**lock.to_record(), "text": lock.text},
                    "cached_as": ["0123456789abcdef.json"]}
    assert stacks.lock_text("v3-" + lock.key, root=driver) == lock.text
    assert stacks.lock_text("latest", root=driver) is None
    for kernel in (None, "python3", "qencode-nb-latest", "qencode-nb-v3-broken",
                   "qencode-nb-absent", "qencode-nb-Not A Name"):
        assert build.stack_description(kernel, root=driver) is None, kernel
    asked, said = [], []
    monkeypatch.setattr(build, "ensure_stack", lambda name, got, log, jupyter_prefix=None:
                        asked.append((name, got)) or stacks.kernelspec_name(name))
    with private_stacks(tmp_path / "worker"):
        wire = json.loads(json.dumps(desc))          # as it travels: plain JSON
        assert build.ensure_described(wire, said.append) == "qencode-nb-v3-" + lock.key
        assert asked == [("v3-" + lock.key, lock)]
        kept = stacks.stacks_root() / LOCKS_FOLDER / "0123456789abcdef.json"
        assert Lock(**json.loads(kept.read_text())) == lock
        bad = {**wire, "lock": {**wire["lock"], "text": wire["lock"]["text"] + "scipy==1.0\n"}}
        assert build.ensure_described(bad, said.append) is None
        assert build.ensure_described(None, said.append) is None
    assert len(asked) == 1 and len(said) == 2
    assert f"its lock text does not hash to its key {lock.key}" in said[0]
    assert said[1].endswith("the audit runs in the current stack")


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.slow
def test_a_dask_worker_builds_the_recorded_stack_in_its_own_stacks_folder(tmp_path):
    """A LocalCluster whose one worker has its own stacks folder and Jupyter path (as a
    worker on another host): a ``stack="recorded"`` sweep of a v3 entry leaves there a
    ready stack of the driver's name and lock, built by the worker, and the run's
    ``stack`` record names it, used."""
    from distributed import Client, LocalCluster

    from qencode_nb.batch.sweep import sweep
    from qencode_nb.entry import load
    from qencode_nb.environment.choice import RECORDED, recorded_lock, stack_name
    from qencode_nb.environment.recorded import of_entry
    from qencode_nb.notebook.record import read_records

    worker = tmp_path / "worker"
    env = {"QENCODE_NB_STACKS": str(worker / "stacks"),
           "QENCODE_NB_JUPYTER_PREFIX": str(worker / "jupyter"),
           "JUPYTER_PATH": str(worker / "jupyter" / "share" / "jupyter")}
    with private_stacks(tmp_path / "driver"):
        recorded = of_entry(load(H2_STO3G))
        lock = recorded_lock(recorded, RECORDED)
        name = stack_name(recorded.release, lock)
        try:
            with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                              dashboard_address=":0", env=env) as cluster, \
                    Client(cluster) as client:
                seen = client.run(lambda: os.environ.get("QENCODE_NB_STACKS")).values()
                assert set(seen) == {env["QENCODE_NB_STACKS"]}, "the worker's own folder"
                table = sweep([str(H2_STO3G)], tmp_path / "runs", mode="replay",
                              stack="recorded", scheduler=cluster.scheduler_address,
                              progress=False, plot=False)
            assert list(table["status"]) == ["done"], table["failure"].tolist()
            driver_rec = stacks.read_stack(name)
            worker_rec = stacks.read_stack(name, root=worker / "stacks")
            assert worker_rec["status"] == "ready" and worker_rec["path"] != driver_rec["path"]
            assert worker_rec["path"].startswith(str(worker / "stacks"))
            assert worker_rec["lock"] == driver_rec["lock"] == lock.to_record()
            assert stacks.lock_text(name, root=worker / "stacks") == lock.text
            assert worker_rec["kernelspec_dir"].startswith(str(worker / "jupyter"))
            r = read_records(tmp_path / "runs" / f"{H2_STO3G.stem}.ipynb")
            assert r["stack"]["name"] == r["stack"]["recorded_stack"] == name
            assert r["stack"]["not_used"] is None and r["stack"]["lock_key"] == lock.key
            assert r["stack"]["in_recorded_stack"] is True
            assert r["provenance"]["executable"].startswith(worker_rec["path"]), \
                "the worker's own stack ran the kernel"
        finally:
            for root in (worker / "stacks", None):
                if stacks.find_stack(name, root) is not None:
                    stacks.remove_stack(name, root=root)
