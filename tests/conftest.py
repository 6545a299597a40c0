"""Shared fixtures and helpers: the real QEncode v4 entries in ../shared (never copied
here), the thread pin for the test process and its children, and the test tiers.

Test tiers (markers registered in pyproject.toml; README, "Run the tests"):
``notebook`` executes a notebook or a Jupyter kernel, ``slow`` takes minutes,
``heavy`` is too long or too big for CI (always also ``slow``), ``network`` needs a
package registry.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Determinism (DESIGN.md): the test process and the kernels it starts run at one BLAS
# thread unless a test asks otherwise.  Set before anything here imports numpy (the pin
# module imports neither numpy nor scipy); the runtime limit covers a numpy that a
# plugin may have loaded earlier.
from qencode_nb.notebook.pins import THREAD_VARS, pin_environment

os.environ.update(pin_environment(1))

import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=1)

ROOT = Path(__file__).resolve().parents[1]
SHARED_DB = ROOT.parent / "shared" / "qencode-v4" / "db"
AUDIT_NB = ROOT / "notebooks" / "audit.ipynb"

LIH_PAR_HEA = SHARED_DB / "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json"
H2_JW_UCCSD = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"

__all__ = ["ROOT", "SHARED_DB", "AUDIT_NB", "LIH_PAR_HEA", "H2_JW_UCCSD", "THREAD_VARS",
           "pinned_env", "unpinned_env"]


def pinned_env(blas_threads: int = 1, blas_coretype: str | None = None, base=None,
               **extra: str) -> dict[str, str]:
    """An environment for a child process: ``base`` (default ``os.environ``) with all six
    pin variables of :data:`qencode_nb.notebook.pins.THREAD_VARS` set to
    ``blas_threads`` (and ``OPENBLAS_CORETYPE`` when ``blas_coretype`` is given,
    validated for this CPU), then ``extra``."""
    env = dict(os.environ if base is None else base)
    env.update(pin_environment(blas_threads, blas_coretype))
    env.update(extra)
    return env


def unpinned_env(**extra: str) -> dict[str, str]:
    """``os.environ`` without any of the six pin variables, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update(extra)
    return env


#: Fixtures that install packages from a registry (pip from PyPI); every test that
#: uses one, directly or through another fixture, must carry ``network``.
NETWORK_FIXTURES = frozenset({"stack"})   # test_environments.py: SciPy 1.16.3 from PyPI


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Keep the tiers honest at collection: a heavy test is also slow (so the quick loop
    ``-m "not slow and not notebook"`` never selects it), and a test using a
    :data:`NETWORK_FIXTURES` fixture is marked network."""
    bad = [f"{item.nodeid}: heavy without slow" for item in items
           if item.get_closest_marker("heavy") and not item.get_closest_marker("slow")]
    bad += [f"{item.nodeid}: uses {', '.join(sorted(used))} without the network marker"
            for item in items
            if (used := NETWORK_FIXTURES & set(getattr(item, "fixturenames", ())))
            and not item.get_closest_marker("network")]
    if bad:
        raise pytest.UsageError("test tiers: " + "; ".join(bad))


@pytest.fixture(scope="session")
def shared_db() -> Path:
    if not SHARED_DB.is_dir():
        pytest.fail(f"the shared QEncode entries are missing: {SHARED_DB}")
    return SHARED_DB


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable
