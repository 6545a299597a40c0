"""Dated resolution (issue 52, item 2): an entry's recorded stack is its pins plus every
other package resolved as PyPI served it at the entry's ``created_utc``, locked with
hashes; the lock's key names the stack.

The resolutions run uv against PyPI (``network``; about 1.5 s each with a warm uv cache).
The offline half (a lock kept and found again, a stack that cannot be built) is
``test_choice.py``.
"""

from __future__ import annotations

import pytest

from conftest import SHARED_HISTORY, private_stacks
from qencode_nb.entry import load
from qencode_nb.environment.choice import RECORDED, RECORDED_TODAY, recorded_lock, stack_name
from qencode_nb.environment.lock import Lock, resolve_lock
from qencode_nb.environment.recorded import of_entry, recorded_environment

RELEASES = SHARED_HISTORY / "releases"
H2_V3 = RELEASES / "v3" / "db" / "H2_sto3g_JW_UCCSD_v3_tapered__sha256_e758d8fe81f010a7.json"
LIH_V3 = RELEASES / "v3" / "db" / "LiH_sto3g_JW_HEA_v3_tapered__sha256_1e6bba1d37fa52bd.json"
H2_V31 = RELEASES / "v3.1" / "db" / "H2_631g_JW_HEA_v3_tapered__sha256_b540a6c7ba2a1bb5.json"


def test_a_lock_reads_its_versions_and_skips_other_platforms():
    text = ("numpy==1.26.4 \\\n    --hash=sha256:" + "0" * 64 + "\n"
            "colorama==0.4.6 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "1" * 64 + "\n")
    lock = Lock(text, "k", None, "2026-12-07", None, "3.11.7")
    assert lock.versions() == {"numpy": "1.26.4"}
    assert "text" not in repr(lock)          # a lock of a hundred packages is not printed


@pytest.mark.network
def test_the_v3_stack_resolved_at_its_date_is_locked_and_shared(tmp_path):
    """The v3 entries' stack as PyPI served it on 2026-05-11: the recorded pins exact,
    the rest older than today's; two entries made hours apart resolve to the same lock
    (one stack), and today's resolution of the same pins is another one."""
    with private_stacks(tmp_path):
        h2, lih, h2_31 = (of_entry(load(p)) for p in (H2_V3, LIH_V3, H2_V31))
        dated = recorded_lock(h2, RECORDED)
        assert dated.resolved_at == h2.created_utc == "2026-05-11T08:54:39.411818+00:00"
        assert dated.fallback is None and len(dated.key) == 12
        versions = dated.versions()
        assert {k: versions[k] for k in h2.pins} == h2.pins
        assert versions["pennylane-lightning"].startswith("0.44.")
        assert "--hash=sha256:" in dated.text
        assert recorded_lock(lih, RECORDED).key == dated.key          # made 5 h later
        assert recorded_lock(h2_31, RECORDED).key == dated.key        # v3.1, the same day
        today = recorded_lock(h2, RECORDED_TODAY)
        assert today.resolved_at is None and today.key != dated.key
        assert {k: today.versions()[k] for k in h2.pins} == h2.pins   # the pins hold
        moved = sorted(k for k, v in versions.items() if today.versions().get(k) != v)
        assert moved, "today's index serves the same tree as on 2026-05-11"
        assert stack_name(h2.release, dated) == f"v3-{dated.key}"
        # kept: the second ask reads the kept resolution (same object fields, no uv)
        assert resolve_lock(h2.requirements, h2.created_utc, cached_only=True) == dated


@pytest.mark.network
def test_an_entry_without_a_date_is_resolved_today_and_says_so(tmp_path):
    pins = {"numpy": "1.26.4", "scipy": "1.17.0", "pyscf": "2.5.0", "pennylane": "0.44.1",
            "openfermion": "1.7.1"}
    undated = recorded_environment(pins, created_utc=None)
    with private_stacks(tmp_path):
        lock = recorded_lock(undated, RECORDED)
    assert lock.resolved_at is None
    assert lock.fallback == ("the entry records no date (created_utc), so its stack is "
                             "resolved as the index serves it today")
