"""Shared fixtures: the real QEncode v4 entries in ../shared (never copied here)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Determinism (DESIGN.md): the test process and the kernels it starts run at one BLAS
# thread unless a test asks otherwise.  Set before anything here imports numpy; the
# runtime limit covers a numpy that a plugin may have loaded earlier.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(limits=1)

ROOT = Path(__file__).resolve().parents[1]
SHARED_DB = ROOT.parent / "shared" / "qencode-v4" / "db"
AUDIT_NB = ROOT / "notebooks" / "audit.ipynb"

LIH_PAR_HEA = SHARED_DB / "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json"
H2_JW_UCCSD = SHARED_DB / "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed.json"


@pytest.fixture(scope="session")
def shared_db() -> Path:
    if not SHARED_DB.is_dir():
        pytest.fail(f"the shared QEncode entries are missing: {SHARED_DB}")
    return SHARED_DB


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable
