"""The PennyLane versions the faithful engine was proven for, and why it does not run
under another.

Proven means: for the proof set (:data:`qencode_nb.studies.faithful.PROOF_SET`: every
ansatz, mapping, measurement path and size class the recorded releases hold) the
faithful engine and the plain QNode gave the same bits at every evaluation of whole
COBYLA paths, in the stack that carries that PennyLane (``qencode-nb study faithful``).
Under any other version the plain QNode runs and the card says why.  Importing this
module imports nothing heavy.
"""

from __future__ import annotations

#: PennyLane version -> where the proof was measured (QEncode v3's recorded stack
#: carries 0.44.1, v4's and this project's lock 0.45.0).
PROVEN = {
    "0.44.1": "QEncode v3 recorded stack v3-1894cba55403 (2026-12-07, AMD Zen 3)",
    "0.45.0": "QEncode v4 recorded stack v4-fb4ff189969b and requirements.lock "
              "(2026-12-07, AMD Zen 3)",
}


def pennylane_version() -> str:
    """The installed PennyLane's version (from its distribution metadata)."""
    from importlib.metadata import version

    return version("pennylane")


def why_not(version: str | None = None) -> str | None:
    """Why the faithful engine does not run under PennyLane ``version`` (default: the
    installed one), or None when it was proven for it."""
    version = version or pennylane_version()
    if version in PROVEN:
        return None
    return (f"PennyLane {version} is not one the faithful engine was proven for "
            f"({', '.join(PROVEN)}); the plain QNode runs")
