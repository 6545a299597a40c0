"""The choice: which package stack, Jupyter kernelspec and kernel triple a run gets,
decided once, outside the kernel (issue 52).

The ``stack`` parameter (CLI ``--stack`` of every command that runs audits; the audit
notebook's ``stack``; its words are :data:`qencode_nb.environment.store.STACK_WORDS`):

- ``current`` (the default): the environment qencode-nb runs in, the notebook's kernel.
- ``recorded``: the entry's recorded stack, its pins plus every other package resolved
  as the index served it at the entry's ``created_utc`` and locked
  (:func:`qencode_nb.environment.lock.resolve_lock`), named ``<release>-<lock key>``
  (:func:`stack_name`): entries share a stack only where their resolutions are equal.
  Built once by uv (:func:`qencode_nb.environment.build.ensure_stack`) and reused.  Where
  this environment already holds every locked version, none is built.  Where it cannot
  be resolved or built the audit runs in the current stack, and its ``stack`` record and
  tier 3 say why.
- ``recorded-today``: the same pins resolved as the index serves them today (the
  undated stacks before issue 52), so that the two can be compared.
- a stack name: that ready stack's kernel (``qencode-nb stack create NAME ...``).

The kernel triple: ``blas_coretype`` ``reference`` means the audited entry's release
triple (:func:`release_triple`), for the kernel's launch (the papermill engine) and for
the pin cell alike.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from qencode_nb.environment.store import CURRENT, RECORDED, RECORDED_TODAY, STACK_WORDS


@dataclass(frozen=True)
class Choice:
    """What one run gets.

    Attributes:
        asked: the ``stack`` value asked for.
        stack: the stack's name, or None (the current environment).
        kernelspec: the kernelspec to run, or None (the notebook's own kernel).
        lock: the stack's :class:`~qencode_nb.environment.lock.Lock`, or None.
        why: why the stack asked for is not the one chosen, or None.
    """

    asked: str
    stack: str | None = None
    kernelspec: str | None = None
    lock: object = None
    why: str | None = None


def stack_name(release: str | None, lock) -> str:
    """The name of an entry's recorded stack: ``<release>-<lock key>``
    (``v3-1a2b3c4d5e6f``; ``entry-...`` for pins no release file names)."""
    return f"{release or 'entry'}-{lock.key}"


def _say(line: str) -> None:
    print(f"qencode-nb: {line}", file=sys.stderr, flush=True)


def holds(lock) -> bool:
    """Whether this environment already holds every version of ``lock``."""
    from qencode_nb.notebook.provenance import installed_version

    return all(installed_version(n) == v for n, v in lock.versions().items())


def recorded_lock(recorded, asked: str):
    """The lock of an entry's recorded stack under ``asked`` (``recorded``: dated;
    ``recorded-today``: undated), or None when the entry records no pins.

    Raises:
        StackError: the stack cannot be resolved (:func:`~qencode_nb.environment.lock.resolve_lock`).
    """
    from qencode_nb.environment.lock import resolve_lock

    if not recorded.requirements:
        return None
    return resolve_lock(recorded.requirements, recorded.created_utc,
                        dated=asked == RECORDED)


#: What :func:`choose` keeps for a lock this environment already holds (no stack built).
_HELD = object()


def _recorded_choice(target, db, asked: str, built: dict, log) -> Choice:
    from qencode_nb.entry.lookup import load
    from qencode_nb.environment import build
    from qencode_nb.environment.recorded import of_entry
    from qencode_nb.errors import QencodeNbError, StackError

    try:
        recorded = of_entry(load(target, db=db))
    except (QencodeNbError, OSError, ValueError) as exc:
        return Choice(asked, why=f"the entry cannot be read ({exc})")
    if not recorded.requirements:
        return Choice(asked, why="; ".join(recorded.unknown))
    try:
        lock = recorded_lock(recorded, asked)
    except StackError as exc:
        log(f"the recorded stack could not be resolved; the audit runs in the current "
            f"stack: {exc}")
        return Choice(asked, why=f"the recorded stack could not be resolved ({exc})")
    name = stack_name(recorded.release, lock)
    if name not in built:           # once per lock: its entries share the answer
        built[name] = _HELD if holds(lock) else build.ensure_stack(name, lock, log)
    if built[name] is _HELD:
        return Choice(asked, stack=None, lock=lock, why=None)
    if built[name] is None:
        return Choice(asked, stack=name, lock=lock, why=f"stack {name} could not be built")
    return Choice(asked, stack=name, kernelspec=built[name], lock=lock)


def choose(stack: str, targets, db=None, *, log=None) -> dict:
    """The :class:`Choice` of each target's audit under ``stack``.

    Args:
        stack: a value :func:`qencode_nb.options.check_stack` accepted.
        targets: entry files or bundled names (as sweeps give them).
        db: the audits' ``db`` folder (completes a bundled entry).
        log: ``callable(str)`` told when a stack is built or could not be (default: a
            line on stderr).

    Returns:
        ``{target: Choice}``; a choice without a kernelspec runs the notebook's own kernel
        (the current stack): always for ``current``; for ``recorded`` where this
        environment holds the lock, the entry records no pins or cannot be read (its run
        then says why), or its stack could not be resolved or built (its record keeps
        the reason, which the run's ``stack`` record quotes).
    """
    from qencode_nb.environment.store import kernelspec_name

    say = log or _say
    if stack in (None, CURRENT):
        return {t: Choice(CURRENT) for t in targets}
    if stack not in STACK_WORDS:
        return {t: Choice(stack, stack=stack, kernelspec=kernelspec_name(stack))
                for t in targets}
    built: dict = {}
    return {t: _recorded_choice(t, db, stack, built, say) for t in targets}


def kernels_for(stack: str, targets, db=None, *, log=None) -> dict:
    """``{target: kernelspec or None}`` of :func:`choose` (None: the notebook's own
    kernel)."""
    return {t: c.kernelspec for t, c in choose(stack, targets, db, log=log).items()}


def stack_parameter(stack: str) -> dict:
    """The audit.ipynb parameters of ``stack``: ``{"stack": stack}``, nothing for
    ``current`` (the notebook's default), so a sweep's inputs stay as they were."""
    return {} if stack in (None, CURRENT) else {"stack": stack}


def release_of_entry(entry, db=None) -> str | None:
    """The release environment of the entry an audit is given (``"v4"``, ``"v3"``), read
    without numpy (loading an entry imports none), or None: no recorded stack, or an
    entry that cannot be read (the audit's load stage then says why)."""
    from qencode_nb.entry.lookup import load
    from qencode_nb.environment.recorded import of_entry
    from qencode_nb.errors import QencodeNbError

    if not entry:
        return None
    try:
        return of_entry(load(entry, db=db)).release
    except (QencodeNbError, OSError, ValueError):
        return None


def release_triple(entry, db=None):
    """The kernel triple ``reference`` means for the entry an audit is given: its
    release's (:func:`qencode_nb.environment.releases.kernel_profile`), None for v4's or
    an unknown one (the reference triple).  What the papermill engine launches the
    kernel under and the pin cell pins (:func:`qencode_nb.notebook.pins.pin`'s
    ``release``), so both resolve ``reference`` alike."""
    from qencode_nb.environment.releases import kernel_profile

    return kernel_profile(release_of_entry(entry, db))


def kernelspec_of_parameters(params: dict) -> str | None:
    """The kernelspec the papermill engine runs a notebook in, from its parameters
    (``stack``, ``entry``, ``db``): :func:`choose`'s, None for ``current`` or a stack not
    used (the run then records why)."""
    stack = params.get("stack")
    if stack in (None, CURRENT) or not params.get("entry"):
        return None
    return choose(stack, [params["entry"]], params.get("db"))[params["entry"]].kernelspec


__all__ = ["CURRENT", "RECORDED", "RECORDED_TODAY", "STACK_WORDS", "Choice", "choose",
           "kernels_for", "stack_parameter", "stack_name", "release_of_entry",
           "release_triple", "kernelspec_of_parameters", "recorded_lock", "holds"]
