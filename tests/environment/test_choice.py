"""``--stack`` (issue 35, item 2): which package stack (Jupyter kernel) each audit runs
in, and what an audit says when the stack asked for did not run.

Everything here runs offline: the v3 stack these tests ask for cannot be installed
(``PIP_NO_INDEX`` and an empty ``PIP_FIND_LINKS``: pip finds no distribution, as on a
machine without a registry), which is the fallback the issue asks for: the audit runs in
the current stack and tier 3 reads ``n/a`` naming the stack and pip's reason.  The stack
built from the registry, and the audits bit-identical in it, are
``tests/studies/test_recorded_stack.py`` (network).
"""

from __future__ import annotations

import json

import pytest

from conftest import AUDIT_NB, SHARED_DB, SHARED_HISTORY, private_stacks
from qencode_nb.batch import stacks
from qencode_nb.batch.stack_choice import kernels_for, stack_parameter
from qencode_nb.options import check_stack
from qencode_nb.entry import load
from qencode_nb.entry.recorded_env import (recorded_environment, recorded_stack_name,
                                           stack_in_force, stack_key, stack_text)
from qencode_nb.errors import ParameterError
from qencode_nb.notebook.provenance import version_drift

H2_V3 = (SHARED_HISTORY / "releases" / "v3" / "db"
         / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json")
V4 = sorted(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4*.json"))[0]


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """A private stacks folder and Jupyter path, and a pip that can install nothing."""
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    with private_stacks(tmp_path) as prefix:
        yield prefix


def test_the_stack_option_accepts_two_words_and_ready_stacks(tmp_path):
    with private_stacks(tmp_path):
        assert check_stack(None) == "current"
        assert check_stack("recorded") == "recorded"
        with pytest.raises(ParameterError, match=r"stack 'v3' is not accepted; accepted: "
                                                 r"current, recorded \("):
            check_stack("v3")
        # a stack whose creation failed is not one to run in
        folder = stacks.stacks_root() / "broken"
        folder.mkdir(parents=True)
        (folder / "stack.json").write_text(json.dumps({"name": "broken", "status": "failed"}))
        with pytest.raises(ParameterError, match="accepted: current, recorded "):
            check_stack("broken")
    with pytest.raises(ParameterError, match="'current' is not accepted: current and "
                                             "recorded are words of --stack"):
        stacks.check_name("current")
    assert stack_parameter("current") == {} and stack_parameter(None) == {}
    assert stack_parameter("recorded") == {"stack": "recorded"}


def test_a_v4_entry_needs_no_stack_here(tmp_path):
    """The lock is QEncode v4's stack: ``recorded`` runs a v4 entry in the current
    kernel and builds nothing (the main job keeps its speed)."""
    with private_stacks(tmp_path):
        assert kernels_for("recorded", [str(V4), "h6"]) == {str(V4): None, "h6": None}
        assert kernels_for("current", [str(H2_V3)]) == {str(H2_V3): None}
        assert not stacks.stacks_root().exists() or not any(stacks.stacks_root().iterdir())
    entry = load(V4)
    recorded = recorded_environment(entry.tool_versions)
    record = stack_in_force("recorded", recorded, version_drift(entry.tool_versions))
    assert record["name"] == "current" and record["in_recorded_stack"] is True
    assert record["not_used"] is None
    # the key of what runs is the key in the recorded stack's name: the same versions
    assert recorded_stack_name(recorded) == f"v4-{record['key']}"
    assert record["key"] == stack_key(recorded.pins)
    assert stack_text(record).startswith(f"stack current (key {record['key']}: numpy ")
    with pytest.raises(ParameterError, match=r"stack 'Not A Name' is not accepted; accepted: "
                                             r"current, recorded, or the name of a stack"):
        check_stack("Not A Name", ready=False)   # the notebook frame's check, in the kernel


def test_a_stack_that_cannot_be_built_is_kept_failed_and_not_retried(offline):
    said = []
    name = recorded_stack_name(recorded_environment(load(H2_V3).tool_versions))
    assert name.startswith("v3-")
    assert kernels_for("recorded", [str(H2_V3)], log=said.append) == {str(H2_V3): None}
    rec = stacks.read_stack(name)
    assert rec["status"] == "failed" and "pip install" in rec["failure"]
    assert said[0].startswith(f"building stack {name} from the entry's record, once (numpy==")
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

    name = recorded_stack_name(recorded_environment(load(H2_V3).tool_versions))
    kernels_for("recorded", [str(H2_V3)], log=lambda line: None)     # fails: no index
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
