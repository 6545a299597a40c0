"""The robustness study's figure (matplotlib, Agg backend; no display needed).

:func:`robustness_plot`: per entry, the range (min to max) of the regenerated
errors across the perturbations as a bar with every run's point on it, the
published error as a marker and the certification threshold as a line,
entries sorted by published margin (the smallest, i.e. closest to the
threshold, on the left).
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry.labels import short_name
from qencode_nb.readout.plots import DEFAULT_THRESHOLD_MHA
from qencode_nb.verdict.figure import ERROR_FLOOR_MHA


def _order(summary) -> list:
    """Entries by published margin ascending; entries without one last (then as given)."""
    import math

    margins = [float(m) if m is not None and m == m else math.inf
               for m in summary["published_margin"]]
    return [e for _, _, e in sorted(zip(margins, range(len(margins)), summary["entry"]))]


def robustness_plot(table, summary, stem, *, title: str | None = None):
    """Write ``<stem>.png`` and ``<stem>.svg``; return the matplotlib Figure.

    Args:
        table: the robustness table
            (:data:`qencode_nb.readout.robustness_tables.ROBUSTNESS_COLUMNS`):
            uses ``entry``, ``status``, ``error_mha``, ``certified``, ``threshold_mha``.
        summary: its :func:`~qencode_nb.readout.robustness_tables.summarise_robustness`:
            uses ``entry``, ``published_margin``, ``published_error_mha``,
            ``fragile_measured``, ``fragile``.
        stem: output path without suffix.
        title: figure title (default: entries, ok runs, entries losing certification).

    The y axis is logarithmic (errors in mHa, floored at
    :data:`qencode_nb.verdict.figure.ERROR_FLOOR_MHA`).  Certified runs are
    dots, uncertified ones red crosses; entry labels whose certification changed
    under some perturbation (``fragile_measured``) are red, and bold when the
    published margin also calls them fragile.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    from qencode_nb.readout.robustness_tables import as_flag

    entries = _order(summary)
    by_entry = summary.set_index("entry")
    x = np.arange(len(entries))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.36 * len(entries) + 4), 5.2))
    thr, used = [], set()

    def once(text):   # each legend entry once
        return None if text in used else used.add(text) or text

    for i, entry in enumerate(entries):
        g = table[table["entry"] == entry]
        t = g["threshold_mha"].astype(float).dropna()
        thr.append(float(t.iloc[0]) if len(t) else DEFAULT_THRESHOLD_MHA)
        ok = g[(g["status"] == "ok") & g["error_mha"].notna()]
        y = np.maximum(ok["error_mha"].astype(float).to_numpy(), ERROR_FLOOR_MHA)
        if len(y):
            ax.vlines(x[i], y.min(), y.max(), color="C0", lw=7, alpha=0.3,
                      label=once("range over perturbations"))
            cert = np.array([as_flag(c) is not False for c in ok["certified"]], dtype=bool)
            if cert.any():
                ax.scatter(np.full(cert.sum(), x[i]), y[cert], s=18, color="C0", zorder=3,
                           label=once("run (certified)"))
            if (~cert).any():
                ax.scatter(np.full((~cert).sum(), x[i]), y[~cert], s=36, marker="x",
                           color="red", zorder=3, label=once("run (not certified)"))
        pub = by_entry.loc[entry, "published_error_mha"]
        if pub is not None and pub == pub:
            ax.scatter([x[i]], [max(float(pub), ERROR_FLOOR_MHA)], marker="D", s=40,
                       facecolors="none", edgecolors="black", zorder=4,
                       label=once("published error"))
    thr = np.array(thr)
    if len(x):
        ax.step(np.r_[x - 0.5, x[-1:] + 0.5], np.r_[thr, thr[-1:]], where="post", color="red",
                lw=1.2, label="certification threshold")
    ax.set_yscale("log")
    ax.set_xticks(x, [short_name(e) for e in entries], rotation=90, fontsize=7)
    for tick, entry in zip(ax.get_xticklabels(), entries):
        if as_flag(by_entry.loc[entry, "fragile_measured"]):
            tick.set_color("red")
            if as_flag(by_entry.loc[entry, "fragile"]):
                tick.set_fontweight("bold")
    ax.set_xlim(-0.5, max(len(entries) - 0.5, 0.5))
    ax.set_ylabel("|E - E_exact| (mHa)")
    ax.set_xlabel("entries by published margin (smallest first); red: certification "
                  "changed under a perturbation", fontsize=8)
    n_ok = int((table["status"] == "ok").sum())
    n_lost = int(sum(as_flag(v) is True for v in summary["fragile_measured"]))
    n = len(entries)
    ax.set_title(title or f"{n} entr{'y' if n == 1 else 'ies'}, {n_ok}/{len(table)} runs ok, "
                 f"{n_lost} with certification changed")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    fig.savefig(stem.with_suffix(".svg"))
    plt.close(fig)
    return fig
