"""Compiled inner loops of the fast statevector engine (numba, no fastmath, serial).

A state is a complex128 vector of ``2**n`` amplitudes, big-endian as PennyLane
orders it (wire ``w`` is bit ``n - 1 - w`` of the index).  A Pauli word ``P``
is three numbers: ``x`` (bits where it has X or Y), ``z`` (bits where it has Z
or Y) and ``ph0 = i**n_Y``, so that ``P|b> = ph0 * (-1)**popcount(b & z) |b ^ x>``
(``Y = i X Z``).

A circuit (:class:`qencode_nb.engines.fast.compiled.Circuit`) is a gate table
``gi`` (int64, one row ``kind, x, z, pidx, lo, hi`` per gate), the factors
``ga`` (float64) and phases ``gph`` (complex128), and a flat list of Pauli
words ``wx, wz, wc`` (``wc`` = coefficient x ``ph0``) for multi-word generators:

- kind 0, a rotation ``exp(i a theta P)``, ``theta = params[pidx]``, ``P`` the
  word ``(x, z, gph)``;
- kind 1, a CNOT, ``x`` the control bit, ``z`` the target bit;
- kind 2, ``exp(i a theta K)`` for ``K = sum_j wc_j P_j`` (words ``lo .. hi -
  1``) with ``K**3 = K`` (twice an excitation generator, whose ``B = 2iG``
  satisfies ``B**3 = -B``, checked when the pool is built):
  ``1 + i sin(phi) K + (cos(phi) - 1) K**2``.

A Hamiltonian is a CSR matrix (``hk = 0``: ``indptr, indices, data``) or, on
many qubits, its Pauli terms grouped by ``x`` (``hk = 1``: ``tx, tz, tc`` sorted
by ``x``, group starts ``gptr``, low-bit sign table ``slo`` over ``lbits``
bits; :func:`grouped_apply`).

Every loop runs serially in a fixed order, so results do not depend on
thread counts; ``cache=True`` keeps the compiled code on disk (numba's
``__pycache__``), so a new process loads it instead of compiling.
"""

from __future__ import annotations

import math

import numba
import numpy as np

ROT, CNOT, GEN = 0, 1, 2


@numba.njit(cache=True, inline="always")
def _sign(b, z):
    """``(-1)**popcount(b & z)``, by folding the bits (branch-free; the parity
    of a 4-bit value is bit ``v`` of ``0x6996``)."""
    v = b & z
    v ^= v >> 32
    v ^= v >> 16
    v ^= v >> 8
    v ^= v >> 4
    v &= 0xF
    return 1.0 - 2.0 * ((0x6996 >> v) & 1)


@numba.njit(cache=True)
def rotate(psi, x, z, ph0, c, s):
    """``psi <- exp(i phi P) psi = cos(phi) psi + i sin(phi) P psi`` in place,
    ``c = cos(phi)``, ``s = sin(phi)`` (``P**2 = 1``)."""
    dim = psi.shape[0]
    if x == 0:
        for b in range(dim):
            psi[b] = psi[b] * (c + 1j * s * ph0 * _sign(b, z))
        return
    for b in range(dim):
        b2 = b ^ x
        if b < b2:
            u = psi[b]
            v = psi[b2]
            # P|b2> = ph0 sign(b2) |b>, P|b> = ph0 sign(b) |b2>
            psi[b] = c * u + 1j * s * (ph0 * _sign(b2, z)) * v
            psi[b2] = c * v + 1j * s * (ph0 * _sign(b, z)) * u


@numba.njit(cache=True)
def cnot(psi, cbit, tbit):
    """CNOT in place: swap the amplitudes of ``b`` and ``b | tbit`` where the
    control bit is set and the target bit is not."""
    for b in range(psi.shape[0]):
        if (b & cbit) and not (b & tbit):
            t = psi[b]
            psi[b] = psi[b | tbit]
            psi[b | tbit] = t


@numba.njit(cache=True)
def words_apply(wx, wz, wc, lo, hi, psi, out):
    """``out <- sum_{j in lo..hi-1} wc_j P_j psi`` (``wc_j`` includes ``ph0``)."""
    for b in range(psi.shape[0]):
        out[b] = 0j
    for j in range(lo, hi):
        x = wx[j]
        z = wz[j]
        c = wc[j]
        for b in range(psi.shape[0]):
            out[b ^ x] += c * _sign(b, z) * psi[b]


@numba.njit(cache=True)
def pauli_expval(lam, psi, x, z, ph0):
    """``<lam|P|psi>`` (complex): ``sum_b conj(lam[b ^ x]) ph0 sign(b) psi[b]``."""
    acc = 0j
    for b in range(psi.shape[0]):
        acc += np.conj(lam[b ^ x]) * (ph0 * _sign(b, z)) * psi[b]
    return acc


@numba.njit(cache=True)
def grouped_apply(tx, tz, tc, gptr, slo, lbits, psi, out):
    """``out <- sum_j tc_j P_j psi`` for terms sorted by ``x`` in groups
    ``gptr[g] .. gptr[g + 1] - 1`` of one ``x`` each (the ``hk = 1`` path).

    A group's terms act as ``out[b ^ x] += d(b) psi[b]`` with
    ``d(b) = sum_j tc_j sign(b, z_j)``.  Splitting ``b = (h, l)`` into its high
    bits and its ``lbits`` low bits factors each sign, ``sign(b, z) =
    sign(h, z >> lbits) * slo[j, l]``, so ``d`` for one ``h`` is a sum of the
    rows ``slo[j]`` (the low-bit signs, tabulated once per Hamiltonian) scaled by
    a scalar: a contiguous loop the compiler vectorises, with the same
    arithmetic for every run (fixed order, no threads).
    """
    nl = 1 << lbits
    mask = nl - 1
    nh = psi.shape[0] >> lbits
    for b in range(psi.shape[0]):
        out[b] = 0j
    dre = np.empty(nl)
    dim = np.empty(nl)
    for g in range(gptr.shape[0] - 1):
        j0 = gptr[g]
        j1 = gptr[g + 1]
        x = tx[j0]
        xh = (x >> lbits) << lbits
        xl = x & mask
        for h in range(nh):
            for l in range(nl):
                dre[l] = 0.0
                dim[l] = 0.0
            for j in range(j0, j1):
                sh = _sign(h, tz[j] >> lbits)
                ar = tc[j].real * sh
                ai = tc[j].imag * sh
                row = slo[j]
                for l in range(nl):
                    dre[l] += ar * row[l]
                    dim[l] += ai * row[l]
            base = h << lbits
            dest = base ^ xh
            for l in range(nl):
                out[dest | (l ^ xl)] += complex(dre[l], dim[l]) * psi[base | l]


@numba.njit(cache=True)
def hmatvec(hk, indptr, indices, data, tx, tz, tc, gptr, slo, lbits, psi, out):
    """``out <- H psi``: CSR rows in order (``hk = 0``) or the grouped terms
    (``hk = 1``, :func:`grouped_apply`)."""
    if hk == 0:
        for r in range(indptr.shape[0] - 1):
            acc = 0j
            for j in range(indptr[r], indptr[r + 1]):
                acc += data[j] * psi[indices[j]]
            out[r] = acc
    else:
        grouped_apply(tx, tz, tc, gptr, slo, lbits, psi, out)


@numba.njit(cache=True)
def vdot_real(a, b):
    """``Re <a|b>``."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i].real * b[i].real + a[i].imag * b[i].imag
    return acc


@numba.njit(cache=True)
def vdot(a, b):
    """``<a|b>``."""
    acc = 0j
    for i in range(a.shape[0]):
        acc += np.conj(a[i]) * b[i]
    return acc


@numba.njit(cache=True)
def _gen_exp(psi, wx, wz, wc, lo, hi, phi, v1, v2):
    """``psi <- exp(i phi K) psi`` for ``K**3 = K`` (kind 2), ``v1, v2`` scratch."""
    words_apply(wx, wz, wc, lo, hi, psi, v1)
    words_apply(wx, wz, wc, lo, hi, v1, v2)
    s = 1j * math.sin(phi)
    c = math.cos(phi) - 1.0
    for b in range(psi.shape[0]):
        psi[b] += s * v1[b] + c * v2[b]


@numba.njit(cache=True)
def gate(psi, g, gi, ga, gph, wx, wz, wc, params, sign, v1, v2):
    """Apply gate ``g`` (``sign = -1``: its inverse) to ``psi`` in place."""
    kind = gi[g, 0]
    if kind == 1:
        cnot(psi, gi[g, 1], gi[g, 2])
        return
    phi = sign * ga[g] * params[gi[g, 3]]
    if kind == 0:
        rotate(psi, gi[g, 1], gi[g, 2], gph[g], math.cos(phi), math.sin(phi))
    else:
        _gen_exp(psi, wx, wz, wc, gi[g, 4], gi[g, 5], phi, v1, v2)


@numba.njit(cache=True)
def state(psi0, gi, ga, gph, wx, wz, wc, params):
    """``U(params) psi0`` (a new vector)."""
    psi = psi0.copy()
    v1 = np.empty_like(psi)
    v2 = np.empty_like(psi)
    for g in range(gi.shape[0]):
        gate(psi, g, gi, ga, gph, wx, wz, wc, params, 1.0, v1, v2)
    return psi


@numba.njit(cache=True)
def energy(psi0, gi, ga, gph, wx, wz, wc, params, hk, indptr, indices, data, tx, tz, tc,
           gptr, slo, lbits):
    """``Re <psi|H|psi>`` (Ha) of ``psi = U(params) psi0``."""
    psi = state(psi0, gi, ga, gph, wx, wz, wc, params)
    hpsi = np.empty_like(psi)
    hmatvec(hk, indptr, indices, data, tx, tz, tc, gptr, slo, lbits, psi, hpsi)
    return vdot_real(psi, hpsi)


@numba.njit(cache=True)
def energy_and_grad(psi0, gi, ga, gph, wx, wz, wc, params, hk, indptr, indices, data,
                    tx, tz, tc, gptr, slo, lbits, grad):
    """Energy (Ha) and its exact gradient (Ha/rad) into ``grad`` (adjoint method).

    Forward ``psi = U_G ... U_1 psi0`` and ``lam = H psi``; then gate by gate
    backwards, with ``psi`` and ``lam`` the states after gate ``g``:
    ``dE/dtheta += 2 Re <lam| i a P |psi> = -2 a Im <lam|P|psi>`` (``G`` for
    kind 2), and both states are taken back through ``U_g``.  A parameter
    shared by several gates sums their contributions.
    """
    psi = state(psi0, gi, ga, gph, wx, wz, wc, params)
    lam = np.empty_like(psi)
    hmatvec(hk, indptr, indices, data, tx, tz, tc, gptr, slo, lbits, psi, lam)
    e = vdot_real(psi, lam)
    v1 = np.empty_like(psi)
    v2 = np.empty_like(psi)
    for k in range(grad.shape[0]):
        grad[k] = 0.0
    for g in range(gi.shape[0] - 1, -1, -1):
        kind = gi[g, 0]
        if kind == 0:
            ev = pauli_expval(lam, psi, gi[g, 1], gi[g, 2], gph[g])
            grad[gi[g, 3]] += -2.0 * ga[g] * ev.imag
        elif kind == 2:
            words_apply(wx, wz, wc, gi[g, 4], gi[g, 5], psi, v1)
            grad[gi[g, 3]] += -2.0 * ga[g] * vdot(lam, v1).imag
        gate(psi, g, gi, ga, gph, wx, wz, wc, params, -1.0, v1, v2)
        gate(lam, g, gi, ga, gph, wx, wz, wc, params, -1.0, v1, v2)
    return e
