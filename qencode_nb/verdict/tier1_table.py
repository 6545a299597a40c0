"""The tier-1 table as a reader sees it: every procedure field, and the full reason
of every row that is not ``equal``, highlighted by its effect on tier 1.

:class:`Tier1Table` renders the ``fields`` record (rows of
:func:`qencode_nb.verdict.procedure.table`) as one HTML table (inline styles, no
script) with a plain-text twin.  Nothing is cut: pandas' DataFrame display stops a
cell at ``display.max_colwidth`` (50 characters), which hid the reason of the one
row that mattered.  Rows are highlighted by their ``effect``: ``fail`` red,
``incomplete`` amber, a passing row that is not ``equal`` (``not used``) grey.
HTML hooks: ``<table class="qnb-tier1">``, each ``<tr data-field=... data-status=...
data-effect=...>``, the reason in ``<td class="qnb-reason">``.
"""

from __future__ import annotations

import html
import json

from qencode_nb.verdict.procedure import effect as row_effect

#: Row background and left border by effect (same colours as the card's badges).
HIGHLIGHT = {"fail": ("#ffebe9", "#cf222e"), "incomplete": ("#fff8c5", "#9a6700"),
             "pass": ("#f6f8fa", "#8c959f")}

#: The columns shown, in order: ``(row key, heading)``.
COLUMNS = (("field", "field"), ("declared_in", "declared in"), ("declared", "declared"),
           ("used", "used"), ("status", "status"), ("effect", "tier 1"),
           ("reason", "reason (or where the value used comes from)"))


def _value(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, (list, dict, bool)) else str(value)


class Tier1Table:
    """The tier-1 table of one audit.

    Args:
        rows: the ``fields`` record: dicts with ``field``, ``declared_in``,
            ``declared``, ``used``, ``source``, ``status`` and (newer audits)
            ``effect`` and ``reason``; older rows get their effect from
            their status and show their ``source`` as the reason.
    """

    def __init__(self, rows: list[dict]):
        self.rows = [dict(r) for r in rows or []]

    def cells(self) -> list[dict]:
        """Per row: ``{key: text}`` for :data:`COLUMNS` plus ``effect`` and
        ``highlight`` (True for every row that is not ``equal``)."""
        out = []
        for r in self.rows:
            effect = row_effect(r)
            highlight = r.get("status") != "equal"
            reason = r.get("reason") if highlight else None
            if highlight and not reason:
                reason = r.get("source")
            cells = {key: _value(r.get(key)) for key, _ in COLUMNS}
            cells["effect"] = effect
            cells["reason"] = reason if highlight else (r.get("source") or "")
            out.append({**cells, "highlight": highlight, "_effect": effect})
        return out

    def html(self) -> str:
        """One ``<table class="qnb-tier1">`` (inline styles only)."""
        head = "".join(f'<th style="text-align:left; padding: 2px 8px;">{html.escape(t)}</th>'
                       for _, t in COLUMNS)
        body = []
        for c in self.cells():
            style = "vertical-align: top;"
            if c["highlight"]:
                bg, border = HIGHLIGHT[c["_effect"]]
                style += f" background: {bg}; border-left: 4px solid {border};"
            tds = []
            for key, _ in COLUMNS:
                text = html.escape(c[key])
                cls = ' class="qnb-reason"' if key == "reason" else ""
                weight = " font-weight: 600;" if key == "reason" and c["highlight"] else ""
                colour = "" if c["highlight"] or key != "reason" else " color: #57606a;"
                tds.append(f'<td{cls} style="padding: 2px 8px; white-space: normal;'
                           f'{weight}{colour}">{text}</td>')
            body.append(f'<tr data-field="{html.escape(c["field"])}" '
                        f'data-status="{html.escape(c["status"])}" '
                        f'data-effect="{c["_effect"]}" style="{style}">{"".join(tds)}</tr>')
        return ('<table class="qnb-tier1" style="border-collapse: collapse; font-size: 0.9em;">'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def text(self) -> str:
        """One line per field; under every row that is not ``equal`` its effect in
        capitals and the full reason."""
        lines = []
        width = max((len(r.get("field", "")) for r in self.rows), default=5)
        for c in self.cells():
            lines.append(f"{c['field']:<{width}}  {c['status']:<10}  declared {c['declared']}"
                         f"; used {c['used']}")
            if c["highlight"]:
                lines.append(f"{'':<{width}}  -> {c['_effect'].upper()}: {c['reason']}")
        return "\n".join(lines)

    def frame(self):
        """The rows as a pandas DataFrame indexed by field (every key kept)."""
        import pandas as pd

        return pd.DataFrame(self.rows).set_index("field")

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        return self.text()
