"""The provenance crate (issue 16 item 2): ``ro-crate-metadata.json`` of an audit and of a
sweep, Process Run Crate 0.6, read back with ``rocrate``: the profile, the entry's
SHA-256, the pins, the BLAS kernel, the packages and the CPU of real executed audits."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import AUDIT_NB, ROOT, TEST_PROFILE, THREAD_VARS, coretype_missing, pinned_env
from qencode_nb.cli import main
from qencode_nb.notebook.record import read_records
from qencode_nb.trust.crate import FAILED, PROFILE, READ_RECORDS, WFRUN_CONTEXT

PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar"]
CORETYPE = "Haswell"


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    """``papermill notebooks/audit.ipynb OUT -p entry h2 -p mode replay`` with the
    OpenBLAS kernel pinned to Haswell (so the crate's kernel is known in advance)."""
    if coretype_missing(CORETYPE):
        pytest.skip(coretype_missing(CORETYPE))
    out = tmp_path_factory.mktemp("crate") / "audit" / "h2.ipynb"
    out.parent.mkdir()
    proc = subprocess.run(PAPERMILL + [str(AUDIT_NB), str(out), "-p", "entry", "h2",
                                       "-p", "mode", "replay", "-p", "blas_coretype", CORETYPE],
                          cwd=ROOT, env=pinned_env(1), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _ids(value) -> list[str]:
    """The ids of a property's values (rocrate reads a reference to an entity outside
    the crate, e.g. schema.org's CompletedActionStatus, as the bare id)."""
    return [getattr(v, "id", v) for v in (value if isinstance(value, list) else [value])]


def test_the_records_a_crate_reads_are_audit_records():
    from qencode_nb.trust.attestation import READ_RECORDS as ATTESTED
    from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

    assert set(READ_RECORDS) | set(ATTESTED) <= set(AUDIT_RECORDS) | {ERROR_RECORD}


@pytest.mark.hostkind
@pytest.mark.notebook
def test_the_crate_of_an_audit_reads_back(audit, capsys):
    from rocrate.rocrate import ROCrate

    records = read_records(audit)
    prov = records["provenance"]
    assert main(["crate", str(audit)]) == 0
    assert "(1 audit(s), Process Run Crate 0.6)" in capsys.readouterr().out
    metadata = audit.parent / "ro-crate-metadata.json"
    raw = json.loads(metadata.read_text())
    assert raw["@context"] == ["https://w3id.org/ro/crate/1.1/context", WFRUN_CONTEXT]
    crate = ROCrate(audit.parent)
    assert _ids(crate.root_dataset["conformsTo"]) == [PROFILE]
    profile = crate.get(PROFILE)
    assert profile.type == "CreativeWork" and profile["version"] == "0.6"
    action = crate.get("#audit-h2")
    assert action.type == "CreateAction" and _ids(crate.root_dataset["mentions"]) == [action.id]
    assert _ids(action["actionStatus"]) == ["http://schema.org/CompletedActionStatus"]
    assert action["startTime"] and action["endTime"]
    # The entry as object, copied into the crate with its SHA-256.
    (entry,) = action["object"]
    source = Path(records["entry_source"])
    # where it was read from, from a folder the reader can place: no absolute path
    assert entry.id == f"entries/{source.name}"
    assert entry["alternateName"] == f"…/{source.parent.name}/{source.name}"
    assert entry["sha256"] == _sha256(source) == _sha256(audit.parent / entry.id)
    # The executed notebook and the verdict as results.
    results = {r.id: r for r in action["result"]}
    assert results["h2.ipynb"]["sha256"] == _sha256(audit)
    assert results["#audit-h2-verdict"]["value"] == records["verdict"]
    assert results["#audit-h2-tier-procedure"]["value"] == records["tiers"]["procedure"]["status"]
    # The pins as environment PropertyValues.
    env = {pv["name"]: pv["value"] for pv in action["environment"]}
    assert all(pv.type == "PropertyValue" for pv in action["environment"])
    assert {var: env[var] for var in THREAD_VARS} == {var: "1" for var in THREAD_VARS}
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["OPENBLAS_CORETYPE"] == CORETYPE
    # Instruments: the toolkit with its package versions, the notebook, the CPU, the pools.
    tool, notebook, cpu, *pools = action["instrument"]
    assert tool.type == "SoftwareApplication" and tool["name"] == "qencode-nb"
    assert tool["softwareVersion"] == version("qencode-nb")
    reqs = {r["name"]: r["softwareVersion"] for r in tool["softwareRequirements"]}
    assert reqs == {k: v for k, v in prov["installed"].items() if v}
    assert reqs["numpy"] == "2.2.6" and reqs["pyscf"] == "2.6.2"
    assert crate.get("https://pypi.org/project/numpy/2.2.6/").type == "SoftwareApplication"
    assert notebook.id == "instruments/audit.ipynb" and "SoftwareSourceCode" in notebook.type
    assert notebook["sha256"] == _sha256(AUDIT_NB)
    assert cpu["name"] == prov["cpu"] and cpu["category"] == "CPU"
    facts = [{p["name"]: p["value"] for p in pool["additionalProperty"]} for pool in pools]
    from qencode_nb.paths import known_folders, scrub

    folders = known_folders(audit.parent, [str(source)])
    assert len(pools) == len(prov["blas"]["pools"]) >= 1
    for pool, fact, want in zip(pools, facts, prov["blas"]["pools"]):
        # PySCF's OpenBLAS 0.3.3 and its libgomp report no version, libgomp no kernel
        assert pool["name"] == want["library"] and pool.get("softwareVersion") == want["version"]
        assert fact.get("architecture") == want["architecture"]
        assert fact["threads"] == want["threads"] == 1
        assert fact["filepath"] == scrub(want["filepath"], folders)    # …/.venv/lib/...
        assert not fact["filepath"].startswith("/")
    # The BLAS kernel of the audit: every OpenBLAS pool runs the pinned one.
    assert {f["architecture"] for p, f in zip(pools, facts) if p["name"] == "openblas"} \
        == {CORETYPE}


@pytest.mark.hostkind
@pytest.mark.notebook
def test_one_audit_more_joins_the_crate_and_a_failed_one_says_so(audit, tmp_path, capsys):
    from rocrate.rocrate import ROCrate

    folder = tmp_path / "audits"
    folder.mkdir()
    shutil.copy(audit, folder / "h2.ipynb")
    nb = json.loads(audit.read_text())            # the same audit without its done record
    for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
        cell["outputs"] = [o for o in cell["outputs"]
                           if (o.get("data") or {}).get("application/vnd.qencode-nb.record+json",
                                                        {}).get("name") != "done"]
    (folder / "h2-killed.ipynb").write_text(json.dumps(nb))
    assert main(["crate", str(folder / "h2.ipynb")]) == 0
    assert main(["crate", str(folder / "h2-killed.ipynb")]) == 0
    crate = ROCrate(folder)
    assert sorted(_ids(crate.root_dataset["mentions"])) == ["#audit-h2", "#audit-h2-killed"]
    killed = crate.get("#audit-h2-killed")
    assert _ids(killed["actionStatus"]) == [FAILED]
    assert killed["error"] == "the notebook has no done record"
    assert main(["crate", str(tmp_path)]) == 2         # a folder without audit notebooks
    assert "holds no audit notebook" in capsys.readouterr().err


@pytest.mark.hostkind
@pytest.mark.notebook
def test_a_sweep_writes_the_crate_of_its_folder(tmp_path):
    from rocrate.rocrate import ROCrate

    from qencode_nb.batch.sweep import sweep

    out = tmp_path / "runs"
    table = sweep(["h2"], out, mode="replay", plot=False, progress=False)
    assert list(table["status"]) == ["done"]
    crate = ROCrate(out)
    assert _ids(crate.root_dataset["conformsTo"]) == [PROFILE]
    summary = crate.get("#summary")
    assert _ids(summary["object"]) == ["h2.ipynb"]
    assert _ids(summary["result"]) == ["summary.csv"]
    assert crate.get("summary.csv")["sha256"] == _sha256(out / "summary.csv")
    action = crate.get("#audit-h2")
    env = {pv["name"]: pv["value"] for pv in action["environment"]}
    prov = read_records(out / "h2.ipynb")["provenance"]
    # audit.ipynb's default blas_coretype "reference" runs the test process's profile
    # on this CPU (reference, or portable without AVX-512): its variables are named
    assert env["OPENBLAS_NUM_THREADS"] == "1"
    assert env["QENCODE_NB_BLAS_PROFILE"] == TEST_PROFILE
    assert env["OPENBLAS_CORETYPE"] == prov["blas"]["OPENBLAS_CORETYPE"]
    fp = {pv.get("name"): pv.get("value") for pv in action["result"]}
    assert fp["numeric fingerprint"].startswith(prov["numeric"]["hash"] + " (numpy ")
    kernels = [{p["name"]: p["value"] for p in i["additionalProperty"]}.get("architecture")
               for i in action["instrument"][3:]]
    assert kernels == [p["architecture"] for p in prov["blas"]["pools"]]
