"""Shared fixtures: the real QEncode v4 entries in ../shared (never copied here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

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
