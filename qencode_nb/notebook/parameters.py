"""Values of the audit notebook's parameters that a run checks before it starts.

``mode`` is validated here, once, for the notebook, the CLI, sweeps and studies
(``engine`` by :func:`qencode_nb.engines.selection.check_engine`, against the
registered engines; parameter *names* by
:func:`qencode_nb.notebook.runner.check_parameters`).
"""

from __future__ import annotations

from qencode_nb.errors import EntryError

#: Audit modes (notebook parameter ``mode``).
MODES = ("full", "replay", "rerun")


def check_mode(mode) -> str:
    """Validate the ``mode`` parameter.

    Raises:
        EntryError: naming the field ``mode`` and the accepted modes.
    """
    if mode not in MODES:
        raise EntryError(f"{mode!r} is not accepted; accepted: {', '.join(MODES)}",
                         field="mode")
    return mode
