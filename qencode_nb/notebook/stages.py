"""Notebook stages: a failed stage records why before it re-raises, and the
strict mode's refusal (for writing entries, never needed to audit)."""

from __future__ import annotations

import contextlib
import html
import re

from qencode_nb.errors import QencodeNbError, StrictRefused
from qencode_nb.notebook.record import record


def failure_line(error: dict) -> str:
    """The one-line reason of a failed run from its ``error`` record:
    ``"<stage>: <type>: <message>"`` (what the CLI, the sweep's ``failure``
    column and the verdict card show).  The type is named once: a message that
    itself starts with ``"<type>: "`` (as older runners wrote a dead
    kernel's or a timeout's) is not prefixed again."""
    kind, message = error.get("type"), str(error.get("message"))
    while kind and message.startswith(f"{kind}: "):
        message = message[len(kind) + 2:]
    return f"{error.get('stage')}: {kind}: {message}"


#: A notebook stage in a cell's source: ``with stage("rerun"):``.
_STAGE_IN_SOURCE = re.compile(r"""\bstage\(\s*["']([A-Za-z0-9_]+)["']""")


def stages_in(source) -> list[str]:
    """The stages a cell's source runs (``with stage("name")``), in order; ``source`` a
    string or a list of lines (as nbformat may keep it)."""
    return _STAGE_IN_SOURCE.findall("".join(source) if isinstance(source, list) else source)


def stopped_cell(nb) -> dict | None:
    """The code cell an execution stopped in without an answer, or None.

    A cell whose execution started and never finished: papermill's status
    ``running`` (left so when papermill itself was killed), or nbclient's timing
    metadata with ``iopub.execute_input`` (or ``iopub.status.busy``) but no
    ``shell.execute_reply`` (the kernel died or was killed during the cell, or the
    cell timed out).  JupyterLab writes that metadata only with its "record timing"
    setting.

    Args:
        nb: an executed notebook node.

    Returns:
        ``{"cell": index in nb.cells, "stage": the first stage the cell's source
        runs (``with stage("name")``) or None}``.
    """
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata") or {}
        timing = meta.get("execution") or {}
        started = "iopub.execute_input" in timing or "iopub.status.busy" in timing
        if ((meta.get("papermill") or {}).get("status") == "running"
                or (started and "shell.execute_reply" not in timing)):
            found = stages_in(cell.get("source") or "")
            return {"cell": index, "stage": found[0] if found else None}
    return None


@contextlib.contextmanager
def stage(name: str):
    """Run one notebook stage; on failure record ``error`` (stage, type, message), re-raise.

    A failed run thus keeps its executed notebook *and* a record of why it
    failed, readable with :func:`qencode_nb.read_records`.  The failing cell
    shows the reason first: a :class:`~qencode_nb.errors.QencodeNbError` is
    drawn by IPython as its message (:func:`qencode_nb.errors.render_traceback`);
    any other exception gets one readable line (:func:`failure_line`) displayed
    above the traceback IPython prints for it.
    """
    try:
        yield
    except BaseException as exc:
        message = str(exc)
        if isinstance(exc, KeyboardInterrupt) and not message:
            message = "interrupted (a cell timeout or a user interrupt)"
        error = {"stage": name, "type": type(exc).__name__, "message": message}
        record("error", error)
        if not isinstance(exc, QencodeNbError):
            _show_failure(error)
        raise


def _show_failure(error: dict) -> None:
    """Display ``FAILED <stage>: <type>: <message>`` (HTML and plain text)."""
    from IPython.display import display

    line = failure_line(error)
    display({"text/plain": f"FAILED {line}\n(the traceback follows)",
             "text/html": '<div class="qnb-stage-failure" style="margin: 4px 0; padding: 6px '
                          '8px; background: #ffebe9; border-left: 4px solid #cf222e;"><b>FAILED'
                          f'</b> {html.escape(line, quote=False)}<br><span style="color: #57606a;">the '
                          'traceback follows</span></div>'}, raw=True)


def check_strict(provenance: dict, blas_threads: int) -> None:
    """``strict=True``: refuse drift, a dirty tree or more than one BLAS thread.

    Audits never need this (drift never blocks an audit); it is for writing
    entries, where the generator refused the same three things (its
    ``--allow-env-drift`` and ``--allow-dirty`` flags).

    Args:
        provenance: :func:`qencode_nb.notebook.provenance.collect` output.
        blas_threads: the measured BLAS thread count.

    Raises:
        StrictRefused: listing every reason (drifted packages as have/want).
    """
    reasons = [f"{k} {v['have'] or 'not installed'} (want {v['want']})"
               for k, v in provenance["versions"].items() if not v["match"]]
    if reasons:
        reasons = ["environment drift: " + ", ".join(reasons)]
    git = provenance.get("git") or {}
    if git.get("dirty") is not False:
        reasons.append("git tree dirty" if git.get("dirty") else
                       "git state unknown (not a git checkout)")
    if blas_threads != 1:
        reasons.append(f"{blas_threads} BLAS threads measured (strict needs 1)")
    if reasons:
        raise StrictRefused("strict=True refuses to run: " + "; ".join(reasons))
