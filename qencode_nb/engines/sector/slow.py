"""Slow twins of the sector engine's kernels: plain numpy and scipy on dense matrices.

The reference the compiled loops of :mod:`qencode_nb.engines.sector.kernels` and
:func:`qencode_nb.engines.sector.space.energy_and_grad` are tested against (ffsim's
``_slow`` modules as the model).  A generator ``B = 2iG`` given as pairs ``(a, b,
v)`` (:class:`qencode_nb.engines.sector.generators.Generator`) is the dense real
antisymmetric ``(dim, dim)`` matrix with ``B[b, a] = v`` and ``B[a, b] = -v``; its
rotation is ``expm((theta/2) B)`` (:func:`scipy.linalg.expm`), not the closed
form the kernels use.  CI-space vectors are real and flat (length ``dim``, PySCF
FCI order); angles in radians; energies in Ha; gradients in Ha/rad.  For small
``dim`` only (``dim**2`` entries per matrix).  The word-by-word reference of the
generators themselves is
:func:`qencode_nb.engines.sector.generators.generator_matrix_reference`.

Numpy and scipy are imported inside the functions.
"""

from __future__ import annotations


def generator_matrix(a, b, v, dim: int):
    """Dense ``B`` of the pairs ``(a, b, v)``, shape ``(dim, dim)``, float64."""
    import numpy as np

    out = np.zeros((dim, dim))
    out[np.asarray(b), np.asarray(a)] = v
    out[np.asarray(a), np.asarray(b)] = -np.asarray(v)
    return out


def rotate(c, a, b, v, theta: float):
    """``expm((theta/2) B) c`` (a new vector; the kernel takes ``cos(theta/2)``,
    ``sin(theta/2)`` and works in place)."""
    from scipy.linalg import expm

    return expm(0.5 * theta * generator_matrix(a, b, v, c.shape[0])) @ c


def expval(lam, phi, a, b, v) -> float:
    """``<lam|B|phi>`` for real vectors."""
    return float(lam @ generator_matrix(a, b, v, phi.shape[0]) @ phi)


def adjoint_step(lam, phi, a, b, v, theta: float):
    """One backward step of the adjoint gradient: ``(<lam|B|phi>, expm(-(theta/2) B)
    phi, expm(-(theta/2) B) lam)`` (new vectors; the kernel updates both in place)."""
    return (expval(lam, phi, a, b, v), rotate(phi, a, b, v, -theta),
            rotate(lam, a, b, v, -theta))


def state(hf, gens, selected, params):
    """``prod_j expm((params[j]/2) B[selected[j]]) hf`` (first factor applied first),
    ``gens`` indexed by pool index (objects with ``a, b, v``), a new flat vector."""
    c = hf.copy()
    for k, theta in zip(selected, params, strict=True):
        g = gens[k]
        c = rotate(c, g.a, g.b, g.v, float(theta))
    return c


def energy_and_grad(h, ecore: float, hf, gens, selected, params):
    """``(E, dE/dparams)`` of :func:`state` on the dense CI-space Hamiltonian ``h``
    (``(dim, dim)``, Ha, without ``ecore``), by differentiating the product directly:
    ``d psi / d theta_j = U_m ... U_{j+1} (B_j/2) U_j ... U_1 hf`` and ``dE/d theta_j
    = 2 <psi|H d psi/d theta_j>`` (real vectors).  Float (Ha, ``ecore`` included)
    and float64 array of shape ``(len(selected),)`` (Ha/rad)."""
    import numpy as np
    from scipy.linalg import expm

    dim = hf.shape[0]
    bs = [generator_matrix(gens[k].a, gens[k].b, gens[k].v, dim) for k in selected]
    us = [expm(0.5 * float(t) * m) for t, m in zip(params, bs, strict=True)]
    prefix = [hf]
    for u in us:
        prefix.append(u @ prefix[-1])
    psi = prefix[-1]
    hpsi = h @ psi
    grad = np.zeros(len(selected))
    for j in range(len(selected)):
        d = 0.5 * (bs[j] @ prefix[j + 1])
        for u in us[j + 1:]:
            d = u @ d
        grad[j] = 2.0 * float(hpsi @ d)
    return float(psi @ hpsi) + ecore, grad
