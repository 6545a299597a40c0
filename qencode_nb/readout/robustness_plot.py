"""The robustness study's figure (matplotlib, Agg backend; no display needed), drawn
under :data:`qencode_nb.figstyle.STYLE` and written by
:func:`qencode_nb.figstyle.save_figure`.

:func:`robustness_plot`: per entry (one row each), the range (min to max) of the
regenerated errors across the perturbations as a bar with every run's point on it,
the published error as a marker and the certification threshold as a line,
entries sorted by published margin (the smallest, i.e. closest to the
threshold, at the top).
"""

from __future__ import annotations

from qencode_nb.entry.labels import short_name
from qencode_nb.figstyle import ERROR_TEXT, pyplot, save_figure, styled
from qencode_nb.readout.plots import DEFAULT_THRESHOLD_MHA, entry_rows
from qencode_nb.verdict.figure import ERROR_FLOOR_MHA


def _order(summary) -> list:
    """Entries by published margin ascending; entries without one last (then as given)."""
    import math

    margins = [float(m) if m is not None and m == m else math.inf
               for m in summary["published_margin"]]
    return [e for _, _, e in sorted(zip(margins, range(len(margins)), summary["entry"]))]


@styled
def robustness_plot(table, summary, stem, *, title: str | None = None):
    """Write ``<stem>.png`` (300 dpi), ``.pdf``, ``.svg`` and ``.caption.md``
    (:func:`qencode_nb.figstyle.save_figure`); return the matplotlib Figure.

    Args:
        table: the robustness table
            (:data:`qencode_nb.readout.robustness_tables.ROBUSTNESS_COLUMNS`):
            uses ``entry``, ``status``, ``error_mha``, ``certified``, ``threshold_mha``.
        summary: its :func:`~qencode_nb.readout.robustness_tables.summarise_robustness`:
            uses ``entry``, ``published_margin``, ``published_error_mha``,
            ``fragile_measured``, ``fragile``.
        stem: output path without suffix.
        title: a title over the axes (default: none; entries, ok runs and entries
            losing certification are counted in the caption).

    One row per entry (horizontal labels), smallest published margin at the top.  The
    x axis is |E - E_exact| in mHa, logarithmic, floored at
    :data:`qencode_nb.verdict.figure.ERROR_FLOOR_MHA`.  Certified runs are dots,
    uncertified ones red crosses; entry labels whose certification changed under
    some perturbation (``fragile_measured``) are red, and bold when the published
    margin also calls them fragile.  The legend sits below the axes.
    """
    import numpy as np

    from qencode_nb.readout.robustness_tables import as_flag

    plt = pyplot()
    entries = _order(summary)
    by_entry = summary.set_index("entry")
    y = np.arange(len(entries))
    fig, ax = plt.subplots(figsize=(6.5, max(2.4, 0.18 * len(entries) + 1.6)))
    thr, used = [], set()

    def once(text):   # each legend entry once
        return None if text in used else used.add(text) or text

    for i, entry in enumerate(entries):
        g = table[table["entry"] == entry]
        t = g["threshold_mha"].astype(float).dropna()
        thr.append(float(t.iloc[0]) if len(t) else DEFAULT_THRESHOLD_MHA)
        ok = g[(g["status"] == "ok") & g["error_mha"].notna()]
        x = np.maximum(ok["error_mha"].astype(float).to_numpy(), ERROR_FLOOR_MHA)
        if len(x):
            ax.hlines(y[i], x.min(), x.max(), color="C0", lw=6, alpha=0.3,
                      label=once("range over perturbations"))
            cert = np.array([as_flag(c) is not False for c in ok["certified"]], dtype=bool)
            if cert.any():
                ax.scatter(x[cert], np.full(cert.sum(), y[i]), s=16, color="C0", zorder=3,
                           label=once("run (certified)"))
            if (~cert).any():
                ax.scatter(x[~cert], np.full((~cert).sum(), y[i]), s=30, marker="x",
                           color="red", zorder=3, label=once("run (not certified)"))
        pub = by_entry.loc[entry, "published_error_mha"]
        if pub is not None and pub == pub:
            ax.scatter([max(float(pub), ERROR_FLOOR_MHA)], [y[i]], marker="D", s=32,
                       facecolors="none", edgecolors="black", zorder=4,
                       label=once("published error"))
    if len(y):
        ax.plot(np.repeat(thr, 2), np.ravel(np.c_[y - 0.5, y + 0.5]), color="red", lw=1.2,
                label="certification threshold")
    entry_rows(fig, ax, y, [short_name(e) for e in entries], title, legend_columns=3)
    for tick, entry in zip(ax.get_yticklabels(), entries):
        if as_flag(by_entry.loc[entry, "fragile_measured"]):
            tick.set_color("red")
            if as_flag(by_entry.loc[entry, "fragile"]):
                tick.set_fontweight("bold")
    n_ok = int((table["status"] == "ok").sum())
    n_lost = int(sum(as_flag(v) is True for v in summary["fragile_measured"]))
    n = len(entries)
    save_figure(fig, stem, (
        f"**Robustness.** Per entry, the regenerated error {ERROR_TEXT} "
        "(mHa, log scale) of every run across the perturbations (bar: their range; dots: "
        "certified runs; red crosses: runs not certified), the published error (open "
        "diamond) and the certification threshold (red line); entries by published "
        "margin, smallest at the top. Entry names in red: certification changed under a "
        "perturbation (bold: the published margin also calls the entry fragile). "
        f"{n} entr{'y' if n == 1 else 'ies'}, {n_ok}/{len(table)} runs ok, {n_lost} with "
        "certification changed."))
    return fig
