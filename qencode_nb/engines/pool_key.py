"""The key of a tapered excitation pool: the content the pool is a function of.

QEncode's tapered UCCSD/ADAPT pool (:func:`qencode_nb.engines.ansatz.tapered_uccsd_ops`,
:func:`~qencode_nb.engines.ansatz.tapered_pool_excitations`), its Pauli words (the fast
engine) and its generators in the CI space (the sector engine) depend on the active
space's electron count, the untapered qubit count, the Z2 symmetry generators, their
Pauli-X operators and the sectors, and on the PennyLane and qencode-nb code that computes
them.  The arithmetic is Pauli algebra on coefficients that are short binary fractions
(0.125, 0.25, 0.5, +-1) and integer index work: exact in double precision, in any order,
with no BLAS call and no numpy ufunc whose bits follow the CPU dispatch.  So a pool is
not a function of the numeric environment (kernels, threads, numpy dispatch), and its
key names the content, not the rebuild key (which names the environment): every
perturbation of a robustness study reads the pool the first one built.

The rebuild's environment still reaches the pool through the content: a kernel that
changed the Z2 symmetry (issue 36 saw the count change) changes the generators' terms
and so the key.
"""

from __future__ import annotations

from pathlib import Path

CODE_FILES = ("pool_key.py", "ansatz.py", "excitation_check.py", "fast/compiled.py",
              "sector/generators.py", "sector/space.py", "sector/pool_store.py")
"""Modules of ``qencode_nb/engines/`` whose source enters the key (any edit rebuilds
every kept pool once)."""


def code_sha256() -> str:
    """SHA-256 (hex) of the names and bytes of :data:`CODE_FILES`, in order
    (:func:`qencode_nb.hamiltonian.cache_key.files_sha256`)."""
    from qencode_nb.hamiltonian.cache_key import files_sha256

    return files_sha256(Path(__file__).resolve().parent, CODE_FILES)


def pool_material(kind: str, fmt: int, num_electrons: int, tapering) -> dict:
    """The key material of a pool result.

    Args:
        kind: what is kept (``"tapered-pool-words"``, ``"sector-pool"``).
        fmt: that result's format number.
        num_electrons: the active space's electrons (``problem.active_space``).
        tapering: the rebuild's :class:`~qencode_nb.hamiltonian.tapering.TaperResult`
            (fresh or restored; :func:`qencode_nb.hamiltonian.cache_payload.symmetry_terms`).

    Returns:
        ``{"kind", "format", "num_electrons", "n_qubits_full", "generators",
        "paulixops", "sectors", "pennylane", "code_sha256"}``.
    """
    from qencode_nb.hamiltonian.cache_key import package_version
    from qencode_nb.hamiltonian.cache_payload import symmetry_terms

    return {"kind": kind, "format": int(fmt), "num_electrons": int(num_electrons),
            **symmetry_terms(tapering), "pennylane": package_version("pennylane"),
            "code_sha256": code_sha256()}
