"""Tier 1 with three states (issue 23, item 3): pass, incomplete, fail.

``incomplete``: a field QEncode schema 4.0.0 cannot record (early stop, run at the
generator's default with its source) or a field the mode does not exercise (the run
fields in replay mode); ``fail``: a declared value the re-run did not use, or a field
the schema records that the entry omits.  Checked on all 40 shared QEncode v4 entries
in-process, the way ``audit.ipynb`` builds the comparison
(:func:`qencode_nb.verdict.procedure.used` -> ``table`` -> ``tier``).

The stand-in: the stages' outputs are not run here (a rebuild, a problem and a
re-run of 40 entries take hours).  The rebuild's inputs are the real ones
(:func:`qencode_nb.hamiltonian.cache_key.key_material` of the entry: the dict the PySCF
build receives); the problem (Z2 sectors, ansatz, reps), the Hamiltonian check's
inferred source and the re-run configuration are stand-ins holding the values the
stages use when they follow the entry (the configuration keys as
:func:`qencode_nb.rerun.rerun.rerun` records them).  What is under test is the
comparison and the tier, not the stages.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import H2_JW_UCCSD, SHARED_DB
from qencode_nb.entry import fields
from qencode_nb.entry.lookup import load
from qencode_nb.hamiltonian.rebuild import Rebuilt
from qencode_nb.verdict import procedure

SHARED = sorted(SHARED_DB.glob("*.json"))


def stand_in_stages(entry):
    """``(rebuilt, hamiltonian, problem, rerun)`` as :func:`procedure.used` reads them,
    for an audit that follows the entry (see the module docstring)."""
    from qencode_nb.hamiltonian.cache import entry_fields
    from qencode_nb.hamiltonian.cache_key import key_material

    inputs = key_material(**entry_fields(entry), environment={})["problem"]
    rebuilt = Rebuilt(chemistry=SimpleNamespace(inputs=inputs), tapering=None)
    hamiltonian = SimpleNamespace(hamiltonian_source=entry.hamiltonian_source or "of_bridge",
                                  reason="stand-in: the declared source")
    adapt = entry.ansatz == "adapt"
    problem = SimpleNamespace(z2_sectors=list(entry.tapering_sectors), ansatz=entry.ansatz,
                              reps=entry.reps, hamiltonian_origin="stored", is_adapt=adapt)
    if adapt:
        config = {"optimizer": "adapt", "inner": entry.optimizer.inner,
                  "engine": entry.optimizer.engine,
                  "gradient_threshold": entry.adapt["gradient_threshold"],
                  "max_operators": entry.adapt["max_operators"],
                  "max_iterations": entry.max_iterations, "seed": entry.seed,
                  "early_stop": entry.early_stop, "backend": entry.backend}
    else:
        config = {"optimizer": entry.optimizer.name, "max_iterations": entry.max_iterations,
                  "restarts_requested": entry.restarts_requested, "seed": entry.seed,
                  "early_stop": entry.early_stop, "backend": entry.backend}
    return rebuilt, hamiltonian, problem, SimpleNamespace(config=config)


def test_the_shared_database_has_40_entries():
    assert len(SHARED) == 40


@pytest.mark.parametrize("path", SHARED, ids=[p.name.split("_v4")[0] for p in SHARED])
def test_early_stop_alone_makes_tier1_incomplete_not_fail(path):
    """Every shared entry leaves out early stop only (schema 4.0.0 cannot record it):
    tier 1 is ``incomplete`` in full and in replay mode, never ``fail``; the early-stop
    row says why in full, with the generator default and its source."""
    entry = load(path)
    assert set(entry.undeclared) == {"early_stop"}
    rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
    full = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full")
    rows = {r["field"]: r for r in full.fields}
    not_equal = {n: r for n, r in rows.items() if r["status"] != "equal"}
    if entry.ansatz == "adapt":     # the generator's ADAPT runs once
        assert not_equal.pop("restarts_requested")["effect"] == "pass"
    assert list(not_equal) == ["early_stop"], not_equal
    es = not_equal["early_stop"]
    assert es["status"] == "undeclared" and es["effect"] == "incomplete"
    assert es["reason"] == (
        "undeclared (QEncode schema 4.0.0 cannot record it): the generator default True was "
        "used (" + fields.default("early_stop")[1] + ")")
    assert full.tier == {"status": "incomplete", "reasons": ["early_stop " + es["reason"]]}

    replay = procedure.evaluate(entry, rebuilt, hamiltonian, problem, None, "replay")
    assert replay.tier["status"] == "incomplete"
    run_rows = [r for r in replay.fields if r["field"] in fields.RUN_FIELDS]
    assert all(r["effect"] == "incomplete" and r["reason"] for r in run_rows
               if r["status"] != "not used")
    assert replay.tier["reasons"][-1].startswith("not exercised without a re-run: ")


def test_a_declared_value_not_used_and_an_omitted_recordable_field_fail():
    """``fail`` beats ``incomplete``: a used value other than the declared one, and a
    field schema 4.0.0 records (run_config.seed) that the entry leaves out."""
    entry = load(H2_JW_UCCSD)
    rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
    rerun.config["max_iterations"] = 499
    p = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full")
    row = next(r for r in p.fields if r["field"] == "max_iterations")
    assert (row["status"], row["effect"]) == ("differs", "fail")
    assert row["reason"] == "declared 500, used 499 (re-run configuration)"
    assert p.tier["status"] == "fail"
    assert p.tier["reasons"][0] == "max_iterations: declared 500, re-run used 499"
    assert p.tier["reasons"][1].startswith("early_stop undeclared (QEncode schema 4.0.0")

    entry.undeclared["seed"] = {"used": 42, "source": "run_config.seed missing; generator "
                                                      "default --seed 42"}
    rerun.config["max_iterations"] = 500
    p = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full")
    row = next(r for r in p.fields if r["field"] == "seed")
    assert (row["status"], row["effect"]) == ("undeclared", "fail")
    assert row["reason"] == ("undeclared: the entry omits run_config.seed, which the schema "
                             "records; the re-run used 42 (run_config.seed missing; "
                             "generator default --seed 42)")
    assert p.tier["status"] == "fail"
    # in replay mode the omission still fails: it is the entry's, not the mode's
    p = procedure.evaluate(entry, rebuilt, hamiltonian, problem, None, "replay")
    assert p.tier["status"] == "fail"
    assert p.tier["reasons"][0].startswith("seed undeclared: re-run used None (not exercised")


def test_every_field_declared_and_used_passes():
    entry = load(H2_JW_UCCSD)
    entry.undeclared.clear()         # as if early stop were declared
    rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
    p = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full")
    assert p.tier == {"status": "pass", "reasons": ["every procedure field declared and equal"]}
    assert all(r["effect"] == "pass" and r["reason"] is None for r in p.fields)


def test_a_yaml_entry_says_where_it_may_declare_early_stop(tmp_path):
    """A params YAML outside params/ (it states its facts alone) without run.early_stop."""
    from conftest import ROOT

    own = tmp_path / "lih.yaml"
    own.write_text((ROOT / "params" / "lih.yaml").read_text())
    entry = load(own)
    assert entry.kind == "params-yaml" and "early_stop" in entry.undeclared
    rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
    p = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full")
    assert p.tier["status"] == "incomplete"
    row = next(r for r in p.fields if r["field"] == "early_stop")
    assert "a params/ YAML declares it as run.early_stop" in row["reason"]


def test_the_tier1_table_shows_every_reason_in_full_and_highlighted():
    """The notebook's table (Tier1Table): no cut at pandas' 50 characters; every row
    that is not equal highlighted by its effect (fail red, incomplete amber)."""
    from bs4 import BeautifulSoup

    from qencode_nb.verdict.tier1_table import HIGHLIGHT, Tier1Table

    entry = load(H2_JW_UCCSD)
    rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
    rerun.config["backend"] = "lightning.qubit"
    rows = procedure.evaluate(entry, rebuilt, hamiltonian, problem, rerun, "full").fields
    table = Tier1Table(rows)
    soup = BeautifulSoup(table.html(), "html.parser")
    trs = {tr["data-field"]: tr for tr in soup.select("table.qnb-tier1 tbody tr")}
    assert list(trs) == [r["field"] for r in rows]
    es = next(r for r in rows if r["field"] == "early_stop")
    assert len(es["reason"]) > 200
    assert trs["early_stop"].select_one("td.qnb-reason").get_text() == es["reason"]
    assert trs["early_stop"]["data-effect"] == "incomplete"
    assert HIGHLIGHT["incomplete"][0] in trs["early_stop"]["style"]
    assert trs["backend"]["data-effect"] == "fail"
    assert HIGHLIGHT["fail"][0] in trs["backend"]["style"]
    assert trs["backend"].select_one("td.qnb-reason").get_text() == (
        "declared 'default.qubit', used 'lightning.qubit' (re-run configuration)")
    assert "background" not in trs["basis"]["style"]          # equal: not highlighted
    text = table.text()
    assert f"-> INCOMPLETE: {es['reason']}" in text
    assert "-> FAIL: declared 'default.qubit', used 'lightning.qubit'" in text
    assert text.count("->") == 2




@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize("path", SHARED, ids=[p.name.split("_v4")[0] for p in SHARED])
def test_tier1_of_each_shared_entry_with_the_real_stages(path):
    """The stages themselves (rebuild through the disk cache, the Hamiltonian check,
    the problem), only the re-run's configuration a stand-in (the values rerun()
    passes to the optimiser): tier 1 reads ``incomplete`` in full and replay mode.
    Measured on 2 shared cores: 113 s for the 40 with a warm cache; a cold cache adds
    the rebuilds (about 15 min here: benzene's CASSCF 4.5 min, H8 and H10 several
    minutes each)."""
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem

    entry = load(path)
    rebuilt = rebuild(entry)
    ham = hamiltonian_check(entry, rebuilt)
    problem = build_problem(entry, rebuilt, None, ham, rerun=False)
    _, _, _, rerun = stand_in_stages(entry)
    for mode, run in (("full", rerun), ("replay", None)):
        p = procedure.evaluate(entry, rebuilt, ham, problem, run, mode)
        failing = [r for r in p.fields if r["effect"] == "fail"]
        assert p.tier["status"] == "incomplete", (mode, failing)


def test_an_own_yaml_that_leaves_out_backend_and_source_is_incomplete(tmp_path):
    """Issue 23, item 7: a YAML entry of one's own needs only the procedure; leaving out
    ``run.backend`` and ``encoding.hamiltonian_source`` (params/bh.yaml without them)
    makes tier 1 ``incomplete`` (the generator defaults, named), not ``fail``."""
    from conftest import ROOT

    text = (ROOT / "params" / "bh.yaml").read_text()
    text = text.replace("  hamiltonian_source: of_bridge   # optional (the generator's "
                        "default); the rebuild's path\n", "")
    text = text.replace("backend: default.qubit,\n  early_stop: true}",
                        "early_stop: true}")
    path = tmp_path / "bh_minimal.yaml"
    path.write_text(text)
    entry = load(path)
    assert entry.is_own and {"backend", "hamiltonian_source"} <= set(entry.undeclared)
    for mode in ("full", "replay"):
        rebuilt, hamiltonian, problem, rerun = stand_in_stages(entry)
        p = procedure.evaluate(entry, rebuilt, hamiltonian, problem,
                               rerun if mode == "full" else None, mode)
        rows = {r["field"]: r for r in p.fields}
        assert p.tier["status"] == "incomplete", (mode, p.tier)
        for name in ("backend", "hamiltonian_source"):
            assert rows[name]["effect"] == "incomplete", rows[name]
            assert "a YAML entry of one's own may leave" in rows[name]["reason"]
