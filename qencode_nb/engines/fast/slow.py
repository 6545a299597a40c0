"""Slow twins of the fast engine's kernels: plain numpy and scipy on dense matrices.

The reference the compiled loops of :mod:`qencode_nb.engines.fast.kernels` and the
circuits of :mod:`qencode_nb.engines.fast.compiled` are tested against (ffsim's
``_slow`` modules as the model): every operator is a dense ``(2**n, 2**n)``
complex128 matrix built from Kronecker products of the one-qubit Pauli matrices,
and every gate a matrix exponential (:func:`scipy.linalg.expm`), so no bit trick
of the kernels is reused.  For small ``n`` only (``4**n`` entries per matrix).

Conventions (the kernels'): a state is ``2**n`` complex amplitudes, wire ``w`` is
bit ``n - 1 - w`` of the index (PennyLane's big-endian order), so the Kronecker
product runs from wire 0 to wire ``n - 1``.  A mask pair ``(x, z)`` stands for the
operator ``X**x Z**z``: on each wire ``X`` where only the x bit is set, ``Z`` where
only the z bit is, ``X Z`` (``= -i Y``) where both are; the kernels' word
``(x, z, ph0)`` is ``ph0 * X**x Z**z`` (``ph0 = i**n_Y`` for a Pauli word).
Angles in radians; energies in Ha; gradients in Ha/rad.

Numpy and scipy are imported inside the functions.
"""

from __future__ import annotations

#: One-qubit Pauli matrices by letter, as nested lists (numpy loads on first use).
PAULI = {"I": ((1, 0), (0, 1)), "X": ((0, 1), (1, 0)), "Y": ((0, -1j), (1j, 0)),
         "Z": ((1, 0), (0, -1))}


def kron_all(factors):
    """``factors[0] ⊗ factors[1] ⊗ ...`` (wire 0 first), a dense complex128 matrix."""
    import numpy as np

    out = np.ones((1, 1), dtype=np.complex128)
    for f in factors:
        out = np.kron(out, np.asarray(f, dtype=np.complex128))
    return out


def word_matrix(word: dict, n: int):
    """The Pauli word ``{wire: "X"|"Y"|"Z"}`` on ``n`` wires, shape ``(2**n, 2**n)``.

    Raises:
        KeyError: a letter other than I, X, Y, Z.
    """
    return kron_all(PAULI[word.get(w, "I")] for w in range(n))


def xz_matrix(x: int, z: int, n: int):
    """``X**x Z**z`` of the module docstring, shape ``(2**n, 2**n)``."""
    import numpy as np

    factors = []
    for w in range(n):
        bit = 1 << (n - 1 - w)
        m = np.eye(2, dtype=np.complex128)
        if x & bit:
            m = m @ np.array(PAULI["X"], dtype=np.complex128)
        if z & bit:
            m = m @ np.array(PAULI["Z"], dtype=np.complex128)
        factors.append(m)
    return kron_all(factors)


def hamiltonian_matrix(terms, n: int):
    """``sum_j c_j P_j`` of ``[(word, c)]`` (words as :func:`word_matrix` takes them, Ha),
    shape ``(2**n, 2**n)``."""
    import numpy as np

    out = np.zeros((1 << n, 1 << n), dtype=np.complex128)
    for word, c in terms:
        out += complex(c) * word_matrix(word, n)
    return out


def masks_matrix(tx, tz, tc, n: int):
    """``sum_j tc_j X**tx_j Z**tz_j`` (the kernels' term arrays; ``tc`` includes
    ``ph0``), shape ``(2**n, 2**n)``."""
    import numpy as np

    out = np.zeros((1 << n, 1 << n), dtype=np.complex128)
    for x, z, c in zip(tx, tz, tc):
        out += complex(c) * xz_matrix(int(x), int(z), n)
    return out


def rotate(psi, x: int, z: int, ph0: complex, phi: float):
    """``expm(i phi P) psi`` for ``P = ph0 X**x Z**z`` (a new vector; the kernel takes
    ``cos(phi)``, ``sin(phi)``)."""
    from scipy.linalg import expm

    n = psi.shape[0].bit_length() - 1
    return expm(1j * phi * ph0 * xz_matrix(x, z, n)) @ psi


def cnot_matrix(cbit: int, tbit: int, n: int):
    """CNOT with control bit mask ``cbit`` and target bit mask ``tbit`` (one bit each):
    ``|0><0|_c ⊗ 1 + |1><1|_c ⊗ X_t``, shape ``(2**n, 2**n)``."""
    c = n - cbit.bit_length()      # the wire of the bit
    t = n - tbit.bit_length()
    keep = kron_all(((1, 0), (0, 0)) if w == c else PAULI["I"] for w in range(n))
    flip = kron_all(((0, 0), (0, 1)) if w == c else PAULI["X"] if w == t else PAULI["I"]
                    for w in range(n))
    return keep + flip


def words_apply(wx, wz, wc, lo: int, hi: int, psi):
    """``sum_{j in lo..hi-1} wc_j X**wx_j Z**wz_j psi`` (a new vector)."""
    n = psi.shape[0].bit_length() - 1
    return masks_matrix(wx[lo:hi], wz[lo:hi], wc[lo:hi], n) @ psi


def pauli_expval(lam, psi, x: int, z: int, ph0: complex) -> complex:
    """``<lam|P|psi>`` for ``P = ph0 X**x Z**z``."""
    import numpy as np

    n = psi.shape[0].bit_length() - 1
    return complex(np.vdot(lam, ph0 * (xz_matrix(x, z, n) @ psi)))


def generator(circuit, g: int):
    """The Hermitian generator ``A_g`` of gate ``g`` of a
    :class:`~qencode_nb.engines.fast.compiled.Circuit` (``exp(i a theta A_g)``):
    the rotation's word or the kind-2 sum of words; None for a CNOT."""
    kind, x, z, _, lo, hi = (int(v) for v in circuit.gi[g])
    if kind == 1:
        return None
    if kind == 0:
        return complex(circuit.gph[g]) * xz_matrix(x, z, circuit.n)
    return masks_matrix(circuit.wx[lo:hi], circuit.wz[lo:hi], circuit.wc[lo:hi], circuit.n)


def gate_matrix(circuit, g: int, params):
    """Gate ``g`` as a dense unitary: ``expm(i a theta A_g)`` (``theta =
    params[pidx]``) or the CNOT."""
    from scipy.linalg import expm

    kind, x, z, p, _, _ = (int(v) for v in circuit.gi[g])
    if kind == 1:
        return cnot_matrix(x, z, circuit.n)
    return expm(1j * float(circuit.ga[g]) * float(params[p]) * generator(circuit, g))


def state(circuit, params):
    """``U(params) |hf>``: the gates' dense unitaries applied in order, shape ``(2**n,)``."""
    psi = circuit.psi0()
    for g in range(circuit.gi.shape[0]):
        psi = gate_matrix(circuit, g, params) @ psi
    return psi


def energy(circuit, h, params) -> float:
    """``Re <psi|H|psi>`` (Ha) of :func:`state`, ``h`` a dense ``(2**n, 2**n)`` matrix."""
    import numpy as np

    psi = state(circuit, params)
    return float(np.vdot(psi, h @ psi).real)


def energy_and_grad(circuit, h, params):
    """``(E, dE/dparams)`` by differentiating the dense product directly: ``d psi /
    d theta_p = sum_{g: pidx = p} U_G ... U_{g+1} (i a_g A_g) U_g ... U_1 |hf>`` and
    ``dE/d theta_p = 2 Re <psi|H d psi/d theta_p>``.  Float (Ha) and float64 array
    of shape ``(num_params,)`` (Ha/rad)."""
    import numpy as np

    mats = [gate_matrix(circuit, g, params) for g in range(circuit.gi.shape[0])]
    prefix = [circuit.psi0()]
    for m in mats:
        prefix.append(m @ prefix[-1])
    psi = prefix[-1]
    hpsi = h @ psi
    grad = np.zeros(circuit.num_params)
    for g, m in enumerate(mats):
        a_g = generator(circuit, g)
        if a_g is None:
            continue
        d = 1j * float(circuit.ga[g]) * (a_g @ prefix[g + 1])
        for later in mats[g + 1:]:
            d = later @ d
        grad[int(circuit.gi[g, 3])] += 2.0 * float(np.vdot(hpsi, d).real)
    return float(np.vdot(psi, hpsi).real), grad


def finite_difference_grad(f, params, step: float = 1e-5):
    """Central differences ``(f(p + h e_k) - f(p - h e_k)) / 2h`` of a scalar ``f``,
    shape ``(len(params),)`` (error ``O(step**2)`` plus rounding ``~1e-16/step``)."""
    import numpy as np

    params = np.asarray(params, dtype=float)
    out = np.zeros(params.shape[0])
    for k in range(params.shape[0]):
        e = np.zeros_like(params)
        e[k] = step
        out[k] = (f(params + e) - f(params - e)) / (2 * step)
    return out
