"""The verdict card, the five "Works on my QPU" answers and re-run progress, on
records of real entries (no kernel: these read records as an executed audit holds them)."""

from __future__ import annotations

import json

import pytest

from conftest import H2_JW_UCCSD, ROOT
from qencode_nb.entry import load
from qencode_nb.rerun.progress import Progress
from qencode_nb.verdict.card import Card
from qencode_nb.entry.provenance import entry_provenance
from qencode_nb.verdict.qpu_questions import ANSWERS, QUESTIONS, answers


def _records(entry, **extra) -> dict:
    """The records an audit of ``entry`` writes before its verdict, plus ``extra``."""
    fields = [{"field": "seed", "status": "equal"}, {"field": "early_stop",
                                                     "status": "undeclared"}]
    return {"entry_id": entry.entry_id, "mode": "full",
            "entry_provenance": entry_provenance(entry), "fields": fields, **extra}


def test_answers_for_a_real_v4_entry_read_its_own_provenance():
    entry = load(str(H2_JW_UCCSD))
    ep = entry_provenance(entry)
    assert ep["tool_versions"]["git_commit"] == "e1f44cd"
    assert ep["environment"] == {"platform": "linux", "blas_threads": "1", "threads_pinned": True}
    got = answers(_records(entry, rerun={"nfev": 20}, error_mha=1.0e-6, certified=True,
                           tiers={}, done=True))
    assert [a["question"] for a in got] == list(QUESTIONS)
    assert all(a["answer"] in ANSWERS and a["reason"] for a in got)
    by = {a["question"]: a for a in got}
    assert by["code"]["answer"] == "yes"
    assert by["environment"]["answer"] == "partly"
    assert by["environment"]["reason"].endswith("not recorded: BLAS kernel")
    assert by["documentation"] == {"question": "documentation", "answer": "partly",
                                   "reason": "1 of 2 procedure fields declared; undeclared: "
                                             "early_stop (tier 1)"}
    assert by["hardware"]["answer"] == "partly"
    assert by["executability"]["answer"] == "yes"


def test_answers_without_a_json_or_a_commit_say_no_with_the_reason(tmp_path):
    yaml_alone = tmp_path / "lih.yaml"
    text = (ROOT / "params" / "lih.yaml").read_text().replace("git_commit: e1f44cd", "")
    yaml_alone.write_text(text.replace(",\n  }", "}"))
    entry = load(str(yaml_alone))
    by = {a["question"]: a for a in answers(_records(entry, replay={"status": "n/a"},
                                                     tiers={}, done=True))}
    assert by["code"]["answer"] == "no" and "git_commit absent" in by["code"]["reason"]
    assert by["environment"]["answer"] == "partly"  # versions, but no BLAS threads or kernel
    assert "BLAS threads" in by["environment"]["reason"].split("not recorded:")[1]
    assert by["hardware"]["answer"] == "no"
    assert by["executability"]["answer"] == "no"    # neither re-run nor replay
    # An entry that never loaded says nothing about the entry: all five "unknown"
    # (issue 23; a typo used to read as five red "no").
    failed = {a["question"]: a for a in answers(
        {"error": {"stage": "load", "type": "EntryError", "message": "bad"}})}
    assert all(a["answer"] == "unknown" for a in failed.values())
    assert failed["executability"]["reason"] == ("unknown: the entry was never read (no "
                                                 "entry_provenance record) (load: "
                                                 "EntryError: bad)")


def test_card_states_and_text_lead_with_the_failure():
    running = Card({}, {"entry": "lih", "mode": "replay"})
    assert running.state == "running" and 'data-state="running"' in running.html()
    assert running.text().startswith("Audit running")
    err = {"stage": "load", "type": "ParameterError", "message": "mode 'fast' is not accepted"}
    failed = Card({"error": err, "mode": "fast"})
    assert failed.state == "failed"
    assert failed.text().splitlines()[0] == ("FAILED load: ParameterError: mode 'fast' is not "
                                             "accepted")
    assert "<b>Failed:</b> load: ParameterError: mode &#39;fast&#39; is not accepted" \
        in failed.html()   # escaped


def test_progress_keeps_every_evaluation_and_draws_a_bar(capsys):
    progress = Progress(e_ref=-1.0, constant_ha=0.25, restarts=2, max_iterations=3,
                        label="H2", enabled=True)

    class Energy:
        calls = 0

        def __call__(self, p):
            self.calls += 1
            return -1.25 + p

    energy = progress.wrap(Energy())
    progress.start_restart(0)
    for p in (0.5, 0.1):
        energy(p)
    progress.start_restart(1)
    energy(0.001)
    progress.close(progress.ending(stopped_early=False))
    trace = progress.trace()
    assert trace["energies_ha"] == pytest.approx([-0.5, -0.9, -0.999])
    assert trace["restart_starts"] == [0, 2] and energy.calls == 3
    out = capsys.readouterr()
    # on stdout (JupyterLab draws stderr pink), ending full at its real end
    assert out.err == "" and out.out.endswith("\n")
    last = out.out.rstrip("\n").split("\r")[-1]
    assert last.startswith("H2: 100%") and " 3/3 " in last
    assert "3 evaluations of a budget of 6, restart 2/2, error 1 mHa]" in last
    assert json.dumps(trace)   # a record: plain JSON


def test_progress_ends_at_the_early_stop_not_at_a_fraction_of_the_budget(capsys):
    progress = Progress(e_ref=-1.0, constant_ha=0.0, restarts=10, max_iterations=500,
                        label="LiH", enabled=True)
    energy = progress.wrap(lambda p: -1.0 + p)
    progress.start_restart(0)
    for _ in range(1000 - 500):
        energy(0.1)
    progress.start_restart(1)
    for _ in range(500):
        energy(0.000001)
    progress.close(progress.ending(stopped_early=True))
    last = capsys.readouterr().out.rstrip("\n").split("\r")[-1]
    assert last.startswith("LiH: 100%") and " 1000/1000 " in last, last
    assert "early stop at evaluation 1000, restart 2/10, error 0.001 mHa]" in last


def test_progress_of_a_failed_run_stays_where_it_stopped(capsys):
    progress = Progress(e_ref=0.0, constant_ha=0.0, restarts=4, max_iterations=None,
                        label="H6", enabled=True)
    progress.adapt_step({"energy": 0.5, "nfev": 3})
    progress.close(None)
    last = capsys.readouterr().out.rstrip("\n").split("\r")[-1]
    assert last.startswith("H6:  25%") and "1/4" in last, last


def test_progress_off_by_environment(monkeypatch, capsys):
    monkeypatch.setenv("QENCODE_NB_PROGRESS", "0")
    progress = Progress(e_ref=0.0, constant_ha=0.0, restarts=1, max_iterations=10)
    progress.adapt_step({"energy": 0.001, "nfev": 5})
    progress.close()
    assert capsys.readouterr() == ("", "")
    assert progress.trace()["energies_ha"] == [0.001]
