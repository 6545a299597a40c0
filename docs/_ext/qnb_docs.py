"""Sphinx directives that generate reference tables from the code at build time.

- ``qencode-records``: every record name of an audit with its meaning, from
  :data:`qencode_nb.verdict.records.AUDIT_RECORDS` (plus the ``error`` record);
- ``audit-parameters``: every parameter of ``notebooks/audit.ipynb`` with its default
  and meaning, read from the notebook's ``parameters`` cell (:func:`notebook_parameters`).

Nothing is copied by hand: a record or parameter added to the code appears on the page
at the next build.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

ROOT = Path(__file__).resolve().parents[2]
AUDIT_NOTEBOOK = ROOT / "notebooks" / "audit.ipynb"


def notebook_parameters(path: Path = AUDIT_NOTEBOOK) -> list[tuple[str, str, str]]:
    """``(name, default, meaning)`` of every assignment in the notebook's cell tagged
    ``parameters``, in order; the meaning is the assignment line's comment."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"]
             if "parameters" in (c.get("metadata", {}).get("tags") or [])]
    if len(cells) != 1:
        raise ValueError(f"{path}: expected one cell tagged 'parameters', found {len(cells)}")
    source = "".join(cells[0]["source"])
    comments = {tok.start[0]: tok.string.lstrip("#").strip()
                for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type == tokenize.COMMENT}
    params = []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            raise ValueError(f"{path}: the parameters cell holds more than assignments: "
                             f"{ast.get_source_segment(source, node)!r}")
        params.append((node.targets[0].id, ast.get_source_segment(source, node.value),
                       comments.get(node.lineno, "")))
    return params


def _table(headers, rows, widths) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(headers))
    table += group
    for w in widths:
        group += nodes.colspec(colwidth=w)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for target, cells in ((head, [headers]), (body, rows)):
        for cells_of_row in cells:
            row = nodes.row()
            for kind, text in cells_of_row:
                entry = nodes.entry()
                para = nodes.paragraph()
                para += nodes.literal(text, text) if kind == "code" else nodes.Text(text)
                entry += para
                row += entry
            target += row
    return table


class RecordsDirective(Directive):
    """The table of audit records (``AUDIT_RECORDS``, then ``error``)."""

    has_content = False

    def run(self):
        from qencode_nb.verdict.records import AUDIT_RECORDS, ERROR_RECORD

        rows = [[("code", name), ("text", meaning)] for name, meaning in AUDIT_RECORDS.items()]
        rows.append([("code", ERROR_RECORD),
                     ("text", "written only when a stage fails: {stage, type, message}")])
        table = _table([("text", "record"), ("text", "meaning")], rows, [25, 75])
        table["classes"].append("qnb-records")
        return [table]


class ParametersDirective(Directive):
    """The table of ``audit.ipynb``'s parameters."""

    has_content = False

    def run(self):
        rows = [[("code", name), ("code", default), ("text", meaning)]
                for name, default, meaning in notebook_parameters()]
        table = _table([("text", "parameter"), ("text", "default"), ("text", "meaning")],
                       rows, [18, 20, 62])
        table["classes"].append("qnb-parameters")
        return [table]


def setup(app):
    app.add_directive("qencode-records", RecordsDirective)
    app.add_directive("audit-parameters", ParametersDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
