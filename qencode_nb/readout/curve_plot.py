"""A dissociation curve's audit as one figure (matplotlib, Agg backend): published and
regenerated energies, gaps against CASCI with the certification threshold, and ADAPT
operator counts, all against R; drawn under :data:`qencode_nb.figstyle.STYLE` and written
by :func:`qencode_nb.figstyle.save_figure`.  The table is
:func:`qencode_nb.studies.curve.audit_curve`'s ``curve.csv``.
"""

from __future__ import annotations

from qencode_nb.figstyle import pyplot, save_figure, styled
from qencode_nb.rules import CERTIFICATION_THRESHOLD_HA
from qencode_nb.verdict.figure import ERROR_FLOOR_MHA

__all__ = ["curve_caption", "curve_plot"]

NEED = ("R", "energy_published", "energy_regenerated", "gap_published_mha",
        "gap_regenerated_mha", "n_ops_published", "n_ops_regenerated", "changed", "error",
        "casci_published")


def curve_caption(table, label: str, engine: str) -> str:
    """The figure's caption: what is drawn, the counts, the changed points."""
    ok = table[table["error"].isna()]
    changed = ok[ok["changed"].astype(bool)]
    failed = len(table) - len(ok)
    agree = int(ok["agrees"].astype(bool).sum()) if "agrees" in ok else 0
    text = (f"**Dissociation curve {label}: published against regenerated.** "
            f"(a) ADAPT-VQE energy (Ha) published (circles) and regenerated on the "
            f"{engine} engine (crosses), CASCI (line); (b) gap to CASCI (mHa, log scale, "
            f"values below {ERROR_FLOOR_MHA:g} mHa drawn at it) with the certification "
            f"threshold {CERTIFICATION_THRESHOLD_HA * 1e3:g} mHa (dashed); (c) ADAPT "
            f"operators selected. R in Angstrom (bond length, or spacing of a chain). "
            f"{len(table)} points, {len(ok)} re-run, {agree} agree with the published "
            f"energy and operator count")
    if failed:
        text += f", {failed} failed (not drawn)"
    if len(changed):
        text += ("; certification changed at R = "
                 + ", ".join(f"{r:g}" for r in changed["R"]) + " (red rings)")
    else:
        text += "; no certification changed"
    return text + "."


@styled
def curve_plot(table, stem, label: str, engine: str):
    """Write ``<stem>.png``/``.pdf``/``.svg`` and ``<stem>.caption.md``; return the Figure.

    Raises:
        KeyError: a needed column is missing.
        ValueError: no point was re-run.
    """
    import numpy as np

    plt = pyplot()
    missing = [c for c in NEED if c not in table.columns]
    if missing:
        raise KeyError(f"table lacks column(s) {', '.join(missing)}")
    t = table.sort_values("R")
    ok = t[t["error"].isna()]
    if not len(ok):
        raise ValueError("no point of the curve was re-run: nothing to draw")
    changed = ok[ok["changed"].astype(bool)]
    fig, (ax_e, ax_g, ax_n) = plt.subplots(3, 1, figsize=(5.0, 6.6), sharex=True)
    ax_e.plot(t["R"], t["casci_published"], "-", color="grey", lw=1.0, label="CASCI")
    ax_e.plot(t["R"], t["energy_published"], "o", mfc="none", color="C0", label="published")
    ax_e.plot(ok["R"], ok["energy_regenerated"], "x", color="C1", label="regenerated")
    ax_e.set_ylabel("energy (Ha)")
    ax_e.legend(loc="best")

    def floor(values):
        return np.maximum(np.abs(values.astype(float)), ERROR_FLOOR_MHA)

    threshold = CERTIFICATION_THRESHOLD_HA * 1e3
    ax_g.plot(t["R"], floor(t["gap_published_mha"]), "o-", mfc="none", color="C0",
              label="published")
    ax_g.plot(ok["R"], floor(ok["gap_regenerated_mha"]), "x--", color="C1",
              label="regenerated")
    ax_g.axhline(threshold, ls="--", color="black", lw=0.9, label="threshold")
    if len(changed):
        ax_g.scatter(changed["R"], floor(changed["gap_regenerated_mha"]), s=140,
                     facecolors="none", edgecolors="red", lw=1.2,
                     label="certification changed")
    ax_g.set_yscale("log")
    ax_g.set_ylabel("gap to CASCI (mHa)")
    ax_g.legend(loc="best")

    ax_n.plot(t["R"], t["n_ops_published"], "o-", mfc="none", color="C0", label="published")
    ax_n.plot(ok["R"], ok["n_ops_regenerated"], "x--", color="C1", label="regenerated")
    ax_n.set_ylabel("ADAPT operators")
    ax_n.set_xlabel("R (Angstrom)")
    top = max(float(t["n_ops_published"].max()), float(ok["n_ops_regenerated"].max()))
    ax_n.set_ylim(0, top * 1.3 + 1)
    ax_n.yaxis.get_major_locator().set_params(integer=True)
    ax_n.legend(loc="best")
    for ax, letter in zip((ax_e, ax_g, ax_n), "abc"):
        ax.set_title(f"({letter})", loc="left")
        ax.grid(alpha=0.3)
    save_figure(fig, stem, curve_caption(t, label, engine))
    return fig
