"""Tier 3 in an entry's own recorded environment (issues 35 and 52): QEncode's v3 stack,
built by the toolkit from what the entry records (pyscf 2.5.0, pennylane 0.44.1,
openfermion 1.7.1, numpy 1.26.4, scipy 1.17.0, pennylane-lightning 0.44.*, with
qencode-nb's other dependencies resolved as PyPI served them at the entry's
``created_utc``, locked, and installed by uv),
and the v3 release's kernel triple (Haswell for every OpenBLAS copy), which
``blas_coretype`` ``reference``, the audit's default, pins for a v3 entry.

There the H2 STO-3G JW/UCCSD (v3) and H2 6-31G JW/HEA (v3.1) entries re-run in full mode
on their recorded backend to the published energy bit for bit, and tier 3 reads
``pass``.  The same entry reads ``n/a`` in the current (v4) stack, naming every package
that differs and the requirements file, and in the v3 stack under the ``portable``
profile (PySCF's copy on Prescott), naming the kernels.  Measured 2026-12-04 on an AMD EPYC (Zen 4) with AVX-512,
numpy's AVX-512 loops on and off (``NPY_DISABLE_CPU_FEATURES``): 0 ulps both ways, as
QEncode's own figures on an Intel Xeon (issue 35); LiH STO-3G JW/HEA too (not run here:
it adds 30 s).

Needs a package registry: uv resolves the stack at the entry's date and installs it into
a new virtual environment (seconds with a warm uv cache, about a minute cold).  Every test that uses the fixture
carries ``network``.
"""

from __future__ import annotations

import json

import pytest

from conftest import AUDIT_NB, SHARED_HISTORY, private_stacks
from qencode_nb.entry import load
from qencode_nb.environment import store as stacks
from qencode_nb.environment.build import ensure_stack
from qencode_nb.environment.choice import RECORDED, recorded_lock, stack_name
from qencode_nb.environment.recorded import of_entry
from qencode_nb.executor.execute import run_notebook

RELEASES = SHARED_HISTORY / "releases"
H2_STO3G = RELEASES / "v3" / "db" / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json"
H2_631G = RELEASES / "v3.1" / "db" / "H2_631g_JW_HEA_v3_tapered__sha256_b540a6c7ba2a1bb5.json"
LIH_STO3G = RELEASES / "v3" / "db" / "LiH_sto3g_JW_HEA_v3_tapered__sha256_1e6bba1d37fa52bd.json"


def _recorded(path):
    return of_entry(load(path))


@pytest.fixture(scope="module")
def v3_stack(tmp_path_factory):
    """The v3 entries' recorded stack as a Jupyter kernel under a private prefix, built
    from the record alone by ``--stack recorded``'s own step
    (:func:`qencode_nb.environment.build.ensure_stack`, under the name every entry of
    that stack shares; all three entries record the same stack)."""
    recorded = _recorded(H2_STO3G)
    assert recorded.requirements == _recorded(H2_631G).requirements \
        == _recorded(LIH_STO3G).requirements
    with private_stacks(tmp_path_factory.mktemp("recorded-stack")) as prefix:
        lock = recorded_lock(recorded, RECORDED)
        assert lock.resolved_at == recorded.created_utc and lock.fallback is None
        name = stack_name(recorded.release, lock)
        kernel = ensure_stack(name, lock, lambda line: None, jupyter_prefix=prefix)
        assert kernel is not None, stacks.read_stack(name)
        yield stacks.read_stack(name)


def _audit(tmp_path, path, kernel, blas_coretype=None):
    """A full audit of ``path`` in Jupyter kernel ``kernel`` (None: this stack's),
    ``blas_coretype`` left at its default (``reference``) when None."""
    extra = {} if blas_coretype is None else {"blas_coretype": blas_coretype}
    return run_notebook(AUDIT_NB, tmp_path / f"{path.stem[:20]}-{blas_coretype}.ipynb",
                        {"entry": str(path), "mode": "full", **extra},
                        kernel_name=kernel, timeout=600)


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.bitlevel
@pytest.mark.slow
@pytest.mark.parametrize("path", [H2_STO3G, H2_631G], ids=["H2_sto3g_v3", "H2_631g_v3.1"])
def test_a_v3_entry_in_its_recorded_environment_is_bit_identical(v3_stack, path, tmp_path):
    recorded = _recorded(path)
    assert v3_stack["status"] == "ready"
    assert {k: v3_stack["freeze"][k] for k in recorded.pins} == recorded.pins
    # neither requirements file pins the plugin: matched to pennylane, not the newest
    assert v3_stack["freeze"]["pennylane_lightning"].startswith("0.44.")
    r = _audit(tmp_path, path, v3_stack["kernelspec"])     # blas_coretype "reference"
    assert r["done"] is True
    assert r["recorded_environment"]["release"] == "v3"
    profile = r["blas_profile"]
    assert (profile["requested"], profile["used"]) == ("reference", "v3")
    assert profile["kernels"] == {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Haswell"}
    assert all(v["match"] for v in r["provenance"]["versions"].values()), r["provenance"]["versions"]
    # PennyLane 0.44.1: the recorded arithmetic ran on the faithful engine (issue 60)
    assert r["engine"]["faithful"] is True and r["engine"]["used"] == "default.qubit"
    published = json.loads(path.read_text())["results"]["vqe"]["best_energy_hartree"]
    assert r["rerun_energy"] == published
    t3 = r["tiers"]["bit_identical"]
    assert t3["status"] == "pass", t3
    assert "the v3 release's triple: numpy Haswell, scipy Haswell, pyscf Haswell" in t3["reasons"][0]


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.bitlevel
@pytest.mark.slow
def test_stock_papermill_with_the_engine_runs_in_the_recorded_stack(v3_stack, tmp_path):
    """Issue 52 item 5: ``papermill --engine qencode-nb ... -p stack recorded`` on a v3
    entry runs in its recorded stack (the engine chooses the kernelspec from the
    parameters: the entry's lock, kept when the stack was built), and tier 3 reads
    ``pass``; the record names the lock and the date it was resolved at.  Without
    ``--engine`` the same run stays in the notebook's kernel and says why."""
    import subprocess
    import sys
    from pathlib import Path

    from qencode_nb.notebook.record import read_records

    papermill = [str(Path(sys.executable).with_name("papermill")), str(AUDIT_NB)]
    params = ["-p", "entry", str(H2_STO3G), "-p", "mode", "full", "-p", "stack", "recorded"]
    out = tmp_path / "engine.ipynb"
    subprocess.run([*papermill, str(out), "--engine", "qencode-nb", *params], check=True,
                   capture_output=True, text=True, timeout=600)
    r = read_records(out)
    stack = r["stack"]
    assert (stack["name"], stack["not_used"]) == (v3_stack["name"], None)
    assert stack["lock_key"] == v3_stack["lock"]["key"]
    assert stack["resolved_at"] == _recorded(H2_STO3G).created_utc
    assert r["tiers"]["bit_identical"]["status"] == "pass", r["tiers"]["bit_identical"]
    plain = tmp_path / "plain.ipynb"
    subprocess.run([*papermill, str(plain), *params], check=True, capture_output=True,
                   text=True, timeout=600)
    p = read_records(plain)
    assert p["stack"]["name"] == "current"
    assert p["stack"]["not_used"].startswith(f"stack {v3_stack['name']} is built but this "
                                             "kernel is the current stack")
    assert p["tiers"]["bit_identical"]["status"] == "n/a"


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.slow
def test_elsewhere_tier_3_is_na_naming_each_difference(v3_stack, tmp_path):
    # the current (v4) stack: every package of requirements-v3.txt differs
    current = _audit(tmp_path, H2_STO3G, None)["tiers"]["bit_identical"]
    assert current["status"] == "n/a"
    assert current["reasons"][0].startswith(
        "not the entry's recorded stack (v3, requirements-v3.txt): numpy 2.2.6 (want 1.26.4)")
    # the recorded stack under the portable profile: PySCF's copy on Prescott
    v3_portable = _audit(tmp_path, H2_STO3G, v3_stack["kernelspec"], "portable")
    t3 = v3_portable["tiers"]["bit_identical"]
    assert t3["status"] == "n/a" and t3["reasons"][0] == (
        "not the v3 release's kernel triple (numpy Haswell, scipy Haswell, pyscf Prescott)")
    assert all(v["match"] for v in v3_portable["provenance"]["versions"].values())


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.bitlevel
@pytest.mark.slow
def test_stack_recorded_runs_each_entry_in_its_stack(v3_stack, tmp_path, capsys):
    """``--stack recorded`` (CLI audit, then a sweep of the three entries of the issue)
    finds the stack built once and runs every audit in its kernel: bit-identical, tier 3
    ``pass``, the stack named in the record and in summary.csv."""
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.cli import main

    out = tmp_path / "audit.ipynb"
    assert main(["audit", str(H2_631G), "--stack", "recorded", "--out", str(out),
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["stack"]["name"] == r["stack"]["recorded_stack"] == v3_stack["name"]
    assert r["stack"]["kernelspec"] == v3_stack["kernelspec"]
    assert r["stack"]["in_recorded_stack"] is True and r["stack"]["not_used"] is None
    assert r["tiers"]["bit_identical"]["status"] == "pass"
    table = sweep([str(H2_STO3G), str(H2_631G), str(LIH_STO3G)], tmp_path / "runs",
                  mode="full", stack="recorded", workers=2, progress=False, plot=False)
    assert list(table["status"]) == ["done"] * 3, table["failure"].tolist()
    assert set(table["stack"]) == {v3_stack["name"]}
    assert set(table["stack_lock"]) == {v3_stack["name"].split("-", 1)[1]} \
        == {v3_stack["lock"]["key"]}
    assert set(table["stack_resolved_at"]) == {v3_stack["lock"]["resolved_at"]}
    assert list(table["tier_bit_identical"]) == ["pass"] * 3, table["verdict"].tolist()
    assert table["bit_identical"].all()
    inputs = json.loads((tmp_path / "runs" / f"{H2_STO3G.stem}.inputs.json").read_text())
    assert inputs["kernelspec"] == v3_stack["kernelspec"]
    assert inputs["parameters"]["stack"] == "recorded"


@pytest.mark.parametrize("args,said", [
    (["--from-entry", str(next((RELEASES / "v1" / "db").glob("*__sha256_*.json")))],
     "the entry records no package versions (provenance.tool_versions), so no stack can "
     "be named its own"),
    (["--from-entry", str(H2_STO3G), "--recipe", "latest"],
     "--from-entry builds the stack the entry records: give it without --recipe"),
])
def test_stack_from_an_entry_refuses_what_names_no_stack(args, said, capsys, tmp_path,
                                                         monkeypatch):
    """``qencode-nb stack create NAME --from-entry ENTRY``: exit 2 before anything is
    built, saying why."""
    from qencode_nb.cli import main

    monkeypatch.setenv("QENCODE_NB_STACKS", str(tmp_path / "stacks"))
    assert main(["stack", "create", "x", *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "stacks" / "x").exists()


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.bitlevel
@pytest.mark.slow
def test_a_history_sweep_gives_each_release_in_both_environments(v3_stack, tmp_path):
    """``--stack recorded`` over a record (two entries of the v3 stack in its v3 folder, one
    v4 entry): each release runs in its recorded stack, resolved at its entries' date (v4's
    too since issue 52: the lock of 2026-07-15 is not this environment's), and again in the
    current one; environments.csv and the record page give the rates side by side."""
    import shutil

    import pandas as pd

    from qencode_nb.options import RunOptions
    from qencode_nb.batch.history import discover
    from qencode_nb.readout.history_report import write_history_report
    from qencode_nb.studies.history_sweep import CURRENT_FOLDER, sweep_history

    from conftest import SHARED_DB

    root = tmp_path / "record"
    for release, files in (("v3", [H2_STO3G, H2_631G]),     # the v3 stack's two fastest
                           ("v4", sorted(SHARED_DB.glob("H2_ccpvdz_JW_HEA_v4*.json"))[:1])):
        (root / "releases" / release / "db").mkdir(parents=True)
        for f in files:
            shutil.copy(f, root / "releases" / release / "db")
    out = tmp_path / "runs"
    sweep_history(discover([str(root)]), out,
                 RunOptions(mode="full", stack="recorded", workers=2, progress=False,
                            plot=False))
    rates = pd.read_csv(out / "environments.csv").set_index("release")
    v3, v4 = rates.loc["v3"], rates.loc["v4"]
    assert v3["recorded_stack"] == v3_stack["name"] and v4["recorded_stack"].startswith("v4-")
    assert (v3["audited_recorded"], v3["bit_identical_recorded"]) == (2, 2)
    # the current (v4) stack: certification holds, the last bits do not (issue 35: 0/36)
    assert (v3["audited_current"], v3["bit_identical_current"]) == (2, 0)
    assert v3["certification_held_recorded"] == v3["certification_held_current"] == 2
    assert pd.isna(v3["not_bit_identical_recorded"])
    assert [v4[f"{c}_recorded"] for c in ("audited", "bit_identical", "certification_held")] \
        == [v4[f"{c}_current"] for c in ("audited", "bit_identical", "certification_held")]
    assert (out / CURRENT_FOLDER / "v3").is_dir() and (out / CURRENT_FOLDER / "v4").is_dir()
    page = write_history_report(out, notebooks=False).read_text()
    assert '<h2 id="environments">Recorded and current environment</h2>' in page
    assert str(tmp_path) not in page


@pytest.mark.network
@pytest.mark.notebook
@pytest.mark.bitlevel
@pytest.mark.slow
def test_the_explain_search_finds_a_v3_entry_in_its_first_run(v3_stack, tmp_path):
    """``study environments --explain`` on H2 STO-3G (v3): the nearest configuration is the
    recorded stack under the v3 triple, and it reproduces the entry, so the search stops
    after its first run."""
    from qencode_nb.studies.explain import explain

    result = explain(str(H2_STO3G), tmp_path / "explain", budget=4, progress=False)
    assert len(result.table) == 1, result.table[["changed", "ulps"]]
    row = result.table.iloc[0]
    assert (row["stack"], row["kernelspec"]) == ("recorded", v3_stack["kernelspec"])
    assert row["kernels_measured"] == "numpy=Haswell,scipy=Haswell,pyscf=Haswell"
    assert result.finding.startswith("reproduced bit for bit by recorded stack, "
                                     "numpy=Haswell,scipy=Haswell,pyscf=Haswell")


@pytest.mark.network
def test_a_stack_built_by_another_checkout_is_attached_to_this_one(v3_stack):
    """Issue 36: a stack lives in the user's data folder, its kernelspec in the Jupyter
    prefix of the environment that built it, and its ``.pth`` names that checkout.  A
    new clone (or a venv made again) found the stack ``ready`` and every run failed with
    ``NoSuchKernel`` (seen on the v3.1 record sweep), or the kernel imported another
    checkout's qencode_nb.  ``--stack recorded`` now re-attaches it and says so."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    from qencode_nb.environment.build import ensure_stack
    from qencode_nb.paths import ROOT

    spec_dir = Path(stacks.available_kernelspecs()[v3_stack["kernelspec"]])
    prefix = spec_dir.parents[3]                    # <prefix>/share/jupyter/kernels/<name>
    py = stacks.stack_python(Path(v3_stack["path"]))
    pth = Path(stacks.site_packages(py)) / "_qencode_nb_checkout.pth"
    assert pth.read_text().strip() == str(ROOT)
    pth.write_text("/nonexistent/another-checkout\n")
    shutil.rmtree(spec_dir)     # (a user's own stack of that name may still be found)
    assert stacks.available_kernelspecs().get(v3_stack["kernelspec"]) != str(spec_dir)
    said = []
    kernel = ensure_stack(v3_stack["name"], None, said.append, jupyter_prefix=prefix)
    assert kernel == v3_stack["kernelspec"]
    assert stacks.available_kernelspecs()[kernel] == str(spec_dir)   # this stack's again
    assert pth.read_text().strip() == str(ROOT)
    assert [s.split(": ")[1].split(" ")[0] for s in said] == ["its", "kernel"], said
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(py), "-c", "import qencode_nb; print(qencode_nb.__file__)"],
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.strip().startswith(str(ROOT)), where
    again = []
    assert ensure_stack(v3_stack["name"], None, again.append, jupyter_prefix=prefix) == kernel
    assert again == []                              # nothing to repair twice
