"""Ansätze as QEncode builds them (public generator ``generate_entry_v4.py``).

Each builder returns a circuit function ``circuit(params, wires)`` that
prepares the tapered Hartree-Fock state and applies the ansatz; it is called
inside a PennyLane QNode.
"""

from __future__ import annotations

from qencode_nb.rules import TAPER_OPERATION_MAX_QUBITS


def hea_num_params(num_qubits: int, reps: int) -> int:
    """Parameter count of QEncode's HEA: ``num_qubits * (reps + 1)``."""
    return num_qubits * (reps + 1)


def hea_circuit(hf_state, reps: int):
    """QEncode's hardware-efficient ansatz (``build_hea_circuit``).

    ``reps + 1`` layers of RY on every wire (in wire order), with a CNOT
    ladder ``(w0,w1), (w1,w2), ...`` between consecutive layers.  The circuit
    starts from ``qml.BasisState(hf_state)``.

    Args:
        hf_state: tapered HF occupation, shape ``(num_qubits,)`` of 0/1
            (artifacts.circuits.hf_state).
        reps: ``encoding.ansatz_reps``.

    Returns:
        ``circuit(params, wires)`` with ``params`` of shape
        ``(len(wires) * (reps + 1),)`` in radians.
    """
    import numpy as np
    import pennylane as qml

    hf = np.array(hf_state, dtype=int)

    def circuit(params, wires):
        n = len(wires)
        qml.BasisState(hf, wires=wires)
        idx = 0
        for layer in range(reps + 1):
            for w in wires:
                qml.RY(params[idx], wires=w)
                idx += 1
            if layer < reps:
                for i in range(n - 1):
                    qml.CNOT(wires=[wires[i], wires[i + 1]])

    return circuit


# ---------------------------------------------------------------------------
# Tapered UCCSD (generator: _get_tapered_uccsd_ops, _apply_tapered_op,
# build_uccsd_circuit; qencode-benchmark commit e1f44cd)
# ---------------------------------------------------------------------------

def tapered_uccsd_ops(num_electrons: int, n_qubits_full: int, generators,
                      paulixops, sectors) -> list:
    """QEncode's tapered UCCSD / ADAPT pool (``_get_tapered_uccsd_ops``).

    Every double excitation of ``qchem.excitations(num_electrons,
    n_qubits_full)`` first, then every single.  Two branches, as in the
    generator:

    - ``n_qubits_full <= 12``: each excitation is built at angle 0.0 and
      passed to ``qchem.taper_operation`` (``wire_order =
      range(n_qubits_full)``).  Each Pauli word of a tapered generator becomes
      its own operator ``Exp(0j * P)``, so one excitation can contribute 0, 1
      or several pool entries; excitations that do not commute with the
      symmetries contribute none.  An excitation whose tapering raises is
      skipped.
    - ``n_qubits_full > 12`` (``taper_operation`` would build dense
      ``2^N x 2^N`` matrices): the excitation's generator
      ``qml.generator(gate(0.0), format="observable")`` is tapered with
      ``qchem.taper`` like the Hamiltonian.  It is kept, as one operator
      ``qml.exp(G_tap, coeff=0j)``, when its CSR matrix on
      ``range(n_qubits_full - len(generators))`` is non-zero and
      ``B = 2i G_tap`` passes ``max|B^3 + B| <= 1e-8``; a generator that
      tapers to ``None``, has no Pauli representation, vanishes or raises is
      dropped, as is one that fails the ``B^3 = -B`` check.  (Generator,
      e1f44cd: H8 360 -> 278 operators, H10 875 -> 875.)

    The order of the list is the order of the parameters.

    Args:
        num_electrons: active electrons.
        n_qubits_full: untapered qubit count (``encoding.tapering.original_num_qubits``).
        generators, paulixops, sectors: from :func:`qencode_nb.hamiltonian.tapering.taper`.

    Returns:
        list of PennyLane ``Exp`` operators: above 12 qubits with a
        (multi-term) tapered generator as ``base``, otherwise with a
        Pauli-word ``base``.  For UCCSD its length is the entry's
        ``results.vqe.num_params``; for ADAPT it is
        ``encoding.adapt_metadata.n_operators_pool``.
    """
    import pennylane as qml
    from pennylane import qchem

    excitations = uccsd_excitations(num_electrons, n_qubits_full)
    if n_qubits_full > TAPER_OPERATION_MAX_QUBITS:
        return _tapered_generator_pool(excitations, n_qubits_full, generators,
                                       paulixops, sectors)
    wire_order = list(range(n_qubits_full))
    pool = []
    with qml.QueuingManager.stop_recording():
        for gate, exc_wires in excitations:
            try:
                tapered = qchem.taper_operation(
                    gate(0.0, wires=list(exc_wires)), generators, paulixops,
                    sectors, wire_order=wire_order)
            except Exception:  # the generator skips such an excitation
                continue
            if not isinstance(tapered, (list, tuple)):
                tapered = [tapered]
            pool.extend(op for op in tapered
                        if op is not None and getattr(op, "num_params", 0) > 0)
    return pool


def uccsd_excitations(num_electrons: int, n_qubits_full: int) -> list:
    """``[(gate class, wires)]``: every double of ``qchem.excitations`` then every
    single, in the generator's pool order (``_get_tapered_uccsd_ops``)."""
    import pennylane as qml
    from pennylane import qchem

    singles, doubles = qchem.excitations(num_electrons, n_qubits_full)
    return ([(qml.DoubleExcitation, w) for w in doubles]
            + [(qml.SingleExcitation, w) for w in singles])


def tapered_pool_excitations(num_electrons: int, n_qubits_full: int, generators,
                             paulixops, sectors) -> list:
    """The > 12-qubit pool as ``(gate, wires, tapered op)`` triples, in pool order.

    Raises:
        ValueError: ``n_qubits_full`` is 12 or less (that pool splits
            excitations into Pauli words, which the sector engine cannot map).
    """
    if n_qubits_full <= TAPER_OPERATION_MAX_QUBITS:
        raise ValueError(f"{n_qubits_full} qubits: the generator's pool at <= "
                         f"{TAPER_OPERATION_MAX_QUBITS} qubits is made of single Pauli "
                         "words, not excitations")
    return _tapered_generator_pool(uccsd_excitations(num_electrons, n_qubits_full),
                                   n_qubits_full, generators, paulixops, sectors,
                                   with_excitations=True)


def _tapered_generator_pool(excitations, n_qubits_full, generators, paulixops,
                            sectors, *, with_excitations: bool = False) -> list:
    """The > 12-qubit branch of :func:`tapered_uccsd_ops` (tapered generators).

    With ``with_excitations`` each entry is ``(gate, wires, op)``: the
    untapered excitation kept and its tapered operator (the sector engine
    maps pool entries back to excitations this way)."""
    import pennylane as qml
    from pennylane import qchem

    from qencode_nb.engines.excitation_check import keeps

    tapered_wires = list(range(n_qubits_full - len(generators)))
    pool = []
    with qml.QueuingManager.stop_recording():
        for gate, exc_wires in excitations:
            try:
                G = qml.generator(gate(0.0, wires=list(exc_wires)), format="observable")
                G_tap = qchem.taper(G, generators, paulixops, sectors)
                if G_tap is None or G_tap.pauli_rep is None:
                    continue
                if not keeps(G_tap, tapered_wires):   # no non-zero, or B**3 != -B
                    continue
                op = qml.exp(G_tap, coeff=0j)
                pool.append((gate, list(exc_wires), op) if with_excitations else op)
            except Exception:  # the generator counts these as vanished and drops them
                continue
    return pool


_SINGLE_WIRE_ROTATIONS = {"PauliX": "RX", "PauliY": "RY", "PauliZ": "RZ"}


def apply_tapered_op(op, param) -> None:
    """Queue one tapered UCCSD operator at angle ``param`` (``_apply_tapered_op``).

    Call inside a QNode.  The parameterisation is the generator's, quirks
    included (the stored ``optimal_params`` are only meaningful for it):

    - ``op.base`` a single-wire Pauli X/Y/Z: one ``RX/RY/RZ(param)``, i.e.
      ``exp(-i param P / 2)``;
    - any other ``op.base`` (a multi-wire Pauli word): ``qml.exp(base,
      1j * param)``, i.e. ``exp(i param P)``, queued **twice**: the generator
      passes the freshly built (hence already queued) operator to
      ``qml.apply``, which queues it again, so the net rotation is
      ``exp(2i param P)``;
    - ``op`` without ``base``: ``type(op)(param, wires=op.wires)``, also
      queued twice for the same reason.

    The coefficient of the tapered generator's Pauli word is discarded.

    Args:
        op: one entry of :func:`tapered_uccsd_ops`.
        param: angle in radians (scalar, may be trainable).
    """
    import pennylane as qml

    base = getattr(op, "base", None)
    if base is None:
        gate = type(op)(param, wires=op.wires)
        qml.apply(gate)
        return
    rotation = _SINGLE_WIRE_ROTATIONS.get(type(base).__name__)
    if rotation is not None and len(base.wires) == 1:
        getattr(qml, rotation)(param, wires=base.wires[0])
        return
    evolution = qml.exp(base, coeff=1j * param)
    qml.apply(evolution)


def uccsd_circuit(hf_state, ops):
    """QEncode's tapered UCCSD circuit (``build_uccsd_circuit``).

    ``qml.BasisState(hf_state)`` on the tapered wires, then
    :func:`apply_tapered_op` for each pool operator with its own parameter.

    Args:
        hf_state: tapered HF occupation, shape ``(num_qubits,)`` of 0/1
            (``encoding.tapering.hf_tapered_state``).
        ops: the pool from :func:`tapered_uccsd_ops`.

    Returns:
        ``circuit(params, wires)`` with ``params`` of shape ``(len(ops),)`` in
        radians and ``wires`` the sorted tapered wires.

    Raises:
        ValueError: ``ops`` is empty.  (The generator then silently builds
            its HEA with reps=2 and labels the entry accordingly; that is an
            HEA entry, not a UCCSD one.)
    """
    import numpy as np
    import pennylane as qml

    if not ops:
        raise ValueError("uccsd_circuit: the tapered UCCSD pool is empty; the "
                         "generator falls back to HEA (reps=2) in that case")
    hf = np.array(hf_state, dtype=int)
    pool = list(ops)

    def circuit(params, wires):
        qml.BasisState(hf, wires=wires)
        for op, param in zip(pool, params, strict=True):
            apply_tapered_op(op, param)

    return circuit
