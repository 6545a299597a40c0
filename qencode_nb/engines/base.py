"""What every engine implements: the small protocol the re-run and the replay call.

An :class:`Engine` is registered under its user-visible name
(:func:`qencode_nb.engines.registry.register`).  Bound to one entry
(:meth:`Engine.bind`) it gives a :class:`Bound`: the entry's problem on that engine,
which computes an energy (HEA, UCCSD), an energy and its gradient, the ADAPT
loop's arithmetic (:class:`AdaptBackend`: pool gradient, energy, energy and
gradient) and the replay of the stored parameters.  An entry the engine cannot
run raises :class:`~qencode_nb.errors.NotRunnable` with the reason, and the next
engine of the choice runs (:func:`qencode_nb.engines.selection.choose`).

Energies in Ha before the tapering constant correction
(``encoding.tapering.bk_constant_correction_ha``); angles in radians; gradients
in Ha/rad.  Importing this module imports nothing heavy.
"""

from __future__ import annotations

from typing import Callable, Protocol


class AdaptBackend(Protocol):
    """The arithmetic of one ADAPT engine; the loop
    (:func:`qencode_nb.rerun.adapt_loop.run_loop`) owns the rest.

    The loop appends each chosen operator (pool index, angle 0.0) to the
    selection; a backend builds its state from ``(selected, params)``: pool
    indices in circuit order and one angle (radians) per index.
    """

    n_pool: int
    """Number of pool operators."""

    def pool_gradient(self, selected: list, params: list) -> Callable[[int], float]:
        """``gradient(k)`` of pool operator ``k`` (Ha/rad; sign free, the loop
        takes ``abs``) at the state of ``(selected, params)``; called once per
        outer iteration, ``gradient`` once per unselected ``k`` in pool order."""

    def energy(self, selected: list) -> Callable:
        """``f(p) -> E`` (Ha, float) of the selection at angles ``p`` (the
        objective of COBYLA)."""

    def energy_and_grad(self, selected: list) -> Callable | None:
        """``f(p) -> (E, dE/dp)`` (the objective of L-BFGS-B, ``jac=True``), or
        ``None`` when the engine has no gradient (L-BFGS-B then refused)."""


class Bound(Protocol):
    """An entry's problem on one engine.

    Attributes:
        engine: the registered name of the engine (e.g. ``"sector"``).
        label: what ran, as the ``engine`` record's ``used`` and the ``replay``
            record's ``engine`` write it (a PennyLane device, ``"qnode"``,
            ``"statevector"``, ``"sector"``, ``"numba-statevector"``).
        backend: the re-run configuration's ``backend`` of an ADAPT run.
        checkpoint_label: the engine's part of a checkpoint's key.
        num_params: ansatz parameters (ADAPT: the recorded selection's length).
        pool_size: the ADAPT pool's size (None for HEA and UCCSD).
        replay_reason: why the stored parameters are not replayed on this engine
            (None: they are).
        adapt_procedure: the generator's ADAPT procedure this engine runs
            (``AdaptResult.adapt_engine``: "qnode", "statevector", "sector").
        hamiltonian_label: the Hamiltonian an ADAPT re-run used when it is not the
            problem's (the re-run configuration's ``hamiltonian``), else None.
    """

    engine: str
    label: str
    backend: str
    checkpoint_label: str
    num_params: int
    pool_size: int | None
    replay_reason: str | None
    adapt_procedure: str | None
    hamiltonian_label: str | None

    def energy(self) -> Callable:
        """``energy(params) -> float`` (Ha) of the HEA or UCCSD circuit, counting its
        calls (``.calls``) and naming its backend (``.backend``); with an
        ``energy_and_grad(params)`` method where the engine has the gradient.

        Raises:
            NotRunnable: an ADAPT entry (its energies come from :meth:`adapt_backend`).
        """

    def adapt_backend(self, inner: str) -> AdaptBackend:
        """The ADAPT loop's arithmetic with inner optimiser ``inner``
        ("cobyla" or "l-bfgs-b").

        Raises:
            ValueError: an inner optimiser the engine's procedure does not run.
        """

    def replay(self, selected_indices, params) -> float:
        """Energy (Ha) of the stored parameters ``params`` (radians, shape
        ``(num_params,)``); ADAPT: of the recorded selection ``selected_indices``
        of the pool (None otherwise).

        Raises:
            ValueError: an index outside the pool, or not one angle per index.
        """

    def findings(self, inner: str | None) -> list[str]:
        """What a re-run on this engine differs in from the recorded procedure
        (sentences for the ``rerun`` record's ``findings``; ``inner`` is the ADAPT
        inner optimiser, None for HEA and UCCSD)."""

    def details(self) -> dict:
        """Values the ``rerun`` record keeps about the engine (e.g. build seconds)."""


class OnRecordedDevice:
    """A :class:`Bound` whose re-run configuration's ``backend`` and checkpoint key are
    the entry's recorded device (``self.device``, ``run_config.backend``): the engines
    that reproduce the generator (qnode, statevector).  The project's own engines
    (sector, fast) name themselves instead."""

    device: str

    @property
    def backend(self) -> str:
        return self.device

    @property
    def checkpoint_label(self) -> str:
        return self.device


class Engine(Protocol):
    """A registered engine (:func:`qencode_nb.engines.registry.register`).

    Attributes:
        name: the user-visible name (``-p engine NAME``).
        summary: one phrase saying what it runs (``--engine``'s help lists it;
            optional for an engine registered from outside the package).
        prefer: engines tried before this one when it is asked for and the entry is
            re-run (``"fast"`` prefers ``"sector"``: the fastest engine computing
            the same energies).
    """

    name: str
    summary: str
    prefer: tuple

    def bind(self, entry, rebuilt, hamiltonian=None) -> Bound:
        """The entry's problem on this engine.

        Args:
            entry: the :class:`~qencode_nb.entry.model.Entry`.
            rebuilt: the rebuild (:func:`qencode_nb.hamiltonian.check.rebuild`).
            hamiltonian: the audit's Hamiltonian check (None: not checked).

        Raises:
            NotRunnable: the entry does not map onto this engine (the reason).
        """


def check_selection(pool, selected_indices, params) -> list[int]:
    """The selected pool indices as ints, checked against the pool and the angles.

    Args:
        pool: the ADAPT pool (any sequence; only its length is read).
        selected_indices: pool indices in circuit order, shape ``(m,)``.
        params: one angle (radians) per index, shape ``(m,)``.

    Raises:
        ValueError: not one angle per index, or an index outside the pool.
    """
    selected = [int(k) for k in selected_indices]
    if len(selected) != len(params):
        raise ValueError(f"{len(selected)} selected operators but {len(params)} parameters")
    bad = [k for k in selected if not 0 <= k < len(pool)]
    if bad:
        raise ValueError(f"selected operator indices {bad} lie outside the pool "
                         f"of {len(pool)} operators")
    return selected
