"""The faithful engine (issue 60): default.qubit's arithmetic with the work that cannot
change done once, proven by equal bits at every evaluation of whole optimiser paths.

Both engines run here, on the same host, kernels and threads, so the equalities hold on
every host kind: what is compared is the order of the floating-point operations, not the
kernels' bits.  Budgets are capped for the larger entries (a whole COBYLA run of that
budget, from its first evaluation to its last); ``qencode-nb study faithful`` runs the
recorded budgets."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from conftest import SHARED_DB

from qencode_nb import entry as entries
from qencode_nb.engines import registry
from qencode_nb.engines.selection import choose
from qencode_nb.errors import NotRunnable
from qencode_nb.hamiltonian.check import rebuild
from qencode_nb.rerun.replay import _replayed
from qencode_nb.studies.faithful import PROOF_SET, prove


def _entry(prefix):
    return entries.load(str(next(SHARED_DB.glob(f"{prefix}*.json"))))


#: Each proof-set entry's cap: (COBYLA or L-BFGS-B max_iterations, or ADAPT operators,
#: restarts); None: the recorded budget.
CAPS = {
    "LiH_ccpvdz_PAR_HEA": (150, 1),
    "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_178": (2, 1),
    "H2_ccpvdz_BK_UCCSD": (None, None),
    "BeH2_ccpvdz_PAR_UCCSD": (120, 1),
    "H4_ccpvdz_JW_UCCSD": (50, 1),
    "H4_ccpvdz_JW_ADAPT": (None, None),
    "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_ebc": (60, 1),
    "H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254": (40, 1),
    "H6_ccpvdz_JW_ADAPT": (2, None),
}


def test_every_proof_set_entry_has_a_cap_and_exists():
    assert set(CAPS) == set(PROOF_SET)
    for prefix in PROOF_SET:
        assert len(list(SHARED_DB.glob(f"{prefix}*.json"))) == 1, prefix


@pytest.mark.slow
@pytest.mark.parametrize("prefix", list(PROOF_SET))
def test_the_faithful_engine_gives_the_plain_qnodes_bits_at_every_evaluation(prefix):
    """Every evaluation of the whole COBYLA run (ADAPT: every inner evaluation, the
    selection and every step's screening gradients) is the plain QNode's to the bit, and
    so is the result; the faithful engine measured through the path default.qubit picks
    by size (diagonalising gates below 8 wires, the CSR products from 8)."""
    e = _entry(prefix)
    cap, restarts = CAPS[prefix]
    r = prove(e, max_iterations=cap, restarts=restarts)
    d = r["divergence"]
    assert d["evaluation"] is None, d
    assert d["compared"] >= (3 if e.optimizer.name == "l-bfgs-b" else 20)
    assert len(r["plain"]["log"]) == len(r["faithful"]["log"])
    assert r["same_result"]
    want = "csr_dot_products" if e.tapered_num_qubits >= 8 else "state_diagonalizing_gates"
    assert r["measurement"] == want


def test_adam_on_the_faithful_backprop_path_is_the_plain_qnodes_at_every_step():
    """Adam (an optimiser override, as the optimisers study runs it): every step's cost
    and gradient through ``qml.grad`` of the faithful backprop path, the final cost."""
    r = prove(_entry("LiH_ccpvdz_PAR_HEA"), max_iterations=6, restarts=1, optimizer="adam")
    assert r["divergence"]["evaluation"] is None and r["divergence"]["compared"] == 6
    assert r["same_result"]


def _break_csr_order(monkeypatch):
    """One reordered sum: the CSR structures added in reverse order."""
    from qencode_nb.engines.faithful import circuit

    original = circuit.Observable._csr_measurer

    def reordered(self, n):
        measure = original(self, n)
        self.parts.reverse()        # the closure holds the same list
        return measure

    monkeypatch.setattr(circuit.Observable, "_csr_measurer", reordered)


def _break_dot_order(monkeypatch):
    """One reordered sum: the probabilities' dot product with the eigenvalues summed
    from the other end (everything else as ``state_diagonalizing_gates``)."""
    from pennylane.devices.qubit.apply_operation import apply_operation
    from pennylane.devices.qubit.measure import flatten_state
    from pennylane.measurements import ProbabilityMP
    from pennylane.wires import Wires

    from qencode_nb.engines.faithful import circuit

    def reordered(self):
        gates, eigvals = list(self.mp.diagonalizing_gates()), self.mp.eigvals()
        probs = ProbabilityMP(wires=self.mp.wires)

        def backwards(state):
            for op in gates:
                state = apply_operation(op, state)
            n = len(state.shape)
            p = probs.process_state(state=flatten_state(state, n), wire_order=Wires(range(n)))
            return np.dot(p[::-1], eigvals[::-1])

        return backwards

    monkeypatch.setattr(circuit.Observable, "_diagonalizing_measurer", reordered)


@pytest.mark.parametrize("prefix, breaker", [
    ("H6_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_254", _break_csr_order),
    ("LiH_ccpvdz_PAR_HEA", _break_dot_order)])
def test_a_deliberately_reordered_sum_fails_the_proof(prefix, breaker, monkeypatch):
    """The check can fail: one sum taken in another order parts the logs within the
    first 80 evaluations (not at the first: from the HF state COBYLA's first steps leave
    few non-zero amplitudes, whose sums are exact in any order)."""
    breaker(monkeypatch)
    r = prove(_entry(prefix), max_iterations=80, restarts=1)
    d = r["divergence"]
    assert d["evaluation"] is not None and d["evaluation"] <= 80, d
    assert d["input"] in ("Hamiltonian", "x")
    assert not r["same_result"]


def test_adapt_screening_gradients_are_the_plain_qnodes_for_every_pool_operator():
    e = _entry("H6_ccpvdz_JW_ADAPT")
    rb = rebuild(e)
    plain = registry.get("qnode").bind(e, rb).adapt_backend("cobyla")
    fast = registry.get("faithful").bind(e, rb).adapt_backend("cobyla")
    sel = list(e.adapt["selected_operator_indices"])[:3]
    p = np.array([0.3, -0.7, 1.1])
    gp, gf = plain.pool_gradient(sel, p), fast.pool_gradient(sel, p)
    assert [gp(k).hex() for k in range(plain.n_pool)] == \
        [gf(k).hex() for k in range(fast.n_pool)]


def test_stored_parameters_replay_to_the_same_bits_on_both_engines():
    for prefix in ("H4_ccpvdz_JW_ADAPT", "LiH_ccpvdz_PAR_HEA",
                   "N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_178"):   # L-BFGS-B: trainable
        e = _entry(prefix)
        rb = rebuild(e)
        sel = (e.adapt or {}).get("selected_operator_indices")
        problems = [SimpleNamespace(is_adapt=sel is not None,
                                    engines=SimpleNamespace(replay=registry.get(n).bind(e, rb)))
                    for n in ("qnode", "faithful")]
        a, b = (_replayed(e, p, p.engines.replay, sel) for p in problems)
        assert float(a).hex() == float(b).hex()


def test_the_recorded_qnode_arithmetic_runs_on_the_faithful_engine_by_default():
    e = _entry("LiH_ccpvdz_PAR_HEA")
    c = choose(e, rebuild(e), None)
    assert c.rerun.engine == c.replay.engine == "faithful"
    rec = c.to_record()
    assert rec["used"] == "default.qubit" and rec["faithful"] is True
    assert rec["faithful_reason"] is None
    plain = choose(e, rebuild(e), "qnode")
    assert plain.rerun.engine == "qnode" and plain.to_record()["faithful"] is False


def test_an_unproven_pennylane_runs_the_plain_qnode_and_says_why(monkeypatch):
    from qencode_nb.engines.faithful import proven

    monkeypatch.setattr(proven, "pennylane_version", lambda: "0.43.0")
    e = _entry("LiH_ccpvdz_PAR_HEA")
    with pytest.raises(NotRunnable, match="PennyLane 0.43.0 is not one the faithful engine "
                                          r"was proven for \(0.44.1, 0.45.0\)"):
        registry.get("faithful").bind(e, rebuild(e))
    c = choose(e, rebuild(e), None)
    assert c.rerun.engine == "qnode"
    assert "PennyLane 0.43.0" in c.to_record()["faithful_reason"]


def test_another_recorded_device_is_refused():
    from dataclasses import replace

    e = _entry("LiH_ccpvdz_PAR_HEA")
    with pytest.raises(NotRunnable, match="recorded device 'lightning.qubit'"):
        registry.get("faithful").bind(replace(e, backend="lightning.qubit"), rebuild(e))


def test_a_circuit_the_device_decomposes_is_refused():
    """A tape the preprocessing changes is not one the cache may stand for."""
    import pennylane as qml

    from qencode_nb.engines.faithful.circuit import FaithfulCircuit

    def circuit(params, wires):
        qml.BasisState(np.array([1, 0]), wires=wires)
        qml.BasicEntanglerLayers([[params[0], 0.1]], wires=wires)   # decomposed

    H = qml.Z(0) + 0.5 * qml.X(1)
    with pytest.raises(NotRunnable, match="changes the circuit's operations"):
        FaithfulCircuit(circuit, [0, 1], H, np.zeros(1))


def test_the_readmes_release_time_is_the_committed_v3_proofs():
    """README's "time to audit a whole release to the bit" is read from
    docs/results/faithful/v3-proof.csv (the v3 study in its recorded stack)."""
    import pandas as pd

    from conftest import ROOT

    t = pd.read_csv(ROOT / "docs" / "results" / "faithful" / "v3-proof.csv")
    assert len(t) == 36 and t["proven"].all() and t["same_result"].all()
    assert set(t["pennylane"]) == {"0.44.1"} and t["faithful_ran"].all()
    assert int(t["faithful_bit_identical"].sum()) == 34
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    def minutes(s):
        return f"{int(s // 60)} min {int(round(s % 60))} s"

    assert f"all {int(t['evaluations'].sum()):,} evaluations" in readme
    assert f"{minutes(t['faithful_s'].sum())} on the faithful engine" in readme
    assert f"({minutes(t['plain_s'].sum())} on the plain QNode" in readme
