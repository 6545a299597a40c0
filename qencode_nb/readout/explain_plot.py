"""The explain search's figure (:mod:`qencode_nb.studies.explain`), drawn under
:data:`qencode_nb.figstyle.STYLE` and written by :func:`qencode_nb.figstyle.save_figure`.

:func:`explain_plot`: one row per configuration tried, in the table's order (the
closest first, at the top), the distance of its re-run energy from the published one in
ulps on a logarithmic axis (a bit-identical run, 0 ulps, drawn at the floor as a
filled square), labelled by its stack, kernels and what else it changes (:func:`label`).
"""

from __future__ import annotations

from qencode_nb.figstyle import pyplot, save_figure, styled

#: Where a bit-identical run (0 ulps) is drawn on the logarithmic axis.
ULPS_FLOOR = 0.5


def label(row: dict) -> str:
    """A row's label: its stack and the kernel of each copy, then what else it changes
    (``current: numpy Haswell, scipy SkylakeX, pyscf Prescott; AVX-512 loops off, 2
    threads, L2 512 KiB``)."""
    extra = ([] if row.get("numpy_avx512") != "off" else ["AVX-512 loops off"]) + (
        [f"{row['blas_threads']} threads"] if row.get("blas_threads") not in (1, "1") else []
    ) + ([f"L2 {row['l2_size']} KiB"] if row.get("l2_size") not in (None, "unset") else [])
    return (f"{row['stack']}: numpy {row['numpy_kernel']}, scipy {row['scipy_kernel']}, "
            f"pyscf {row['pyscf_kernel']}" + (f"; {', '.join(extra)}" if extra else ""))


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
    labels = [label(r) for r in rows]
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
               f"({failed}). Each row names the stack, the kernel asked for each OpenBLAS "
               "copy (explain.csv has the kernels measured) and what else it changes.")
    save_figure(fig, stem, caption)
    return fig
