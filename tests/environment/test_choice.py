"""``--stack`` (issues 35 and 52): which package stack (Jupyter kernel) each audit runs
in, and what an audit says when the stack asked for did not run.

Everything here runs offline: the entry's stack is resolved into a lock kept in the
stacks folder (seeded here: a lock whose one package has a hash no file has), and uv runs
offline with an empty cache, so the stack cannot be installed, which is the fallback the
issue asks for: the audit runs in the current stack and tier 3 reads ``n/a`` naming the
stack and uv's reason.  The stack resolved from the registry at the entry's date, and the
audits bit-identical in it, are ``tests/studies/test_recorded_stack.py`` (network).
"""

from __future__ import annotations

import json

import pytest

from conftest import AUDIT_NB, SHARED_DB, SHARED_HISTORY, private_stacks
from qencode_nb.entry import load
from qencode_nb.environment import lock as locks, store
from qencode_nb.environment.choice import (RECORDED, kernels_for, recorded_lock, stack_name,
                                           stack_parameter)
from qencode_nb.environment.in_force import stack_in_force, stack_key, stack_text
from qencode_nb.environment.recorded import of_entry
from qencode_nb.errors import ParameterError
from qencode_nb.notebook.provenance import installed_version, version_drift
from qencode_nb.options import check_stack

H2_V3 = (SHARED_HISTORY / "releases" / "v3" / "db"
         / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json")
V4 = sorted(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4*.json"))[0]


def seed_lock(entry, text: str, dated: bool = True) -> locks.Lock:
    """Keep ``text`` as the resolution of ``entry``'s recorded stack, as
    :func:`qencode_nb.environment.lock.resolve_lock` keeps what uv resolved."""
    import hashlib
    import platform

    recorded = of_entry(load(entry))
    reqs = [*recorded.requirements, *locks.toolkit_dependencies()]
    when = recorded.created_utc if dated else None
    lock = locks.Lock(text, hashlib.sha256(text.encode()).hexdigest()[:12], when,
                      "2026-12-07", None, platform.python_version())
    path = locks._cache_path(reqs, when, platform.python_version(), None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(lock.__dict__))
    return lock


#: A lock no installer can satisfy offline: numpy 1.26.4 with a hash no file has.
UNINSTALLABLE = "numpy==1.26.4 \\\n    --hash=sha256:" + "0" * 64 + "\n"


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """A private stacks folder and Jupyter path, uv offline with an empty cache, and the
    v3 entry's stack resolved into :data:`UNINSTALLABLE`."""
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    with private_stacks(tmp_path) as prefix:
        seed_lock(H2_V3, UNINSTALLABLE)
        yield prefix


def test_the_stack_option_accepts_three_words_and_ready_stacks(tmp_path):
    with private_stacks(tmp_path):
        assert check_stack(None) == "current"
        assert check_stack("recorded") == "recorded"
        assert check_stack("recorded-today") == "recorded-today"
        with pytest.raises(ParameterError, match=r"stack 'v3' is not accepted; accepted: "
                                                 r"current, recorded, recorded-today \("):
            check_stack("v3")
        # a stack whose creation failed is not one to run in
        folder = store.stacks_root() / "broken"
        folder.mkdir(parents=True)
        (folder / "stack.json").write_text(json.dumps({"name": "broken", "status": "failed"}))
        with pytest.raises(ParameterError, match="accepted: current, recorded, recorded-today "):
            check_stack("broken")
    with pytest.raises(ParameterError, match="'current' is not accepted: current, recorded, "
                                             "recorded-today are words of --stack"):
        store.check_name("current")
    assert stack_parameter("current") == {} and stack_parameter(None) == {}
    assert stack_parameter("recorded") == {"stack": "recorded"}


def test_an_environment_that_holds_the_lock_needs_no_stack(tmp_path):
    """Where this environment holds every version of the entry's lock, ``recorded`` runs
    the audit in the current kernel and builds nothing."""
    here = {n: installed_version(n) for n in ("numpy", "scipy", "pyscf")}
    text = "".join(f"{n}=={v} \\\n    --hash=sha256:{'1' * 64}\n" for n, v in here.items())
    with private_stacks(tmp_path):
        lock = seed_lock(V4, text)
        assert lock.versions() == here
        assert kernels_for("recorded", [str(V4)]) == {str(V4): None}
        assert kernels_for("current", [str(H2_V3)]) == {str(H2_V3): None}
        assert store.list_stacks() == []
        entry = load(V4)
        recorded = of_entry(entry)
        record = stack_in_force("recorded", recorded, version_drift(entry.tool_versions))
    assert record["name"] == "current" and record["in_recorded_stack"] is True
    assert record["not_used"] is None
    assert record["recorded_stack"] == stack_name("v4", lock) == f"v4-{lock.key}"
    assert record["key"] == stack_key(recorded.pins)
    assert record["lock_key"] is None           # the current environment: no lock of ours
    assert stack_text(record).startswith(f"stack current (key {record['key']}: numpy ")
    with pytest.raises(ParameterError, match=r"stack 'Not A Name' is not accepted; accepted: "
                                             r"current, recorded, recorded-today, or the name "
                                             r"of a stack"):
        check_stack("Not A Name", ready=False)   # the notebook frame's check, in the kernel


def test_a_stack_that_cannot_be_built_is_kept_failed_and_not_retried(offline):
    said = []
    recorded = of_entry(load(H2_V3))
    lock = recorded_lock(recorded, RECORDED)      # the kept resolution, no network
    name = stack_name(recorded.release, lock)
    assert name == f"v3-{lock.key}" and lock.resolved_at == recorded.created_utc
    assert kernels_for("recorded", [str(H2_V3)], log=said.append) == {str(H2_V3): None}
    rec = store.read_stack(name)
    assert rec["status"] == "failed" and "uv pip sync" in rec["failure"]
    assert rec["lock"]["key"] == lock.key and rec["lock"]["resolved_at"] == recorded.created_utc
    assert said[0] == (f"building stack {name} from the entry's record, resolved at "
                       f"{recorded.created_utc}, once ...")
    assert said[1].startswith(f"stack {name} could not be built; the audits run in the "
                              "current stack and say so: ")
    said.clear()
    assert kernels_for("recorded", [str(H2_V3)], log=said.append) == {str(H2_V3): None}
    assert len(said) == 1 and said[0].startswith(f"stack {name} failed before (")
    assert f"`qencode-nb stack remove {name}` to try again" in said[0]


@pytest.mark.notebook
def test_the_audit_says_which_stack_ran_and_why_not_the_one_asked(offline, tmp_path):
    """A v3 entry audited with ``stack="recorded"`` where its stack could not be built:
    the audit runs in the current stack, and its record, tier 3 and card say why."""
    from qencode_nb.executor.execute import run_notebook
    from qencode_nb.verdict.card import Card

    recorded = of_entry(load(H2_V3))
    name = stack_name(recorded.release, recorded_lock(recorded, RECORDED))
    kernels_for("recorded", [str(H2_V3)], log=lambda line: None)     # fails: offline
    r = run_notebook(AUDIT_NB, tmp_path / "h2-v3.ipynb",
                     {"entry": str(H2_V3), "mode": "full", "stack": "recorded"})
    stack = r["stack"]
    assert (stack["asked"], stack["name"], stack["recorded_stack"]) == ("recorded", "current",
                                                                        name)
    assert stack["in_recorded_stack"] is False
    assert stack["not_used"].startswith(f"stack {name} could not be built (")
    assert stack["not_used"].endswith("so the audit ran in the current stack")
    tier3 = r["tiers"]["bit_identical"]
    assert tier3["status"] == "n/a"
    assert tier3["reasons"][0] == ("the recorded stack was asked for and did not run: "
                                   + stack["not_used"])
    assert tier3["reasons"][1].startswith("not the entry's recorded stack (v3, "
                                          "requirements-v3.txt): numpy ")
    facts = Card(r).facts()
    assert f"recorded asked, not used: stack {name} could not be built" in facts["environment"]


@pytest.mark.notebook
def test_robustness_and_studies_pass_the_stack_to_every_run(offline, tmp_path):
    """``stack="recorded"`` reaches every run of a robustness study and of a study (each
    run's ``stack`` record says it was asked for), and, offline, each says why it ran in
    the current stack."""
    from qencode_nb.notebook.record import read_records
    from qencode_nb.studies import run
    from qencode_nb.studies.robustness import robustness

    rob = robustness([str(H2_V3)], tmp_path / "rob", threads=[1], mode="full",
                     stack="recorded", progress=False, plot=False)
    study = run("threads", str(H2_V3), threads=[1], repeats=1, out_dir=tmp_path / "threads",
                stack="recorded", progress=False, plot=False)
    notebooks = [*(tmp_path / "rob").glob("*.ipynb"), *(tmp_path / "threads").glob("*.ipynb")]
    assert len(notebooks) == 2 and rob.failures() == {} and study.failures() == {}
    for nb in notebooks:
        stack = read_records(nb)["stack"]
        assert stack["asked"] == "recorded" and stack["name"] == "current", nb.name
        assert "could not be built" in stack["not_used"]
