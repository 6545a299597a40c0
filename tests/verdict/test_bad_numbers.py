"""Checks that fail on a non-finite or contradictory number (issue 23, item 2).

Real entries (LiH PAR/HEA, H2 JW/UCCSD from ../shared/qencode-v4/db) edited and
re-sealed with QEncode's hash rule (:func:`qencode_nb.entry.hashing.qencode_sha256`),
so integrity passes and only the edit is under test.  Each is audited with the
audit's own functions (rebuild, Hamiltonian check, problem, replay, the real re-run
of H2, procedure, verdict) and the records and the card's text are checked: every
check that reads the bad number fails naming the field and the value, and the
headline never quotes a number a failed check contradicts.  One real notebook run
(LiH in replay mode) checks the executed notebook's records and card.

Energies in Ha.  The published LiH PAR/HEA error is 5.181379 mHa
(``results.quality.abs_vqe_exact_gap`` 0.005181378991047758 Ha).
"""

from __future__ import annotations

import json
import math
import re

import pytest

from conftest import AUDIT_NB, H2_JW_UCCSD, LIH_PAR_HEA, reseal
from qencode_nb.entry import load
from qencode_nb.verdict.card import Card

PUBLISHED = "5.181379"          # LiH PAR/HEA published error, mHa, as the card prints it
E_PUB = "results.vqe.best_energy_hartree"
GAP = "results.quality.abs_vqe_exact_gap"
E_EXACT = "results.reference.exact_qubit_ground_energy_hartree"


def audit(path, mode: str) -> dict:
    """The audit notebook's stages in-process, as its cells call them: the records
    ``{name: value}`` an audit writes (those the card reads)."""
    from qencode_nb.notebook import provenance
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.rerun import rerun
    from qencode_nb.verdict import procedure, tiers
    from qencode_nb.trust.integrity import integrity
    from qencode_nb.rerun.replay import replay

    e = load(path)
    rebuilt = rebuild(e)
    ham = hamiltonian_check(e, rebuilt)
    problem = build_problem(e, rebuilt, None, ham, rerun=mode != "replay")
    rep = replay(e, problem)
    run = rerun(e, problem) if mode == "full" else None
    integ = integrity(e)
    proc = procedure.evaluate(e, rebuilt, ham, problem, run, mode)
    v = tiers.verdict(e, rerun=run, provenance=provenance.collect(e.tool_versions),
                      blas_threads=1, integrity=integ, replay=rep, procedure=proc,
                      hamiltonian=ham, mode=mode)
    return {"entry_id": e.entry_id, "mode": mode, "integrity": integ.to_record(),
            "hamiltonian": ham.to_record(), "replay": rep.to_record(), "fields": proc.fields,
            "rerun_energy": None if run is None else run.energy, **v.to_record()}


def headline(records) -> str:
    return Card(records).facts()["headline"]


def test_nan_published_energy_fails_each_check_that_reads_it(tmp_path):
    """LiH PAR/HEA with its published energy NaN, re-sealed, in replay mode: the
    consistency check fails naming the field (it passed with a NaN recomputed gap),
    the replay fails naming it, and neither headline nor verdict line quotes the
    published error of 5.181379 mHa."""
    path = reseal(tmp_path, LIH_PAR_HEA,
                  lambda raw: raw["results"]["vqe"].update(best_energy_hartree=float("nan")),
                  "lih_nan")
    r = audit(path, "replay")
    assert r["integrity"]["status"] == "pass"
    cons = r["consistency"]
    assert cons["status"] == "fail"
    assert math.isnan(cons["published_gap_recomputed"])
    assert cons["reasons"][0].startswith(f"{E_PUB} is nan (accepted: a finite number, Ha)")
    assert {"published_error_mha", "margin_published", "published_certified"} <= \
        set(cons["contradicts"])
    assert r["replay"]["status"] == "fail"
    assert r["replay"]["reason"].startswith(f"{E_PUB} is nan: the replayed energy "
                                            "-7.97859159797")
    assert any(a.startswith("INCONSISTENT: " + E_PUB + " is nan") for a in r["alerts"])
    assert any(a.startswith("REPLAY FAIL (" + E_PUB + " is nan") for a in r["alerts"])
    head = headline(r)
    assert PUBLISHED not in head and "published certified" not in head
    assert head.startswith("ALERTS (2: see below); no re-run (mode=replay); not quoted: "
                           f"{E_PUB} is nan")
    assert PUBLISHED not in r["verdict"] and f"not quoted: {E_PUB} is nan" in r["verdict"]
    assert head in r["verdict"], "the verdict record says the card's own headline"
    errors = dict((label, (err, mar)) for label, err, mar in Card(r).facts()["errors"])
    assert errors["published"] == ("not quoted", "not quoted")
    assert r["tiers"]["procedure"]["status"] == "incomplete"


def test_nan_published_energy_fails_tier3_with_a_real_rerun(tmp_path):
    """H2 JW/UCCSD, published energy NaN, full mode with the real re-run: tier 3
    fails naming the field (it reads the published energy); tier 2 does not read it
    and passes; the headline quotes the regenerated error, not the published one."""
    path = reseal(tmp_path, H2_JW_UCCSD,
                  lambda raw: raw["results"]["vqe"].update(best_energy_hartree=float("nan")),
                  "h2_nan")
    r = audit(path, "full")
    t3 = r["tiers"]["bit_identical"]
    assert t3["status"] == "fail"
    assert t3["reasons"][0] == (f"{E_PUB} is nan: no energy can equal it bit for bit (a "
                                "finite number is accepted)")
    assert r["difference"]["ulps"] is None
    assert r["tiers"]["certification"]["status"] == "pass"
    assert r["certification_change"] is None      # the published flag is contradicted
    head = headline(r)
    assert head.startswith("ALERTS (2: see below); certified; regenerated error ")
    assert "(threshold 10)" in head and "published " not in head.split("; not quoted")[0]
    assert f"not quoted: {E_PUB} is nan" in head
    # nan is never quoted as a difference (a new user's finding: "+nan Ha")
    assert "nan Ha" not in r["verdict"] and all("nan Ha" not in x for x in t3["reasons"])
    assert "not compared with the published energy" in r["verdict"]


def test_nan_exact_ground_energy_fails_tier2_naming_the_field(tmp_path):
    """The exact qubit ground energy NaN: no error can be computed against it, so
    tier 2 fails naming the field and certification is not decided; no error is
    quoted in the headline."""
    path = reseal(tmp_path, H2_JW_UCCSD,
                  lambda raw: raw["results"]["reference"].update(
                      exact_qubit_ground_energy_hartree=float("nan")), "h2_exact_nan")
    r = audit(path, "full")
    t2 = r["tiers"]["certification"]
    assert t2["status"] == "fail"
    assert t2["reasons"][0].startswith(f"{E_EXACT} is nan (accepted: a finite number, Ha)")
    assert t2["reasons"][-1].startswith("regenerated error nan mHa against threshold")
    assert r["certified"] is None and r["fragile"] is None
    head = headline(r)
    assert "certification not decided" in head and "regenerated error" not in head
    assert "nan" not in head.split("; not quoted")[0]
    assert f"not quoted: {E_EXACT} is nan" in head


def test_a_contradictory_gap_is_named_and_not_quoted(tmp_path):
    """The stated gap 4 mHa where |E_vqe - E_exact| is 5.181379 mHa: the consistency
    check fails naming the field and both values; the card does not quote 4 mHa."""
    path = reseal(tmp_path, LIH_PAR_HEA,
                  lambda raw: raw["results"]["quality"].update(abs_vqe_exact_gap=0.004),
                  "lih_gap")
    r = audit(path, "replay")
    cons = r["consistency"]
    assert cons["status"] == "fail" and r["replay"]["status"] == "pass"
    assert cons["reasons"] == [f"stated published error {GAP} = 4.000000000e-03 Ha but "
                               "|E_published - E_exact| = 5.181378991e-03 Ha"]
    assert cons["published_gap_recomputed"] == pytest.approx(0.005181378991047758, abs=1e-15)
    gap = next(c for c in cons["checks"] if c["check"] == "gap")
    assert gap["status"] == "fail" and GAP in gap["fields"]
    head = headline(r)
    # the certification flag rests on the contradicted gap: not quoted either
    assert head.startswith("ALERTS (1: see below); no re-run (mode=replay); not quoted: ")
    quoted = head.split("; not quoted: ")[0]
    assert "published error" not in quoted and "4.000000" not in quoted
    assert f"not quoted: stated published error {GAP} = 4.000000000e-03 Ha" in head
    assert f"no re-run (mode=replay); not quoted: stated published error {GAP}" \
        in r["verdict"]


def test_a_certification_flag_against_its_own_gap_fails(tmp_path):
    """``trusted`` false while the stated gap is below the threshold."""
    path = reseal(tmp_path, LIH_PAR_HEA,
                  lambda raw: raw["results"]["quality"].update(trusted=False), "lih_flag")
    from qencode_nb.verdict.consistency import consistency

    cons = consistency(load(path))
    assert cons["status"] == "fail"
    assert cons["reasons"] == ["results.quality.trusted is False but the stated published "
                               "error 5.181379 mHa is below the threshold 10 mHa"]
    assert list(cons["contradicts"]) == ["published_certified"]


def test_a_reference_above_hartree_fock_and_a_nan_casci_fail(tmp_path):
    def edit(raw):
        ref = raw["results"]["reference"]
        ref["casci_ground_energy_hartree"] = float("nan")
        ref["hf_energy_hartree"] = ref["exact_qubit_ground_energy_hartree"] - 0.001

    from qencode_nb.verdict.consistency import consistency

    cons = consistency(load(reseal(tmp_path, LIH_PAR_HEA, edit, "lih_refs")))
    assert cons["reasons"][0].startswith("results.reference.casci_ground_energy_hartree is "
                                         "nan (accepted: a finite number, Ha); the re-run's "
                                         "early-stop target")
    assert cons["reasons"][1].startswith(f"{E_EXACT} = -7.983772976961 Ha lies 1.000e-03 Ha "
                                         "above the Hartree-Fock energy "
                                         "results.reference.hf_energy_hartree")
    assert len(cons["reasons"]) == 2


def test_a_nan_parameter_fails_the_replay_naming_the_element(tmp_path):
    def edit(raw):
        raw["results"]["vqe"]["optimal_params"][3] = float("nan")

    r = audit(reseal(tmp_path, LIH_PAR_HEA, edit, "lih_param"), "replay")
    assert r["replay"]["status"] == "fail"
    assert r["replay"]["reason"] == ("results.vqe.optimal_params[3] is nan (1 of 15 not "
                                     "finite); accepted: finite numbers (radians)")
    assert any(a == "REPLAY FAIL (" + r["replay"]["reason"] + ")" for a in r["alerts"])
    head = headline(r)
    assert PUBLISHED not in head
    assert "not quoted: the replay fails (results.vqe.optimal_params[3] is nan" in head
    assert r["consistency"]["status"] == "pass"


def test_a_yaml_entry_is_named_by_its_own_fields(tmp_path):
    """A params YAML of one's own with ``published.energy_ha: .nan``: the reasons name
    the YAML's field."""
    from conftest import ROOT
    from qencode_nb.verdict.consistency import consistency

    text = (ROOT / "params" / "lih.yaml").read_text()
    own = tmp_path / "lih.yaml"
    own.write_text(text.replace("energy_ha: -7.978591597970441", "energy_ha: .nan"))
    e = load(own)
    assert e.kind == "params-yaml" and math.isnan(e.published_energy)
    cons = consistency(e)
    assert cons["reasons"][0].startswith("published.energy_ha is nan")


@pytest.mark.notebook
def test_a_nan_published_energy_audit_notebook_says_what_is_wrong(tmp_path):
    """A real notebook run (LiH, replay mode) of the re-sealed NaN entry: it completes,
    its records and its card (read back from the executed notebook, and the card
    output itself) say what is wrong and quote no published error."""
    import nbformat

    from qencode_nb.notebook.record import read_records
    from qencode_nb.executor.execute import run_notebook

    path = reseal(tmp_path, LIH_PAR_HEA,
                  lambda raw: raw["results"]["vqe"].update(best_energy_hartree=float("nan")),
                  "lih_nan")
    out = tmp_path / "lih_nan.ipynb"
    r = run_notebook(AUDIT_NB, out, {"entry": str(path), "mode": "replay"})
    assert r["done"] is True and r["integrity"]["status"] == "pass"
    assert r["consistency"]["status"] == "fail"
    assert r["consistency"]["reasons"][0].startswith(f"{E_PUB} is nan")
    assert r["replay"]["status"] == "fail" and E_PUB in r["replay"]["reason"]
    card = Card(read_records(out))
    assert card.state == "done"
    head = card.facts()["headline"]
    assert PUBLISHED not in head and f"not quoted: {E_PUB} is nan" in head
    nb = nbformat.read(str(out), as_version=4)
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if (o.get("metadata") or {}).get("transient", {}).get("display_id")
             == "qnb-verdict-card" or "qnb-card" in str((o.get("data") or {}).get("text/html"))]
    html = str(shown[0]["data"]["text/html"])
    assert PUBLISHED not in html.split("qnb-tier")[0]
    assert "is nan" in html
    # the report of the folder counts tier 1 as incomplete, amber (issue 23, item 3)
    from bs4 import BeautifulSoup

    from qencode_nb.readout.report import write_report

    report = write_report(tmp_path, tmp_path / "site" / "report.html", notebooks=False)
    soup = BeautifulSoup(report.path.read_text(encoding="utf-8"), "html.parser")
    summary = soup.select_one("#qnb-summary").get_text(" ", strip=True)
    assert "tiers (pass/incomplete/fail/n/a): procedure 0/1/0/0" in summary
    badge = soup.select_one('td[data-key="tier_procedure"] span.badge')
    assert badge.get_text() == "incomplete" and "b-warn" in badge["class"]
    # ... shows the consistency failure and the alerts, and quotes no contradicted
    # number (a new user's finding: the published error was shown as a number)
    cell = soup.select_one('td[data-key="published_error_mha"]')
    assert cell.get_text(strip=True) == "not quoted" and E_PUB in cell["title"]
    for key in ("consistency", "alerts"):
        badge = soup.select_one(f'td[data-key="{key}"] span.badge')
        assert badge.get_text() == "fail" and "b-bad" in badge["class"], key
    assert "INCONSISTENT" in soup.select_one('td[data-key="alerts"] span.badge')["title"]


@pytest.mark.parametrize("attr,field,delta", [
    ("exact_qubit_ground_energy_hartree", E_EXACT, -1.2e-3),
    ("casci_ground_energy_hartree", "results.reference.casci_ground_energy_hartree", 1e-4),
    ("hf_energy_hartree", "results.reference.hf_energy_hartree", 0.05)])
def test_a_re_sealed_reference_energy_is_contradicted_by_the_rebuild(tmp_path, attr,
                                                                    field, delta):
    """A new user's attack (issue 23 review): LiH PAR/HEA with a reference energy moved
    and, for the exact one, the stated gap restated to match, re-sealed.  The stored
    terms still equal the of_bridge rebuild, so the Hamiltonian check passes; the
    consistency check compares the recorded energy with the recomputed one and fails
    naming the field (an alert), and the moved published error is not quoted."""
    def edit(raw):
        ref = raw["results"]["reference"]
        ref[attr] += delta
        if attr == "exact_qubit_ground_energy_hartree":
            raw["results"]["quality"]["abs_vqe_exact_gap"] = abs(
                raw["results"]["vqe"]["best_energy_hartree"] - ref[attr])

    r = audit(reseal(tmp_path, LIH_PAR_HEA, edit, "ref"), "replay")
    assert r["integrity"]["status"] == "pass" and r["hamiltonian"]["status"] == "pass"
    failed = [c for c in r["consistency"]["checks"] if c["status"] == "fail"]
    assert [c["check"] for c in failed] == ["rebuilt"], failed
    assert field in failed[0]["reason"] and f"{delta:+.3e} Ha" in failed[0]["reason"]
    assert any(a.startswith("INCONSISTENT") and field in a for a in r["alerts"])
    if attr == "exact_qubit_ground_energy_hartree":
        assert "6.381379" not in headline(r) and "not quoted" in headline(r)


@pytest.mark.parametrize("active_space,why", [
    ((2, 12), "5 core + 12 active orbitals exceed the basis's 10"),
    ((14, 8), "14 active electrons but the molecule has 12"),
    ((3, 3), "leaves an odd number for the doubly occupied core")])
def test_an_active_space_that_does_not_fit_names_the_field(active_space, why):
    """NaH STO-3G (12 electrons, 10 orbitals): PySCF's CASCI only asserts (an empty
    AssertionError); the rebuild refuses first, naming problem.active_space."""
    from qencode_nb.errors import EntryError
    from qencode_nb.hamiltonian.chemistry import run_chemistry

    with pytest.raises(EntryError, match="field problem.active_space: .*" + re.escape(why)):
        run_chemistry("Na 0 0 0; H 0 0 1.9", "sto-3g", 0, 0, *active_space, "hf")


def test_early_stopped_false_against_fewer_restarts_fails(tmp_path):
    """LiH PAR/HEA ran 2 of 10 restarts (early stop); re-sealed with
    run_config.early_stopped False, the record contradicts itself (a new user's
    finding: it passed silently)."""
    from qencode_nb.verdict.consistency import consistency

    path = reseal(tmp_path, LIH_PAR_HEA,
                  lambda raw: raw["run_config"].update(early_stopped=False), "lih_es")
    c = consistency(load(path))
    assert c["status"] == "fail"
    assert c["reasons"] == ["run_config.early_stopped is False but 2 of 10 restarts ran "
                            "(the generator's restart loop ends early only by early stop)"]
    assert consistency(load(LIH_PAR_HEA))["status"] == "pass"
