"""Figures from audit tables (matplotlib, Agg backend; no display needed).

:func:`margin_plot`: published vs regenerated error per entry, the
certification threshold, the fragile band (margin < 0.20, DESIGN.md) and the
fragile entries marked.
:func:`distribution_plot`: the error of every run of a threading or kernel
study (:mod:`qencode_nb.studies`), one strip per group, with the threshold.
"""

from __future__ import annotations

from pathlib import Path

#: Errors below this (mHa) are drawn at this floor on the log axis.
ERROR_FLOOR_MHA = 1e-6


def short_name(entry_id: str) -> str:
    """``H4_ccpvdz_JW_UCCSD_v4_tapered__sha256_7606...`` -> ``H4 JW UCCSD 7606``."""
    text = str(entry_id)
    head, _, digest = text.partition("__sha256_")
    parts = [p for p in head.split("_") if p not in ("ccpvdz", "v4", "tapered")]
    return " ".join(parts + ([digest[:4]] if digest else []))


def margin_plot(table, stem, *, title: str | None = None):
    """Write ``<stem>.png`` and ``<stem>.svg``; return the matplotlib Figure.

    Args:
        table: :func:`qencode_nb.collect.audit_table` DataFrame; uses
            ``entry_id``/``notebook``, ``published_error_mha``, ``error_mha``,
            ``threshold_mha``, ``fragile``, ``certification_change``.
        stem: output path without suffix.
        title: figure title (default: counts of entries and fragile ones).

    The y axis is logarithmic (errors in mHa, floored at
    :data:`ERROR_FLOOR_MHA`); the threshold is drawn per entry's
    ``threshold_mha`` (QEncode: results.quality.gap_threshold, 10 mHa) and
    the band between 0.8 and 1.0 times the threshold holds certified entries
    with margin < 0.20 (fragile).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    from qencode_nb.audit import FRAGILE_MARGIN

    df = table.copy()
    labels = [short_name(e if isinstance(e, str) else Path(str(n)).stem)
              for e, n in zip(df["entry_id"], df["notebook"])]
    x = np.arange(len(df))
    pub = np.maximum(df["published_error_mha"].astype(float).to_numpy(), ERROR_FLOOR_MHA)
    reg = df["error_mha"].astype(float).to_numpy()
    thr = df["threshold_mha"].astype(float).to_numpy()
    thr = np.where(np.isnan(thr), 10.0, thr)
    fragile = np.array([v is True for v in df["fragile"]], dtype=bool)

    fig, ax = plt.subplots(figsize=(max(8.0, 0.32 * len(df) + 4), 5.2))
    ax.fill_between(np.r_[x - 0.5, x[-1:] + 0.5] if len(x) else [],
                    np.r_[thr, thr[-1:]] * (1 - FRAGILE_MARGIN),
                    np.r_[thr, thr[-1:]], step="post", color="orange", alpha=0.25,
                    label=f"fragile band (margin < {FRAGILE_MARGIN:.0%})")
    ax.step(np.r_[x - 0.5, x[-1:] + 0.5], np.r_[thr, thr[-1:]], where="post", color="red",
            lw=1.2, label="threshold")
    ax.scatter(x, np.where(np.isnan(pub), np.nan, pub), marker="o", facecolors="none",
               edgecolors="C0", s=40, label="published error")
    has = ~np.isnan(reg)
    ax.scatter(x[has], np.maximum(reg[has], ERROR_FLOOR_MHA), marker="x", color="C1", s=40,
               label="regenerated error")
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
    ax.set_title(title or f"{len(df)} entries, {int(has.sum())} re-run, "
                 f"{int(fragile.sum())} fragile")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    fig.savefig(stem.with_suffix(".svg"))
    plt.close(fig)
    return fig


#: Axis titles of :func:`distribution_plot` for the study group columns.
GROUP_LABELS = {"threads": "BLAS threads (requested)", "coretype": "OpenBLAS coretype"}


def distribution_plot(table, by, stem, threshold_mha: float = 10.0, title: str | None = None):
    """Error of every run per group: write ``<stem>.png`` and ``<stem>.svg``; return the Figure.

    Args:
        table: a study table (:func:`qencode_nb.studies.threads_study` or
            :func:`~qencode_nb.studies.kernels_study`); uses ``by``,
            ``error_mha``, ``status`` and ``energy_hex`` when present.
        by: the group column ("threads", "coretype"); one strip per group,
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
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    for col in (by, "error_mha"):
        if col not in table.columns:
            raise KeyError(f"table lacks column {col!r}")
    done = table if "status" not in table.columns else table[table["status"] == "done"]
    groups = list(dict.fromkeys(table[by]))
    errors = done["error_mha"].astype(float).to_numpy()
    finite = errors[np.isfinite(errors)]
    span = np.r_[np.maximum(finite, ERROR_FLOOR_MHA), threshold_mha]
    log = span.max() / span.min() > 10.0

    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(groups) + 3), 4.6))
    for i, group in enumerate(groups):
        g = done[done[by] == group]
        y = g["error_mha"].astype(float).to_numpy()
        y = np.maximum(y, ERROR_FLOOR_MHA) if log else y
        dx = (np.arange(len(y)) - (len(y) - 1) / 2) * min(0.08, 0.6 / max(len(y), 1))
        ax.scatter(i + dx, y, s=36, color=f"C{i % 10}", alpha=0.8, edgecolors="k",
                   linewidths=0.5, zorder=3)
        n_total = int((table[by] == group).sum())
        distinct = g["energy_hex"].nunique() if "energy_hex" in g.columns else len(set(y))
        text = f"{distinct} distinct / {len(g)}" + (
            f" ({n_total - len(g)} failed)" if n_total > len(g) else "")
        if len(y) and np.isfinite(y).any():
            ax.annotate(text, (i, np.nanmax(y)), xytext=(0, 8), textcoords="offset points",
                        ha="center", fontsize=8)
    ax.axhline(threshold_mha, color="red", lw=1.2, label=f"threshold {threshold_mha:g} mHa")
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.12)   # room for the labels above the strips
    ax.set_xticks(range(len(groups)), [str(g) for g in groups],
                  rotation=45 if len(groups) > 5 else 0)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_xlabel(GROUP_LABELS.get(by, by))
    ax.set_ylabel("|E - E_exact| (mHa)")
    ax.set_title(title or f"{len(done)} runs in {len(groups)} groups by {by}")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(stem.with_suffix(".png"), dpi=120)
    fig.savefig(stem.with_suffix(".svg"))
    plt.close(fig)
    return fig
