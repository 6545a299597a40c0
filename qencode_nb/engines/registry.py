"""The engines by name: one registration each (papermill's engine registry as the model).

``register(name, engine)`` makes an engine requestable as ``-p engine NAME`` (and
``--engine NAME`` on the command line); :func:`get` returns it or raises naming
the registered ones.  The five built-in engines are registered at the end of this
module: ``qnode`` (PennyLane devices), ``faithful`` (``default.qubit``'s own
arithmetic with the work that cannot change done once: the recorded engine where it
is proven) and ``statevector`` (the generator's sparse ADAPT engine) reproduce the
generator; ``sector`` (the determinant-space ADAPT
engine) and ``fast`` (the compiled statevector engine) are the project's own.  A
new engine is one module and one :func:`register` call.  Importing this module
imports nothing heavy.
"""

from __future__ import annotations

from qencode_nb.engines.faithful.engine import FaithfulEngine
from qencode_nb.engines.fast.engine import FastEngine
from qencode_nb.engines.qnode.engine import QNodeEngine
from qencode_nb.engines.sector.engine import SectorEngine
from qencode_nb.engines.statevector.engine import StatevectorEngine
from qencode_nb.errors import ParameterError

_ENGINES: dict = {}


def register(name: str, engine) -> None:
    """Register ``engine`` (:class:`qencode_nb.engines.base.Engine`) under ``name``
    (lower case; a later registration of the same name replaces the earlier one).

    Raises:
        ParameterError: a name that is empty, not lower case, or "none" (which means the
            recorded backend).
    """
    if not name or name != name.strip().lower() or name == "none":
        raise ParameterError(f"name {name!r} is not accepted; accepted: a non-empty "
                             "lower-case name other than 'none'", parameter="engine")
    _ENGINES[name] = engine


def unregister(name: str) -> None:
    """Remove a registration (a no-op for a name that is not registered)."""
    _ENGINES.pop(name, None)


def names() -> list[str]:
    """The registered names, in registration order."""
    return list(_ENGINES)


def described() -> str:
    """The registered engines as the help of ``--engine`` lists them: ``name: summary``
    each, in registration order, separated by semicolons."""
    return "; ".join(f"{name}: {engine.summary}" if getattr(engine, "summary", "")
                     else name for name, engine in _ENGINES.items())


def get(name: str):
    """The engine registered under ``name``.

    Raises:
        ParameterError: no engine of that name (parameter ``engine``; lists the
            registered ones).
    """
    try:
        return _ENGINES[name]
    except KeyError:
        raise ParameterError(f"{name!r} is not registered; registered: "
                             f"{', '.join(_ENGINES)}", parameter="engine") from None


for _engine in (QNodeEngine(), FaithfulEngine(), StatevectorEngine(), SectorEngine(),
                FastEngine()):
    register(_engine.name, _engine)
