"""The audit notebook's figure: one re-run's error as it ran (matplotlib, no pyplot).

:func:`error_trace_plot` draws the ``rerun_trace`` record
(:mod:`qencode_nb.rerun.progress`): VQE error per evaluation, ADAPT error per
selected operator, on a log scale with the threshold and the published error;
:func:`error_trace_caption` is its caption (the notebook shows it under the figure; the
figure has no title); :func:`figure_png` turns a figure into PNG bytes for
``IPython.display.Image``.  Drawn under :data:`qencode_nb.figstyle.STYLE`.
"""

from __future__ import annotations

from qencode_nb.entry.labels import short_name
from qencode_nb.figstyle import ERROR_LABEL, ERROR_TEXT, png_bytes, styled

#: Errors below this (mHa) are drawn at this floor on a log axis (this figure, the
#: margin plot, the study strips and the robustness figure).
ERROR_FLOOR_MHA = 1e-6


def error_trace_plot(records: dict):
    """The re-run's error against the exact ground energy as it ran (log scale).

    VQE: the error of every evaluation (points, faint) and the best so far (line)
    against the evaluation count, restart starts marked; ADAPT: the error after each
    selected operator against the operator count.  The certification threshold and
    the published error are drawn as horizontal lines; errors below
    :data:`ERROR_FLOOR_MHA` are drawn at the floor.

    Args:
        records: an audit's records (``rerun_trace``: energies in Ha and
            ``e_ref_ha``; ``threshold_mha``, ``published_error_mha``, ``entry_id``).

    Returns:
        a matplotlib ``Figure`` (no pyplot state: safe in a kernel and in a worker),
        or None when the audit has no re-run trace (mode=replay, a failed run).
    """
    trace = records.get("rerun_trace")
    if not isinstance(trace, dict) or not trace.get("energies_ha"):
        return None          # before matplotlib loads (styled loads it): a replay draws nothing
    return _draw_error_trace(records, trace)


@styled
def _draw_error_trace(records: dict, trace: dict):
    """:func:`error_trace_plot`'s figure of a trace that has energies (under the style)."""
    import numpy as np
    from matplotlib.figure import Figure

    energies = np.asarray(trace["energies_ha"], dtype=float)
    error = np.maximum(np.abs(energies - float(trace["e_ref_ha"])) * 1e3, ERROR_FLOOR_MHA)
    per_operator = trace.get("per") == "operator"
    x = np.arange(1, len(error) + 1)
    fig = Figure(figsize=(6.5, 3.2), layout="constrained")
    ax = fig.add_subplot()
    if per_operator:
        ax.plot(x, error, "o-", color="#0969da", label="re-run: error after each operator")
        ax.set_xlabel("operators selected (ADAPT steps)")
    else:
        ax.plot(x, error, ".", ms=2 if len(error) > 500 else 5, color="#8fb8ef",
                label="re-run: every evaluation")
        ax.plot(x, np.minimum.accumulate(error), "-", color="#0969da", lw=1.5,
                drawstyle="steps-post", label="re-run: best so far")
        for k, start in enumerate(trace.get("restart_starts") or []):
            if k:
                ax.axvline(start + 0.5, color="#d0d7de", lw=0.8, zorder=0)
        ax.set_xlabel("energy evaluations")
    threshold = records.get("threshold_mha")
    if isinstance(threshold, (int, float)):
        ax.axhline(threshold, color="#cf222e", ls="--", lw=1.2,
                   label=f"threshold {threshold:g} mHa")
    published = records.get("published_error_mha")
    if isinstance(published, (int, float)):
        ax.axhline(max(published, ERROR_FLOOR_MHA), color="#1a7f37", ls=":", lw=1.5,
                   label=f"published error {published:.4g} mHa")
    ax.set_yscale("log")
    # At least two decades around the data and the lines, so one ADAPT step or a flat
    # trace is not drawn on a sliver of an axis.
    marks = [v for v in (threshold, published) if isinstance(v, (int, float)) and v > 0]
    lo = min([float(error.min())] + marks)
    hi = max([float(error.max())] + marks)
    ax.set_ylim(max(lo / 10, ERROR_FLOOR_MHA / 2), hi * 10)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if per_operator:
        ax.set_xlim(0.5, len(error) + 0.5)
    ax.set_ylabel(ERROR_LABEL)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig


def error_trace_caption(records: dict) -> str:
    """The caption (Markdown) of :func:`error_trace_plot` for the same records: the entry,
    what each line is and the counts ("" when the audit has no re-run trace)."""
    trace = records.get("rerun_trace")
    if not isinstance(trace, dict) or not trace.get("energies_ha"):
        return ""
    n = len(trace["energies_ha"])
    name = short_name(records.get("entry_id", "")) or "the entry"
    if trace.get("per") == "operator":
        what = (f"error after each of the {n} selected ADAPT operator"
                f"{'' if n == 1 else 's'}")
    else:
        k = len(trace.get("restart_starts") or []) or 1
        what = (f"error of each of {n} energy evaluations (points) and the best so far "
                f"(line)" + (f", {k} restarts (each later start a grey line)" if k > 1 else ""))
    return (f"**Re-run of {name}.** The {what}, against the exact ground energy: "
            f"{ERROR_TEXT} in mHa, log scale (errors below "
            f"{ERROR_FLOOR_MHA:g} mHa drawn at that floor); dashed red: the certification "
            "threshold; dotted green: the published error.")


def figure_png(fig, dpi: int = 150) -> bytes:
    """A matplotlib ``Figure`` as PNG bytes (no pyplot needed), saved under
    :data:`qencode_nb.figstyle.STYLE` (``dpi``: dots per inch)."""
    return png_bytes(fig, dpi)
