"""Papermill execution of the project's notebooks under the pinned engine.

:func:`run_notebook` validates parameter names, executes through the
``qencode-nb`` engine (:mod:`qencode_nb.executor.papermill_engine`), always keeps the
executed notebook, and returns its records or raises :class:`RunFailed`.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # A run's own process (``python -m qencode_nb.executor.execute``): jsonschema's
    # IRI checker rfc3987_syntax is left out, for the reason given in
    # qencode_nb.executor.warm_imports (slow to import, unused here).
    sys.modules.setdefault("rfc3987_syntax", None)

import papermill  # loads papermill.engines, which registers our engine's entry point  # noqa: E402

from qencode_nb.errors import ParameterError, RunFailed  # noqa: E402
from qencode_nb.executor.papermill_engine import ENGINE_NAME, PinnedEngine, kernel_environment

__all__ = ["ENGINE_NAME", "NOTEBOOKS", "PinnedEngine", "check_parameters", "explain_failure",
           "kernel_environment", "mark_failed", "run_notebook", "stopped_stage"]

from qencode_nb.paths import NOTEBOOKS, ROOT  # noqa: E402


def check_parameters(notebook, parameters: dict) -> None:
    """Refuse parameter names the notebook does not declare.

    papermill only warns about them; a misspelt ``blas_thread=2`` would then
    silently run at the default.

    Raises:
        ParameterError: names the unknown parameter(s) and the accepted ones; a
            notebook without a cell tagged ``parameters`` is refused saying so
            (:func:`qencode_nb.notebook.contract.tagged_source`).
    """
    declared = papermill.inspect_notebook(str(notebook))
    if not declared:
        import nbformat

        from qencode_nb.notebook.contract import tagged_source

        tagged_source(nbformat.read(str(notebook), as_version=4))   # raises without the tag
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
        progress_bar: papermill's progress bar on stderr, drawn only when stderr
            is a terminal (in a pipe or a log file it is noise before the reason).

    Returns:
        ``{name: value}`` records (:func:`qencode_nb.read_records`).

    Raises:
        ParameterError: unknown parameter name.
        RunFailed: a cell raised, or the run did not record ``done``; the
            message carries the recorded ``error`` when there is one.
    """
    from papermill.exceptions import PapermillExecutionError

    from qencode_nb.notebook.record import read_records

    parameters = dict(parameters or {})
    check_parameters(notebook, parameters)
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    failure = None     # (type, message): the type is named once
    try:
        papermill.execute_notebook(str(notebook), str(output), parameters=parameters,
                                   engine_name=ENGINE_NAME, kernel_name=kernel_name,
                                   progress_bar=progress_bar and sys.stderr.isatty(),
                                   execution_timeout=timeout,
                                   cwd=str(ROOT))
    except PapermillExecutionError as exc:
        failure = (exc.ename, str(exc.evalue))
    except Exception as exc:  # nbclient's CellTimeoutError, a dead kernel ...
        name = type(exc).__name__
        failure = (name, f"a cell ran longer than the timeout of {timeout} s"
                   if "Timeout" in name else str(exc))
    if not Path(output).is_file():
        raise RunFailed(f"{output}: " + (": ".join(failure) if failure
                                         else "no executed notebook was written"))
    try:
        records = read_records(output)
    except ValueError as exc:   # written only in part: a full disk, a file size limit
        why = ": ".join(failure) if failure else f"{type(exc).__name__}: {exc}"
        raise RunFailed(f"{output}: the executed notebook could not be written whole (a full "
                        f"disk or a file size limit?); it is kept as it is: {why}") from None
    if kernel_name:
        _set_kernelspec(output, kernel_name)
    if failure or records.get("done") is not True:
        kind, message = failure or ("RunFailed", "the notebook ended without recording done")
        if "error" not in records:   # e.g. a dead kernel or a timeout: no stage recorded it
            mark_failed(output, stopped_stage(output), kind, message)
        elif failure:
            _banner_reason(output, records["error"])
        raise RunFailed(f"{output}: {kind}: {message}")
    return records


def stopped_stage(output) -> str:
    """The stage an executed notebook stopped in without an answer (a dead or killed
    kernel, a timeout: :func:`qencode_nb.notebook.stages.stopped_cell`), else
    ``"run"``; also ``"run"`` when ``output`` is not a readable notebook."""
    import nbformat

    from qencode_nb.notebook.stages import stopped_cell

    try:
        stopped = stopped_cell(nbformat.read(str(output), as_version=4))
    except (OSError, ValueError):
        return "run"
    return (stopped or {}).get("stage") or "run"


def explain_failure(exc, output, *, traceback: bool = False) -> list[str]:
    """What to print for a failed :func:`run_notebook`: the reason first (the
    ``error`` record as :func:`~qencode_nb.notebook.stages.failure_line`, else the
    exception), then where the executed notebook is, then with ``traceback`` the
    failing cell's traceback as the notebook holds it (colours stripped), else a hint
    at ``--traceback``."""
    import re

    import nbformat

    from qencode_nb.notebook.record import read_records
    from qencode_nb.notebook.stages import failure_line

    if not (isinstance(exc, RunFailed) and Path(output).is_file()):
        return [str(exc)]
    error = read_records(output).get("error")
    lines = [failure_line(error) if isinstance(error, dict) else str(exc),
             f"executed notebook: {output}"]
    if not traceback:
        return lines + ["(--traceback prints the failing cell's traceback)"]
    errors = [o for c in nbformat.read(str(output), as_version=4).cells
              for o in c.get("outputs") or [] if o.get("output_type") == "error"]
    tb = (errors[-1].get("traceback") or []) if errors else ["(no traceback recorded)"]
    return lines + [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in tb]


def _banner_reason(output, error: dict) -> None:
    """Add the recorded reason (:func:`~qencode_nb.notebook.stages.failure_line`) to
    papermill's red "An Exception was encountered" cell at the top of a failed run,
    so the notebook's first cell says why, not only where."""
    import html

    import nbformat
    from papermill.execute import ERROR_MARKER_TAG

    from qencode_nb.notebook.stages import failure_line

    nb = nbformat.read(str(output), as_version=4)
    banner = nb.cells[0] if nb.cells else None
    if (banner is None or banner.cell_type != "markdown"
            or ERROR_MARKER_TAG not in banner.metadata.get("tags", [])
            or "qnb-reason" in banner.source):
        return
    banner.source += ('\n\n<div class="qnb-reason" style="font-family: monospace; font-size: '
                      f'1.1em;"><b>{html.escape(failure_line(error), quote=False)}</b></div>')
    nbformat.write(nb, str(output))


def _set_kernelspec(output, kernel_name: str) -> None:
    """Write the kernel the notebook ran in into its ``kernelspec`` metadata
    (papermill keeps the input's), so Jupyter reopens it with that kernel and
    :func:`qencode_nb.readout.collect.collect` reports it."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(kernel_name)
        meta = {"name": kernel_name, "display_name": spec.display_name,
                "language": spec.language}
    except NoSuchKernel:
        meta = {"name": kernel_name, "display_name": kernel_name, "language": "python"}
    nb = nbformat.read(str(output), as_version=4)
    nb.metadata["kernelspec"] = meta
    nbformat.write(nb, str(output))


def mark_failed(output, stage: str, error_type: str, message: str) -> None:
    """Append an ``error`` record to an executed (or partial) notebook.

    Used when the kernel could not record why it failed itself: a dead
    kernel, a cell or run timeout.  Collectors then read the reason from the
    notebook like any other record.  A missing ``output`` is created from an
    empty notebook so that the reason is never lost.  The record belongs to the
    notebook's latest run (:func:`qencode_nb.notebook.record.latest_run`).

    Args:
        stage: the stage that was running (:func:`stopped_stage`), or "run".
        error_type: the exception's type name, given once: ``message`` does not
            repeat it (:func:`qencode_nb.notebook.stages.failure_line`).
    """
    import nbformat

    from qencode_nb.notebook.record import RECORD_MIMETYPE, encode, latest_run
    from qencode_nb.notebook.stages import failure_line

    path = Path(output)
    nb = nbformat.v4.new_notebook()
    if path.is_file():
        try:
            nb = nbformat.read(str(path), as_version=4)
        except (OSError, ValueError) as exc:   # nbformat's NotJSONError is a ValueError
            message = (f"{message} (its notebook could not be read: {type(exc).__name__}; "
                       "this one holds the reason)")
    value = {"stage": stage, "type": error_type, "message": message}
    payload = {"name": "error", "value": encode(value)}
    if latest_run(nb) is not None:
        payload["run"] = latest_run(nb)
    cell = nbformat.v4.new_code_cell(
        source=f"# qencode-nb: recorded by the runner, not the kernel\n# {failure_line(value)}",
        metadata={"tags": ["qencode-nb-failure"]})
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={RECORD_MIMETYPE: payload,
                              "text/plain": f"error: {failure_line(value)}"})]
    nb.cells.append(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def _main(argv=None) -> int:
    """``python -m qencode_nb.executor.execute NOTEBOOK OUTPUT PARAMETERS_JSON [--cell-timeout S]
    [--kernel NAME]``:
    one run in its own process (the sweep's unit of work); exit 0 when done,
    1 with the reason on stderr when not."""
    import argparse
    import json
    import sys

    ap = argparse.ArgumentParser(prog="python -m qencode_nb.executor.execute")
    ap.add_argument("notebook")
    ap.add_argument("output")
    ap.add_argument("parameters", help="papermill parameters as a JSON object")
    ap.add_argument("--cell-timeout", type=int, default=None)
    ap.add_argument("--kernel", default=None, help="Jupyter kernelspec (default: the notebook's)")
    args = ap.parse_args(argv)
    from qencode_nb.executor import kernel_fork

    try:
        kernel_fork.prepare()     # one thread yet: the kernel's template (imports shared)
        run_notebook(args.notebook, args.output, json.loads(args.parameters),
                     timeout=args.cell_timeout, kernel_name=args.kernel)
    except (RunFailed, ParameterError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    finally:
        kernel_fork.discard()     # a template no kernel used: ended and reaped
    return 0


if __name__ == "__main__":
    sys.exit(_main())
