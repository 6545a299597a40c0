"""The compiled kernels against their slow twins (ffsim's ``_slow`` modules as the model).

Each numba kernel of :mod:`qencode_nb.engines.fast.kernels` and
:mod:`qencode_nb.engines.sector.kernels`, the fast engine's Hamiltonians and circuits
(:mod:`qencode_nb.engines.fast.compiled`) and the sector engine's adjoint gradient
are compared with the dense numpy/scipy references of
:mod:`qencode_nb.engines.fast.slow` and :mod:`qencode_nb.engines.sector.slow` on
small random inputs (``default_rng`` with fixed seeds; 1 to 5 qubits, 2 to 4
orbitals).  No shared entry, no molecule: CI spaces come from random integrals.

Tolerance: :data:`RTOL` relative to the largest reference value (rounding of
different but exact arithmetic); finite differences :data:`FD_TOL`.  Each
comparison also checks that a deliberately wrong input differs by more than
:data:`WRONG_MIN` (:func:`assert_twins`), so a check that cannot fail is caught.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qencode_nb.engines.fast import compiled
from qencode_nb.engines.fast import kernels as fk
from qencode_nb.engines.fast import slow as fs
from qencode_nb.engines.sector import generators as sg
from qencode_nb.engines.sector import kernels as sk
from qencode_nb.engines.sector import slow as ss
from qencode_nb.engines.sector import space

#: Largest |fast - slow| / max(1, max |slow|) accepted.
RTOL = 1e-12
#: Largest |adjoint gradient - central finite difference| accepted (Ha/rad; step 1e-5).
FD_TOL = 1e-7
#: Smallest difference a deliberately wrong input must make.
WRONG_MIN = 1e-6

QUBITS = [1, 2, 3, 4, 5]


def assert_twins(fast, slow, wrong=None, tol=RTOL):
    """``fast`` equals ``slow`` to ``tol`` (relative to max(1, max |slow|)); the
    deliberately wrong ``wrong`` (when given) does not."""
    fast, slow = np.asarray(fast), np.asarray(slow)
    scale = max(1.0, float(np.max(np.abs(slow))) if slow.size else 1.0)
    err = float(np.max(np.abs(fast - slow))) if slow.size else 0.0
    assert err <= tol * scale, f"fast and slow twins differ by {err:.3e} (scale {scale:.3g})"
    if wrong is not None:
        miss = float(np.max(np.abs(np.asarray(wrong) - slow)))
        assert miss > WRONG_MIN, f"a wrong input changed the reference by only {miss:.3e}"


def random_state(rng, n):
    psi = rng.normal(size=1 << n) + 1j * rng.normal(size=1 << n)
    return psi / np.linalg.norm(psi)


def random_word(rng, n):
    """A Pauli word: ``(x, z, ph0)`` masks with ``ph0 = i**n_Y`` (a Hermitian word),
    not the identity."""
    while True:
        x, z = int(rng.integers(1 << n)), int(rng.integers(1 << n))
        if x or z:
            return x, z, 1j ** bin(x & z).count("1")


def random_letters(rng, n):
    """A Pauli word ``{wire: letter}`` (possibly the identity)."""
    return {w: "IXYZ"[k] for w in range(n) if (k := int(rng.integers(4)))}


# --------------------------------------------------------------------- fast kernels


@pytest.mark.parametrize("n", QUBITS)
def test_rotate_is_the_matrix_exponential_of_the_word(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(4):
        psi, (x, z, ph0), phi = random_state(rng, n), random_word(rng, n), rng.uniform(-3, 3)
        out = psi.copy()
        fk.rotate(out, x, z, ph0, math.cos(phi), math.sin(phi))
        assert_twins(out, fs.rotate(psi, x, z, ph0, phi), fs.rotate(psi, x, z, ph0, -phi))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_cnot_is_the_controlled_x(n):
    rng = np.random.default_rng(200 + n)
    for _ in range(4):
        c, t = (int(w) for w in rng.choice(n, size=2, replace=False))
        cbit, tbit = 1 << (n - 1 - c), 1 << (n - 1 - t)
        psi = random_state(rng, n)
        out = psi.copy()
        fk.cnot(out, cbit, tbit)
        assert_twins(out, fs.cnot_matrix(cbit, tbit, n) @ psi,
                     fs.cnot_matrix(tbit, cbit, n) @ psi)


@pytest.mark.parametrize("n", QUBITS)
def test_words_apply_and_pauli_expval(n):
    rng = np.random.default_rng(300 + n)
    m = 5
    words = [random_word(rng, n) for _ in range(m)]
    wx = np.array([w[0] for w in words], dtype=np.int64)
    wz = np.array([w[1] for w in words], dtype=np.int64)
    wc = np.array([w[2] * complex(*rng.normal(size=2)) for w in words])
    psi, lam = random_state(rng, n), random_state(rng, n)
    out = np.empty_like(psi)
    lo, hi = 1, m
    fk.words_apply(wx, wz, wc, lo, hi, psi, out)
    assert_twins(out, fs.words_apply(wx, wz, wc, lo, hi, psi),
                 fs.words_apply(wx, wz, wc, 0, hi, psi))
    x, z, ph0 = words[0]
    assert_twins(fk.pauli_expval(lam, psi, x, z, ph0), fs.pauli_expval(lam, psi, x, z, ph0),
                 fs.pauli_expval(lam, psi, x, z, -ph0))


def random_terms(rng, n, count=8):
    return [(random_letters(rng, n), float(rng.normal())) for _ in range(count)]


@pytest.mark.parametrize("n", QUBITS)
def test_hamiltonian_csr_is_the_kronecker_sum(n):
    rng = np.random.default_rng(400 + n)
    terms = random_terms(rng, n)
    H = compiled.Hamiltonian.from_terms(terms, n)
    assert H.hk == 0
    psi = random_state(rng, n)
    dense = fs.hamiltonian_matrix(terms, n)
    assert_twins(H.matvec(psi), dense @ psi,
                 fs.hamiltonian_matrix(terms[1:], n) @ psi)


@pytest.mark.parametrize("n", QUBITS)
@pytest.mark.parametrize("low_bits", [1, 2, 8])
def test_grouped_apply_is_the_kronecker_sum(n, low_bits, monkeypatch):
    """The ``hk = 1`` path (Pauli terms grouped by X mask, low-bit sign table), forced
    on small ``n`` by lowering the CSR limit."""
    monkeypatch.setattr(compiled, "CSR_MAX_QUBITS", 0)
    monkeypatch.setattr(compiled, "GROUP_LOW_BITS", low_bits)
    rng = np.random.default_rng(500 + 10 * n + low_bits)
    terms = random_terms(rng, n, count=10) + [({0: "X"}, 0.5), ({0: "Y"}, -0.25)]
    H = compiled.Hamiltonian.from_terms(terms, n)
    assert H.hk == 1 and H.lbits == min(n, low_bits)
    psi = random_state(rng, n)
    assert_twins(H.matvec(psi), fs.hamiltonian_matrix(terms, n) @ psi,
                 fs.hamiltonian_matrix(terms[:-1], n) @ psi)
    assert_twins(H.matvec(psi), fs.masks_matrix(H.tx, H.tz, H.tc, n) @ psi)


def excitation_words(rng, n):
    """``G`` of a random single (2 words) or, on 4+ wires, double (8 words)
    excitation as PennyLane writes its generator; ``K = 2G`` has ``K**3 = K``."""
    if n >= 4 and rng.integers(2):
        w = [int(v) for v in rng.choice(n, size=4, replace=False)]
        signs = {"XXXY": 1, "XXYX": 1, "XYXX": -1, "XYYY": 1, "YXXX": -1, "YXYY": 1,
                 "YYXY": -1, "YYYX": -1}
        return [({w[i]: s[i] for i in range(4)}, c / 16) for s, c in signs.items()]
    p, q = (int(v) for v in rng.choice(n, size=2, replace=False))
    return [({p: "X", q: "Y"}, 0.25), ({p: "Y", q: "X"}, -0.25)]


def random_circuit(rng, n, n_gates=6, n_params=4):
    """A :class:`~qencode_nb.engines.fast.compiled.Circuit` of random rotations, CNOTs
    and excitation generators (kind 2, ``K = 2G``); parameters shared between gates."""
    gates = []
    for _ in range(n_gates):
        kind = int(rng.integers(3)) if n >= 2 else 0
        p = int(rng.integers(n_params))
        if kind == 0:
            x, z, ph0 = random_word(rng, n)
            gates.append(("rot", x, z, ph0, float(rng.uniform(-1, 1)), p))
        elif kind == 1:
            c, t = (int(w) for w in rng.choice(n, size=2, replace=False))
            gates.append(("cnot", 1 << (n - 1 - c), 1 << (n - 1 - t)))
        else:
            desc = {"words": [[w, c] for w, c in excitation_words(rng, n)], "rule": "exp"}
            gates.append(("gen", [(x, z, 2.0 * c) for x, z, c in
                                  compiled.generator_words(desc, n)], 0.7, p))
    hf = [int(b) for b in rng.integers(2, size=n)]
    return compiled.Circuit.from_gates(n, hf, gates, n_params)


@pytest.mark.parametrize("n", QUBITS)
def test_state_and_gate_are_the_dense_product(n):
    rng = np.random.default_rng(600 + n)
    circuit = random_circuit(rng, n)
    params = rng.uniform(-np.pi, np.pi, size=circuit.num_params)
    assert_twins(circuit.state(params), fs.state(circuit, params),
                 fs.state(circuit, params + 0.1))
    psi = random_state(rng, n)
    v1, v2 = np.empty_like(psi), np.empty_like(psi)
    for g in range(circuit.gi.shape[0]):      # each gate and its inverse (sign -1)
        u = fs.gate_matrix(circuit, g, params)
        for sign, ref in ((1.0, u @ psi), (-1.0, u.conj().T @ psi)):
            out = psi.copy()
            fk.gate(out, g, *circuit.arrays(), params, sign, v1, v2)
            assert_twins(out, ref)


@pytest.mark.parametrize("n", QUBITS)
def test_energy_and_adjoint_gradient(n):
    rng = np.random.default_rng(700 + n)
    circuit = random_circuit(rng, n, n_gates=7)
    terms = random_terms(rng, n)
    h = fs.hamiltonian_matrix(terms, n)
    en = compiled.Energy(circuit, compiled.Hamiltonian.from_terms(terms, n))
    params = rng.uniform(-np.pi, np.pi, size=circuit.num_params)
    e_slow, g_slow = fs.energy_and_grad(circuit, h, params)
    assert_twins(en(params), fs.energy(circuit, h, params),
                 fs.energy(circuit, h, params + 0.3))
    e_fast, g_fast = en.energy_and_grad(params)
    assert_twins(e_fast, e_slow)
    assert_twins(g_fast, g_slow, fs.energy_and_grad(circuit, -h, params)[1])
    assert_twins(g_fast, fs.finite_difference_grad(lambda p: fs.energy(circuit, h, p), params),
                 tol=FD_TOL)


def excitation_unitary(desc, n, a, theta):
    """``exp(i a theta G)`` of a pool operator, ``G`` built from its letters."""
    from scipy.linalg import expm

    return expm(1j * a * theta * fs.hamiltonian_matrix(desc["words"], n))


@pytest.mark.parametrize("n", QUBITS)
@pytest.mark.parametrize("convention", ["qnode", "statevector"])
def test_word_circuit_is_the_product_of_exponentials(n, convention):
    """The UCCSD / ADAPT circuit of pool operators (:func:`compiled.word_circuit`):
    excitations (``exp(i a theta G)``, ``a`` by convention), single-wire rotations
    ``R_P(theta) = exp(-i theta P / 2)`` and single words."""
    rng = np.random.default_rng(800 + n)
    pool = [{"words": [[{int(rng.integers(n)): "Y"}, 1.0]], "rule": "rot"},
            {"words": [[random_letters(rng, n) or {0: "Z"}, 0.5]], "rule": "exp"}]
    if n >= 2:
        pool += [{"words": [[w, c] for w, c in excitation_words(rng, n)], "rule": "exp"}
                 for _ in range(3)]
    selected = [int(k) for k in rng.integers(len(pool), size=5)]
    params = rng.uniform(-np.pi, np.pi, size=len(selected))
    hf = [int(b) for b in rng.integers(2, size=n)]
    psi = compiled.word_circuit(hf, pool, selected, convention).state(params)
    ref = np.zeros(1 << n, dtype=complex)
    ref[int("".join(map(str, hf)), 2)] = 1.0
    wrong = ref.copy()
    for k, theta in zip(selected, params):
        a = -0.5 if pool[k]["rule"] == "rot" else compiled.ANGLE_FACTOR[convention]
        ref = excitation_unitary(pool[k], n, a, theta) @ ref
        wrong = excitation_unitary(pool[k], n, -a, theta) @ wrong
    assert_twins(psi, ref, wrong)


@pytest.mark.parametrize("n", QUBITS)
def test_hea_circuit_is_ry_layers_and_cnot_ladders(n):
    from scipy.linalg import expm

    rng = np.random.default_rng(900 + n)
    reps = 2
    hf = [int(b) for b in rng.integers(2, size=n)]
    params = rng.uniform(-np.pi, np.pi, size=n * (reps + 1))
    psi = np.zeros(1 << n, dtype=complex)
    psi[int("".join(map(str, hf)), 2)] = 1.0
    p = 0
    for layer in range(reps + 1):
        for w in range(n):
            psi = expm(-0.5j * params[p] * fs.word_matrix({w: "Y"}, n)) @ psi
            p += 1
        if layer < reps:
            for i in range(n - 1):
                psi = fs.cnot_matrix(1 << (n - 1 - i), 1 << (n - 2 - i), n) @ psi
    out = compiled.hea_circuit(hf, reps).state(params)
    assert_twins(out, psi, compiled.hea_circuit(hf, reps).state(-params))


# --------------------------------------------------------------------- sector kernels


class PauliSum:
    """A Pauli sum with the ``pauli_rep`` that
    :func:`qencode_nb.engines.sector.generators.generator` reads (no PennyLane)."""

    class Word(dict):
        def __hash__(self):
            return hash(frozenset(self.items()))

    def __init__(self, terms):
        self.pauli_rep = {self.Word(w): c for w, c in terms}


def random_ci_space(rng, norb, nelec):
    """A :class:`~qencode_nb.engines.sector.space.CISpace` of random real integrals with
    the 8-fold symmetry (Ha), H·ψ by PySCF's ``contract_2e``."""
    h1 = rng.normal(size=(norb, norb))
    h1 = h1 + h1.T
    h2 = rng.normal(size=(norb,) * 4)
    h2 = h2 + h2.transpose(1, 0, 2, 3)
    h2 = h2 + h2.transpose(0, 1, 3, 2)
    h2 = 0.1 * (h2 + h2.transpose(2, 3, 0, 1))
    return space.from_integrals(h1, h2, float(rng.normal()), norb, nelec,
                                hop_method="contract_2e")


def pool_of(norb):
    """Every spin-conserving single (alpha or beta) and paired double excitation of
    ``norb`` orbitals, as PennyLane's generators (wires ``2p + sigma``)."""
    out = []
    for p in range(norb):
        for q in range(p + 1, norb):
            for s in (0, 1):
                out.append([({2 * p + s: "X", 2 * q + s: "Y"}, 0.25),
                            ({2 * p + s: "Y", 2 * q + s: "X"}, -0.25)])
            w = [2 * p, 2 * p + 1, 2 * q, 2 * q + 1]
            signs = {"XXXY": 1, "XXYX": 1, "XYXX": -1, "XYYY": 1, "YXXX": -1, "YXYY": 1,
                     "YYXY": -1, "YYYX": -1}
            out.append([({w[i]: s[i] for i in range(4)}, c / 16) for s, c in signs.items()])
    return out


SECTORS = [(2, (1, 1)), (3, (1, 1)), (3, (2, 1)), (4, (2, 2))]


@pytest.fixture(scope="module", params=SECTORS, ids=lambda s: f"norb{s[0]}-nelec{s[1]}")
def sector(request):
    """``(ci_space, generators)`` of a random CI space and its excitation pool."""
    norb, nelec = request.param
    rng = np.random.default_rng(1000 + 10 * norb + sum(nelec))
    ci = random_ci_space(rng, norb, nelec)
    gens = []
    for terms in pool_of(norb):
        try:
            gens.append(sg.generator(ci, PauliSum(terms)))
        except sg.NotAnExcitation:   # no support in this sector
            continue
    assert gens, "no excitation has support in the sector"
    return ci, gens


def test_generators_match_the_word_by_word_reference(sector):
    ci, _ = sector
    for terms in pool_of(ci.norb):
        try:
            g = sg.generator(ci, PauliSum(terms))
        except sg.NotAnExcitation:
            continue
        ref = sg.generator_matrix_reference(ci, PauliSum(terms)).toarray()
        assert_twins(ss.generator_matrix(g.a, g.b, g.v, ci.dim), ref, -ref)
        assert_twins(g.matrix(ci.dim).toarray(), ref)


def test_rotate_expval_and_adjoint_step(sector):
    ci, gens = sector
    rng = np.random.default_rng(1100 + ci.dim)
    for g in gens:
        c, lam = rng.normal(size=ci.dim), rng.normal(size=ci.dim)
        theta = float(rng.uniform(-3, 3))
        half = 0.5 * theta
        out = c.copy()
        sk.rotate(out, g.a, g.b, g.v, math.cos(half), math.sin(half))
        assert_twins(out, ss.rotate(c, g.a, g.b, g.v, theta), ss.rotate(c, g.a, g.b, g.v, -theta))
        assert_twins(g.exp(theta, c), out)
        assert_twins(sk.expval(lam, c, g.a, g.b, g.v), ss.expval(lam, c, g.a, g.b, g.v),
                     ss.expval(c, lam, g.a, g.b, g.v))
        phi, lam2 = c.copy(), lam.copy()
        s = sk.adjoint_step(lam2, phi, g.a, g.b, g.v, math.cos(half), math.sin(half))
        ref_s, ref_phi, ref_lam = ss.adjoint_step(lam, c, g.a, g.b, g.v, theta)
        assert_twins(s, ref_s)
        assert_twins(phi, ref_phi, ss.rotate(c, g.a, g.b, g.v, theta))
        assert_twins(lam2, ref_lam)


def test_sector_energy_and_adjoint_gradient(sector):
    ci, gens = sector
    rng = np.random.default_rng(1200 + ci.dim)
    selected = [int(k) for k in rng.integers(len(gens), size=6)]
    params = rng.uniform(-np.pi, np.pi, size=len(selected))
    h = ci.csr().toarray()          # PySCF's pspace; the engine's H·ψ is contract_2e
    hf = ci.hf().reshape(-1)
    e_fast, g_fast = space.energy_and_grad(ci, gens, selected, params)
    e_slow, g_slow = ss.energy_and_grad(h, ci.ecore, hf, gens, selected, params)
    assert_twins(e_fast, e_slow, ss.energy_and_grad(h, ci.ecore, hf, gens, selected,
                                                    params + 0.3)[0])
    assert_twins(g_fast, g_slow, ss.energy_and_grad(-h, ci.ecore, hf, gens, selected,
                                                     params)[1])
    assert_twins(space.build_state(ci, gens, selected, params),
                 ss.state(hf, gens, selected, params))

    def energy(p):
        return ss.energy_and_grad(h, ci.ecore, hf, gens, selected, p)[0]

    assert_twins(g_fast, fs.finite_difference_grad(energy, params), tol=FD_TOL)


def test_split_hop_is_the_dense_hamiltonian(sector):
    """The split H·ψ (:mod:`qencode_nb.engines.sector.sigma`) against the dense CI-space
    matrix (PySCF's pspace, ``ci.csr()``), on every random sector: singlets (1, 1),
    (2, 2) and the non-singlet (2, 1); a wrong vector differs."""
    from qencode_nb.engines.sector import sigma

    ci, _ = sector
    split = space.from_integrals(ci.h1, ci.h2, ci.ecore, ci.norb, ci.nelec,
                                 hop_method="split")
    h = ci.csr().toarray()
    rng = np.random.default_rng(1300 + ci.dim)
    c = rng.normal(size=ci.dim)
    assert_twins(split.hop(c.reshape(ci.shape)).reshape(-1), h @ c, h @ (c + 0.1))
    assert_twins(split.hop(c.reshape(ci.shape)).reshape(-1), ci.hop(c.reshape(ci.shape))
                 .reshape(-1))
    tables = sigma.build(ci.h1, ci.h2, ci.norb, ci.nelec)
    assert tables.h_alpha.shape == (ci.shape[0],) * 2 and tables.h_beta.shape == (ci.shape[1],) * 2


@pytest.mark.parametrize("norb, nelec", [(3, (3, 1)), (3, (2, 0)), (2, (0, 2))])
def test_split_hop_falls_back_where_a_spin_has_no_electron_or_no_hole(norb, nelec):
    """Spaces the split does not cover: the size rule keeps contract_2e, the split is
    refused naming the rule, and contract_2e still equals the dense matrix."""
    from qencode_nb.engines.sector import sigma

    ci = random_ci_space(np.random.default_rng(1400 + norb), norb, nelec)
    assert not sigma.applicable(norb, nelec)
    assert space.hop_method_for(5000, norb, nelec) == "contract_2e"
    with pytest.raises(ValueError, match="0 < n < norb electrons of each spin"):
        sigma.build(ci.h1, ci.h2, norb, nelec)
    c = np.random.default_rng(1).normal(size=ci.dim)
    h = ci.csr().toarray()
    assert_twins(ci.hop(c.reshape(ci.shape)).reshape(-1), h @ c, h @ (c + 0.1))


def test_packed_pool_equals_the_per_generator_kernels_bit_for_bit(sector):
    """The packed pool's state, adjoint gradient and pool expectation values equal the
    per-generator calls (:func:`space.build_state`, :func:`space.energy_and_grad`,
    :meth:`Generator.expval`) to the last bit, and the slow twins to :data:`RTOL`."""
    from qencode_nb.engines.sector.packed import PackedPool

    ci, gens = sector
    pool = PackedPool.of(gens)
    rng = np.random.default_rng(1500 + ci.dim)
    selected = [int(k) for k in rng.integers(len(gens), size=7)]
    params = rng.uniform(-np.pi, np.pi, size=len(selected))
    hf = ci.hf().reshape(-1)
    psi = pool.state(hf, selected, params)
    assert np.array_equal(psi, space.build_state(ci, gens, selected, params))
    assert_twins(psi, ss.state(hf, gens, selected, params),
                 ss.state(hf, gens, selected, params + 0.3))
    lam = ci.hop(psi.reshape(ci.shape)).reshape(-1)
    grad = pool.adjoint_gradient(lam.copy(), psi.copy(), selected, params)
    assert np.array_equal(grad, space.energy_and_grad(ci, gens, selected, params)[1])
    h = ci.csr().toarray()
    assert_twins(grad, ss.energy_and_grad(h, ci.ecore, hf, gens, selected, params)[1],
                 ss.energy_and_grad(-h, ci.ecore, hf, gens, selected, params)[1])
    phi = rng.normal(size=ci.dim)
    values = pool.expvals(lam, phi)
    assert np.array_equal(values, np.array([g.expval(lam, phi) for g in gens]))
    assert_twins(values, np.array([ss.expval(lam, phi, g.a, g.b, g.v) for g in gens]),
                 np.array([ss.expval(phi, lam, g.a, g.b, g.v) for g in gens]))


@pytest.mark.parametrize("norb, nelec", [(4, (2, 2)), (3, (1, 1)), (3, (2, 1))])
def test_split_hop_spin_flip_shortcut_only_where_valid(norb, nelec):
    """A state with ``c == ±c.T`` to the last bit (``n_alpha == n_beta``) takes the
    spin-flip shortcut: H·c equals the dense matrix and is (anti)symmetric to the
    last bit; any other state, and every state of the non-singlet (2, 1), takes the
    general sum (parity 0), also equal to the dense matrix."""
    ci = random_ci_space(np.random.default_rng(1600 + norb + sum(nelec)), norb, nelec)
    split = space.from_integrals(ci.h1, ci.h2, ci.ecore, norb, nelec, hop_method="split")
    split.hop(ci.hf())                      # builds the tables
    tables = split._split
    h = ci.csr().toarray()
    rng = np.random.default_rng(7)
    x = rng.normal(size=ci.shape)
    cases = [(x, 0)]
    if nelec[0] == nelec[1]:
        cases += [(x + x.T, 1), (x - x.T, -1)]
    assert tables.mirror == (nelec[0] == nelec[1])
    for c, parity in cases:
        assert tables.spin_flip_parity(c) == parity
        out = split.hop(c)
        assert_twins(out.reshape(-1), h @ c.reshape(-1), h @ (c.reshape(-1) + 0.1))
        if parity:
            assert np.array_equal(out, parity * out.T)
