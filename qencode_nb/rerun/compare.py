"""Bit-level comparison of two energies (Ha): difference, ulps and ``float.hex``
(docs/explanations/notebook-contract.md, "Determinism": energies are compared as floats
and as hex)."""

from __future__ import annotations

import struct


def ulp_distance(a: float, b: float) -> int:
    """Number of representable doubles between ``a`` and ``b`` (0 when equal)."""

    def ordered(x: float) -> int:
        i = struct.unpack("<q", struct.pack("<d", x))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)

    return abs(ordered(a) - ordered(b))


def compare(energy: float, published: float) -> dict:
    """Bit-level comparison of two energies (Ha).

    Returns ``{"energy", "published", "delta_ha" (energy - published),
    "abs_delta_ha", "ulps", "energy_hex", "published_hex", "identical"}``;
    ``ulps`` counts representable doubles between the two (None when either is
    not finite: NaN and infinity have no distance).
    """
    import math

    delta = energy - published
    finite = math.isfinite(energy) and math.isfinite(published)
    return {
        "energy": energy, "published": published, "delta_ha": delta,
        "abs_delta_ha": abs(delta), "ulps": ulp_distance(energy, published) if finite else None,
        "energy_hex": float(energy).hex(), "published_hex": float(published).hex(),
        "identical": float(energy).hex() == float(published).hex(),
    }
