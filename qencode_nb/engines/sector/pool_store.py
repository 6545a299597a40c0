"""The sector engine's pool, kept once per content: which excitations QEncode's
> 12-qubit ADAPT pool keeps, and their generators in the CI space.

Both are functions of the content :mod:`qencode_nb.engines.pool_key` names (the Z2
symmetry, the active space's size, the code), never of the numeric environment: the
choice is exact Pauli algebra, the generators are determinant indices and signs.  So
they are kept in one ``sector-pool-<key>.npz`` beside the rebuild cache
(:func:`qencode_nb.hamiltonian.cache_arrays.array_file`) that every numeric environment
reads.  H10 [10e, 10o] (875 generators on 63,504 determinants): choosing the pool takes
4.2 s and its generators 5.7 s, storing both 10.5 s once; the 64 MB file reads back in
0.43 s (``benchmarks/sector_pool.py``, medians of 3 on the 2-core Intel Xeon).

Stored: ``kept`` (indices into :func:`qencode_nb.engines.ansatz.uccsd_excitations`),
``counts`` (pairs per generator) and every generator's pairs ``a``, ``b`` (their index dtypes) and
``v`` (int8); read back through :func:`qencode_nb.engines.sector.generators.from_pairs`,
which checks that each is a signed permutation of its support.
"""

from __future__ import annotations

FORMAT = 1
"""The file's layout (bump when it or its meaning changes)."""

PREFIX = "sector-pool"


def sector_pool(entry, rebuilt, ci_space, excitations, *,
                cache_dir=None) -> tuple[list, list, str]:
    """The kept pool of an ADAPT entry on the sector engine.

    Args:
        entry: :class:`qencode_nb.entry.model.Entry` (``active_space``).
        rebuilt: its :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` (``tapering``;
            ``chemistry.cache_key`` empty means no cache: nothing is read or written).
        ci_space: the :class:`~qencode_nb.engines.sector.space.CISpace` of the rebuilt
            active space (its ``norb``, ``nelec`` and determinant order).
        excitations: :func:`~qencode_nb.engines.ansatz.uccsd_excitations` of the entry,
            ``[(gate class, wires)]``.
        cache_dir: cache root (:func:`qencode_nb.hamiltonian.cache.cache_root`).

    Returns:
        ``(kept indices into excitations, [Generator] in pool order, cache status)``
        (statuses of :func:`~qencode_nb.hamiltonian.cache_arrays.array_file`).

    Raises:
        NotAnExcitation: a kept excitation's generator is not a signed permutation
            on the sector (:func:`~qencode_nb.engines.sector.generators.generator`).
    """
    from qencode_nb.engines.pool_key import pool_material
    from qencode_nb.hamiltonian.cache_arrays import array_file
    from qencode_nb.hamiltonian.cache_key import package_version

    tap = rebuilt.tapering
    # The excitations' order is qchem.excitations' (electrons, qubits and PennyLane's
    # version are in the material); the determinant order is PySCF's cistring.
    material = {**pool_material(PREFIX, FORMAT, entry.active_space[0], tap),
                "norb": int(ci_space.norb), "nelec": [int(n) for n in ci_space.nelec],
                "pyscf": package_version("pyscf")}

    def compute():
        return _build(entry, tap, ci_space, excitations)

    def restore(arrays):
        return _restore(arrays, ci_space.dim, len(excitations))

    (kept, gens), status = array_file(PREFIX, material, compute, restore,
                                      enabled=bool(rebuilt.chemistry.cache_key),
                                      cache_dir_=cache_dir)
    return kept, gens, status


def _build(entry, tap, ci_space, excitations) -> dict:
    """The pool's arrays, computed: the generator's choice and each kept generator."""
    import numpy as np
    import pennylane as qml

    from qencode_nb.engines.ansatz import tapered_pool_excitations
    from qencode_nb.engines.sector.generators import generators

    pool = tapered_pool_excitations(entry.active_space[0], tap.n_qubits_full,
                                    tap.generators, tap.paulixops, tap.z2_sectors)
    position = {(gate.__name__, tuple(wires)): i for i, (gate, wires) in enumerate(excitations)}
    kept = [position[(gate.__name__, tuple(wires))] for gate, wires, _ in pool]
    with qml.QueuingManager.stop_recording():
        gens = generators(ci_space, [qml.generator(g(0.0, wires=list(w)), format="observable")
                                     for g, w in (excitations[i] for i in kept)])
    empty = np.zeros(0, dtype=np.int64)
    return {"kept": np.array(kept, dtype=np.int64),
            "counts": np.array([g.a.size for g in gens], dtype=np.int64),
            "a": np.concatenate([g.a for g in gens] or [empty]),
            "b": np.concatenate([g.b for g in gens] or [empty]),
            "v": np.concatenate([g.v for g in gens] or [empty]).astype(np.int8)}


def _restore(arrays: dict, dim: int, n_excitations: int) -> tuple[list, list]:
    """``(kept, generators)`` of stored arrays.

    Raises:
        ValueError: the arrays do not fit together (counts, kept indices).
        NotAnExcitation: a generator's pairs are not a signed permutation.
    """
    import numpy as np

    from qencode_nb.engines.sector.generators import from_pairs

    kept, counts = arrays["kept"], arrays["counts"]
    a, b, v = arrays["a"], arrays["b"], arrays["v"]
    if (kept.ndim != 1 or counts.shape != kept.shape or np.any(counts < 1)
            or int(counts.sum()) != a.size or a.shape != b.shape or a.shape != v.shape
            or (kept.size and (kept.min() < 0 or kept.max() >= n_excitations))):
        raise ValueError(f"{kept.size} kept excitations, {counts.size} counts and "
                         f"{a.size} pairs do not fit a pool of {n_excitations}")
    ends = np.cumsum(counts)
    starts = ends - counts
    gens = [from_pairs(a[s:e], b[s:e], v[s:e], dim) for s, e in zip(starts, ends)]
    return [int(i) for i in kept], gens
