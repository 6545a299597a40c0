"""Excitation generators in the CI space: ``B = 2iG`` of a Pauli-sum
excitation generator as a signed permutation of determinants.

Conventions (basis, qubit order, sign map ``s(Ia, Ib)``, ``B = 2iG`` and the
closed-form exponential) are those of :mod:`qencode_nb.engines.sector.space`.
:class:`Generator` is the fast form the sector engine runs;
:func:`generator_matrix_reference` the slow word-by-word reference it is
tested against.  Numpy, scipy and PySCF are imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import NotAnExcitation


def generator_matrix_reference(ci_space, generator):
    """``B = 2iG`` of a Pauli-sum generator as a real sparse ``(dim, dim)`` matrix
    acting on CI-space vectors (signs of :mod:`qencode_nb.engines.sector.space`).

    The slow reference (every Pauli word applied to every determinant); the
    test oracle of :func:`generator`.

    Raises:
        ValueError: ``B`` has an imaginary part, i.e. ``G`` is not an
            excitation generator.
    """
    import numpy as np
    import scipy.sparse as sp
    from pyscf.fci import cistring

    occ = ci_space.occupations()
    na_str, nb_str = ci_space.shape
    na, nb = ci_space.nelec
    sign = ci_space.sign.reshape(-1)
    rows, cols, vals = [], [], []
    src = np.arange(ci_space.dim)
    for word, coeff in generator.pauli_rep.items():
        flip = np.zeros(occ.shape[1], dtype=np.int8)
        phase = np.full(ci_space.dim, 2j * complex(coeff))
        for wire, pauli in word.items():
            n = occ[:, wire]
            if pauli == "X":
                flip[wire] = 1
            elif pauli == "Y":
                flip[wire] = 1
                phase = phase * np.where(n == 0, 1j, -1j)
            elif pauli == "Z":
                phase = phase * np.where(n == 0, 1.0, -1.0)
        new = occ ^ flip
        keep = (new[:, 0::2].sum(1) == na) & (new[:, 1::2].sum(1) == nb)
        if not keep.any():
            continue
        new = new[keep]
        weights = 1 << np.arange(ci_space.norb)
        ia = cistring.strs2addr(ci_space.norb, na, new[:, 0::2] @ weights)
        ib = cistring.strs2addr(ci_space.norb, nb, new[:, 1::2] @ weights)
        tgt = ia * nb_str + ib
        rows.append(tgt)
        cols.append(src[keep])
        vals.append(phase[keep] * sign[src[keep]] * sign[tgt])
    if not rows:
        return sp.csr_matrix((ci_space.dim, ci_space.dim))
    M = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(ci_space.dim, ci_space.dim))
    M.sum_duplicates()
    if M.nnz and abs(M.data.imag).max() > 1e-12:
        raise ValueError("generator_matrix: 2iG is not real on the sector; not an "
                         "excitation generator")
    M = sp.csr_matrix(M.real)
    M.eliminate_zeros()
    return M


@dataclass(frozen=True)
class Generator:
    """An excitation generator ``B = 2iG`` on the CI space as a signed permutation.

    ``B`` maps determinant ``src[i]`` to ``tgt[i]`` with weight ``val[i]``
    (+1 or -1), and ``B^2 = -P`` with ``P`` the projector on its support (the
    set of ``src``, equal to the set of ``tgt``).  Hence ``B^3 = -B`` and the
    closed form of :mod:`qencode_nb.engines.sector.space` needs only the support.

    Attributes:
        src, tgt: flat determinant indices (int64), shape ``(m,)``, ``m`` the
            support size.
        val: float64 weights +1/-1, shape ``(m,)``.
        a, b, v: the same as ``m/2`` pairs, ``B[b, a] = v``, ``B[a, b] = -v``
            (the compiled loops of :mod:`qencode_nb.engines.sector.kernels`).
    """

    src: object
    tgt: object
    val: object
    a: object = None
    b: object = None
    v: object = None

    def expval(self, lam, phi) -> float:
        """``<lam|B|phi>`` for real flat vectors (one compiled pass over the pairs)."""
        from qencode_nb.engines.sector.kernels import expval

        return float(expval(lam, phi, self.a, self.b, self.v))

    def exp(self, theta: float, c):
        """``exp((theta/2) B) c = c + sin(theta/2) Bc - (1 - cos(theta/2)) P c``
        (radians; returns a new flat vector)."""
        import numpy as np

        half = 0.5 * theta
        out = c.copy()
        out[self.tgt] = np.cos(half) * c[self.tgt] + np.sin(half) * (self.val * c[self.src])
        return out

    def exp_inplace(self, theta: float, c) -> None:
        """:meth:`exp` written into ``c`` (same arithmetic, bit for bit; a
        compiled loop over the pairs of the support)."""
        import math

        from qencode_nb.engines.sector.kernels import rotate

        half = 0.5 * theta
        rotate(c, self.a, self.b, self.v, math.cos(half), math.sin(half))

    def matrix(self, dim: int):
        """``B`` as a CSR matrix of shape ``(dim, dim)``."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.val, (self.tgt, self.src)), shape=(dim, dim))


def generator(ci_space, pauli_generator) -> Generator:
    """The :class:`Generator` of a Pauli-sum excitation generator ``G``.

    Every Pauli word of an excitation flips the same wires (X or Y); so the
    flipped determinants are found once, only those that stay in the
    ``(N_alpha, N_beta)`` sector are kept, and each word contributes its
    phase there (the sign map of :mod:`qencode_nb.engines.sector.space`).  Agrees with
    :func:`generator_matrix_reference` exactly (tested).

    Args:
        ci_space: :class:`qencode_nb.engines.sector.space.CISpace`.
        pauli_generator: PennyLane operator with a ``pauli_rep`` on the
            untapered Jordan-Wigner wires (``qml.generator(gate, "observable")``).

    Raises:
        NotAnExcitation: the words flip different wires, ``2iG`` is not real
            on the sector, or ``B^2 != -P`` (not a single excitation's generator).
    """
    import numpy as np
    from pyscf.fci import cistring

    words = list(pauli_generator.pauli_rep.items())
    flips = {tuple(sorted(w for w, p in word.items() if p in "XY")) for word, _ in words}
    if len(flips) != 1:
        raise NotAnExcitation(f"the Pauli words of {pauli_generator!r} flip different wire "
                              "sets; not an excitation generator")
    if not next(iter(flips)):
        raise NotAnExcitation(f"{pauli_generator!r} flips no wire (only Z and I); not an "
                              "excitation generator")
    fw = list(next(iter(flips)))
    occ = ci_space.occupations()
    na, nb = ci_space.nelec
    sub = occ[:, fw].astype(np.int64)
    delta = 1 - 2 * sub                       # occupation change of each flipped wire
    alpha = np.array([w % 2 == 0 for w in fw])
    keep = (delta[:, alpha].sum(1) == 0) & (delta[:, ~alpha].sum(1) == 0)
    src = np.nonzero(keep)[0]
    if src.size == 0:
        raise NotAnExcitation(f"{pauli_generator!r} has no support in the sector {ci_space.nelec}")
    occ_k = occ[src]
    new = occ_k.copy()
    new[:, fw] ^= 1
    weights = 1 << np.arange(ci_space.norb)
    ia = cistring.strs2addr(ci_space.norb, na, new[:, 0::2] @ weights)
    ib = cistring.strs2addr(ci_space.norb, nb, new[:, 1::2] @ weights)
    tgt = ia * ci_space.shape[1] + ib
    val = np.zeros(src.size, dtype=complex)
    for word, coeff in words:
        phase = np.full(src.size, 2j * complex(coeff))
        for wire, pauli in word.items():
            n = occ_k[:, wire]
            if pauli == "Y":
                phase = phase * np.where(n == 0, 1j, -1j)
            elif pauli == "Z":
                phase = phase * np.where(n == 0, 1.0, -1.0)
        val += phase
    sign = ci_space.sign.reshape(-1)
    val = val * sign[src] * sign[tgt]
    if abs(val.imag).max() > 1e-12:
        raise NotAnExcitation(f"2iG of {pauli_generator!r} is not real on the sector")
    val = val.real
    nz = val != 0
    src, tgt, val = src[nz], tgt[nz], val[nz]
    if (np.abs(np.abs(val) - 1.0).max() > 1e-12 or not np.array_equal(np.sort(src), np.sort(tgt))
            or val.size == 0):
        raise NotAnExcitation(f"B = 2iG of {pauli_generator!r} is not a signed permutation "
                              "of its support (B^2 != -P)")
    return _paired(src, tgt, np.sign(val), ci_space.dim, repr(pauli_generator))


def _paired(src, tgt, val, dim: int, what: str) -> Generator:
    """The :class:`Generator` of a signed permutation ``(src, tgt, val)``, with its pairs.

    Raises:
        NotAnExcitation: the support does not pair antisymmetrically.
    """
    import numpy as np

    pair = src < tgt
    a, b, v = src[pair], tgt[pair], val[pair]
    partner = np.full(dim, -1)
    partner[tgt] = src
    weight = np.zeros(dim)
    weight[tgt] = val
    if (2 * a.size != src.size or not np.array_equal(partner[a], b)
            or not np.array_equal(weight[a], -v)):
        raise NotAnExcitation(f"B = 2iG of {what} does not pair its support "
                              "antisymmetrically (B[a, b] != -B[b, a])")
    return Generator(src=src, tgt=tgt, val=val, a=np.ascontiguousarray(a),
                     b=np.ascontiguousarray(b), v=np.ascontiguousarray(v))


def from_pairs(a, b, v, dim: int) -> Generator:
    """The :class:`Generator` whose pairs are ``(a, b, v)`` (``B[b, a] = v``,
    ``B[a, b] = -v``): the inverse of :func:`generator`'s pairing, bit for bit.

    :func:`generator` lists the support in increasing determinant order, so ``src`` is
    ``a`` and ``b`` together, sorted; ``tgt`` and ``val`` follow.  The index dtypes are
    kept: ``src`` takes ``a``'s, ``tgt`` takes ``b``'s (``numpy.nonzero``'s int64 and
    ``cistring.strs2addr``'s int32 in :func:`generator`).  How a stored pool is read back
    (:mod:`qencode_nb.engines.sector.pool_store`).

    Args:
        a, b: integer determinant indices in ``[0, dim)``, shape ``(m,)``, ``a < b``.
        v: weights +1/-1, shape ``(m,)``.
        dim: the CI space's dimension.

    Raises:
        NotAnExcitation: an index outside the space, a determinant twice, ``a >= b``, a
            weight other than +1/-1, or an empty support.
    """
    import numpy as np

    a, b, v = np.asarray(a), np.asarray(b), np.asarray(v, dtype=np.float64)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        raise NotAnExcitation(f"pair indices of dtypes {a.dtype}, {b.dtype} are not integers")
    src = np.concatenate([a, b.astype(a.dtype)])
    if (a.ndim != 1 or a.shape != b.shape or a.shape != v.shape or not a.size
            or src.min() < 0 or src.max() >= dim or not np.all(a < b)
            or not np.all(np.abs(v) == 1.0)):
        raise NotAnExcitation(f"pairs of {a.size} determinants are not a signed permutation "
                              f"of a support in [0, {dim}) with a < b and weights +1/-1")
    order = np.argsort(src, kind="stable")
    src = src[order]
    if np.any(src[1:] == src[:-1]):
        raise NotAnExcitation("a determinant appears in two pairs")
    tgt = np.concatenate([b, a.astype(b.dtype)])[order]
    val = np.concatenate([v, -v])[order]
    return _paired(src, tgt, val, dim, f"the pairs of {a.size} determinants")


def generators(ci_space, pauli_generators) -> list:
    """:func:`generator` of each operator, in order (a list of :class:`Generator`)."""
    return [generator(ci_space, g) for g in pauli_generators]
