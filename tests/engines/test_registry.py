"""The engine registry and the one choice of engines (issue 24): a toy engine is one
registration away from auditing an entry, and the choice's rules (preferred engines,
fallbacks with their reasons, replay on the re-running engine) hold for any engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from qencode_nb.engines import registry
from qencode_nb.engines.selection import choose
from qencode_nb.options import check_engine
from qencode_nb.errors import EntryError, NotRunnable, ParameterError


# --- the choice, on stub engines (no chemistry) ---------------------------------

@dataclass
class _Stub:
    engine: str
    replay_reason: str | None = None
    num_params: int = 0

    @property
    def label(self):
        return f"{self.engine}-label"


class _StubEngine:
    """Binds unless ``refuse`` gives a reason; ``replay_reason`` marks angles it may
    not replay."""

    def __init__(self, name, refuse=None, replay_reason=None, prefer=()):
        self.name, self.refuse, self.replay_reason, self.prefer = (name, refuse,
                                                                   replay_reason, prefer)
        self.bound = 0

    def bind(self, entry, rebuilt, hamiltonian=None):
        self.bound += 1
        if self.refuse:
            raise NotRunnable(self.refuse)
        return _Stub(self.name, self.replay_reason)


@pytest.fixture
def stubs():
    """Stub engines registered for one test (names start with ``stub-``), and an
    HEA entry whose recorded engine is the real ``qnode`` replaced by a stub (the
    ``faithful`` engine, tried first for it, by one that refuses)."""
    saved, saved_faithful = registry.get("qnode"), registry.get("faithful")
    added = []

    def add(engine):
        registry.register(engine.name, engine)
        added.append(engine.name)
        return engine

    recorded = _StubEngine("qnode")
    registry.register("qnode", recorded)
    registry.register("faithful", _StubEngine("faithful", refuse="stubbed out"))
    yield SimpleNamespace(add=add, recorded=recorded,
                          entry=SimpleNamespace(ansatz="hea", optimizer=SimpleNamespace(
                              engine=None)))
    registry.register("qnode", saved)
    registry.register("faithful", saved_faithful)
    for name in added:
        registry.unregister(name)


def test_nothing_requested_runs_the_recorded_engine(stubs):
    c = choose(stubs.entry, None, None)
    assert c.rerun is c.replay and c.rerun.engine == "qnode"
    assert c.to_record() == {"requested": None, "used": "qnode-label", "reason": None,
                             "replay_reason": None, "faithful": False,
                             "faithful_reason": "stubbed out"}
    assert stubs.recorded.bound == 1          # bound once, used twice


def test_a_refusing_engine_falls_back_to_the_recorded_one_with_its_reason(stubs):
    stubs.add(_StubEngine("stub-a", refuse="a cannot"))
    c = choose(stubs.entry, None, "stub-a")
    assert c.rerun.engine == "qnode" and c.reason == "a cannot"
    assert c.replay.engine == "qnode" and c.replay_fallback == "a cannot"


def test_preferred_engines_are_tried_first_only_for_a_rerun(stubs):
    pre = stubs.add(_StubEngine("stub-pre"))
    stubs.add(_StubEngine("stub-main", prefer=("stub-pre",)))
    c = choose(stubs.entry, None, "stub-main", rerun=True)
    assert c.rerun.engine == c.replay.engine == "stub-pre" and c.reason is None
    c = choose(stubs.entry, None, "stub-main", rerun=False)
    assert c.rerun.engine == c.replay.engine == "stub-main"
    assert pre.bound == 1                      # not bound in replay mode


def test_angles_the_rerun_engine_may_not_replay_go_to_the_next_engine(stubs):
    stubs.add(_StubEngine("stub-pre", replay_reason="other orbitals"))
    stubs.add(_StubEngine("stub-main", prefer=("stub-pre",)))
    c = choose(stubs.entry, None, "stub-main")
    assert c.rerun.engine == "stub-pre" and c.replay.engine == "stub-main"
    assert c.replay_fallback is None and c.to_record()["replay_reason"] == "other orbitals"


def test_every_reason_is_kept_when_no_requested_engine_runs(stubs):
    stubs.add(_StubEngine("stub-pre", refuse="pre cannot"))
    stubs.add(_StubEngine("stub-main", refuse="main cannot", prefer=("stub-pre",)))
    c = choose(stubs.entry, None, "stub-main")
    assert c.rerun.engine == c.replay.engine == "qnode"
    assert c.reason == c.replay_fallback == "pre cannot; main cannot"


def test_a_sector_style_engine_that_may_not_replay_sends_the_replay_home(stubs):
    stubs.add(_StubEngine("stub-s", replay_reason="rebuilt H differs"))
    c = choose(stubs.entry, None, "stub-s")
    assert c.rerun.engine == "stub-s" and c.reason is None
    assert c.replay.engine == "qnode" and c.replay_fallback == "rebuilt H differs"


def test_unknown_names_list_the_registered_engines():
    assert registry.names()[:5] == ["qnode", "faithful", "statevector", "sector", "fast"]
    with pytest.raises(ParameterError, match="^engine 'gpu' is not registered; registered: "
                                             "qnode, faithful, statevector, sector, fast") as err:
        registry.get("gpu")
    assert err.value.parameter == "engine"
    with pytest.raises(ParameterError, match=r"accepted: None \(the recorded backend\), "
                                             "qnode, faithful, statevector, sector, fast"):
        check_engine("turbo")
    assert check_engine("None") is None and check_engine(" Sector ") == "sector"
    with pytest.raises(ParameterError, match="lower-case name other than 'none'"):
        registry.register("None", object())


# --- a toy engine audits a real entry -------------------------------------------

@dataclass
class DenseBound:
    """The toy engine: HEA in plain numpy on a dense Hamiltonian matrix (Ha)."""

    matrix: object
    hf_state: list
    reps: int
    num_params: int
    engine: str = "toy-dense"
    label: str = "toy-dense"
    backend: str = "toy-dense"
    checkpoint_label: str = "toy-dense"
    pool_size: int | None = None
    replay_reason: str | None = None
    adapt_procedure: str | None = None
    hamiltonian_label: str | None = None

    def state(self, params):
        """QEncode's HEA (BasisState, RY layers, CNOT ladders), big-endian wires."""
        import numpy as np

        n = len(self.hf_state)
        psi = np.zeros((2,) * n)
        psi[tuple(self.hf_state)] = 1.0
        k = 0
        for layer in range(self.reps + 1):
            for w in range(n):
                c, s = np.cos(params[k] / 2), np.sin(params[k] / 2)
                ry = np.array([[c, -s], [s, c]])
                psi = np.moveaxis(np.tensordot(ry, psi, axes=([1], [w])), 0, w)
                k += 1
            if layer < self.reps:
                for w in range(n - 1):
                    psi = _cnot(psi, w, w + 1)
        return psi.reshape(-1)

    def energy(self):
        import numpy as np

        bound = self

        class Energy:
            backend, calls = "toy-dense", 0

            def __call__(self, params):
                self.calls += 1
                psi = bound.state(np.asarray(params, dtype=float))
                return float(psi @ (bound.matrix @ psi).real)

        return Energy()

    def adapt_backend(self, inner):
        raise ValueError("the toy engine runs HEA only")

    def replay(self, selected_indices, params):
        return self.energy()(params)

    def findings(self, inner):
        return ["re-run on the toy dense engine"]

    def details(self):
        return {}


def _cnot(psi, control: int, target: int):
    """CNOT on a state of shape ``(2,) * n``: X on ``target`` where ``control`` is 1."""
    import numpy as np

    out = psi.copy()
    idx = [slice(None)] * psi.ndim
    idx[control] = 1
    out[tuple(idx)] = np.flip(psi[tuple(idx)], axis=target - 1 if target > control else target)
    return out


class DenseEngine:
    name = "toy-dense"
    prefer = ()

    def bind(self, entry, rebuilt, hamiltonian=None):
        import pennylane as qml

        from qencode_nb.engines import ansatz
        from qencode_nb.hamiltonian import pauli

        if entry.ansatz != "hea" or not entry.has_stored_hamiltonian:
            raise NotRunnable("the toy engine runs HEA on a stored Hamiltonian only")
        n = entry.tapered_num_qubits
        H = pauli.from_pauli_terms(entry.pauli_terms, n)
        return DenseBound(matrix=qml.matrix(H, wire_order=range(n)).real,
                          hf_state=[int(b) for b in entry.hf_tapered_state], reps=entry.reps,
                          num_params=ansatz.hea_num_params(n, entry.reps))


@pytest.fixture
def toy():
    registry.register("toy-dense", DenseEngine())      # the one call
    yield
    registry.unregister("toy-dense")


def test_a_toy_engine_registered_with_one_call_audits_an_entry(toy):
    """LiH PAR/HEA (bundled ``lih``, 5 tapered qubits) on the toy engine: the engine
    record names it, the stored angles replay to the published energy (1e-10 Ha), the
    re-run follows the recorded procedure and is certified by its own error, tier 1
    lists the backend deviation and tier 3 reads n/a."""
    from qencode_nb.entry import load
    from qencode_nb.notebook import provenance
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.replay import replay
    from qencode_nb.rerun.rerun import rerun
    from qencode_nb.trust.integrity import integrity
    from qencode_nb.verdict import procedure, tiers

    e = load("lih")
    rebuilt = rebuild(e)
    check = hamiltonian_check(e, rebuilt)
    p = build_problem(e, rebuilt, "TOY-dense", check)
    assert p.engine_record() == {"requested": "toy-dense", "used": "toy-dense",
                                 "reason": None, "replay_reason": None,
                                 "faithful": False, "faithful_reason": None}
    rp = replay(e, p)
    assert rp.engine == "toy-dense" and rp.status == "pass"
    assert abs(rp.energy - e.published_energy) < 1e-10
    r = rerun(e, p)
    assert r.config["backend"] == "toy-dense" and "toy dense" in r.findings[-1]
    # Other arithmetic, so COBYLA's trajectory parts from the recorded one (measured
    # under the portable profile: 8.99 mHa after the same 2 restarts and 1000
    # evaluations, early stop); on any host the recorded procedure ran: at most the
    # recorded restarts and budget, and an early stop only below the 10 mHa line.
    error_ha = abs(r.energy - e.reference_energy)
    assert r.restarts_run <= e.restarts_requested
    assert r.nfev <= e.restarts_requested * e.max_iterations
    assert not r.stopped_early or error_ha < 0.01
    proc = procedure.evaluate(e, rebuilt, check, p, r, "full")
    row = next(f for f in proc.fields if f["field"] == "backend")
    assert row["status"] == "differs" and row["used"] == "toy-dense"
    v = tiers.verdict(e, rerun=r, provenance=provenance.collect(e.tool_versions),
                      blas_threads=1, blas_coretype=None, integrity=integrity(e), replay=rp,
                      procedure=proc, hamiltonian=check)
    assert v.tiers["bit_identical"]["status"] == "n/a"
    assert v.certified is (error_ha < e.threshold)
