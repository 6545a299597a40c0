"""The compiled statevector engine: QEncode's circuits on the tapered qubits,
without PennyLane.

The state is ``2**n`` complex amplitudes on the tapered wires (PennyLane's
big-endian order); the Hamiltonian is built from the stored Pauli terms
(QEncode schema 4.0.0, artifacts.qubit_hamiltonian.pauli_terms) as a CSR
matrix, or applied term by term above :data:`CSR_MAX_QUBITS`; every gate is a
Pauli rotation ``exp(i a theta P)``, a CNOT, or ``exp(i a theta G)`` for a
tapered excitation generator ``G`` (several Pauli words, ``G**3 = G/4``),
applied by the numba kernels of :mod:`qencode_nb.engines.fast.kernels`.  The
circuits are the generator's (``scripts/generate_entry_v4.py``,
qencode-benchmark commit e1f44cd), written as gate lists:

- HEA (``build_hea_circuit``): ``qml.BasisState(hf)``, then ``reps + 1``
  layers of ``RY(theta)`` on every wire (``RY = exp(-i theta Y / 2)``: ``a =
  -1/2``) with a CNOT ladder between layers (:func:`hea_circuit`).
- Tapered UCCSD and the ADAPT pools (``_apply_tapered_op``): a single-wire
  X/Y/Z generator runs as ``R_P(theta) = exp(-i theta P / 2)``; any other
  generator ``G`` as ``qml.exp(G, 1j * theta)`` queued twice, ``exp(2 i theta
  G)``; the statevector ADAPT engine applies ``exp((theta/2) B)``, ``B = 2iG``,
  i.e. ``exp(i theta G)`` (:data:`ANGLE_FACTOR`, :func:`pool_words`,
  :func:`word_circuit`).

Energies agree with PennyLane ``default.qubit`` and the generator's
statevector engine to rounding (tested on the real entries of every kind,
1e-10 Ha), not bit for bit.  Energy+gradient is the exact adjoint gradient,
one H·ψ per call.  ``import`` of this module imports nothing heavy; numpy and
scipy load inside the functions, the kernels (numba) on first use.

Units: energies in Ha, angles in radians, gradients in Ha/rad.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qencode_nb.errors import NotRunnable

#: ``i**n_Y`` for ``n_Y mod 4``.
_PHASES = (1 + 0j, 1j, -1 + 0j, -1j)

#: The engine's name as the ``engine`` and re-run ``backend`` records write it.
NAME = "numba-statevector"

def word_masks(word: dict, n: int) -> tuple[int, int, complex]:
    """``(x, z, ph0)`` of a Pauli word ``{wire: "X"|"Y"|"Z"}`` on ``n`` wires
    (module :mod:`~qencode_nb.engines.fast.kernels` conventions).

    Raises:
        NotRunnable: a wire outside ``range(n)`` or a letter other than X, Y, Z.
    """
    x = z = n_y = 0
    for w, letter in word.items():
        w = int(w)
        if not 0 <= w < n:
            raise NotRunnable(f"Pauli word {word!r} acts on wire {w}, outside 0..{n - 1}")
        bit = 1 << (n - 1 - w)
        if letter == "X":
            x |= bit
        elif letter == "Z":
            z |= bit
        elif letter == "Y":
            x |= bit
            z |= bit
            n_y += 1
        else:
            raise NotRunnable(f"Pauli word {word!r}: letter {letter!r}; accepted: X, Y, Z")
    return x, z, _PHASES[n_y % 4]


#: Largest qubit count whose Hamiltonian is assembled as a CSR matrix; above
#: it, H·ψ applies the Pauli terms grouped by their X/Y mask (no 2**n x 2**n
#: matrix in memory; :func:`qencode_nb.engines.fast.kernels.grouped_apply`).
CSR_MAX_QUBITS = 14

#: Low index bits whose signs are tabulated per term for the grouped H·ψ
#: (``n_terms x 2**8`` float64: 29 MB for H10's 14,227 terms on 18 qubits).
GROUP_LOW_BITS = 8


@dataclass
class Hamiltonian:
    """A qubit Hamiltonian on ``2**n`` amplitudes (Ha): a CSR matrix up to
    :data:`CSR_MAX_QUBITS` qubits (``hk = 0``), else its Pauli terms (``hk = 1``).

    Attributes:
        n: qubits (tapered).
        hk: 0 (CSR) or 1 (terms).
        indptr, indices, data: CSR arrays (int64, int64, complex128; empty for terms).
        tx, tz, tc: the terms' masks and ``coefficient x ph0``, sorted by ``x``
            (stable; empty for CSR).
        gptr: start of each group of one ``x`` in ``tx`` and the end (int64,
            ``n_groups + 1``; ``[0]`` for CSR).
        slo: ``(-1)**popcount(l & z_j)`` for the low ``lbits`` bits ``l`` of
            the index (float64, ``n_terms x 2**lbits``; ``0 x 1`` for CSR).
        lbits: low bits of the sign table, ``min(n, GROUP_LOW_BITS)`` (0 for CSR).
        n_terms: Pauli terms it was built from.
    """

    n: int
    hk: int
    indptr: object
    indices: object
    data: object
    tx: object
    tz: object
    tc: object
    gptr: object
    slo: object
    lbits: int
    n_terms: int

    @classmethod
    def from_terms(cls, terms, n: int) -> "Hamiltonian":
        """From ``[(word, coefficient)]`` (words as ``{wire: letter}``, Ha),
        e.g. :func:`qencode_nb.entry.pauli_strings.validate_pauli_terms` of the
        stored terms.  CSR: ``H[b ^ x, b] += c ph0 sign(b)`` per term,
        duplicates summed by scipy.

        Raises:
            NotRunnable: a complex coefficient with a non-zero imaginary part, or a
                malformed word.
        """
        import numpy as np

        masks = []
        for word, coeff in terms:
            c = complex(coeff)
            if c.imag != 0.0:
                raise NotRunnable(f"Pauli term {word!r} has a complex coefficient {c!r}")
            x, z, ph0 = word_masks(word, n)
            masks.append((x, z, c.real * ph0))
        tx = np.array([m[0] for m in masks], dtype=np.int64)
        tz = np.array([m[1] for m in masks], dtype=np.int64)
        tc = np.array([m[2] for m in masks], dtype=np.complex128)
        empty_i, empty_c = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.complex128)
        if n > CSR_MAX_QUBITS:
            order = np.argsort(tx, kind="stable")
            tx, tz, tc = tx[order], tz[order], tc[order]
            starts = np.flatnonzero(np.diff(tx)) + 1 if len(tx) else np.zeros(0, np.int64)
            gptr = np.concatenate(([0], starts, [len(tx)])).astype(np.int64)
            lbits = min(n, GROUP_LOW_BITS)
            low = np.arange(1 << lbits, dtype=np.int64)
            slo = 1.0 - 2.0 * (np.bitwise_count(low[None, :] & tz[:, None]) & 1)
            return cls(n=n, hk=1, indptr=empty_i, indices=empty_i, data=empty_c,
                       tx=tx, tz=tz, tc=tc, gptr=gptr,
                       slo=np.ascontiguousarray(slo, dtype=np.float64), lbits=lbits,
                       n_terms=len(masks))
        import scipy.sparse as sp

        dim = 1 << n
        b = np.arange(dim, dtype=np.int64)
        rows = [b ^ x for x, _, _ in masks]
        vals = [c * (1.0 - 2.0 * (np.bitwise_count(b & z) & 1)) for _, z, c in masks]
        if rows:
            r, v, cols = np.concatenate(rows), np.concatenate(vals), np.tile(b, len(rows))
        else:
            r = cols = np.zeros(0, dtype=np.int64)
            v = empty_c
        m = sp.coo_matrix((v, (r, cols)), shape=(dim, dim)).tocsr()
        m.sum_duplicates()
        return cls(n=n, hk=0, indptr=m.indptr.astype(np.int64),
                   indices=m.indices.astype(np.int64), data=m.data.astype(np.complex128),
                   tx=tx[:0], tz=tz[:0], tc=tc[:0], gptr=np.zeros(1, dtype=np.int64),
                   slo=np.zeros((0, 1)), lbits=0, n_terms=len(masks))

    @classmethod
    def from_pauli_terms(cls, pauli_terms, n: int) -> "Hamiltonian":
        """From QEncode ``pauli_terms`` dicts (schema 4.0.0), without PennyLane."""
        from qencode_nb.entry.pauli_strings import validate_pauli_terms

        return cls.from_terms(validate_pauli_terms(pauli_terms, n), n)

    def arrays(self):
        """The kernels' Hamiltonian arguments in order (``hk`` first, ``lbits`` last)."""
        return (self.hk, self.indptr, self.indices, self.data, self.tx, self.tz, self.tc,
                self.gptr, self.slo, self.lbits)

    def matvec(self, psi):
        """``H psi`` (complex vector of length ``2**n``)."""
        import numpy as np

        from qencode_nb.engines.fast import kernels as k

        out = np.empty_like(psi)
        k.hmatvec(*self.arrays(), psi, out)
        return out


@dataclass
class Circuit:
    """A gate list on ``n`` wires from a basis state (module docstring of
    :mod:`~qencode_nb.engines.fast.kernels`).

    Attributes:
        n: wires.
        hf_index: index of the initial basis state (``qml.BasisState(hf)``).
        gi, ga, gph: the gate table (int64 rows ``kind, x, z, pidx, lo, hi``),
            factors and phases.
        wx, wz, wc: the words of multi-word generators (kind 2).
        num_params: parameters (``params`` has this shape).
    """

    n: int
    hf_index: int
    gi: object
    ga: object
    gph: object
    wx: object
    wz: object
    wc: object
    num_params: int

    @classmethod
    def from_gates(cls, n: int, hf_state, gates, num_params: int) -> "Circuit":
        """``gates``: ``("rot", x, z, ph0, a, p)``, ``("cnot", cbit, tbit)`` or
        ``("gen", [(x, z, c ph0), ...], a, p)`` (``p`` the parameter index)."""
        import numpy as np

        bits = [int(v) for v in hf_state]
        if len(bits) != n:
            raise NotRunnable(f"HF state of {len(bits)} bits for {n} wires")
        hf_index = int("".join(str(v) for v in bits), 2) if bits else 0
        gi, ga, gph, wx, wz, wc = [], [], [], [], [], []
        for g in gates:
            if g[0] == "rot":
                _, x, z, ph0, a, p = g
                gi.append((0, x, z, p, 0, 0)), ga.append(a), gph.append(ph0)
            elif g[0] == "cnot":
                gi.append((1, g[1], g[2], 0, 0, 0)), ga.append(0.0), gph.append(1 + 0j)
            else:
                _, words, a, p = g
                lo = len(wx)
                for x, z, c in words:
                    wx.append(x), wz.append(z), wc.append(c)
                gi.append((2, 0, 0, p, lo, len(wx))), ga.append(a), gph.append(1 + 0j)
        return cls(n=n, hf_index=hf_index,
                   gi=np.array(gi, dtype=np.int64).reshape(len(gi), 6),
                   ga=np.array(ga, dtype=np.float64), gph=np.array(gph, dtype=np.complex128),
                   wx=np.array(wx, dtype=np.int64), wz=np.array(wz, dtype=np.int64),
                   wc=np.array(wc, dtype=np.complex128), num_params=int(num_params))

    def psi0(self):
        """The initial basis state (complex vector of length ``2**n``)."""
        import numpy as np

        psi = np.zeros(1 << self.n, dtype=np.complex128)
        psi[self.hf_index] = 1.0
        return psi

    def arrays(self):
        """The six circuit arrays in kernel order."""
        return self.gi, self.ga, self.gph, self.wx, self.wz, self.wc

    def state(self, params):
        """``U(params)|hf>``."""
        import numpy as np

        from qencode_nb.engines.fast import kernels as k

        return k.state(self.psi0(), *self.arrays(), np.asarray(params, dtype=np.float64))


def hea_circuit(hf_state, reps: int) -> Circuit:
    """QEncode's HEA (``build_hea_circuit``) as a :class:`Circuit`:
    ``reps + 1`` layers of RY on wires 0..n-1, CNOT ladder
    ``(0,1), (1,2), ...`` between layers; ``n * (reps + 1)`` parameters."""
    n = len(hf_state)
    gates, p = [], 0
    for layer in range(reps + 1):
        for w in range(n):
            x, z, ph0 = word_masks({w: "Y"}, n)
            gates.append(("rot", x, z, ph0, -0.5, p))
            p += 1
        if layer < reps:
            for i in range(n - 1):
                gates.append(("cnot", 1 << (n - 1 - i), 1 << (n - 2 - i)))
    return Circuit.from_gates(n, hf_state, gates, p)


#: ``_apply_tapered_op``'s single-wire rotations (``RX/RY/RZ``), by ``type(op.base)``.
SINGLE_WIRE_ROTATIONS = ("PauliX", "PauliY", "PauliZ")

#: Angle factor ``a`` of ``exp(i a theta G)`` per circuit convention, for a
#: pool operator whose generator is not a single-wire X/Y/Z: the QNode engine
#: and the UCCSD circuit queue ``qml.exp(G, 1j * theta)`` twice (``a = 2``); the
#: statevector engine applies ``exp((theta/2) B)``, ``B = 2iG`` (``a = 1``).
ANGLE_FACTOR = {"qnode": 2.0, "statevector": 1.0}


def pool_words(ops) -> list[dict]:
    """The pool (or UCCSD circuit) operators as plain data: one dict per
    operator, ``{"words": [[{wire: letter}, c], ...], "rule": "rot"|"exp"}``.

    ``rule`` is how ``_apply_tapered_op`` applies the operator: ``"rot"`` for
    a single-wire ``PauliX/Y/Z`` base (``R_P(theta)``), ``"exp"`` for any
    other base ``G = sum_j c_j P_j`` (``exp(i a theta G)``, ``a`` by the
    circuit convention, :data:`ANGLE_FACTOR`).  The coefficients enter the
    ADAPT screening ``-4 Im <H psi|G psi>`` and multi-word generators.
    JSON-serialisable (the problem cache stores it).

    Raises:
        NotRunnable: an operator without ``base`` (the generator applies
            ``type(op)(theta)`` twice; not a Pauli rotation), or a complex
            coefficient.
    """
    out = []
    for k, op in enumerate(ops):
        base = getattr(op, "base", None)
        if base is None or base.pauli_rep is None:
            raise NotRunnable(f"pool operator {k} ({op!r}) is not a Pauli-word rotation")
        words = []
        for word, c in base.pauli_rep.items():
            c = complex(c)
            if c.imag != 0.0:
                raise NotRunnable(f"pool operator {k} has a complex coefficient {c!r}")
            words.append([{int(w): str(l) for w, l in dict(word).items()}, c.real])
        rule = ("rot" if type(base).__name__ in SINGLE_WIRE_ROTATIONS and len(base.wires) == 1
                else "exp")
        out.append({"words": words, "rule": rule})
    return out


def word_gate(desc: dict, n: int, p: int, convention: str = "qnode") -> tuple:
    """The gate of one :func:`pool_words` entry with parameter ``p``: a
    rotation for one word (``P**2 = 1``), else a kind-2 generator
    ``K = 2G`` (``K**3 = K`` for an excitation generator, ``G**3 = G/4``)."""
    if desc["rule"] == "rot":
        (word, _), = desc["words"]
        x, z, ph0 = word_masks(word, n)
        return ("rot", x, z, ph0, -0.5, p)
    a = ANGLE_FACTOR[convention]
    if len(desc["words"]) == 1:
        (word, c), = desc["words"]
        x, z, ph0 = word_masks(word, n)
        return ("rot", x, z, ph0, a * float(c), p)
    # An excitation generator has eigenvalues 0 and +-1/2 (G**3 = G/4; the pool
    # build checks B**3 = -B for B = 2iG): the kernel's closed form takes
    # K = 2G (K**3 = K) at half the angle, exp(i a theta G) = exp(i (a/2) theta K).
    return ("gen", [(x, z, 2.0 * c) for x, z, c in generator_words(desc, n)], 0.5 * a, p)


def generator_words(desc: dict, n: int) -> list[tuple]:
    """``G = sum_j c_j P_j`` of one :func:`pool_words` entry as kernel words
    ``[(x, z, c_j ph0_j)]``."""
    out = []
    for word, c in desc["words"]:
        x, z, ph0 = word_masks(word, n)
        out.append((x, z, float(c) * ph0))
    return out


def word_circuit(hf_state, words, selected=None, convention: str = "qnode") -> Circuit:
    """The tapered UCCSD circuit (``build_uccsd_circuit``): one gate per
    operator of ``words`` (:func:`pool_words`) with its own parameter; or,
    with ``selected`` (pool indices), the ADAPT circuit of that selection
    (``convention``: the recorded ADAPT engine, a key of :data:`ANGLE_FACTOR`)."""
    n = len(hf_state)
    order = range(len(words)) if selected is None else [int(k) for k in selected]
    gates = [word_gate(words[k], n, p, convention) for p, k in enumerate(order)]
    return Circuit.from_gates(n, hf_state, gates, len(gates))


@dataclass
class Energy:
    """``energy(params) -> float`` (Ha) on the fast engine, counting calls like
    :class:`qencode_nb.engines.qnode.energy.Energy`; ``energy_and_grad(params)``
    gives the exact adjoint gradient too.

    Attributes:
        circuit: the :class:`Circuit`.
        hamiltonian: the :class:`Hamiltonian`.
        backend: :data:`NAME`.
        calls: energy evaluations so far (energy+gradient calls included).
    """

    circuit: Circuit
    hamiltonian: Hamiltonian
    backend: str = NAME
    calls: int = 0
    _psi0: object = field(default=None, repr=False)

    def __post_init__(self):
        if self.circuit.n != self.hamiltonian.n:
            raise NotRunnable(f"circuit on {self.circuit.n} wires, Hamiltonian on "
                          f"{self.hamiltonian.n}")
        self._psi0 = self.circuit.psi0()

    def _h(self):
        return self.hamiltonian.arrays()

    def __call__(self, params) -> float:
        import numpy as np

        from qencode_nb.engines.fast import kernels as k

        self.calls += 1
        return float(k.energy(self._psi0, *self.circuit.arrays(),
                              np.asarray(params, dtype=np.float64), *self._h()))

    def energy_and_grad(self, params):
        """``(E, dE/dparams)``: float (Ha) and float64 array of shape ``(num_params,)``."""
        import numpy as np

        from qencode_nb.engines.fast import kernels as k

        self.calls += 1
        grad = np.zeros(self.circuit.num_params)
        e = k.energy_and_grad(self._psi0, *self.circuit.arrays(),
                              np.asarray(params, dtype=np.float64), *self._h(), grad)
        return float(e), grad
