"""Which engine re-runs an entry and which replays it: the one place that chooses.

Asked for engine ``R`` (``-p engine R``), the re-run tries ``R``'s preferred
engines (:attr:`qencode_nb.engines.base.Engine.prefer`, only when the entry is
re-run), then ``R``; the first that binds runs (:class:`~qencode_nb.errors.NotRunnable`
gives each other's reason).  The replay runs on the first of the same engines, from
the re-run's on, that binds and may replay the stored parameters
(``Bound.replay_reason``).  When none does, the recorded engine runs
(:func:`recorded`) and the reasons are kept.  Asked for nothing (``None``), the
recorded engine runs both.  Where the recorded engine is ``qnode`` (PennyLane's
``default.qubit``), its arithmetic runs on the ``faithful`` engine (:data:`FAITHFUL`:
the same bits, proven per PennyLane version) where that binds, else on the plain
QNode; ``-p engine qnode`` asks for the plain QNode.

Which qubit Hamiltonian they bind is decided here too, once, by :func:`on_hamiltonian`
(audit.ipynb ``hamiltonian``): the entry's stored terms where it has them, else (or
asked for "rebuilt") the operator the audit's chemistry stage rebuilt.  Importing this
module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from qencode_nb.engines import registry
from qencode_nb.errors import EntryError, NotRunnable, ParameterError
from qencode_nb.rules import ADAPT_ENGINES

#: audit.ipynb ``hamiltonian``: the qubit Hamiltonian the re-run and the replay run on
#: (:func:`on_hamiltonian`; checked by :func:`qencode_nb.options.check_hamiltonian`).
HAMILTONIANS = ("stored", "rebuilt")

#: The problem's ``hamiltonian_origin`` (the ``rerun`` record's ``config.hamiltonian``,
#: the ``replay`` record's ``hamiltonian``) of the rebuilt operator: OpenFermion's
#: path (:mod:`qencode_nb.hamiltonian.of_bridge`), rebuilt here.
REBUILT_ORIGIN = "rebuilt (of_bridge)"

#: The engine that runs the recorded ``qnode`` arithmetic when none is asked for: the
#: same floating-point operations as the plain QNode, with the work that cannot change
#: done once (:mod:`qencode_nb.engines.faithful`).
FAITHFUL = "faithful"


def on_hamiltonian(entry, rebuilt, hamiltonian: str = "stored"):
    """Which qubit Hamiltonian the engines bind: the one decision, ``(origin, entry)``.

    ``origin`` is "stored" (the entry's stored terms) or :data:`REBUILT_ORIGIN` (the
    tapered operator of ``rebuilt``); ``entry`` is the entry as the engines are to bind
    it: ``entry`` itself, or, asked for "rebuilt" on an entry that stores its terms, a
    copy without them and with the rebuild's tapering constant
    (``bk_constant_correction_ha``: the whole problem is the rebuilt one, as the
    generator would run it here).  Every engine binds the rebuilt operator of an entry
    that stores no terms (:func:`qencode_nb.engines.qnode.engine.qubit_hamiltonian`, the
    fast engine's ``Hamiltonian``; the sector engine always binds the rebuilt active
    space).

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt: the rebuild, or a
            :class:`~qencode_nb.hamiltonian.stored_only.NotRebuilt` (no ``tapering``).
        hamiltonian: the ``hamiltonian`` parameter, one of :data:`HAMILTONIANS`
            (checked by the caller): "stored" uses the stored terms where the entry has
            them, else the rebuild; "rebuilt" the rebuild even where it stores terms.

    Raises:
        ParameterError: "rebuilt" for an entry that cannot be rebuilt (a Qiskit-era
            schema: names ``hamiltonian``, the value, why, and what is accepted).
    """
    if getattr(rebuilt, "tapering", None) is None:      # NotRebuilt
        if hamiltonian == "rebuilt":
            why = getattr(rebuilt, "reason", None) or "no rebuild"
            raise ParameterError(f"'rebuilt' is not accepted for this entry: it cannot be "
                                 f"rebuilt ({why}); accepted: 'stored'",
                                 parameter="hamiltonian")
        return "stored", entry
    if not entry.has_stored_hamiltonian:
        return REBUILT_ORIGIN, entry
    if hamiltonian == "rebuilt":
        return REBUILT_ORIGIN, replace(entry, pauli_terms=None, bk_constant_correction_ha=
                                       rebuilt.tapering.bk_constant_correction_ha)
    return "stored", entry


@dataclass
class Choice:
    """The engines of one audit (:class:`qencode_nb.engines.base.Bound` each).

    Attributes:
        requested: the engine asked for (None: the recorded one).
        rerun: the engine that re-runs the entry.
        reason: why the requested engine does not re-run it (None when it, or one
            it prefers, does; or when none was requested).
        replay: the engine that replays the stored parameters.
        replay_fallback: why the requested engines do not replay them (None when
            one of them does).
        faithful_reason: why the recorded QNode arithmetic ran on the plain QNode and
            not on the faithful engine (None when the faithful engine ran, or the
            recorded engine is not the QNode one, or another engine was asked for).
    """

    requested: str | None
    rerun: object
    reason: str | None
    replay: object
    replay_fallback: str | None
    faithful_reason: str | None = None

    def to_record(self) -> dict:
        """The ``engine`` record: requested, used, why the requested engine did not
        run (``reason``) and why the engine that re-runs did not replay
        (``replay_reason``)."""
        return {"requested": self.requested, "used": self.rerun.label,
                "reason": self.reason, "replay_reason": self.rerun.replay_reason,
                "faithful": self.rerun.engine == FAITHFUL,
                "faithful_reason": self.faithful_reason}


def recorded(entry) -> str:
    """The registered name of the engine the entry records: for an ADAPT entry the
    generator's ADAPT engine its ``run_config.optimizer`` names (one of
    :data:`qencode_nb.rules.ADAPT_ENGINES`, "qnode" when it names none), else
    ``"qnode"`` (the recorded PennyLane device).

    Raises:
        EntryError: an ADAPT engine the generator does not have.
    """
    if entry.ansatz != "adapt":
        return "qnode"
    engine = entry.optimizer.engine or "qnode"
    if engine not in ADAPT_ENGINES:
        raise EntryError(f"ADAPT engine {engine!r} is not accepted; accepted: "
                         f"{', '.join(ADAPT_ENGINES)}", field="run_config.optimizer")
    return engine


def choose(entry, rebuilt, requested=None, hamiltonian=None, *, rerun: bool = True) -> Choice:
    """The engines that re-run and replay ``entry`` (module docstring).

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt: the rebuild (:func:`qencode_nb.hamiltonian.check.rebuild`).
        requested: the ``engine`` parameter, checked
            (:func:`qencode_nb.options.check_engine`): None, or a registered name.
        hamiltonian: the audit's Hamiltonian check (None: not checked), which
            decides whether stored angles may be replayed on a rebuilt problem.
        rerun: the entry is re-run (``mode`` full or rerun); when not, preferred
            engines are not tried.

    Raises:
        ParameterError: an engine name that is not registered
            (:func:`qencode_nb.engines.registry.get`).
        NotRunnable: the recorded engine cannot run the entry either.
    """
    wanted = []
    if requested is not None:
        wanted = [*(registry.get(requested).prefer if rerun else ()), requested]
    binder = _Binder(entry, rebuilt, hamiltonian)
    rerun_engine = next((b for b in map(binder.bind, wanted) if b is not None), None)
    reason = None
    if rerun_engine is None:
        reason = "; ".join(binder.why[n] for n in wanted) or None
        rerun_engine = binder.recorded()
    replay_engine, not_replayed = None, []
    for name in wanted:
        b = binder.bind(name)
        if b is not None and b.replay_reason is None:
            replay_engine = b
            break
        not_replayed.append(binder.why[name] if b is None else b.replay_reason)
    fallback = None
    if replay_engine is None:
        fallback = "; ".join(not_replayed) or None
        replay_engine = binder.recorded()
    return Choice(requested=requested, rerun=rerun_engine, reason=reason,
                  replay=replay_engine, replay_fallback=fallback,
                  faithful_reason=binder.faithful_reason)


class _Binder:
    """Each engine bound to the entry at most once; ``why[name]``: its NotRunnable reason."""

    def __init__(self, entry, rebuilt, hamiltonian):
        self.entry, self.rebuilt, self.hamiltonian = entry, rebuilt, hamiltonian
        self.bound, self.why = {}, {}
        self.faithful_reason = None

    def bind(self, name):
        if name not in self.bound:
            try:
                self.bound[name] = registry.get(name).bind(self.entry, self.rebuilt,
                                                           self.hamiltonian)
            except NotRunnable as exc:
                self.bound[name], self.why[name] = None, exc.reason
        return self.bound[name]

    def recorded(self):
        name = recorded(self.entry)
        if name == "qnode":
            b = self.bind(FAITHFUL)
            if b is not None:
                return b
            self.faithful_reason = self.why[FAITHFUL]
        b = self.bind(name)
        if b is None:
            raise NotRunnable(f"the recorded engine {name!r} cannot run the entry: "
                              f"{self.why[name]}")
        return b
