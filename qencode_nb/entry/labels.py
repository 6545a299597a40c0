"""Short labels of entries for tables and figures (pure string logic).

:func:`short_name` turns a QEncode entry id into the label the margin plot, the
robustness figure and summary, the audit's figure and the report use.
"""

from __future__ import annotations


def short_name(entry_id: str) -> str:
    """``H4_ccpvdz_JW_UCCSD_v4_tapered__sha256_7606...`` -> ``H4 JW UCCSD 7606``."""
    text = str(entry_id)
    head, _, digest = text.partition("__sha256_")
    parts = [p for p in head.split("_") if p not in ("ccpvdz", "v4", "tapered")]
    return " ".join(parts + ([digest[:4]] if digest else []))
