"""Issue 53: a release split into shards that merge into one folder and read as one
release; a sweep of a few entries into a folder keeps the folder's other runs."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pandas as pd
import pytest
from conftest import H2_JW_UCCSD, ROOT, SHARED_DB

from qencode_nb.batch.plan_file import PLAN_COLUMNS, write_plan
from qencode_nb.batch.shards import (
    Shard,
    assign,
    parse_shard,
    shard_targets,
    sweep_shard,
)
from qencode_nb.batch.sweep import resolve_targets, sweep
from qencode_nb.errors import ParameterError
from qencode_nb.readout.manifest import MANIFEST, audit_notebooks, stale_notebooks
from qencode_nb.readout.summary_csv import read_summary

H2_BK = SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json"
HF_JW = SHARED_DB / "HF_ccpvdz_JW_UCCSD_v4_tapered__sha256_65500d662073f9e4.json"
TINY = [H2_JW_UCCSD, H2_BK, HF_JW]
CLI = str(ROOT / ".venv" / "bin" / "qencode-nb")


def test_shards_are_a_stable_partition_of_the_whole_release(tmp_path):
    """Every entry in exactly one shard, the union all of them; the same set gives every
    entry the same shard whatever the order given, and in another folder (another host's
    path) by run name; the longest entry is alone when it outweighs the rest."""
    entries = resolve_targets([str(SHARED_DB)])
    assert len(entries) == 40
    for count in (1, 2, 3, 5, 41):
        chosen = assign(entries, count)
        assert set(chosen) == set(entries) and set(chosen.values()) <= set(range(1, count + 1))
        parts = [[t for t in entries if chosen[t] == k] for k in range(1, count + 1)]
        assert sorted(t for part in parts for t in part) == sorted(entries)
        assert sum(len(p) for p in parts) == len(entries)          # disjoint
        assert shard_targets(entries, Shard(count, count)) == parts[-1]
        shuffled = entries[:]
        random.Random(count).shuffle(shuffled)
        assert assign(shuffled, count) == chosen
    # the same entry set in another folder: the same shards, by run name
    copies = tmp_path / "elsewhere"
    copies.mkdir()
    for path in entries:
        shutil.copy(path, copies / path.split("/")[-1])
    here = {t.split("/")[-1]: k for t, k in assign(entries, 3).items()}
    there = {t.split("/")[-1]: k for t, k in assign(resolve_targets([str(copies)]), 3).items()}
    assert here == there
    n2 = "N2_ccpvdz_JW_UCCSD_v4_casscf_tapered__sha256_5912a448b32eaa07.json"
    alone = [name for name, k in here.items() if k == here[n2]]
    assert alone == [n2], "10,000 COBYLA steps at 404 parameters outweigh the rest"


@pytest.mark.parametrize("value", ["0/3", "4/3", "x", "1/0", "2", "-1/3", "1/3/3"])
def test_a_bad_shard_is_refused_naming_the_flag_the_value_and_the_accepted(value, tmp_path):
    accepted = "accepted: K/N, whole numbers with 1 <= K <= N (shard K of N, e.g. 1/3)"
    with pytest.raises(ParameterError) as info:
        parse_shard(value)
    assert str(info.value) == f"shard {value!r} is not accepted; {accepted}"
    assert info.value.parameter == "shard"
    with pytest.raises(ParameterError, match="^shard "):
        sweep_shard([str(H2_JW_UCCSD)], tmp_path / "runs", shard=value)
    assert not (tmp_path / "runs").exists(), "refused before anything is written"
    if value == "0/3":   # the CLI names the flag as typed, exit status 2, for a run and a plan
        for extra in ([], ["--plan"]):
            proc = subprocess.run([CLI, "sweep", str(H2_JW_UCCSD), "--shard", value, *extra,
                                   "--out", str(tmp_path / "runs")],
                                  capture_output=True, text=True, check=False, timeout=120)
            assert proc.returncode == 2
            assert proc.stderr.strip() == f"qencode-nb: --shard '0/3' is not accepted; {accepted}"
        assert not (tmp_path / "runs").exists()


def test_a_shard_parses_and_prints_as_k_of_n():
    assert parse_shard(" 2 / 3 ") == Shard(2, 3) and str(Shard(2, 3)) == "2/3"
    assert parse_shard(None) is None and parse_shard(Shard(1, 1)) == Shard(1, 1)


@pytest.mark.notebook
def test_two_shards_into_one_folder_give_one_summary_of_every_entry(tmp_path):
    """Shard 1 of 2 lists the other shard's entries as waiting, with the plan's predicted
    seconds; shard 2 (the CLI) completes the folder: one summary.csv, manifest and crate
    over all three; shard 1 again runs nothing and keeps every row."""
    out = tmp_path / "runs"
    targets = [str(p) for p in TINY]
    shards = assign(resolve_targets(targets), 2)
    first = {p.stem for p in TINY if shards[str(p)] == 1}
    assert first and len(first) < 3, shards
    out.mkdir()
    plan = pd.DataFrame([{"run": p.stem, "order": i, "status": "to run",
                          "predicted_seconds": 10.0 + i} for i, p in enumerate(TINY, 1)])
    write_plan(out, plan)
    assert list(pd.read_csv(out / "plan.csv").columns) == list(PLAN_COLUMNS)

    table = sweep_shard(targets, out, shard="1/2", mode="replay", progress=False)
    summary = read_summary(out / "summary.csv")
    rows = dict(zip(summary["notebook"].str.removesuffix(".ipynb"), summary["status"]))
    assert rows == {p.stem: "done" if p.stem in first else "waiting" for p in TINY}
    assert list(summary["notebook"]) == [f"{p.stem}.ipynb" for p in TINY]   # targets' order
    assert list(summary["predicted_seconds"]) == [11.0, 12.0, 13.0]
    assert summary.loc[summary["status"] == "waiting", "failure"].isna().all()
    assert set(table.attrs["ran"]) == first and table.attrs["shard"] == "1/2"
    assert {p.stem for p in audit_notebooks(out)} == first
    assert not list(out.glob(f"{next(iter(set(rows) - first))}.ipynb"))

    proc = subprocess.run([CLI, "sweep", *targets, "--shard", "2/2", "--mode", "replay",
                           "--out", str(out)],
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{3 - len(first)}/{3 - len(first)} audits done" in proc.stdout
    assert (f"summary.csv lists 3 entries: {3 - len(first)} of this sweep, {len(first)} run "
            "earlier into the folder under the same options (3 done in all)") in proc.stdout
    summary = read_summary(out / "summary.csv")
    assert list(summary["status"]) == ["done"] * 3 and len(summary) == 3
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["notebooks"] == sorted(f"{p.stem}.ipynb" for p in TINY)
    crate = json.loads((out / "ro-crate-metadata.json").read_text())
    ids = {e["@id"] for e in crate["@graph"]}
    assert {f"{p.stem}.ipynb" for p in TINY} <= ids

    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb")}
    again = sweep_shard(targets, out, shard="1/2", mode="replay", progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.ipynb")} == stamps
    assert list(again["status"]) == ["done"] * 3, "resume keeps done runs, every row stays"


@pytest.mark.notebook
def test_a_sweep_of_some_entries_keeps_the_folders_other_runs_under_the_same_options(
        tmp_path):
    """A sweep of one entry into a folder that holds another entry's run under the same
    options lists both (summary, manifest); one under other options makes the earlier
    run stale, as before (a folder never mixes two sets of options)."""
    out = tmp_path / "runs"
    sweep([str(H2_JW_UCCSD)], out, mode="replay", progress=False, plot=False)
    table = sweep([str(H2_BK)], out, mode="replay", progress=False, plot=False)
    assert [r.split("/")[-1] for r in table["notebook"]] == [f"{H2_BK.stem}.ipynb",
                                                             f"{H2_JW_UCCSD.stem}.ipynb"]
    assert table.attrs["ran"] == [H2_BK.stem] and list(table["status"]) == ["done"] * 2
    assert len(read_summary(out / "summary.csv")) == 2
    assert json.loads((out / MANIFEST).read_text())["notebooks"] == sorted(
        f"{p.stem}.ipynb" for p in (H2_JW_UCCSD, H2_BK))
    other = sweep([str(H2_BK)], out, mode="replay", blas_threads=2, progress=False,
                  plot=False)
    assert [r.split("/")[-1] for r in other["notebook"]] == [f"{H2_BK.stem}.ipynb"]
    assert [p.stem for p in stale_notebooks(out)] == [H2_JW_UCCSD.stem]


def test_another_machines_run_counts_by_entry_sha_not_by_path(tmp_path):
    """A shard run elsewhere, its entry at another path, is one of the folder's runs
    (the same parameters and entry SHA-256); under other options it is waiting, and a
    run of another entry under the same options is kept after the whole set."""
    from qencode_nb.batch.folder_rows import folder_runs

    params = {"blas_threads": 1, "mode": "full", "resume": True}
    expected = {name: {"parameters": {**params, "entry": f"/here/{name}.json"},
                       "entry_sha256": f"sha-{name}"} for name in ("a", "b", "c")}

    def ran(name, entry, **changed):
        (tmp_path / f"{name}.ipynb").write_text("{}")
        (tmp_path / f"{name}.inputs.json").write_text(json.dumps(
            {"parameters": {**params, **changed, "entry": entry},
             "entry_sha256": f"sha-{name}", "kernelspec": "qencode-nb-v4-x"}))

    ran("b", "/elsewhere/db/b.json")
    ran("c", "/here/c.json", mode="replay")
    ran("z", "/here/z.json")
    rows, waiting = folder_runs(tmp_path, expected, ["a"])
    assert rows == ["a", "b", "z"] and waiting == ["c"]


def test_a_record_folder_refuses_shard_and_plan(tmp_path):
    """A record folder sweeps several releases: a shard or a plan of it is refused
    before anything is written, naming the flag and what is accepted."""
    from conftest import SHARED_HISTORY

    accepted = "accepted: database folders, entry files and bundled names (one release)"
    for extra, said in ((["--shard", "1/2"], "--shard '1/2'"), (["--plan"], "--plan")):
        proc = subprocess.run([CLI, "sweep", str(SHARED_HISTORY), *extra, "--out",
                               str(tmp_path / "runs")], capture_output=True, text=True,
                              check=False, timeout=300)
        assert proc.returncode == 2
        assert proc.stderr.strip() == (f"qencode-nb: {said} is not accepted with a record "
                                       f"folder; {accepted}")
    assert not (tmp_path / "runs").exists()
