"""Values of the audit notebook's parameters that a run checks before it starts.

``mode`` is validated here, once, for the notebook, the CLI, sweeps and studies, and
every timeout in seconds (:func:`check_timeout`), the Hamiltonian proof budget
(:func:`check_proof_budget`) (``engine`` by :func:`qencode_nb.engines.selection.check_engine`, against the
registered engines; parameter *names* by
:func:`qencode_nb.notebook.runner.check_parameters`).
"""

from __future__ import annotations

from qencode_nb.errors import EntryError, ParameterError

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


def check_timeout(timeout, parameter: str = "timeout"):
    """Validate a timeout in seconds: None (no limit) or a number > 0; ``parameter``
    names it in the error (``timeout``, a sweep's ``cell_timeout``).

    Raises:
        ParameterError: anything else (0, a negative number, NaN, a bool, a string).
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ParameterError(f"{timeout!r} is not accepted; accepted: seconds > 0 or None",
                             parameter=parameter)
    return timeout


def check_proof_budget(budget, parameter: str = "proof_budget"):
    """Validate the proof budget in seconds: a number >= 0 (0: never build a path
    cold; :data:`qencode_nb.rules.PROOF_BUDGET_S` is the default) or None (no limit).

    Raises:
        ParameterError: anything else (a negative number, NaN, a bool, a string).
    """
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0:
        raise ParameterError(f"{budget!r} is not accepted; accepted: seconds >= 0 or None "
                             "(no limit)", parameter=parameter)
    return float(budget)
