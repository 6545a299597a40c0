"""The verdict's three tiers on real entries: tier 1 field by field, budgets
honoured (checked by the recorded re-run configuration and nfev), tier 3 on the
reference environment, and bad input that must end in a clear reason.

Energies in Ha.  Reference values: the published entries in ../shared/qencode-v4/db
(QEncode v4.4), reproduced bit-for-bit by QEncode's own generator on this kind of
machine at 1 BLAS thread (issue 4: H4 JW/UCCSD E = -2.184009879684204, nfev 1000).
"""

from __future__ import annotations

import json

import pytest

from conftest import (AUDIT_NB, H2_JW_UCCSD, LIH_PAR_HEA, SHARED_DB, TEST_PROFILE, by_profile,
                      cobyla_path_checks, reseal)
from qencode_nb.notebook.stages import check_strict
from qencode_nb import entry as entries
from qencode_nb.entry import fields
from qencode_nb.verdict import procedure
from qencode_nb.notebook import provenance
from qencode_nb.errors import RunFailed, StrictRefused
from qencode_nb.notebook.record import read_records
from qencode_nb.executor.execute import run_notebook

H4_UCCSD = SHARED_DB / "H4_ccpvdz_JW_UCCSD_v4_tapered__sha256_7606caf47ff39f40.json"
N2_UCCSD = next(SHARED_DB.glob("N2_ccpvdz_JW_UCCSD_v4_casscf_tapered__sha256_*.json"))
EXPECTED_FIELDS = ["geometry", "basis", "charge", "spin", "active_space",
                   "orbital_optimization", "mapping", "tapering_sectors", "hamiltonian_source",
                   "ansatz", "optimizer", "max_iterations", "restarts_requested", "early_stop",
                   "seed", "backend"]


def run(tmp_path, entry, name, **params):
    return run_notebook(AUDIT_NB, tmp_path / f"{name}.ipynb", {"entry": str(entry), **params})


@pytest.mark.hostkind
@pytest.mark.notebook
def test_tier1_table_field_by_field_on_a_real_entry(tmp_path):
    r = run(tmp_path, H2_JW_UCCSD, "h2")
    rows = {f["field"]: f for f in r["fields"]}
    assert list(rows) == EXPECTED_FIELDS          # uccsd: no reps, no ADAPT settings
    assert rows["early_stop"]["status"] == "undeclared"
    assert rows["early_stop"]["effect"] == "incomplete"     # schema 4.0.0 cannot record it
    assert rows["early_stop"]["used"] is True and rows["early_stop"]["declared"] is None
    assert "--no-early-stop" in rows["early_stop"]["source"]
    assert "run_config.early_stopped" in rows["early_stop"]["source"]
    assert rows["early_stop"]["reason"].startswith(
        "undeclared (QEncode schema 4.0.0 cannot record it): the generator default True was "
        "used (generator default: early stop on unless --no-early-stop")
    others = [f for name, f in rows.items() if name != "early_stop"]
    assert all(f["status"] == "equal" and f["declared"] == f["used"] for f in others), others
    assert rows["max_iterations"] == {
        "field": "max_iterations", "declared_in": "run_config.max_iterations",
        "declared": 500, "used": 500, "source": "re-run configuration", "status": "equal",
        "effect": "pass", "reason": None}
    assert rows["geometry"]["source"] == "PySCF rebuild input"
    assert rows["hamiltonian_source"]["used"] == "of_bridge"
    tier = r["tiers"]["procedure"]
    assert tier["status"] == "incomplete" and len(tier["reasons"]) == 1
    assert tier["reasons"][0].startswith("early_stop undeclared (QEncode schema 4.0.0 cannot "
                                         "record it): the generator default True was used")
    # tier 3 is claimed under the reference kernel triple only (n/a elsewhere)
    t3 = by_profile({"reference": "pass", "portable": "n/a"})
    assert f"procedure incomplete, certification pass, bit-identical {t3}" in r["verdict"]


def test_tier1_names_a_field_the_rerun_did_not_use():
    """The comparison itself: a used value other than the declared one fails tier 1."""
    entry = entries.load(H2_JW_UCCSD)
    used = {f: {"value": v, "source": "test"} for f, v in fields.declared(entry).items()}
    used["early_stop"] = {"value": True, "source": "test"}
    entry.undeclared.clear()
    rows = procedure.table(entry, used)
    assert procedure.tier(rows)["status"] == "pass"
    used["max_iterations"] = {"value": 500, "source": "a re-run script with a fixed cap"}
    entry.max_iterations = 1000
    tier = procedure.tier(procedure.table(entry, used))
    assert tier == {"status": "fail",
                    "reasons": ["max_iterations: declared 1000, re-run used 500"]}


@pytest.mark.notebook
def test_hea_and_adapt_rows_and_replay_mode_is_not_a_pass(tmp_path):
    lih = entries.load(LIH_PAR_HEA)
    assert [f.name for f in fields.FIELDS if fields.applies(f, lih)].count("reps") == 1
    h4a = SHARED_DB / "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json"
    r = run(tmp_path, h4a, "h4a", mode="replay")
    rows = {f["field"]: f for f in r["fields"]}
    assert {"adapt.gradient_threshold", "adapt.max_operators", "adapt.inner_optimizer",
            "adapt.engine"} <= set(rows)
    assert rows["adapt.gradient_threshold"]["declared"] == 1e-3
    assert rows["adapt.max_operators"]["declared"] == 50
    assert rows["max_iterations"]["status"] == "not run"
    assert rows["max_iterations"]["effect"] == "incomplete"
    assert rows["ansatz"]["status"] == "equal"
    # early stop undeclared (schema 4.0.0 cannot record it) and the run fields not
    # exercised: incomplete, never a pass and no longer a fail
    assert r["tiers"]["procedure"]["status"] == "incomplete"
    assert any(x.startswith("not exercised without a re-run: adapt.gradient_threshold")
               for x in r["tiers"]["procedure"]["reasons"])
    assert r["tiers"]["certification"]["status"] == "n/a"


@pytest.mark.notebook
def test_missing_max_iterations_is_undeclared_and_run_at_the_generator_default(tmp_path):
    path = reseal(tmp_path, H2_JW_UCCSD,
                   lambda raw: raw["run_config"].pop("max_iterations"), "nomaxiter")
    r = run(tmp_path, path, "nomaxiter")
    assert r["integrity"]["status"] == "pass"
    assert r["rerun"]["config"]["max_iterations"] == 500
    row = next(f for f in r["fields"] if f["field"] == "max_iterations")
    assert row["status"] == "undeclared" and row["declared"] is None and row["used"] == 500
    assert row["effect"] == "fail"       # schema 4.0.0 records it; the entry omits it
    assert row["source"] == ("run_config.max_iterations missing; generator default "
                             "--max-iter 500")
    assert r["tiers"]["procedure"]["status"] == "fail"
    assert any(x.startswith("max_iterations undeclared: re-run used 500")
               for x in r["tiers"]["procedure"]["reasons"])


@pytest.mark.notebook
def test_pins_naming_a_package_that_is_not_installed(tmp_path):
    """Tier 3 n/a with the package as have/want; the measured difference is still
    recorded; strict=True refuses to run at all."""
    def add_pin(raw):
        raw["provenance"]["tool_versions"]["qiskit-nature"] = "0.7.2"

    path = reseal(tmp_path, H2_JW_UCCSD, add_pin, "pins")
    r = run(tmp_path, path, "pins")
    t3 = r["tiers"]["bit_identical"]
    assert t3["status"] == "n/a"
    assert "qiskit-nature not installed (want 0.7.2)" in t3["reasons"][0]
    assert any(x.startswith("OpenBLAS kernels: numpy ") and "reference triple: numpy SkylakeX, "
               "scipy SkylakeX, pyscf Prescott" in x for x in t3["reasons"])
    d = r["difference"]
    assert {"delta_ha", "ulps", "energy_hex", "published_hex"} <= set(d)
    assert any(x.startswith("measured: re-run ") for x in t3["reasons"])
    with pytest.raises(RunFailed, match="strict=True refuses to run"):
        run(tmp_path, path, "pins_strict", strict=True)
    err = read_records(tmp_path / "pins_strict.ipynb")["error"]
    assert err["stage"] == "strict" and err["type"] == "StrictRefused"
    assert "qiskit-nature not installed (want 0.7.2)" in err["message"]


def test_strict_refuses_threads_and_drift_and_lists_every_reason():
    prov = provenance.collect({"numpy": "1.0.0", "python": "3.11.15"})
    with pytest.raises(StrictRefused) as exc:
        check_strict(prov, blas_threads=2)
    msg = str(exc.value)
    assert "numpy " in msg and "(want 1.0.0)" in msg and "2 BLAS threads measured" in msg
    assert "python" not in msg.split("environment drift:")[1].split(";")[0]


def test_python_is_compared_on_major_minor_as_requirements_v4_pins_it():
    drift = provenance.version_drift({"python": "3.11.15", "pyscf": "2.6.2"})
    assert drift["python"]["match"] is True
    assert provenance.version_drift({"python": "3.12.0"})["python"]["match"] is False


@pytest.mark.bitlevel
@pytest.mark.notebook
def test_h4_jw_uccsd_runs_its_1000_iterations_and_is_bit_identical(tmp_path):
    """Budget 1000 (not the generator's 500) and tier 3 on the reference environment:
    under the reference kernel triple the published energy to the last bit; under
    portable COBYLA's 1000 steps end 0.95 mHa lower, tier 3 n/a (not the reference
    triple), the difference measured."""
    r = run(tmp_path, H4_UCCSD, "h4", mode="rerun")
    rerun = r["rerun"]
    assert rerun["config"]["max_iterations"] == 1000
    assert rerun["config"]["restarts_requested"] == 3
    assert rerun["nfev"] == rerun["published"]["nfev"] == 1000
    assert rerun["energy_calls"] == rerun["nfev"] + cobyla_path_checks(rerun)
    assert rerun["restarts_run"] == 1 and rerun["stopped_early"] is True
    assert r["rerun_energy"] == by_profile({"reference": -2.184009879684204,
                                            "portable": -2.1849593925930377})
    t3 = r["tiers"]["bit_identical"]
    if TEST_PROFILE == "reference":
        assert t3["status"] == "pass", t3
    else:
        assert t3["status"] == "n/a" and any("not the reference kernel triple (numpy Haswell, "
                                             "scipy Haswell, pyscf Prescott)" in x
                                             for x in t3["reasons"]), t3
        assert any("reference triple: numpy SkylakeX, scipy SkylakeX, pyscf Prescott" in x
                   for x in t3["reasons"]), t3
    row = next(f for f in r["fields"] if f["field"] == "max_iterations")
    assert row["status"] == "equal" and row["used"] == 1000


@pytest.mark.notebook
def test_a_lih_variant_set_to_1200_iterations_runs_past_500(tmp_path):
    """LiH PAR/HEA hit the cap of 500 in both published restarts (nfev 1000); at
    1200 the re-run must be allowed past 500 in a restart and never past 1200."""
    path = reseal(tmp_path, LIH_PAR_HEA,
                   lambda raw: raw["run_config"].update(max_iterations=1200), "lih1200")
    r = run(tmp_path, path, "lih1200", mode="rerun")
    rerun = r["rerun"]
    assert rerun["config"]["max_iterations"] == 1200
    assert max(rerun["restart_nfev"]) > 500 and max(rerun["restart_nfev"]) <= 1200
    assert rerun["nfev"] == sum(rerun["restart_nfev"])
    assert rerun["energy_calls"] == rerun["nfev"] + cobyla_path_checks(rerun)
    row = next(f for f in r["fields"] if f["field"] == "max_iterations")
    assert row == {"field": "max_iterations", "declared_in": "run_config.max_iterations",
                   "declared": 1200, "used": 1200, "source": "re-run configuration",
                   "status": "equal", "effect": "pass", "reason": None}


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.notebook
def test_n2_jw_uccsd_runs_its_10000_iterations(tmp_path):
    """N2 JW/UCCSD re-runs 10000 COBYLA steps of a 404-parameter circuit on
    default.qubit (~2 h)."""
    r = run(tmp_path, N2_UCCSD, "n2", mode="rerun")
    rerun = r["rerun"]
    assert rerun["config"]["max_iterations"] == 10000
    assert rerun["nfev"] == rerun["energy_calls"] == rerun["published"]["nfev"] == 10000


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.notebook
def test_h10_replays_bit_for_bit_on_its_recorded_statevector_engine(tmp_path):
    """H10 [10e,10o], 20 -> 18 qubits: the light rebuild (no qubit-space
    diagonalisation) and the replay of the 300 stored angles on the generator's
    statevector engine (PennyLane's CSR Hamiltonian, 1.86e8 non-zeros), equal
    to the published energy bit for bit.  The full re-run (hours) is measured
    by the full-mode sweep; here mode=replay.  ~5 minutes with a cold cache."""
    h10 = next(SHARED_DB.glob("H10_ccpvdz_JW_ADAPT_*.json"))
    r = run(tmp_path, h10, "h10", mode="replay")
    assert r["done"] is True
    assert r["replay"]["status"] == "pass" and r["replay"]["engine"] == "statevector"
    assert r["replay"]["identical"] and r["replay"]["ulps"] == 0
    h = r["hamiltonian"]
    assert h["sectors_match"] and abs(h["e_casci_diff"]) < 1e-8
    assert h["ground_method"] == "given" and h["fingerprint_informative"] is False
    assert abs(h["trace_diff_ha"]) < 1e-4
    assert r["rerun"] is None
    assert r["tiers"]["certification"]["status"] == "n/a"
    assert r["tiers"]["certification"]["reasons"] == ["no re-run (mode=replay)"]
    rows = {f["field"]: f for f in r["fields"]}
    if h["hamiltonian_source_inferred"] is None:
        assert rows["hamiltonian_source"]["status"] == "unverified"
    assert rows["max_iterations"]["status"] == "not run"
    assert r["verdict"].endswith("certification n/a, bit-identical n/a")


@pytest.mark.notebook
def test_an_optimiser_override_runs_and_tier1_reports_the_deviation(tmp_path):
    r = run(tmp_path, H2_JW_UCCSD, "h2_lbfgsb", mode="rerun", optimizer="L-BFGS-B")
    assert r["rerun"]["config"]["optimizer"] == "l-bfgs-b"
    row = next(f for f in r["fields"] if f["field"] == "optimizer")
    assert row["status"] == "differs" and row["declared"] == "cobyla"
    assert "optimizer: declared 'cobyla', re-run used 'l-bfgs-b'" in r["tiers"]["procedure"]["reasons"]
    assert r["tiers"]["certification"]["status"] == "pass"
    h4a = SHARED_DB / "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json"
    with pytest.raises(RunFailed, match="not accepted for an ADAPT entry"):
        run(tmp_path, h4a, "h4a_adam", mode="rerun", optimizer="adam")
    err = read_records(tmp_path / "h4a_adam.ipynb")["error"]
    assert err["stage"] == "rerun" and "field optimizer" in err["message"]
