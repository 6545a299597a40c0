"""``default.qubit``'s own arithmetic for one circuit and one observable, with the
work that cannot change done once.

A plain QNode call (PennyLane ``default.qubit``, analytic, numpy parameters) builds a
tape, runs the device's preprocessing, makes the initial state, applies every
operation (``pennylane.devices.qubit.apply_operation``) and measures
(``pennylane.devices.qubit.measure``).  Only part of that depends on the parameters.
:class:`FaithfulCircuit` runs the same floating-point operations, in the same order,
on the same values, and does the rest once:

- **the tape**: the circuit function is queued as the QNode queues it (its
  arithmetic on the parameters, e.g. ``1j * theta``, is the circuit's own); the
  device's preprocessing is checked once, at binding, to leave that tape as it is;
- **the initial state**: ``create_initial_state`` of the state preparation, once;
- **operations**: PennyLane's ``apply_operation`` dispatch on each queued operation,
  except ``Exp``: its matrix is ``expm(scalar * base.matrix())``
  (``ScalarSymbolicOp.matrix``) with the base's matrix computed once per base, and
  a copy queued again right after it (the generator's ``qml.apply`` quirk) reuses the
  matrix of the same base at the same scalar; it is applied by the same
  ``_apply_operation_default`` an ``Exp`` reaches;
- **the measurement**: the function ``get_measurement_function`` picks is asked once;
  ``csr_dot_products`` keeps ``PauliSentence.dot``'s Hamiltonian-only parts (each
  sparse structure's column indices and data, ``_get_same_structure_csr``) and runs
  only its state-dependent loop ``mv += vector[:, entries] * data``;
  ``state_diagonalizing_gates`` keeps the observable's diagonalising gates and
  eigenvalues; any other function runs as PennyLane runs it.

The proof that nothing else changed is equality of the bits with the plain QNode at
every evaluation of whole optimiser paths (:mod:`qencode_nb.studies.faithful`), never
a tolerance.  The PennyLane versions it was proven for are
:data:`qencode_nb.engines.faithful.proven.PROVEN`.  Energies in Ha, angles in radians.
"""

from __future__ import annotations

from qencode_nb.errors import NotRunnable


class _MatrixOp:
    """What ``_apply_operation_default`` and ``apply_operation_einsum/tensordot`` read of
    an ``Exp``: its wires and its matrix (computed by :class:`FaithfulCircuit`)."""

    __slots__ = ("wires", "_mat")
    batch_size = None
    has_sparse_matrix = False
    has_matrix = True

    def __init__(self, wires, mat):
        self.wires, self._mat = wires, mat

    def matrix(self, wire_order=None):
        return self._mat


def _queue(circuit, params, wires) -> list:
    """The operations ``circuit(params, wires)`` queues, in order (as a QNode records
    them)."""
    import pennylane as qml

    with qml.queuing.AnnotatedQueue() as q:
        circuit(params, wires=wires)
    return [op for op in q.queue if isinstance(op, qml.operation.Operator)]


class Observable:
    """The measurement of ``qml.expval(hamiltonian)`` on ``default.qubit`` with its
    Hamiltonian-only work done once, shared by every circuit on the same wires
    (an ADAPT run builds a circuit per selection).

    Args:
        hamiltonian: the PennyLane observable (Ha).
        mp: the measurement process as the device receives it (after preprocessing).
        state: a state of the circuit's shape (numpy), to ask
            ``get_measurement_function`` which function measures it.
    """

    def __init__(self, hamiltonian, mp, state):
        import importlib

        # the module (the package re-exports a function of the same name)
        measure_module = importlib.import_module("pennylane.devices.qubit.measure")
        self.hamiltonian, self.mp = hamiltonian, mp
        self.shape = tuple(state.shape)
        self.function = measure_module.get_measurement_function(mp, state)
        self.measurement = self.function.__name__
        self.measure = self._measurer(state)

    def __call__(self, state):
        return self.measure(state)

    def _measurer(self, state):
        if self.measurement == "csr_dot_products":
            from pennylane.pauli.conversion import is_pauli_sentence

            if is_pauli_sentence(self.mp.obs):
                return self._csr_measurer(len(state.shape))
        if self.measurement == "state_diagonalizing_gates" and self.mp.wires:
            return self._diagonalizing_measurer()
        mp, fn = self.mp, self.function
        return lambda state: fn(mp, state, False)

    def _csr_measurer(self, n):
        """``csr_dot_products``' Pauli-sentence branch (``PauliSentence.dot``) with the
        Hamiltonian's sparse structures, indices and data computed once."""
        import numpy as np
        from pennylane import math
        from pennylane.pauli.conversion import pauli_sentence
        from pennylane.pauli.pauli_arithmetic import _ps_to_sparse_index
        from pennylane.wires import Wires

        ps = pauli_sentence(self.mp.obs)
        wire_order = Wires(list(range(n)))
        if not wire_order.contains_wires(ps.wires):
            raise NotRunnable("the observable's wires are not the device's")
        words = list(ps)
        sparse_idx = _ps_to_sparse_index(words, wire_order)
        _, unique, invs = np.unique(sparse_idx, axis=0, return_index=True,
                                    return_inverse=True)
        structures = unique[invs]
        parts = []
        for structure in unique:
            idx, *_ = np.nonzero(structures == structure)
            entries, data = ps._get_same_structure_csr([words[i] for i in idx], wire_order)
            parts.append((entries, data.reshape(1, -1)))
        self.parts = parts

        def measure(state):
            state = math.toarray(state)
            state = state.reshape(1, -1)
            bra = math.conj(state)
            dtype = np.complex64 if state.dtype in (np.float32, np.complex64) \
                else np.complex128
            mv = np.zeros_like(state, dtype=dtype)
            for entries, data in parts:
                mv += state[:, entries] * data
            new_ket = mv.reshape(state.shape)
            res = (bra * new_ket).sum(axis=1)
            return math.real(math.squeeze(res))

        return measure

    def _diagonalizing_measurer(self):
        """``state_diagonalizing_gates`` with the observable's diagonalising gates and
        eigenvalues (``ExpectationMP.eigvals``) taken once; the probabilities as
        ``ExpectationMP.process_state`` takes them (``ProbabilityMP.process_state``),
        their dot product with the eigenvalues as ``_calculate_expectation``."""
        return diagonalizing_measurer(self.mp)


class FaithfulCircuit:
    """``<psi(params)|H|psi(params)>`` (Ha) on ``default.qubit``, bit for bit.

    Args:
        circuit: ``circuit(params, wires)`` queuing a state preparation first
            (``qml.BasisState``) and then the ansatz.
        wires: wire labels ``[0, ..., n - 1]``.
        hamiltonian: the PennyLane observable (Ha).
        probe: parameters (radians, shape ``(num_params,)``) to check the tape at.
        observable: an :class:`Observable` of ``hamiltonian`` on these wires to share
            (None: made here).

    Raises:
        NotRunnable: the device's preprocessing changes the tape, the circuit does not
            start with a state preparation, or an operation is batched (the plain
            QNode then runs; the reason says which).
    """

    def __init__(self, circuit, wires, hamiltonian, probe, observable=None):
        import numpy as np
        import pennylane as qml
        from pennylane.devices.qubit.initialize_state import create_initial_state
        from pennylane.operation import StatePrepBase

        self.circuit, self.wires, self.hamiltonian = circuit, list(wires), hamiltonian
        probe = np.asarray(probe, dtype=float)
        dev = qml.device("default.qubit", wires=self.wires)

        @qml.qnode(dev)
        def plain(params):
            circuit(params, wires=self.wires)
            return qml.expval(hamiltonian)

        self.plain = plain
        tape = qml.workflow.construct_tape(plain)(probe)
        tapes, _ = dev.preprocess_transforms()((tape,))
        if len(tapes) != 1:
            raise NotRunnable(f"default.qubit's preprocessing splits the tape into "
                              f"{len(tapes)}")
        final = tapes[0]
        ops = _queue(circuit, probe, self.wires)
        if [_key(op) for op in final.operations] != [_key(op) for op in ops]:
            raise NotRunnable("default.qubit's preprocessing changes the circuit's "
                              "operations (decomposes or reorders them)")
        if not ops or not isinstance(ops[0], StatePrepBase):
            raise NotRunnable("the circuit does not start with a state preparation")
        if any(getattr(op, "batch_size", None) is not None for op in ops):
            raise NotRunnable("a batched operation")
        if final.num_wires != len(final.op_wires):
            raise NotRunnable("a measured wire no operation touches (default.qubit pads "
                              "the state)")
        self._prep_key = _key(ops[0])
        self._initial = create_initial_state(sorted(final.op_wires), ops[0], like="numpy")
        if observable is None or observable.shape != tuple(self._initial.shape):
            observable = Observable(hamiltonian, final.measurements[0], self._initial)
        self.observable = observable
        self._base_matrices = {}
        self._terms = None
        self._op_wires = sorted(final.op_wires)
        self._prep = ops[0]

    @property
    def measurement(self) -> str:
        """The name of the measurement function ``default.qubit`` picks."""
        return self.observable.measurement

    # -- the state -------------------------------------------------------------
    def state(self, params):
        """The final state (numpy, shape ``(2,) * n``), as ``get_final_state`` makes it."""
        from pennylane.devices.qubit.apply_operation import (
            _apply_operation_default, apply_operation)
        from pennylane.ops.op_math import Exp

        ops = _queue(self.circuit, params, self.wires)
        if _key(ops[0]) != self._prep_key:
            raise ValueError("the state preparation changed between calls")
        state = self._initial.copy()
        last = None
        for i, op in enumerate(ops[1:]):
            if type(op) is Exp:
                base, scalar = op.base, op.scalar
                bits = _bits(scalar)
                if last is not None and last[0] == bits and _same_word(base, last[1]):
                    mat = last[2]             # the copy queued again: the same matrix
                else:
                    mat = type(op)._matrix(scalar, self._base_matrix(i, base))
                last = (bits, base, mat)
                state = _apply_operation_default(_MatrixOp(op.wires, mat), state, False, None)
            else:
                last = None
                state = apply_operation(op, state)
        return state

    # -- trainable parameters (the gradient optimisers' calls) -------------------
    def trainable(self, params):
        """The energy (Ha) as a QNode gives it on trainable parameters (``pennylane.numpy``
        arrays with ``requires_grad=True``, or autograd's boxes inside ``qml.grad``):
        backprop mode, every operation through PennyLane's ``apply_operation`` on the
        autograd state, the Hamiltonian measured term by term (``sum_of_terms_method``:
        Python's ``sum`` of each term's expectation) with each term's diagonalising gates
        and eigenvalues taken once.  ``qml.grad`` of it is the QNode's gradient."""
        from pennylane.devices.qubit.apply_operation import apply_operation
        from pennylane.devices.qubit.initialize_state import create_initial_state

        ops = _queue(self.circuit, params, self.wires)
        if _key(ops[0]) != self._prep_key:
            raise ValueError("the state preparation changed between calls")
        state = create_initial_state(self._op_wires, ops[0], like="autograd")
        for op in ops[1:]:
            state = apply_operation(op, state)
        return sum(term(state) for term in self._term_measurers())

    def _term_measurers(self) -> list:
        """One measurer per term of the observable, as ``sum_of_terms_method`` measures
        each (``measure(ExpectationMP(term), state)``), the state-independent parts once."""
        if self._terms is not None:
            return self._terms
        import importlib

        from pennylane import math
        from pennylane.measurements import ExpectationMP
        from pennylane.ops import Sum

        measure_module = importlib.import_module("pennylane.devices.qubit.measure")
        obs = self.observable.mp.obs
        if not isinstance(obs, Sum):
            raise NotRunnable("the observable is not a Sum (not measured term by term)")
        probe = create_probe_state(self._initial)
        terms = []
        for term in obs:
            emp = ExpectationMP(term)
            fn = measure_module.get_measurement_function(emp, probe)
            if fn.__name__ != "state_diagonalizing_gates":
                terms.append(lambda state, emp=emp, fn=fn: fn(emp, state, False))
                continue
            if not emp.wires:
                eigvals = emp.eigvals()
                terms.append(lambda state, eigvals=eigvals: math.squeeze(eigvals))
                continue
            terms.append(diagonalizing_measurer(emp))
        self._terms = terms
        return terms

    def _base_matrix(self, position, base):
        """``base.matrix()``, computed once for the base object at ``position``."""
        held = self._base_matrices.get(position)
        if held is None or held[0] is not base:
            held = (base, base.matrix())
            self._base_matrices[position] = held
        return held[1]

    def __call__(self, params) -> float:
        """The energy (Ha) as ``float(qnode(params))``."""
        return float(self.observable(self.state(params)))


def diagonalizing_measurer(mp):
    """``state_diagonalizing_gates`` of the expectation ``mp`` (on wires) with its
    diagonalising gates and eigenvalues (``ExpectationMP.eigvals``) taken once: the gates
    applied, the probabilities as ``ExpectationMP.process_state`` takes them
    (``ProbabilityMP.process_state``), their dot product with the eigenvalues as
    ``_calculate_expectation``.  Returns ``measure(state)``."""
    from pennylane import math
    from pennylane.devices.qubit.apply_operation import apply_operation
    from pennylane.devices.qubit.measure import flatten_state
    from pennylane.measurements import ProbabilityMP
    from pennylane.wires import Wires

    gates, eigvals = list(mp.diagonalizing_gates()), mp.eigvals()
    probs = ProbabilityMP(wires=mp.wires)

    def measure(state):
        for op in gates:
            state = apply_operation(op, state)
        total = len(state.shape)
        flat = flatten_state(state, total)
        probabilities = probs.process_state(state=flat, wire_order=Wires(range(total)))
        return math.dot(probabilities, eigvals)

    return measure


def create_probe_state(state):
    """``state`` as an autograd-interface array (what ``get_measurement_function`` is
    asked with in backprop mode)."""
    import pennylane.numpy as pnp

    return pnp.array(state, requires_grad=True)


def _key(op) -> tuple:
    """What identifies a queued operation apart from its parameters' values."""
    return (type(op).__name__, tuple(op.wires), op.num_params)


def _same_word(a, b) -> bool:
    """``a`` is ``b`` or a copy of it: the same type, wires and Pauli representation
    (``Prod.matrix`` is its Pauli representation's matrix)."""
    if a is b:
        return True
    pa, pb = getattr(a, "pauli_rep", None), getattr(b, "pauli_rep", None)
    return (type(a) is type(b) and a.wires == b.wires and pa is not None
            and pb is not None and pa == pb)


def _bits(scalar) -> bytes:
    import numpy as np

    return np.asarray(scalar, dtype=complex).tobytes()
