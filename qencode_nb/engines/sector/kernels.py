"""Compiled inner loops of the sector engine (numba, no fastmath, serial).

An excitation generator ``B`` pairs the determinants of its support:
``B[b, a] = v`` and ``B[a, b] = -v`` with ``v = +1/-1``
(:class:`qencode_nb.engines.sector.space.Generator`, arrays ``a, b, v``).  On each pair
``exp((theta/2) B)`` is the plane rotation written in :func:`rotate`, with the
arithmetic of :meth:`qencode_nb.engines.sector.space.Generator.exp` (``cos*x + sin*(v*y)``),
so the two agree bit for bit (tested).  Serial loops in a fixed order: the
results do not depend on thread counts.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def rotate(c, a, b, v, cs, sn):
    """``c <- exp((theta/2) B) c`` in place, ``cs = cos(theta/2)``, ``sn = sin(theta/2)``."""
    for i in range(a.shape[0]):
        ca = c[a[i]]
        cb = c[b[i]]
        c[b[i]] = cs * cb + sn * (v[i] * ca)
        c[a[i]] = cs * ca + sn * (-v[i] * cb)


@numba.njit(cache=True)
def expval(lam, phi, a, b, v):
    """``<lam|B|phi>`` for real vectors (sum over pairs in order)."""
    s = 0.0
    for i in range(a.shape[0]):
        s += lam[b[i]] * (v[i] * phi[a[i]]) - lam[a[i]] * (v[i] * phi[b[i]])
    return s


@numba.njit(cache=True)
def adjoint_step(lam, phi, a, b, v, cs, sn):
    """One backward step of the adjoint gradient in a single pass:
    returns ``<lam|B|phi>`` and rotates ``phi`` and ``lam`` by ``exp(-(theta/2) B)``
    (``cs = cos(theta/2)``, ``sn = sin(theta/2)``)."""
    s = 0.0
    for i in range(a.shape[0]):
        pa = phi[a[i]]
        pb = phi[b[i]]
        la = lam[a[i]]
        lb = lam[b[i]]
        s += lb * (v[i] * pa) - la * (v[i] * pb)
        phi[b[i]] = cs * pb - sn * (v[i] * pa)
        phi[a[i]] = cs * pa - sn * (-v[i] * pb)
        lam[b[i]] = cs * lb - sn * (v[i] * la)
        lam[a[i]] = cs * la - sn * (-v[i] * lb)
    return s


@numba.njit(cache=True)
def mixed_sigma(c, sigma, rows, targets, link_pair, link_sign, w, gather_pos, gather_src,
                gather_sign):
    """``sigma += `` the opposite-spin part of H·c without its ``p = q, r = s`` diagonal
    (:mod:`qencode_nb.engines.sector.sigma`, tables of
    :class:`~qencode_nb.engines.sector.sigma.SplitHamiltonian`); ``c``, ``sigma`` of
    shape ``(na_str, nb_str)``, in place.  One matrix product ``rows[Ia] @ T`` per
    alpha string (BLAS through ``np.dot``)."""
    na_str, nb_str = c.shape
    n_links = targets.shape[1]
    t = np.zeros((rows.shape[2], nb_str))
    t_flat = t.reshape(-1)
    g = np.empty((n_links + 1, nb_str))
    for ia in range(na_str):
        for k in range(gather_pos.shape[0]):
            t_flat[gather_pos[k]] = gather_sign[k] * c[ia, gather_src[k]]
        np.dot(rows[ia], t, g)
        for link in range(n_links):
            ja = targets[ia, link]
            pair = link_pair[ia, link]
            s = link_sign[ia, link]
            for jb in range(nb_str):
                sigma[ja, jb] += g[link, jb] + s * w[pair, jb] * c[ia, jb]
        for jb in range(nb_str):
            sigma[ia, jb] += g[n_links, jb]


# Packed pools (:mod:`qencode_nb.engines.sector.packed`): the pairs of every generator
# of a pool in two int32 arrays, ``first[i] = a`` and ``second[i] = b`` for ``v = +1``,
# ``~b`` for ``v = -1``; generator ``k`` owns ``offsets[k]:offsets[k + 1]``.  The
# arithmetic is that of :func:`rotate`, :func:`expval` and :func:`adjoint_step` with
# ``v * x`` written as ``x`` or ``-x`` (exact for ``v = +1/-1``): the same bits.


@numba.njit(cache=True)
def packed_rotate(c, first, second, offsets, selected, cs, sn):
    """:func:`rotate` by each ``selected[j]`` in order, ``cs[j]``, ``sn[j]`` its
    ``cos(theta_j/2)``, ``sin(theta_j/2)``; ``c`` in place."""
    for j in range(selected.shape[0]):
        k = selected[j]
        x = cs[j]
        y = sn[j]
        for i in range(offsets[k], offsets[k + 1]):
            a = first[i]
            b = second[i]
            neg = b < 0
            if neg:
                b = ~b
            ca = c[a]
            cb = c[b]
            vca = -ca if neg else ca
            vcb = cb if neg else -cb
            c[b] = x * cb + y * vca
            c[a] = x * ca + y * vcb


@numba.njit(cache=True)
def packed_adjoint(lam, phi, first, second, offsets, selected, cs, sn, grad):
    """The backward walk of the adjoint gradient: for ``j`` from last to first,
    ``grad[j] = `` :func:`adjoint_step` by ``selected[j]`` (``lam``, ``phi`` in place)."""
    for j in range(selected.shape[0] - 1, -1, -1):
        k = selected[j]
        x = cs[j]
        y = sn[j]
        s = 0.0
        for i in range(offsets[k], offsets[k + 1]):
            a = first[i]
            b = second[i]
            neg = b < 0
            if neg:
                b = ~b
            pa = phi[a]
            pb = phi[b]
            la = lam[a]
            lb = lam[b]
            vpa = -pa if neg else pa
            vpb = -pb if neg else pb
            vla = -la if neg else la
            vlb = -lb if neg else lb
            s += lb * vpa - la * vpb
            phi[b] = x * pb - y * vpa
            phi[a] = x * pa - y * (-vpb)
            lam[b] = x * lb - y * vla
            lam[a] = x * la - y * (-vlb)
        grad[j] = s


@numba.njit(cache=True)
def packed_expvals(lam, phi, first, second, offsets, out):
    """``out[k] = `` :func:`expval` ``<lam|B_k|phi>`` of every generator of the pool."""
    for k in range(offsets.shape[0] - 1):
        s = 0.0
        for i in range(offsets[k], offsets[k + 1]):
            a = first[i]
            b = second[i]
            neg = b < 0
            if neg:
                b = ~b
            pa = phi[a]
            pb = phi[b]
            vpa = -pa if neg else pa
            vpb = -pb if neg else pb
            s += lam[b] * vpa - lam[a] * vpb
        out[k] = s
