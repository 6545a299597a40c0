"""What was in force: the package stack an audit's kernel ran, measured in the kernel
and compared with the one asked for (the audit's ``stack`` record, issues 35 and 52)."""

from __future__ import annotations

from qencode_nb.environment.recorded import SCIENTIFIC, RecordedEnvironment
from qencode_nb.environment.store import (CURRENT, RECORDED, STACK_WORDS, find_stack,
                                          running_stack)


def stack_key(pins: dict, python: str | None = None) -> str:
    """Twelve hex digits naming a set of package versions: the SHA-256 of the sorted
    ``name==version`` lines and ``python==<major.minor>``.

    Args:
        pins: ``{distribution: version}`` (the names case-folded).
        python: a Python version (``3.11.14``); None: this interpreter's.
    """
    import hashlib
    import platform

    minor = ".".join(str(python or platform.python_version()).split(".")[:2])
    lines = sorted(f"{k.lower()}=={v}" for k, v in pins.items()) + [f"python=={minor}"]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def _wanted(asked: str, recorded: RecordedEnvironment):
    """``(name, lock)`` of the stack ``asked`` means for this entry, where it is known
    here: a stack name as it is (lock None); for ``recorded``/``recorded-today`` the
    entry's stack whose resolution is kept (:func:`qencode_nb.environment.lock.resolve_lock`,
    never resolved in a kernel), else ``(None, None)``."""
    from qencode_nb.environment.choice import stack_name
    from qencode_nb.environment.lock import resolve_lock

    if asked not in STACK_WORDS:
        return asked, None
    if asked == CURRENT or not recorded.requirements:
        return None, None
    lock = resolve_lock(recorded.requirements, recorded.created_utc,
                        dated=asked == RECORDED, cached_only=True)
    return (None, None) if lock is None else (stack_name(recorded.release, lock), lock)


def _held(lock, in_recorded) -> bool:
    """Whether the current environment stands for the recorded stack: it holds every
    version of its lock, or, where no lock is known here, every recorded pin."""
    from qencode_nb.environment.choice import holds

    return holds(lock) if lock is not None else bool(in_recorded)


def _why_not_used(name: str | None, running: str, asked: str) -> str:
    """Why the stack ``asked`` (named ``name`` where known) is not the one in force (a
    kernel of stack ``running`` runs), from its record."""
    recorded = asked in STACK_WORDS
    if name is None:
        return (f"the entry's {asked} stack was not resolved here (`qencode-nb audit "
                f"--stack {asked}` or `papermill --engine qencode-nb ... -p stack {asked}` "
                f"resolves and builds it), so the audit ran in the {running} stack")
    rec = find_stack(name)
    if rec is None:
        how = (f"`qencode-nb audit --stack {asked}` builds it" if recorded else
               "`qencode-nb stack list` lists the stacks there are")
        return f"stack {name} is not built ({how}), so the audit ran in the {running} stack"
    if rec.get("status") != "ready":
        failure = " ".join(str(rec.get("failure") or "no reason recorded").split())
        return (f"stack {name} could not be built ({failure[:300]}; remove it with "
                f"`qencode-nb stack remove {name}` to try again), so the audit ran in the "
                f"{running} stack")
    return (f"stack {name} is built but this kernel is the {running} stack (run with "
            f"`--stack` on the CLI, `papermill --engine qencode-nb`, or papermill -k "
            f"{rec.get('kernelspec')})")


def stack_in_force(asked, recorded: RecordedEnvironment, drift: dict) -> dict:
    """The audit's ``stack`` record: which package stack ran, against the one asked for.

    Args:
        asked: the ``stack`` parameter, checked (:func:`qencode_nb.options.check_stack`).
        recorded: the entry's :class:`RecordedEnvironment`.
        drift: :func:`qencode_nb.notebook.provenance.version_drift` of the entry's
            ``tool_versions`` in this kernel (``{name: {"want", "have", "match"}}``).

    Returns:
        ``{"asked", "name" (the stack that ran: a stack name or "current"), "kernelspec",
        "python" (this kernel's version), "pins" ({distribution: version} of the recorded
        packages, else of :data:`SCIENTIFIC`, as this kernel has them), "key"
        (:func:`stack_key` of those pins), "recorded_stack" (the entry's stack under
        ``asked``, where known here, else None), "in_recorded_stack" (every recorded pin
        installed at its version; None without pins), "not_used" (why the stack asked for
        is not the one that ran, or None), "lock_key", "resolved_at", "resolved_on",
        "resolution_fallback" (the running stack's lock: its key, the date it was
        resolved at, None when undated, the day it was resolved, and why it is undated
        where a dated one was asked; all None in the current environment, which no lock
        of this toolkit made)}``.
    """
    import platform

    from qencode_nb.notebook.provenance import installed_version

    running = running_stack()
    names = list(recorded.pins) or list(SCIENTIFIC)
    pins = {n: installed_version(n) or "not installed" for n in names}
    in_recorded = (all(v["match"] for k, v in drift.items() if k != "python")
                   if recorded.pins else None)
    wanted, want_lock = _wanted(asked, recorded)
    not_used = None
    if asked == CURRENT:
        pass
    elif asked in STACK_WORDS and not recorded.pins:
        not_used = "; ".join(recorded.unknown) + ", so the audit ran in the current stack"
    elif asked not in STACK_WORDS:
        if running["name"] != asked:
            not_used = _why_not_used(asked, running["name"], asked)
    elif running["name"] == CURRENT:
        if not _held(want_lock, in_recorded):
            not_used = _why_not_used(wanted, running["name"], asked)
    elif wanted is not None and running["name"] != wanted:
        not_used = _why_not_used(wanted, running["name"], asked)
    lock = running.get("lock") or {}
    return {"asked": asked, "name": running["name"], "kernelspec": running["kernelspec"],
            "python": platform.python_version(), "pins": pins,
            "key": stack_key(pins), "recorded_stack": wanted,
            "in_recorded_stack": in_recorded, "not_used": not_used,
            "lock_key": lock.get("key"), "resolved_at": lock.get("resolved_at"),
            "resolved_on": lock.get("resolved_on"),
            "resolution_fallback": lock.get("fallback")}


def stack_text(stack: dict | None) -> str | None:
    """The package stack of a run in one phrase, from its ``stack`` record
    (:func:`stack_in_force`): ``stack v3-8ab2c6341a79 (lock 8ab2c6341a79 resolved at
    2026-05-11T08:54:39Z; key ...: numpy 1.26.4, ...; Python 3.11.7)``, then ``;
    recorded asked, not used: <why>`` when the stack asked for did not run; None without
    a record.  The card, the report header and the crate all say it so."""
    if not isinstance(stack, dict) or not stack.get("name"):
        return None
    pins = ", ".join(f"{k} {v}" for k, v in sorted((stack.get("pins") or {}).items()))
    lock = ""
    if stack.get("lock_key"):
        when = stack.get("resolved_at") or f"undated, {stack.get('resolved_on')}"
        lock = f"lock {stack['lock_key']} resolved at {when}; "
        if stack.get("resolution_fallback"):
            lock += f"dated resolution not made: {stack['resolution_fallback']}; "
    text = (f"stack {stack['name']} ({lock}key {stack.get('key')}: {pins}; Python "
            f"{stack.get('python')})")
    if stack.get("not_used"):
        text += f"; {stack.get('asked')} asked, not used: {stack['not_used']}"
    return text
