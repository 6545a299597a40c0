"""Papermill execution with the pins set in the kernel's environment at launch.

:class:`PinnedEngine` is a papermill engine, registered under the entry-point
group ``papermill.engine`` as ``qencode-nb`` (see pyproject.toml), so that
``papermill --engine qencode-nb in.ipynb out.ipynb -p blas_threads 2`` also
works.  It reads ``blas_threads`` and ``blas_coretype`` from the notebook's
parameters and starts the kernel with the six thread variables (and
``OPENBLAS_CORETYPE``) already in its environment: the pins then hold even
when an IPython startup file imports numpy before the pin cell runs.
Every run starts its own kernel process; concurrent runs never share one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from papermill.engines import NBClientEngine
from papermill.clientwrap import PapermillNotebookClient
from papermill.utils import merge_kwargs, remove_args

from qencode_nb.errors import ParameterError, RunFailed
from qencode_nb.threads import pin_environment

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ENGINE_NAME = "qencode-nb"


def _notebook_parameters(nb) -> dict:
    """Defaults of the ``parameters`` cell, overridden by papermill's injected values."""
    from papermill.inspection import _infer_parameters

    values = {}
    for p in _infer_parameters(nb):
        try:
            import ast

            values[p.name] = ast.literal_eval(p.default)
        except (ValueError, SyntaxError):
            values[p.name] = p.default
    values.update((nb.metadata.get("papermill") or {}).get("parameters") or {})
    return values


def kernel_environment(blas_threads=1, blas_coretype=None, base=None) -> dict:
    """The kernel's launch environment: ``base`` (default os.environ) plus the pins.

    Without ``blas_coretype`` an inherited ``OPENBLAS_CORETYPE`` is left as it is
    (some machines set it so that old OpenBLAS builds run correctly); the
    provenance records whatever kernel was in force.
    """
    env = dict(os.environ if base is None else base)
    env.update(pin_environment(blas_threads, blas_coretype))
    return env


class PinnedEngine(NBClientEngine):
    """nbclient engine whose kernel starts with the BLAS pins in its environment."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                 stderr_file=None, start_timeout=60, execution_timeout=None,
                                 **kwargs):
        params = _notebook_parameters(nb_man.nb)
        env = kernel_environment(params.get("blas_threads", 1), params.get("blas_coretype"))
        kwargs = remove_args(["input_path"], **kwargs)
        safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
        final_kwargs = merge_kwargs(
            safe_kwargs,
            timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
            startup_timeout=start_timeout, kernel_name=kernel_name,
            log=logging.getLogger("papermill"), log_output=log_output,
            stdout_file=stdout_file, stderr_file=stderr_file)
        return PapermillNotebookClient(nb_man, **final_kwargs).execute(env=env)


def check_parameters(notebook, parameters: dict) -> None:
    """Refuse parameter names the notebook does not declare.

    papermill only warns about them; a misspelt ``blas_thread=2`` would then
    silently run at the default.

    Raises:
        ParameterError: names the unknown parameter(s) and the accepted ones.
    """
    import papermill

    declared = papermill.inspect_notebook(str(notebook))
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ParameterError(
            f"{Path(notebook).name}: unknown parameter(s) {', '.join(unknown)}; accepted: "
            + ", ".join(declared))


def run_notebook(notebook, output, parameters: dict | None = None, *, timeout=None,
                 kernel_name: str | None = None, progress_bar: bool = False) -> dict:
    """Execute a notebook under the pinned engine and return its records.

    The executed notebook is always written to ``output``, also when a cell
    fails (papermill writes it with the error), so nothing is lost.

    Args:
        notebook: input .ipynb path.
        output: output .ipynb path.
        parameters: papermill parameters (validated by :func:`check_parameters`).
        timeout: per-cell execution timeout in seconds (None: none).
        kernel_name: Jupyter kernel (default: the notebook's).

    Returns:
        ``{name: value}`` records (:func:`qencode_nb.read_records`).

    Raises:
        ParameterError: unknown parameter name.
        RunFailed: a cell raised, or the run did not record ``done``; the
            message carries the recorded ``error`` when there is one.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from qencode_nb.record import read_records

    parameters = dict(parameters or {})
    check_parameters(notebook, parameters)
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    failure = None
    try:
        papermill.execute_notebook(str(notebook), str(output), parameters=parameters,
                                   engine_name=ENGINE_NAME, kernel_name=kernel_name,
                                   progress_bar=progress_bar, execution_timeout=timeout,
                                   cwd=str(ROOT))
    except PapermillExecutionError as exc:
        failure = f"{exc.ename}: {exc.evalue}"
    records = read_records(output)
    if failure or records.get("done") is not True:
        why = failure or "the notebook ended without recording done"
        raise RunFailed(f"{output}: {why}")
    return records
