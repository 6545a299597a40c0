"""ADAPT operators selected against system size (matplotlib, Agg backend): the
figure of :func:`qencode_nb.readout.collect.adapt_operator_table`, under
:data:`qencode_nb.figstyle.STYLE`, written by :func:`qencode_nb.figstyle.save_figure`.
"""

from __future__ import annotations

from qencode_nb.figstyle import MIN_FONT_PT, pyplot, save_figure, styled

__all__ = ["MIN_ADAPT_CHAINS", "adapt_operator_plot", "adapt_plot_refusal"]


#: The hydrogen chains a line of operators against system size needs (one chain is a
#: point, not a trend).
MIN_ADAPT_CHAINS = 2


def adapt_plot_refusal(table) -> str | None:
    """Why :func:`adapt_operator_plot` cannot draw ``table`` (fewer than
    :data:`MIN_ADAPT_CHAINS` hydrogen chains), naming the database that can; None
    when it can."""
    chains = table[table["hydrogen_chain"].astype(bool)] if "hydrogen_chain" in table else []
    if len(chains) >= MIN_ADAPT_CHAINS:
        return None
    names = ", ".join(map(str, table["system"])) if len(table) else "none"
    return (f"ADAPT operators against system size need at least {MIN_ADAPT_CHAINS} hydrogen "
            f"chains; this folder holds {len(chains)} (ADAPT entries: {names}). Fetch the "
            "QEncode database (`qencode-nb data fetch`, then db = its db/ folder) or set db "
            "to a folder of QEncode JSON entries, e.g. \"../shared/qencode-v4/db\".")


@styled
def adapt_operator_plot(table, stem, title: str | None = None):
    """ADAPT operators selected against system size: write ``<stem>.png``/``.pdf``/
    ``.svg`` and its ``.caption.md``; return the Figure.

    The hydrogen chains (``hydrogen_chain`` true) are one line, x = number of
    H atoms (= active spatial orbitals in these entries), y = the number of
    selected operators (``len(encoding.adapt_metadata.selected_operator_indices)``),
    log axis; a chain that stopped at its operator cap (``capped``) is ringed
    and labelled.  Other ADAPT entries (N2, benzene, H2CO) are drawn apart as
    grey squares at their number of active spatial orbitals, each named.

    Args:
        table: :func:`qencode_nb.readout.collect.adapt_operator_table`.
        stem: output path without suffix.
        title: a title over the axes (default: none; the counts are the caption's).

    Raises:
        KeyError: a needed column is missing.
        ValueError: fewer than :data:`MIN_ADAPT_CHAINS` hydrogen chains
            (:func:`adapt_plot_refusal` says why and what to fetch).
    """
    plt = pyplot()

    need = ("system", "hydrogen_chain", "n_h_atoms", "active_orbitals", "n_operators",
            "max_operators", "capped")
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise KeyError(f"table lacks column(s) {', '.join(missing)}")
    refusal = adapt_plot_refusal(table)
    if refusal:
        raise ValueError(refusal)
    chains = table[table["hydrogen_chain"].astype(bool)].sort_values("n_h_atoms")
    others = table[~table["hydrogen_chain"].astype(bool)]
    fig, ax = plt.subplots(figsize=(5.0, 3.4))
    ax.plot(chains["n_h_atoms"], chains["n_operators"], "o-", color="C0",
            label="hydrogen chains (x = H atoms)")
    for _, r in chains.iterrows():
        ax.annotate(f"{r['system']}: {int(r['n_operators'])}",
                    (r["n_h_atoms"], r["n_operators"]), xytext=(-6, 6),
                    textcoords="offset points", ha="right", fontsize=MIN_FONT_PT)
    capped = chains[chains["capped"].astype(bool)]
    if len(capped):
        ax.scatter(capped["n_h_atoms"], capped["n_operators"], s=140, facecolors="none",
                   edgecolors="red", lw=1.2, label="stopped at the operator cap")
    if len(others):
        ax.scatter(others["active_orbitals"], others["n_operators"], marker="s",
                   color="grey", label="other ADAPT entries (x = active orbitals)")
        for _, r in others.iterrows():
            ax.annotate(str(r["system"]), (r["active_orbitals"], r["n_operators"]),
                        xytext=(6, -3), textcoords="offset points", fontsize=MIN_FONT_PT,
                        color="dimgrey")
    ax.set_yscale("log")
    ax.margins(x=0.12, y=0.25)   # room for the names
    ax.set_xticks(sorted(set(chains["n_h_atoms"]) | set(others["active_orbitals"])))
    ax.set_xlabel("system size: H atoms = active spatial orbitals")
    ax.set_ylabel("selected ADAPT operators")
    if title:
        ax.set_title(title)
    ax.grid(which="major", alpha=0.3)
    ax.legend(loc="upper left")
    n_cap = len(capped)
    save_figure(fig, stem, (
        f"**ADAPT operators against system size.** Operators selected by ADAPT-VQE "
        f"(log scale) for {len(chains)} hydrogen chains (line; x = H atoms = active spatial "
        f"orbitals)" + (f" and {len(others)} other ADAPT entries (grey squares; x = active "
                        f"spatial orbitals)" if len(others) else "")
        + (f"; {n_cap} chain{'' if n_cap == 1 else 's'} stopped at the operator cap "
           "(max_operators, not converged; red ring)" if n_cap else "") + "."))
    return fig
