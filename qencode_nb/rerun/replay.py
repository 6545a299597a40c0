"""Replay: the energy of the stored optimal parameters on the problem's
Hamiltonian against the published energy (docs/explanations/replay.md)."""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import EntryError
from qencode_nb.rules import REPLAY_TOL_HA
from qencode_nb.rerun.compare import compare


@dataclass
class Replay:
    """The replay of one entry.  Energies in Ha.

    Attributes:
        status: "pass" (|ΔE| <= :data:`qencode_nb.rules.REPLAY_TOL_HA`),
            "fail", or "n/a" with ``reason``.
        energy: replayed energy, tapering constant included (None when n/a).
        published: the published energy.
        comparison: :func:`qencode_nb.rerun.compare.compare` of the two.
        engine: the engine the replay ran on.
        engine_fallback: why the requested engine (sector, fast) did not replay.
        hamiltonian: "stored" or "rebuilt (of_bridge)".
        reason: why there is no replay (n/a), or why it fails on a number that
            is not finite (a stored parameter, the published energy), naming the
            field and the value.
    """

    status: str
    energy: float | None
    published: float
    comparison: dict | None = None
    engine: str | None = None
    engine_fallback: str | None = None
    hamiltonian: str | None = None
    reason: str | None = None

    @classmethod
    def not_run(cls, entry, reason: str) -> "Replay":
        """An n/a replay (no stored parameters, or ``mode=rerun``)."""
        return cls(status="n/a", energy=None, published=entry.published_energy, reason=reason)

    def to_record(self) -> dict:
        """The ``replay`` record (keys as audits have always written them)."""
        if self.comparison is None:
            return {"status": self.status, "energy": None, "published": self.published,
                    "delta_ha": None, "reason": self.reason}
        out = dict(self.comparison)
        out["engine"] = self.engine
        if self.engine_fallback:
            out["engine_fallback"] = self.engine_fallback
        out.update({"status": self.status, "tolerance_ha": REPLAY_TOL_HA,
                    "hamiltonian": self.hamiltonian})
        if self.reason:
            out["reason"] = self.reason
        return out


#: Why a schema 3.0.0 tapered UCCSD whose parameter count is not the builder's reads n/a.
V3_UCCSD_WHY = (
    "{n} stored parameters but the tapered UCCSD this toolkit builds (generate_entry_v4.py's "
    "pool) has {m}: generate_entry_v3.py (a46b4ec) _get_tapered_uccsd_ops dropped every "
    "excitation whose qchem.taper_operation raised (except Exception: pass) and records "
    "not which, so its ansatz cannot be rebuilt")


def replay(entry, problem) -> Replay:
    """Energy of the stored optimal parameters on the problem's Hamiltonian.

    Runs on the engine the problem chose to replay (``problem.engines.replay``:
    the one that re-runs where it may replay the stored parameters; ADAPT
    rebuilds the recorded selection of its pool), called as the recorded optimiser
    called it (an L-BFGS-B or Adam entry's QNode on trainable parameters).

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        problem: the :class:`~qencode_nb.rerun.problem.Problem`.

    A stored parameter that is not a finite number fails the replay without
    running it, and a published energy that is not one fails it after running
    (the replayed energy is recorded); the ``reason`` names the field and value.

    An entry whose record does not allow a replay (``entry.not_checkable["replay"]``: a
    Qiskit QPY ansatz) or a schema 3.0.0 tapered UCCSD whose parameter count is not the
    builder's (:data:`V3_UCCSD_WHY`) reads n/a with the reason.

    Raises:
        EntryError: the number of stored parameters does not match the
            ansatz, or the recorded pool size differs from the engine's pool.
    """
    if "replay" in getattr(entry, "not_checkable", {}):
        return Replay.not_run(entry, entry.not_checkable["replay"])
    if entry.optimal_params is None and entry.is_own:
        return Replay.not_run(entry, f"{entry.source.name} is a YAML entry of one's own: no "
                                     "stored optimal parameters to replay"
                                     + ("" if entry.published_energy is not None else
                                        " and no published energy to replay against"))
    if entry.optimal_params is None:
        return Replay.not_run(entry, f"{entry.source.name} stores no optimal parameters; "
                                     "pass db=FOLDER of QEncode JSON files to replay them")
    import math

    bad = [(i, x) for i, x in enumerate(entry.optimal_params) if not math.isfinite(x)]
    if bad:
        return Replay(status="fail", energy=None, published=entry.published_energy,
                      reason=f"results.vqe.optimal_params[{bad[0][0]}] is {bad[0][1]!r} "
                             f"({len(bad)} of {len(entry.optimal_params)} not finite); "
                             "accepted: finite numbers (radians)")

    if (len(entry.optimal_params) != problem.num_params
            and getattr(entry, "schema_version", "4.0.0") == "3.0.0"
            and entry.ansatz == "uccsd"):
        return Replay.not_run(entry, V3_UCCSD_WHY.format(
            n=len(entry.optimal_params), m=problem.num_params))
    if len(entry.optimal_params) != problem.num_params:
        raise EntryError(f"{len(entry.optimal_params)} stored parameters but the "
                         f"{entry.ansatz} ansatz has {problem.num_params}",
                         field="results.vqe.optimal_params", path=entry.source)
    engine = problem.engines.replay
    selected = None
    if problem.is_adapt:
        _check_pool_size(entry, engine.pool_size)
        selected = entry.adapt["selected_operator_indices"]
    energy = _replayed(entry, problem, engine, selected)
    comparison = compare(energy + problem.constant_ha, entry.published_energy)
    reason = None
    if not math.isfinite(entry.published_energy):
        from qencode_nb.entry.numbers import field_name

        reason = (f"{field_name(entry, 'published_energy')} is {entry.published_energy!r}: "
                  f"the replayed energy {comparison['energy']!r} Ha cannot equal it "
                  "(accepted: a finite number, Ha)")
    elif not math.isfinite(comparison["energy"]):
        reason = (f"the replayed energy is {comparison['energy']!r} "
                  "(encoding.tapering.bk_constant_correction_ha or the stored Hamiltonian "
                  "is not finite)")
    return Replay(status="pass" if comparison["abs_delta_ha"] <= REPLAY_TOL_HA else "fail",
                  energy=comparison["energy"], published=entry.published_energy,
                  comparison=comparison, engine=engine.label,
                  engine_fallback=problem.engines.replay_fallback,
                  hamiltonian=problem.hamiltonian_origin, reason=reason)


def _replayed(entry, problem, engine, selected) -> float:
    """The stored parameters' energy (Ha), called as the recorded optimiser called its
    energy: an L-BFGS-B or Adam entry on a QNode energy on trainable parameters
    (:func:`qencode_nb.rerun.vqe.trainable_value`, whose value is the published one to the
    bit where a plain call's is not), any other through the engine's ``replay``."""
    from qencode_nb.rerun.vqe import GRADIENT_OPTIMIZERS, trainable_value

    if (not problem.is_adapt and entry.optimizer.name in GRADIENT_OPTIMIZERS
            and getattr(engine, "trainable_replay", False)):   # PennyLane QNodes' sums
        energy = engine.energy()
        qnode = getattr(energy, "qnode", None)
        if qnode is not None and not hasattr(energy, "energy_and_grad"):
            return trainable_value(qnode, entry.optimal_params)
    return engine.replay(selected, entry.optimal_params)


def _check_pool_size(entry, n_engine: int) -> None:
    n_pool = entry.adapt.get("n_operators_pool")
    if n_pool is not None and n_pool != n_engine:
        raise EntryError(f"records a pool of {n_pool} operators; the rebuilt pool has "
                         f"{n_engine}",
                         field="encoding.adapt_metadata.n_operators_pool", path=entry.source)
