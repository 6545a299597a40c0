"""The compiled statevector engine (issue 14) against PennyLane default.qubit, on
real QEncode entries of every kind.

Oracle: default.qubit QNodes built exactly as the generator builds them
(:mod:`qencode_nb.engines.qnode.energy`, :mod:`qencode_nb.engines.ansatz`), and the
published energies.  Tolerances: energies 1e-10 Ha (the issue's agreement
requirement; measured 1e-15 to 6e-14 Ha), gradients 1e-9 Ha/rad (measured
~2e-15), gradient-based re-runs 1e-8 Ha.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_DB, TEST_PROFILE, by_profile
from qencode_nb.entry import load
from qencode_nb.options import check_engine
from qencode_nb.errors import EntryError, NotRunnable, ParameterError
from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
from qencode_nb.engines.fast import compiled as fe
from qencode_nb.rerun.problem import build_problem

#: One real entry per kind the compiled statevector engine runs.
KINDS = {
    "hea-jordan_wigner": "LiH_ccpvdz_JW_HEA_v4_tapered__sha256_f044f66bd4bc8376.json",
    "hea-parity": "H2O_ccpvdz_PAR_HEA_v4_tapered__sha256_442576f5b48d4354.json",
    "hea-bravyi_kitaev": "H2_ccpvdz_BK_HEA_v4_tapered__sha256_6e206ec6f1f02ea4.json",
    "uccsd-jordan_wigner": "LiH_ccpvdz_JW_UCCSD_v4_tapered__sha256_21e143f12ed3a4b6.json",
    "uccsd-parity": "BeH2_ccpvdz_PAR_UCCSD_v4_tapered__sha256_f71541a4f8d3e964.json",
    "uccsd-bravyi_kitaev": "HF_ccpvdz_BK_UCCSD_v4_tapered__sha256_42ad3163dd5bcf87.json",
    "adapt-qnode-pool": "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json",
}


def _problems(name, engine="fast"):
    e = load(SHARED_DB / name)
    rebuilt = rebuild(e)
    return e, rebuilt, build_problem(e, rebuilt, engine, hamiltonian_check(e, rebuilt))


@pytest.mark.parametrize("name", [KINDS["uccsd-jordan_wigner"],           # 5 qubits < 8 low bits
                                  KINDS["adapt-qnode-pool"],
                                  "H6_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_def5987c2958af93.json"])
def test_grouped_terms_equal_the_csr_matrix(name, monkeypatch):
    """Above CSR_MAX_QUBITS (H10) H·ψ applies the stored terms grouped by their X/Y
    mask; forced here on entries small enough for the CSR oracle (both from the
    stored pauli_terms).  Tolerance 1e-12 per amplitude (measured <= 1e-14)."""
    e = load(SHARED_DB / name)
    n = e.tapered_num_qubits
    csr = fe.Hamiltonian.from_pauli_terms(e.pauli_terms, n)
    monkeypatch.setattr(fe, "CSR_MAX_QUBITS", 0)
    grouped = fe.Hamiltonian.from_pauli_terms(e.pauli_terms, n)
    assert (csr.hk, grouped.hk) == (0, 1) and grouped.lbits == min(n, fe.GROUP_LOW_BITS)
    assert grouped.gptr[-1] == grouped.n_terms == csr.n_terms
    assert len(grouped.gptr) - 1 == len(set(grouped.tx.tolist())) < grouped.n_terms
    rng = np.random.default_rng(7)
    for _ in range(3):
        psi = rng.normal(size=1 << n) + 1j * rng.normal(size=1 << n)
        psi /= np.linalg.norm(psi)
        np.testing.assert_allclose(grouped.matvec(psi), csr.matvec(psi), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_stored_parameters_replay_to_the_published_energy(kind):
    """Every kind: the stored optimal parameters on the fast engine give the
    published energy within 1e-10 Ha, on the stored Hamiltonian."""
    from qencode_nb.rerun.replay import replay

    e, _, p = _problems(KINDS[kind])
    assert p.engines.rerun.engine == "fast", p.engines.reason
    assert p.engine_record() == {"requested": "fast", "used": fe.NAME,
                                          "reason": None, "replay_reason": None,
                                 "faithful": False, "faithful_reason": None}
    r = replay(e, p)
    assert r.engine == fe.NAME and r.status == "pass"
    assert abs(r.energy - e.published_energy) < 1e-10


def test_h8_adapt_replays_with_its_tapered_excitation_generators():
    """ADAPT above 12 untapered qubits (H8, 13 tapered qubits, 278 generators of
    several Pauli words each, the statevector engine's exp(i theta G)): in
    replay mode (no re-run) the fast engine replays the 98 stored angles on
    the stored Hamiltonian to the published energy within 1e-10 Ha (measured
    2.7e-15 Ha); the sector engine's problem is not built."""
    from qencode_nb.rerun.replay import replay

    e = load(SHARED_DB / "H8_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_b2328caa5d17467b.json")
    rebuilt = rebuild(e)
    p = build_problem(e, rebuilt, "fast", hamiltonian_check(e, rebuilt), rerun=False)
    fast = p.engines.replay
    assert p.engines.rerun is fast and fast.problem.convention == "statevector"
    assert max(len(d["words"]) for d in fast.problem.words) > 1
    r = replay(e, p)
    assert r.engine == fe.NAME and abs(r.energy - e.published_energy) < 1e-10


@pytest.mark.parametrize("kind", ["hea-parity", "uccsd-jordan_wigner", "adapt-qnode-pool"])
def test_energy_and_gradient_equal_default_qubit_at_random_angles(kind):
    """Away from the optimum too: energies within 1e-10 Ha and the adjoint
    gradient within 1e-9 Ha/rad of ``qml.grad`` of the default.qubit QNode."""
    import pennylane as qml
    import pennylane.numpy as pnp

    from qencode_nb.engines.qnode.adapt import qnode_energy_fn

    e, _, fast = _problems(KINDS[kind])
    fast = fast.engines.rerun.problem
    _, _, rec = _problems(KINDS[kind], engine=None)
    rec = rec.engines.rerun
    rng = np.random.default_rng(7)
    if kind.startswith("adapt"):
        selected = e.adapt["selected_operator_indices"]
        _, make = qnode_energy_fn(rec.hamiltonian, rec.pool, e.hf_tapered_state, rec.wires,
                                  "default.qubit")
        qnode = make(selected)
        energy = fast.energy(selected)
    else:
        from qencode_nb.engines.qnode.energy import qnode_energy

        qnode = qnode_energy(rec.hamiltonian, rec.circuit, rec.wires).qnode
        energy = fast.energy()
    n = energy.circuit.num_params
    for _ in range(3):
        x = rng.uniform(-np.pi, np.pi, n)
        e_fast, g_fast = energy.energy_and_grad(x)
        xp = pnp.array(x, requires_grad=True)
        assert abs(e_fast - float(qnode(xp))) < 1e-10
        assert abs(energy(x) - e_fast) < 1e-12
        np.testing.assert_allclose(g_fast, np.array(qml.grad(qnode)(xp)), rtol=0, atol=1e-9)


def test_lbfgsb_iterates_follow_default_qubit():
    """L-BFGS-B from the entry's first start (zeros), 10 iterations, on the fast
    engine and on default.qubit (``qml.grad``): the same evaluations and energy
    within 1e-8 Ha (measured 7e-14 Ha).  Later the two part: at 15 iterations
    they differ by 2e-10 Ha, at 20 by 0.02 Ha (HEA at zero angles sits on a
    degenerate landscape that amplifies last-digit differences), and the full
    H2O PAR/HEA runs stop 2.4e-8 Ha apart (a finding of issue 14, not asserted)."""
    from qencode_nb.engines.qnode.energy import qnode_energy
    from qencode_nb.rerun.vqe import run_vqe

    e, _, fast = _problems(KINDS["hea-parity"])
    _, _, rec = _problems(KINDS["hea-parity"], engine=None)
    fast, rec = fast.engines.rerun, rec.engines.rerun
    kwargs = dict(optimizer="l-bfgs-b", max_iterations=10, restarts=1, seed=e.seed,
                  e_target=None, early_stop=False)
    a = run_vqe(fast.energy(), fast.num_params, **kwargs)
    b = run_vqe(qnode_energy(rec.hamiltonian, rec.circuit, rec.wires), rec.num_params,
                **kwargs)
    assert a.nfev == b.nfev
    assert abs(a.best_energy - b.best_energy) < 1e-8


@pytest.mark.bitlevel
@pytest.mark.slow
def test_lbfgsb_entry_rerun_keeps_the_published_certification():
    """N2 JW/HEA (1784), recorded L-BFGS-B with 5 restarts and 500 iterations,
    re-run in full on the fast engine (exact adjoint gradient; about 20 s): the
    published nfev (95,403, counted as the generator counts it) and the published
    certification.  The energy is not the published one to 1e-8 Ha: measured
    7.8e-6 Ha lower (the trajectories part after ~15 steps, see
    :func:`test_lbfgsb_iterates_follow_default_qubit`), so 1e-4 Ha is asserted.  The
    nfev follows the kernel triple: 95,403 under reference, 94,695 under portable."""
    from qencode_nb.rerun.rerun import rerun

    e, _, p = _problems("N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_17841edecba23ac1.json")
    assert e.optimizer.name == "l-bfgs-b"
    r = rerun(e, p)
    assert r.config["backend"] == fe.NAME
    assert e.published_nfev == 95403
    assert r.nfev == by_profile({"reference": 95403, "portable": 94695})
    assert abs(r.energy - e.published_energy) < 1e-4
    assert (abs(r.energy - e.exact_ground_energy) < e.threshold) == e.published_certified


@pytest.mark.slow
def test_cobyla_entry_rerun_on_the_fast_engine_reproduces_the_published_energy():
    """N2 JW/HEA (ebcf), COBYLA with 30 restarts of 500 steps: on the fast engine
    the published energy within 1e-9 Ha (measured 1.4e-12 Ha) and nfev 15,000;
    COBYLA runs elsewhere may part (LiH JW/HEA: 2.6e-4 Ha), a finding, not a failure."""
    from qencode_nb.rerun.rerun import rerun

    e, _, p = _problems("N2_ccpvdz_JW_HEA_v4_casscf_tapered__sha256_ebcfc9fbdeed4e51.json")
    assert e.optimizer.name == "cobyla"
    r = rerun(e, p)
    assert abs(r.energy - e.published_energy) < 1e-9
    assert r.nfev == e.published_nfev


def test_adapt_rerun_on_the_fast_engine_reproduces_the_published_selection():
    """H4 ADAPT (QNode engine's procedure, COBYLA inner): the fast re-run selects
    the published operators and reaches the published energy (measured
    -1.8e-15 Ha; COBYLA, so 1e-8 Ha is asserted); the backend deviation is
    in the configuration, the ADAPT engine (procedure) is the recorded one."""
    from qencode_nb.rerun.rerun import rerun

    e, _, p = _problems(KINDS["adapt-qnode-pool"])
    r = rerun(e, p)
    assert r.details["selection_matches"] is True
    assert abs(r.energy - e.published_energy) < 1e-8
    assert r.config["backend"] == fe.NAME and r.config["engine"] == "qnode"
    assert any("compiled statevector engine" in f for f in r.findings)


def test_fast_audit_reports_the_backend_deviation_and_tier3_na():
    """Tier 1 lists the backend that ran instead of the recorded one; tier 3
    reads n/a with that reason (other arithmetic, bit identity not expected)."""
    from qencode_nb.notebook import provenance
    from qencode_nb.rerun.rerun import rerun
    from qencode_nb.verdict import procedure, tiers
    from qencode_nb.trust.integrity import integrity
    from qencode_nb.rerun.replay import replay

    e, rebuilt, p = _problems(KINDS["uccsd-jordan_wigner"])
    r = rerun(e, p)
    proc = procedure.evaluate(e, rebuilt, hamiltonian_check(e, rebuilt), p, r, "full")
    row = next(f for f in proc.fields if f["field"] == "backend")
    assert row["status"] == "differs" and row["used"] == fe.NAME
    v = tiers.verdict(e, rerun=r, provenance=provenance.collect(e.tool_versions),
                      blas_threads=1, blas_coretype=None, integrity=integrity(e),
                      replay=replay(e, p), procedure=proc)
    t3 = v.tiers["bit_identical"]
    assert t3["status"] == "n/a"
    assert any(f"re-run on {fe.NAME}" in why for why in t3["reasons"])


@pytest.mark.bitlevel
def test_entries_the_engine_does_not_run_say_why():
    """H8 ADAPT (> 12 untapered qubits) goes to the sector engine; the engine
    names what it refuses (a multi-word generator, a complex coefficient).  The
    compiled engine is built for the replay only where the sector engine may not
    replay: the stored angles belong to the stored CASSCF orbitals, which the rebuild
    gives under the reference kernel triple and not under portable (issue 22)."""
    e, _, p = _problems("H8_ccpvdz_JW_ADAPT_v4_casscf_tapered__sha256_b2328caa5d17467b.json")
    assert p.engines.rerun.engine == "sector" and p.engine_record()["used"] == "sector"
    assert (p.engines.replay.engine != "fast") == (TEST_PROFILE == "reference")
    with pytest.raises(NotRunnable, match="complex coefficient"):
        fe.Hamiltonian.from_terms([({0: "Z"}, 1 + 1j)], 1)
    with pytest.raises(NotRunnable, match="outside 0..0"):
        fe.word_masks({3: "X"}, 1)


def test_an_unknown_engine_is_refused_with_the_accepted_values():
    assert check_engine("FAST") == "fast"
    with pytest.raises(ParameterError, match="accepted: None .*sector, fast") as err:
        check_engine("turbo")
    assert err.value.parameter == "engine"
