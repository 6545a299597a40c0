"""Figures from audit tables (matplotlib, Agg backend; no display needed).

:func:`margin_plot`: published vs regenerated error per entry, the
certification threshold, the fragile band (margin < 0.20, DESIGN.md) and the
fragile entries marked.
:func:`distribution_plot`: the error of every run of a threading or kernel
study (:mod:`qencode_nb.studies.blas`), one strip per group, with the threshold.
:func:`optimizer_plot`: an optimiser study side by side: error (mHa), nfev and
wall time (s) per optimiser, three panels.
:func:`study_plot`: the figure of a study table by its kind.
:func:`adapt_operator_plot`: ADAPT operators selected against system size
(:func:`qencode_nb.readout.collect.adapt_operator_table`).
The audit notebook's own figure is :mod:`qencode_nb.verdict.figure`.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.entry.labels import short_name
from qencode_nb.readout.summaries import STUDY_GROUPS
from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA, FRAGILE_MARGIN
from qencode_nb.verdict.figure import ERROR_FLOOR_MHA

#: The threshold drawn when a table has none (mHa): QEncode's certification
#: threshold, :data:`qencode_nb.rules.CERTIFICATION_THRESHOLD_HA` (0.01 Ha).
DEFAULT_THRESHOLD_MHA = CERTIFICATION_THRESHOLD_HA * 1e3

__all__ = ["DEFAULT_THRESHOLD_MHA", "GROUP_LABELS", "OPTIMIZER_AXES", "STUDY_GROUPS",
           "adapt_operator_plot", "distribution_plot", "margin_plot", "optimizer_plot",
           "run_labels", "study_plot"]


def _pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, stem) -> None:
    """Write ``<stem>.png`` (120 dpi) and ``<stem>.svg``, creating the folder; close ``fig``."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    fig.savefig(stem.with_suffix(".svg"))
    _pyplot().close(fig)


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


def margin_plot(table, stem, *, title: str | None = None):
    """Write ``<stem>.png`` and ``<stem>.svg``; return the matplotlib Figure.

    Args:
        table: :func:`qencode_nb.readout.collect.audit_table` DataFrame; uses
            ``entry_id``/``notebook``, ``published_error_mha``, ``error_mha``,
            ``threshold_mha``, ``fragile``, ``certification_change``.
        stem: output path without suffix.
        title: figure title (default: counts of entries, re-runs and fragile
            ones, by the published margin and by the re-run's).

    Entries are sorted by published margin, smallest first (as the robustness
    figure sorts them), so a sweep's plot and figures.ipynb's agree; two runs of
    one entry get their notebook's name beside the entry's.  The y axis is
    logarithmic (errors in mHa, floored at :data:`ERROR_FLOOR_MHA`; an error
    below the floor, e.g. a published 0, is drawn at the floor with its own
    marker); the threshold is drawn per entry's ``threshold_mha`` (QEncode:
    results.quality.gap_threshold, 10 mHa) and the band between 0.8 and 1.0
    times the threshold holds certified entries with margin < 0.20 (fragile).
    A marker with no point to show is left out of the legend.
    """
    import numpy as np

    plt = _pyplot()

    df = table.copy()
    df["_thr"] = df["threshold_mha"].astype(float).fillna(DEFAULT_THRESHOLD_MHA)
    df["_pub_margin"] = (df["_thr"] - df["published_error_mha"].astype(float)) / df["_thr"]
    df = df.sort_values("_pub_margin", kind="stable", na_position="last").reset_index(drop=True)
    labels = run_labels(df["entry_id"], df["notebook"])
    x = np.arange(len(df))
    pub_raw = df["published_error_mha"].astype(float).to_numpy()
    pub = np.maximum(pub_raw, ERROR_FLOOR_MHA)
    clipped = pub_raw < ERROR_FLOOR_MHA
    reg = df["error_mha"].astype(float).to_numpy()
    thr = df["_thr"].to_numpy()
    fragile = np.array([v is True for v in df["fragile"]], dtype=bool)
    fragile_pub = (pub_raw < thr) & (df["_pub_margin"].to_numpy() < FRAGILE_MARGIN)

    fig, ax = plt.subplots(figsize=(max(8.0, 0.32 * len(df) + 4), 5.2))
    ax.fill_between(np.r_[x - 0.5, x[-1:] + 0.5] if len(x) else [],
                    np.r_[thr, thr[-1:]] * (1 - FRAGILE_MARGIN),
                    np.r_[thr, thr[-1:]], step="post", color="orange", alpha=0.25,
                    label=f"fragile band (margin < {FRAGILE_MARGIN:.0%})")
    ax.step(np.r_[x - 0.5, x[-1:] + 0.5], np.r_[thr, thr[-1:]], where="post", color="red",
            lw=1.2, label="threshold")
    shown = ~np.isnan(pub_raw) & ~clipped
    if shown.any():
        ax.scatter(x[shown], pub[shown], marker="o", facecolors="none", edgecolors="C0",
                   s=40, label="published error")
    if clipped.any():
        ax.scatter(x[clipped], pub[clipped], marker="v", color="C0", s=40,
                   label=f"published error < {ERROR_FLOOR_MHA:g} mHa (drawn at the floor)")
    has = ~np.isnan(reg)
    if has.any():
        ax.scatter(x[has], np.maximum(reg[has], ERROR_FLOOR_MHA), marker="x", color="C1",
                   s=40, label="regenerated error")
    for i in np.flatnonzero(fragile):
        ax.scatter([x[i]], [max(reg[i], ERROR_FLOOR_MHA)], marker="s", s=120,
                   facecolors="none", edgecolors="red", lw=1.5,
                   label="fragile (re-run)" if i == np.flatnonzero(fragile)[0] else None)
    for i, change in enumerate(df["certification_change"]):
        if isinstance(change, str) and change:
            ax.annotate(change, (x[i], max(reg[i], ERROR_FLOOR_MHA)), fontsize=7,
                        rotation=90, xytext=(4, 6), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xticks(x, labels, rotation=90, fontsize=7)
    ax.set_xlim(-0.5, max(len(df) - 0.5, 0.5))
    ax.set_ylabel("|E - E_exact| (mHa)")
    ax.set_xlabel("entries by published margin (smallest first)")
    # The title over the whole figure, left-aligned: over the axes alone it is wider
    # than a few entries' axes and was cut on the left (the legend sits outside).
    fig.suptitle(title or f"{len(df)} entries, {int(has.sum())} re-run; fragile: "
                 f"{int(fragile_pub.sum())} by published margin, {int(fragile.sum())} "
                 "by the re-run", x=0.01, ha="left", fontsize=11)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.set_layout_engine("constrained")
    _save(fig, stem)
    return fig


#: Axis titles of :func:`distribution_plot` for the study group columns.
GROUP_LABELS = {"threads": "BLAS threads (requested)", "coretype": "OpenBLAS coretype",
                "kernelspec": "Jupyter kernelspec (package stack)"}


def distribution_plot(table, by, stem, threshold_mha: float = DEFAULT_THRESHOLD_MHA,
                      title: str | None = None):
    """Error of every run per group: write ``<stem>.png`` and ``<stem>.svg``; return the Figure.

    Args:
        table: a study table (:func:`qencode_nb.studies.blas.threads_study`,
            :func:`~qencode_nb.studies.blas.kernels_study` or
            :func:`~qencode_nb.studies.environments.environments_study`); uses ``by``,
            ``error_mha``, ``status`` and ``energy_hex`` when present.
        by: the group column ("threads", "coretype", "kernelspec"); one strip per group,
            in order of first appearance.
        stem: output path without suffix.
        threshold_mha: certification threshold drawn as a line (mHa).
        title: figure title (default: runs and groups counted).

    Each completed run is a point at x = its group (spread sideways by
    repeat so that equal values stay visible), y = |E - E_exact| in mHa; the
    label above a strip gives its number of distinct energies (bit for bit)
    over its runs.  The y axis is logarithmic (floored at
    :data:`ERROR_FLOOR_MHA`) when the errors and the threshold together span
    more than a decade, linear otherwise.

    Raises:
        KeyError: ``by`` or ``error_mha`` is not a column.
    """
    plt = _pyplot()

    for col in (by, "error_mha"):
        if col not in table.columns:
            raise KeyError(f"table lacks column {col!r}")
    groups = list(dict.fromkeys(table[by]))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(groups) + 3), 4.6))
    n_done = _error_panel(ax, table, by, threshold_mha)
    ax.set_xlabel(GROUP_LABELS.get(by, by))
    ax.set_title(title or f"{n_done} runs in {len(groups)} groups by {by}")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    _save(fig, stem)
    return fig


def _completed(table):
    """The rows of runs that completed (all rows when there is no status column)."""
    return table if "status" not in table.columns else table[table["status"] == "done"]


def _strips(ax, table, by, column, *, log: bool, floor: float | None = None,
            label=None) -> int:
    """One strip of points per group of ``by``: every completed run's ``column``.

    Points are spread sideways by repeat so that equal values stay visible;
    ``label(group_rows, n_failed)`` gives the text above a strip (None: no
    text).  Values below ``floor`` are drawn at it.  Returns the number of
    completed runs drawn.
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
        failed = int((table[by] == group).sum()) - len(g)
        if label is not None and len(y) and np.isfinite(y).any():
            text = label(g, failed) + (f" ({failed} failed)" if failed else "")
            ax.annotate(text, (i, np.nanmax(y)), xytext=(0, 8), textcoords="offset points",
                        ha="center", fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.12)   # room for the labels above the strips
    ax.set_xticks(range(len(groups)), [str(g) for g in groups],
                  rotation=45 if len(groups) > 5 else 0)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.grid(axis="y", which="major", alpha=0.3)
    return len(done)


def _distinct_label(g, failed) -> str:
    distinct = g["energy_hex"].nunique() if "energy_hex" in g.columns else \
        g["error_mha"].nunique()
    return f"{distinct} distinct / {len(g)}"


def _error_panel(ax, table, by, threshold_mha: float) -> int:
    """|E - E_exact| (mHa) strips with the threshold line; log axis (floored at
    :data:`ERROR_FLOOR_MHA`) when errors and threshold span more than a decade."""
    import numpy as np

    errors = _completed(table)["error_mha"].astype(float).to_numpy()
    finite = errors[np.isfinite(errors)]
    span = np.r_[np.maximum(finite, ERROR_FLOOR_MHA), threshold_mha]
    log = bool(span.max() / span.min() > 10.0)
    n = _strips(ax, table, by, "error_mha", log=log,
                floor=ERROR_FLOOR_MHA if log else None, label=_distinct_label)
    ax.axhline(threshold_mha, color="red", lw=1.2, label=f"threshold {threshold_mha:g} mHa")
    ax.set_ylabel("|E - E_exact| (mHa)")
    if log and (finite < ERROR_FLOOR_MHA).any():
        ax.text(0.01, 0.01, f"errors below {ERROR_FLOOR_MHA:g} mHa drawn at {ERROR_FLOOR_MHA:g}",
                transform=ax.transAxes, fontsize=7, color="dimgrey", va="bottom")
    return n


#: Axis titles of :func:`optimizer_plot`'s panels (units in brackets).
OPTIMIZER_AXES = {"error_mha": "|E - E_exact| (mHa)",
                  "nfev": "nfev (QEncode count, evaluations)",
                  "seconds": "wall time per run (s)"}


def optimizer_plot(table, stem, threshold_mha: float | None = None,
                   title: str | None = None):
    """An optimiser study side by side: write ``<stem>.png`` / ``.svg``; return the Figure.

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
        title: figure title (default: runs and optimisers counted).

    Raises:
        KeyError: a needed column is missing.
    """
    plt = _pyplot()

    missing = [c for c in ("optimizer", *OPTIMIZER_AXES) if c not in table.columns]
    if missing:
        raise KeyError(f"table lacks column(s) {', '.join(missing)}")
    if threshold_mha is None:
        threshold_mha = _threshold(table)
    groups = list(dict.fromkeys(table["optimizer"]))
    fig, axes = plt.subplots(1, 3, figsize=(max(10.0, 2.4 * len(groups) + 6), 4.4))
    n = _error_panel(axes[0], table, "optimizer", threshold_mha)
    axes[0].legend(fontsize=8, loc="best")
    for ax, column, unit in ((axes[1], "nfev", ""), (axes[2], "seconds", " s")):
        _strips(ax, table, "optimizer", column, log=False,
                label=lambda g, _, c=column, u=unit: f"median {g[c].astype(float).median():.4g}{u}")
        ax.set_ylabel(OPTIMIZER_AXES[column])
        ax.set_ylim(bottom=0)
    for ax in axes:
        ax.set_xlabel("optimiser")
    fig.suptitle(title or f"{n} runs, {len(groups)} optimisers: error, nfev and time")
    fig.tight_layout()
    _save(fig, stem)
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


def adapt_operator_plot(table, stem, title: str | None = None):
    """ADAPT operators selected against system size: write ``<stem>.png`` / ``.svg``.

    The hydrogen chains (``hydrogen_chain`` true) are one line, x = number of
    H atoms (= active spatial orbitals in these entries), y = the number of
    selected operators (``len(encoding.adapt_metadata.selected_operator_indices)``),
    log axis; a chain that stopped at its operator cap (``capped``) is ringed
    and labelled.  Other ADAPT entries (N2, benzene, H2CO) are drawn apart as
    grey squares at their number of active spatial orbitals, each named.

    Args:
        table: :func:`qencode_nb.readout.collect.adapt_operator_table`.
        stem: output path without suffix.
        title: figure title (default: counts of chains and other entries).

    Raises:
        KeyError: a needed column is missing.
        ValueError: the table holds no hydrogen chain.
    """
    plt = _pyplot()

    need = ("system", "hydrogen_chain", "n_h_atoms", "active_orbitals", "n_operators",
            "max_operators", "capped")
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise KeyError(f"table lacks column(s) {', '.join(missing)}")
    chains = table[table["hydrogen_chain"].astype(bool)].sort_values("n_h_atoms")
    others = table[~table["hydrogen_chain"].astype(bool)]
    if not len(chains):
        raise ValueError("the ADAPT table holds no hydrogen chain; nothing to plot")
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    ax.plot(chains["n_h_atoms"], chains["n_operators"], "o-", color="C0",
            label="hydrogen chains (x = H atoms)")
    for _, r in chains.iterrows():
        ax.annotate(f"{r['system']}: {int(r['n_operators'])}",
                    (r["n_h_atoms"], r["n_operators"]), xytext=(-6, 8),
                    textcoords="offset points", ha="right", fontsize=8)
    capped = chains[chains["capped"].astype(bool)]
    if len(capped):
        ax.scatter(capped["n_h_atoms"], capped["n_operators"], s=160, facecolors="none",
                   edgecolors="red", lw=1.5, label="stopped at the operator cap "
                   "(max_operators, not converged)")
    if len(others):
        ax.scatter(others["active_orbitals"], others["n_operators"], marker="s",
                   color="grey", label="other ADAPT entries (x = active orbitals)")
        for _, r in others.iterrows():
            ax.annotate(str(r["system"]), (r["active_orbitals"], r["n_operators"]),
                        xytext=(6, -3), textcoords="offset points", fontsize=8,
                        color="dimgrey")
    ax.set_yscale("log")
    ax.margins(x=0.12, y=0.2)   # room for the names
    ax.set_xticks(sorted(set(chains["n_h_atoms"]) | set(others["active_orbitals"])))
    ax.set_xlabel("system size: H atoms = active spatial orbitals (count)")
    ax.set_ylabel("selected ADAPT operators (count)")
    ax.set_title(title or f"ADAPT operators: {len(chains)} hydrogen chains, "
                 f"{len(others)} other entries")
    ax.grid(which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    _save(fig, stem)
    return fig

