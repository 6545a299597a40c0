"""Values of the audit notebook's parameters that a run checks before it starts.

``mode`` and ``engine`` are validated here, once, for the notebook, the CLI,
sweeps and studies (parameter *names* are validated by
:func:`qencode_nb.notebook.runner.check_parameters`).
"""

from __future__ import annotations

from qencode_nb.errors import EntryError

#: Audit modes (notebook parameter ``mode``).
MODES = ("full", "replay", "rerun")

#: Engines an audit may request instead of the recorded backend (notebook
#: parameter ``engine``; ``None`` runs the recorded one).  "sector": the
#: sector engine, in the fixed (N_alpha, N_beta) determinant space, where the
#: entry maps.  "fast": per entry the fastest engine computing the same
#: energies: the sector engine where the entry maps, else the compiled
#: statevector engine (:mod:`qencode_nb.rerun.fast_engine`).
ENGINE_CHOICES = ("sector", "fast")


def check_mode(mode) -> str:
    """Validate the ``mode`` parameter.

    Raises:
        EntryError: naming the field ``mode`` and the accepted modes.
    """
    if mode not in MODES:
        raise EntryError(f"{mode!r} is not accepted; accepted: {', '.join(MODES)}",
                         field="mode")
    return mode


def check_engine(engine):
    """``None`` (also the string "None", as a command line gives it) or a name of
    :data:`ENGINE_CHOICES` (case-insensitive).

    Raises:
        EntryError: naming the field ``engine``, the value and the accepted values.
    """
    if engine is None or str(engine).strip().lower() in ("none", ""):
        return None     # the recorded backend ("None" as the CLI spells it)
    name = str(engine).strip().lower()
    if name not in ENGINE_CHOICES:
        raise EntryError(f"engine {engine!r} is not accepted; accepted: None (the recorded "
                         f"backend), {', '.join(ENGINE_CHOICES)}", field="engine")
    return name
