"""Faults that lose nothing (issue 36): a full disk while a notebook or a cache file is
written, and a read-only output folder.  A full disk is emulated by a file size limit
on the process (``RLIMIT_FSIZE``, inherited by the run processes and their kernels;
Python ignores ``SIGXFSZ``, so a write past it fails with ``OSError: [Errno 27] File
too large`` as on a full disk).  The killed worker, the corrupt checkpoint and the
truncated cache file are in tests/batch/test_faults.py and tests/hamiltonian/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import H2_JW_UCCSD, ROOT, SHARED_DB, TEST_PROFILE, pinned_env

H2_BK = SHARED_DB / "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json"

#: Bytes a process may write to one file: the executed audit notebooks of these
#: entries are about 85 kB, their summary, inputs and outcome files under 4 kB.
LIMIT = 40_000

_SWEEP = """\
import json, resource, sys, warnings
from qencode_nb.batch.sweep import sweep
limit, out, targets = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    table = sweep(targets, out, mode="replay", progress=False)
print(json.dumps({"rows": table[["status", "failure"]].astype(object).where(
    table[["status", "failure"]].notna(), None).to_dict("records"),
    "warnings": [str(w.message) for w in caught]}))
"""


def _sweep(limit, out, *targets):
    done = subprocess.run([sys.executable, "-c", _SWEEP, str(limit), str(out), *targets],
                          env=pinned_env(1, TEST_PROFILE, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.hostkind
@pytest.mark.notebook
def test_a_full_disk_while_a_notebook_is_written_keeps_the_finished_runs(tmp_path):
    """Before: the sweep ended in NotJSONError from reading the cut notebook (the cause,
    ``File too large``, lost), and the margin plot's failed write ended it again."""
    out = tmp_path / "runs"
    first = _sweep(0, out, str(H2_JW_UCCSD))
    assert [r["status"] for r in first["rows"]] == ["done"]
    kept = (out / f"{H2_JW_UCCSD.stem}.ipynb").stat().st_mtime_ns

    full = _sweep(LIMIT, out, str(H2_JW_UCCSD), str(H2_BK))
    assert [r["status"] for r in full["rows"]] == ["done", "failed"]
    failure = full["rows"][1]["failure"]
    assert "could not be written whole" in failure and "File too large" in failure
    assert (out / f"{H2_JW_UCCSD.stem}.ipynb").stat().st_mtime_ns == kept
    outcome = json.loads((out / f"{H2_BK.stem}.outcome.json").read_text())
    assert outcome["status"] == "failed" and "File too large" in outcome["failure"]
    assert any("no margin plot written" in w for w in full["warnings"]), full["warnings"]
    assert not (out / "margins.png").exists()           # no cut figure left behind
    summary = (out / "summary.csv").read_text()
    assert "File too large" in summary

    resumed = _sweep(0, out, str(H2_JW_UCCSD), str(H2_BK))
    assert [r["status"] for r in resumed["rows"]] == ["done", "done"]
    assert (out / f"{H2_JW_UCCSD.stem}.ipynb").stat().st_mtime_ns == kept
    assert (out / "margins.png").stat().st_size > LIMIT


_CACHE = """\
import json, resource, sys, warnings
from qencode_nb.notebook.pins import pin
pin(1, sys.argv[3])
from qencode_nb.hamiltonian import cache
fields = json.loads(sys.argv[1])
write = cache.write_atomic


def full_disk(path, data):       # the disk fills up while the cache file is written
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.RLIM_INFINITY))
    try:
        return write(path, data)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)


cache.write_atomic = full_disk
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    chem, tap = cache.cached_rebuild(**fields, cache_dir=sys.argv[2])
print(json.dumps({"hit": chem.cache_hit, "terms": len(tap.H_tapered.pauli_rep),
                  "warnings": [str(w.message) for w in caught]}))
"""


@pytest.mark.hostkind
def test_a_full_disk_while_a_cache_file_is_written_uses_the_result_uncached(tmp_path):
    """A rebuild whose cache file cannot be written (a 200-byte file limit while the
    cache writes it; PySCF's own scratch files are written before) returns its result with a CacheWarning naming the file; nothing is left half written, and the
    next process builds and stores it (before: the audit failed with the OSError)."""
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian import cache

    fields = cache.entry_fields(load(H2_JW_UCCSD))
    done = subprocess.run([sys.executable, "-c", _CACHE, json.dumps(fields), str(tmp_path),
                           TEST_PROFILE], env=pinned_env(1, TEST_PROFILE, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["hit"] is False and got["terms"] > 1
    assert any("not written" in w and "File too large" in w for w in got["warnings"]), got
    assert list((tmp_path / cache.SUBDIR).glob("*.json")) == []      # nothing cut
    assert [p.name for p in (tmp_path / cache.SUBDIR).iterdir()
            if p.name.startswith(".tmp-")] == []
    chem, _ = cache.cached_rebuild(**fields, cache_dir=tmp_path)    # no limit: stored
    assert chem.cache_hit is False and cache.load(chem.cache_key, tmp_path) is not None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits: a "
                    "read-only folder cannot be emulated by chmod as root")
def test_a_read_only_out_is_refused_before_any_run(tmp_path):
    from qencode_nb.batch.sweep import sweep
    from qencode_nb.errors import OutputFolderError

    out = tmp_path / "runs"
    out.mkdir()
    out.chmod(0o555)
    try:
        with pytest.raises(OutputFolderError, match="cannot be written"):
            sweep([str(H2_JW_UCCSD)], out, mode="replay", progress=False)
        assert list(out.iterdir()) == []
    finally:
        out.chmod(0o755)
