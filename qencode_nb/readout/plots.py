"""Figures from audit tables (matplotlib, Agg backend; no display needed), each drawn
under :data:`qencode_nb.figstyle.STYLE` and written by
:func:`qencode_nb.figstyle.save_figure` (PNG at 300 dpi, PDF, SVG and a caption; no
title: what one said is the caption's).

:func:`margin_plot`: published vs regenerated error per entry, the
certification threshold, the fragile band (margin < 0.20, docs/explanations/margin.md) and the
fragile entries marked.
:func:`distribution_plot`: the error of every run of a threading or kernel
study (:mod:`qencode_nb.studies.blas`), one strip per group, with the threshold.
:func:`optimizer_plot`: an optimiser study side by side: error (mHa), nfev and
wall time (s) per optimiser, three panels.
:func:`study_plot`: the figure of a study table by its kind.
:func:`adapt_operator_plot` (:mod:`qencode_nb.readout.adapt_plot`, here too): ADAPT
operators selected against system size
(:func:`qencode_nb.readout.collect.adapt_operator_table`).
The audit notebook's own figure is :mod:`qencode_nb.verdict.figure`.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry.labels import short_name
from qencode_nb.figstyle import ERROR_LABEL, ERROR_TEXT, MIN_FONT_PT, pyplot, save_figure, styled
from qencode_nb.readout.adapt_plot import adapt_operator_plot, adapt_plot_refusal
from qencode_nb.readout.summaries import STUDY_GROUPS
from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA, FRAGILE_MARGIN
from qencode_nb.verdict.tiers import is_fragile, margin
from qencode_nb.verdict.figure import ERROR_FLOOR_MHA

#: The threshold drawn when a table has none (mHa): QEncode's certification
#: threshold, :data:`qencode_nb.rules.CERTIFICATION_THRESHOLD_HA` (0.01 Ha).
DEFAULT_THRESHOLD_MHA = CERTIFICATION_THRESHOLD_HA * 1e3

__all__ = ["DEFAULT_THRESHOLD_MHA", "GROUP_LABELS", "OPTIMIZER_AXES", "STUDY_GROUPS",
           "adapt_operator_plot", "adapt_plot_refusal", "distribution_plot", "margin_caption",
           "margin_plot", "optimizer_plot", "run_labels", "study_plot"]


def run_labels(entry_ids, notebooks) -> list[str]:
    """One label per run: the entry's :func:`short_name` (the notebook's stem when no
    entry id was recorded); runs of one entry get the rest of their notebook's stem in
    brackets (``H2 JW HEA 67c3 [t2__default__python3]``), ``[run N]`` when the stem
    holds nothing more.  The margin plot's ticks and the report's rows use it."""
    stems = [Path(str(n)).stem for n in notebooks]
    names = [e if isinstance(e, str) and e else s for e, s in zip(entry_ids, stems)]
    labels = [short_name(n) for n in names]
    count = {lab: labels.count(lab) for lab in labels}
    for i, (lab, name, stem) in enumerate(zip(list(labels), names, stems)):
        if count[lab] > 1:   # runs of one entry, told apart by their notebooks
            tail = stem[len(name):].strip("_") if stem.startswith(name) else stem
            labels[i] = f"{lab} [{tail or f'run {i + 1}'}]"
    return labels


@styled
def margin_plot(table, stem, *, title: str | None = None):
    """Write ``<stem>.png`` (300 dpi), ``.pdf``, ``.svg`` and ``.caption.md``; return the Figure.

    Args:
        table: :func:`qencode_nb.readout.collect.audit_table` DataFrame; uses
            ``entry_id``/``notebook``, ``published_error_mha``, ``error_mha``,
            ``threshold_mha``, ``fragile``, ``certification_change``.
        stem: output path without suffix.
        title: a title drawn over the axes (default: none; the counts of entries,
            re-runs and fragile ones are the caption's, :func:`margin_caption`).

    One row per entry (horizontal labels), sorted by published margin, smallest at
    the top (as the robustness figure sorts them), so a sweep's plot and
    figures.ipynb's agree; two runs of one entry get their notebook's name beside the
    entry's.  The x axis is |E - E_exact| in mHa, logarithmic, floored at
    :data:`ERROR_FLOOR_MHA` (an error below the floor, e.g. a published 0, is drawn
    at the floor with its own marker); the threshold is drawn per entry's
    ``threshold_mha`` (QEncode: results.quality.gap_threshold, 10 mHa) and the band
    between 0.8 and 1.0 times the threshold holds certified entries with margin <
    0.20 (fragile).  The legend sits below the axes; a marker with no point to show
    is left out of it.
    """
    import numpy as np

    plt = pyplot()

    df = table.copy()
    df["_thr"] = df["threshold_mha"].astype(float).fillna(DEFAULT_THRESHOLD_MHA)
    df["_pub_margin"] = margin(df["published_error_mha"].astype(float), df["_thr"])
    df = df.sort_values("_pub_margin", kind="stable", na_position="last").reset_index(drop=True)
    labels = run_labels(df["entry_id"], df["notebook"])
    y = np.arange(len(df))
    pub_raw = df["published_error_mha"].astype(float).to_numpy()
    pub = np.maximum(pub_raw, ERROR_FLOOR_MHA)
    clipped = pub_raw < ERROR_FLOOR_MHA
    reg = df["error_mha"].astype(float).to_numpy()
    thr = df["_thr"].to_numpy()
    fragile = np.array([v is True for v in df["fragile"]], dtype=bool)

    fig, ax = plt.subplots(figsize=(6.5, max(2.4, 0.18 * len(df) + 1.6)))
    # The threshold of each row as a vertical step, the fragile band to its left.
    edges = np.ravel(np.c_[y - 0.5, y + 0.5])
    steps = np.repeat(thr, 2)
    ax.fill_betweenx(edges, steps * (1 - FRAGILE_MARGIN), steps, color="orange", alpha=0.25,
                     lw=0, label=f"fragile band (margin < {FRAGILE_MARGIN:.0%})")
    ax.plot(steps, edges, color="red", lw=1.2, label="certification threshold")
    shown = ~np.isnan(pub_raw) & ~clipped
    if shown.any():
        ax.scatter(pub[shown], y[shown], marker="o", facecolors="none", edgecolors="C0",
                   s=36, label="published error", zorder=3)
    if clipped.any():
        ax.scatter(pub[clipped], y[clipped], marker="<", color="C0", s=36, zorder=3,
                   label=f"published error < {ERROR_FLOOR_MHA:g} mHa (drawn at the floor)")
    has = ~np.isnan(reg)
    if has.any():
        ax.scatter(np.maximum(reg[has], ERROR_FLOOR_MHA), y[has], marker="x", color="C1",
                   s=36, label="regenerated error", zorder=4)
    for i in np.flatnonzero(fragile):
        ax.scatter([max(reg[i], ERROR_FLOOR_MHA)], [y[i]], marker="s", s=110, zorder=4,
                   facecolors="none", edgecolors="red", lw=1.2,
                   label="fragile (re-run)" if i == np.flatnonzero(fragile)[0] else None)
    for i, change in enumerate(df["certification_change"]):
        if isinstance(change, str) and change:
            ax.annotate(change, (max(reg[i], ERROR_FLOOR_MHA), y[i]), xytext=(7, 0),
                        textcoords="offset points", va="center", fontsize=MIN_FONT_PT)
    entry_rows(fig, ax, y, labels, title, legend_columns=2)
    save_figure(fig, stem, margin_caption(df))
    return fig


def entry_rows(fig, ax, y, labels, title: str | None, legend_columns: int) -> None:
    """The layout of a figure with one row per entry (the margin plot, the robustness
    figure): the error axis logarithmic in mHa, the entries as horizontal labels at
    ``y`` with the smallest published margin at the top, no row label (the caption says
    the order), an optional title, and the legend below the axes in ``legend_columns``."""
    ax.set_xscale("log")
    ax.set_yticks(y, labels)
    ax.set_ylim(max(len(labels) - 0.5, 0.5), -0.5)   # smallest published margin at the top
    ax.set_xlabel(ERROR_LABEL)   # the rows need no axis label: the caption says the order
    if title:
        ax.set_title(title)
    ax.grid(axis="x", which="major", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center",
               ncols=legend_columns)


def margin_caption(table) -> str:
    """The margin plot's caption (Markdown): what is drawn and the counts (entries,
    re-runs, fragile by the published margin and by the re-run)."""

    thr = table["threshold_mha"].astype(float).fillna(DEFAULT_THRESHOLD_MHA).to_numpy()
    pub = table["published_error_mha"].astype(float).to_numpy()
    n_rerun = int(table["error_mha"].notna().sum())
    fragile_pub = int(is_fragile(pub < thr, margin(pub, thr)).sum())
    fragile = sum(v is True for v in table["fragile"])
    n = len(table)
    return (f"**Margins.** Published (open circles) and regenerated (crosses) error "
            f"{ERROR_TEXT} per entry (mHa, log scale, errors below "
            f"{ERROR_FLOOR_MHA:g} mHa drawn at that floor), against each entry's "
            f"certification threshold (red line); the shaded band holds certified errors "
            f"with a margin below {FRAGILE_MARGIN:.0%} of the threshold (fragile). Entries "
            f"by published margin, smallest at the top; two runs of one entry carry their "
            f"notebook's name in brackets. "
            f"{n} entr{'y' if n == 1 else 'ies'}, {n_rerun} re-run; fragile: "
            f"{fragile_pub} by published margin, {fragile} by the re-run.")


#: Axis titles of :func:`distribution_plot` for the study group columns.
GROUP_LABELS = {"threads": "BLAS threads (requested)", "coretype": "OpenBLAS coretype",
                "kernelspec": "Jupyter kernelspec (package stack)"}


@styled
def distribution_plot(table, by, stem, threshold_mha: float = DEFAULT_THRESHOLD_MHA,
                      title: str | None = None):
    """Error of every run per group: write ``<stem>.png``/``.pdf``/``.svg`` and its
    ``.caption.md`` (:func:`qencode_nb.figstyle.save_figure`); return the Figure.

    Args:
        table: a study table (:func:`qencode_nb.studies.blas.threads_study`,
            :func:`~qencode_nb.studies.blas.kernels_study` or
            :func:`~qencode_nb.studies.environments.environments_study`); uses ``by``,
            ``error_mha``, ``status`` and ``energy_hex`` when present.
        by: the group column ("threads", "coretype", "kernelspec"); one strip per group,
            in order of first appearance.
        stem: output path without suffix.
        threshold_mha: certification threshold drawn as a line (mHa).
        title: a title over the axes (default: none; runs and groups are counted in
            the caption).

    Each completed run is a point at x = its group (spread sideways by
    repeat so that equal values stay visible), y = |E - E_exact| in mHa; the
    label above a strip gives its number of distinct energies (bit for bit)
    over its runs.  The y axis is logarithmic (floored at
    :data:`ERROR_FLOOR_MHA`) when the errors and the threshold together span
    more than a decade, linear otherwise.

    Raises:
        KeyError: ``by`` or ``error_mha`` is not a column.
    """
    plt = pyplot()

    for col in (by, "error_mha"):
        if col not in table.columns:
            raise KeyError(f"table lacks column {col!r}")
    groups = list(dict.fromkeys(table[by]))
    fig, ax = plt.subplots(figsize=(min(7.0, max(3.4, 0.8 * len(groups) + 2)), 3.2))
    n_done, note = _error_panel(ax, table, by, threshold_mha)
    ax.set_xlabel(GROUP_LABELS.get(by, by))
    if title:
        ax.set_title(title)
    ax.legend(loc="best")
    failed = len(table) - n_done
    save_figure(fig, stem, (
        f"**{GROUP_LABELS.get(by, by)}.** Error {ERROR_TEXT} (mHa) of "
        f"every completed run, one strip per group, against the certification threshold "
        f"(red line, {threshold_mha:g} mHa); above each strip, its distinct energies (bit "
        f"for bit) over its runs. {n_done} runs in {len(groups)} groups"
        + (f", {failed} failed" if failed else "") + f".{note}"))
    return fig


def _completed(table):
    """The rows of runs that completed (all rows when there is no status column)."""
    return table if "status" not in table.columns else table[table["status"] == "done"]


def _strips(ax, table, by, column, *, log: bool, floor: float | None = None,
            label=None, narrow: bool = False, median: bool = False) -> int:
    """One strip of points per group of ``by``: every completed run's ``column``.

    Points are spread sideways by repeat so that equal values stay visible;
    ``label(group_rows, n_failed)`` gives the text above a strip (None: no
    text); ``median`` draws each strip's median as a black bar.  Values below
    ``floor`` are drawn at it.  The group names are tilted (45 degrees) when there
    are more than 5 groups, or (30 degrees) on a ``narrow`` panel.  Returns the
    number of completed runs drawn.
    """
    import numpy as np

    done = _completed(table)
    groups = list(dict.fromkeys(table[by]))
    for i, group in enumerate(groups):
        g = done[done[by] == group]
        y = g[column].astype(float).to_numpy()
        y = np.maximum(y, floor) if floor is not None else y
        dx = (np.arange(len(y)) - (len(y) - 1) / 2) * min(0.08, 0.6 / max(len(y), 1))
        ax.scatter(i + dx, y, s=36, color=f"C{i % 10}", alpha=0.8, edgecolors="k",
                   linewidths=0.5, zorder=3)
        if median and len(y):
            ax.scatter([i], [np.nanmedian(y)], marker="_", s=500, color="k", lw=1.5,
                       zorder=4)
        failed = int((table[by] == group).sum()) - len(g)
        if label is not None and len(y) and np.isfinite(y).any():
            text = label(g, failed) + (f" ({failed} failed)" if failed else "")
            ax.annotate(text, (i, np.nanmax(y)), xytext=(0, 6), textcoords="offset points",
                        ha="center", fontsize=MIN_FONT_PT)
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.12)   # room for the labels above the strips
    tilt = 45 if len(groups) > 5 else 30 if narrow else 0
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=tilt,
                  ha="right" if tilt else "center", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(axis="y", which="major", alpha=0.3)
    return len(done)


def _distinct(g) -> int:
    """Distinct energies (bit for bit) among a group's completed runs."""
    return g["energy_hex"].nunique() if "energy_hex" in g.columns else g["error_mha"].nunique()


def _distinct_label(g, failed) -> str:
    return f"{_distinct(g)} distinct / {len(g)}"


def _error_panel(ax, table, by, threshold_mha: float,
                 narrow: bool = False) -> tuple[int, str]:
    """|E - E_exact| (mHa) strips with the threshold line; log axis (floored at
    :data:`ERROR_FLOOR_MHA`) when errors and threshold span more than a decade.
    Returns the completed runs drawn and a sentence for the caption ("" or the floor's)."""
    import numpy as np

    errors = _completed(table)["error_mha"].astype(float).to_numpy()
    finite = errors[np.isfinite(errors)]
    span = np.r_[np.maximum(finite, ERROR_FLOOR_MHA), threshold_mha]
    log = bool(span.max() / span.min() > 10.0)
    n = _strips(ax, table, by, "error_mha", log=log, floor=ERROR_FLOOR_MHA if log else None,
                label=(lambda g, _: f"{_distinct(g)} distinct") if narrow else _distinct_label,
                narrow=narrow)
    ax.axhline(threshold_mha, color="red", lw=1.2, label=f"threshold {threshold_mha:g} mHa")
    ax.set_ylabel(ERROR_LABEL)
    note = ""
    if log and (finite < ERROR_FLOOR_MHA).any():
        note = f" Errors below {ERROR_FLOOR_MHA:g} mHa are drawn at {ERROR_FLOOR_MHA:g} mHa."
    return n, note


#: Axis titles of :func:`optimizer_plot`'s panels (units in brackets).
OPTIMIZER_AXES = {"error_mha": ERROR_LABEL,
                  "nfev": "nfev (QEncode count, evaluations)",
                  "seconds": "wall time per run (s)"}


@styled
def optimizer_plot(table, stem, threshold_mha: float | None = None,
                   title: str | None = None):
    """An optimiser study side by side: write ``<stem>.png``/``.pdf``/``.svg`` and its
    ``.caption.md``; return the Figure.

    Three panels share the x axis (one strip per optimiser, in order of first
    appearance, every completed run a point): the error |E - E_exact| in mHa
    with the certification threshold (log axis when it spans more than a
    decade, as :func:`distribution_plot`), ``nfev`` (QEncode's count:
    COBYLA energy evaluations, L-BFGS-B steps x (1 + 2 x parameters), Adam
    steps; labelled with the median) and the wall time per run in s (kernel
    start, Hamiltonian and re-run; labelled with the median).

    Args:
        table: :func:`qencode_nb.studies.optimizers.optimizers_study` table (or its CSV):
            uses ``optimizer``, ``error_mha``, ``nfev``, ``seconds``, and
            ``status``, ``energy_hex``, ``threshold_mha`` when present.
        stem: output path without suffix.
        threshold_mha: threshold line (mHa); default the table's
            ``threshold_mha``, else 10 mHa.
        title: a title over the figure (default: none; runs and optimisers are
            counted in the caption).

    Raises:
        KeyError: a needed column is missing.
    """
    plt = pyplot()

    missing = [c for c in ("optimizer", *OPTIMIZER_AXES) if c not in table.columns]
    if missing:
        raise KeyError(f"table lacks column(s) {', '.join(missing)}")
    if threshold_mha is None:
        threshold_mha = _threshold(table)
    groups = list(dict.fromkeys(table["optimizer"]))
    fig, axes = plt.subplots(1, 3, figsize=(7.0, 3.2), width_ratios=(1.4, 1, 1))
    n, note = _error_panel(axes[0], table, "optimizer", threshold_mha, narrow=True)
    axes[0].legend(loc="best")
    for ax, column in ((axes[1], "nfev"), (axes[2], "seconds")):
        _strips(ax, table, "optimizer", column, log=False, narrow=True, median=True)
        ax.set_ylabel(OPTIMIZER_AXES[column])
        ax.set_ylim(bottom=0)   # the medians' bars need no legend: the caption says them
    for ax, letter in zip(axes, "abc"):
        ax.set_xlabel("optimiser")
        ax.set_title(f"({letter})", loc="left", fontweight="bold")
    if title:
        fig.suptitle(title)
    save_figure(fig, stem, (
        f"**Optimisers.** (a) Error {ERROR_TEXT} (mHa) of every "
        f"completed run against the certification threshold (red line, {threshold_mha:g} "
        f"mHa); above each strip, its number of distinct energies (bit for bit); "
        f"(b) evaluations (QEncode's nfev) and (c) wall time per run (s), the black bar "
        f"each optimiser's median. {n} runs, {len(groups)} optimisers.{note}"))
    return fig


def _threshold(table) -> float:
    """The table's first ``threshold_mha`` (mHa), else :data:`DEFAULT_THRESHOLD_MHA`."""
    if "threshold_mha" in table.columns:
        thr = table["threshold_mha"].dropna()
        if len(thr):
            return float(thr.iloc[0])
    return DEFAULT_THRESHOLD_MHA


def study_plot(table, kind: str, stem):
    """The figure of a study table: :func:`distribution_plot` for "threads",
    "kernels" and "environments", :func:`optimizer_plot` for "optimizers"; threshold from the table.

    Raises:
        ValueError: an unknown kind (lists the accepted ones).
    """
    if kind not in STUDY_GROUPS:
        raise ValueError(f"study kind {kind!r} is not accepted; accepted: "
                         + ", ".join(STUDY_GROUPS))
    if kind == "optimizers":
        return optimizer_plot(table, stem)
    return distribution_plot(table, STUDY_GROUPS[kind], stem, threshold_mha=_threshold(table))
