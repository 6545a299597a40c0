"""The entry's own provenance, as the audit records it (``entry_provenance``)."""

from __future__ import annotations


def entry_provenance(entry) -> dict:
    """The entry's own provenance, recorded as ``entry_provenance``.

    Args:
        entry: an :class:`~qencode_nb.entry.model.Entry`.

    Returns:
        ``{"tool_versions": {...}, "environment": {...} or None,
        "hamiltonian_source": str or None, "source": "qencode-json" | "params-yaml"}``;
        ``environment`` is QEncode's ``provenance.environment`` (platform,
        blas_threads, threads_pinned; QEncode schema 4.0.0), None when the entry is a
        params/ YAML alone.
    """
    raw = entry.raw or {}
    prov = raw.get("provenance") or {}
    return {"tool_versions": dict(entry.tool_versions or {}),
            "environment": prov.get("environment") if raw else None,
            "hamiltonian_source": entry.hamiltonian_source, "source": entry.kind}
