"""The explain search's figure (:mod:`qencode_nb.studies.explain`), drawn under
:data:`qencode_nb.figstyle.STYLE` and written by :func:`qencode_nb.figstyle.save_figure`.

:func:`explain_plot`: one row per configuration tried, in the table's order (the
closest first, at the top), the distance of its re-run energy from the published one in
ulps on a logarithmic axis (a bit-identical run, 0 ulps, drawn at the floor as a
filled square), the changed axes as the row's label.
"""

from __future__ import annotations

from qencode_nb.figstyle import pyplot, save_figure, styled

#: Where a bit-identical run (0 ulps) is drawn on the logarithmic axis.
ULPS_FLOOR = 0.5


@styled
def explain_plot(table, stem, finding: str = ""):
    """Write ``<stem>.png`` (300 dpi), ``.pdf``, ``.svg`` and ``.caption.md``; return the
    matplotlib Figure.

    Args:
        table: the search's table (:data:`qencode_nb.studies.explain.EXPLAIN_COLUMNS`):
            uses ``changed``, ``stack``, ``status``, ``identical``, ``ulps``.
        stem: output path without suffix.
        finding: the search's sentence, the caption's first line.
    """
    import math

    plt = pyplot()
    rows = table.to_dict("records")
    labels = [f"{r['stack']}: {r['changed']}" for r in rows]
    fig, ax = plt.subplots(figsize=(6.5, max(2.2, 0.22 * len(rows) + 1.2)))
    for y, r in enumerate(rows):
        ulps = r.get("ulps")
        if r.get("identical") == True:  # noqa: E712 - a bool or a numpy bool
            ax.plot([ULPS_FLOOR], [y], "s", color="tab:green", ms=6)
        elif r.get("status") == "done" and ulps is not None and not math.isnan(float(ulps)):
            ax.barh(y, float(ulps) - ULPS_FLOOR, left=ULPS_FLOOR, color="tab:blue", height=0.6)
        else:
            ax.plot([ULPS_FLOOR], [y], "x", color="tab:red", ms=6)
    ax.set_xscale("log")
    ax.set_xlim(left=ULPS_FLOOR / 2)
    ax.set_yticks(range(len(rows)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("distance from the published energy (ulps)")
    identical = sum(r.get("identical") == True for r in rows)  # noqa: E712
    failed = sum(r.get("status") != "done" for r in rows)
    caption = (f"{finding}. One row per configuration tried ({len(rows)}), closest first; "
               "bars: ulps between the re-run energy and the published one (log axis); "
               f"green squares: bit-identical ({identical}); red crosses: failed runs "
               f"({failed}). Each row names the stack and what it changes from the entry's "
               "recorded environment.")
    save_figure(fig, stem, caption)
    return fig
