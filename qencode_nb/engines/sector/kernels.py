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
