"""What a study measured: the per-group summary table and the sentence that states it.

:func:`summarise` counts, per group of a study table (one BLAS thread count,
OpenBLAS coretype, optimiser or Jupyter kernelspec), the completed runs, the
distinct energies bit for bit (``float.hex()``), the energy range in Ha, the
error range in mHa and the median nfev and wall time (s).  :func:`finding`
writes one sentence from those numbers (never typed in);
:func:`optimizer_finding` is the optimiser study's sentence (error, nfev and
time side by side).  :data:`STUDY_GROUPS` maps each study kind to the column
that groups its runs.  Pure pandas: no run is started here.
"""

from __future__ import annotations

import math

#: Study kinds -> the column of its table that groups the runs (the ``by`` of
#: :func:`summarise`); the kinds are those of ``qencode-nb study`` and of
#: threading.ipynb's ``study`` parameter.
STUDY_GROUPS = {"threads": "threads", "kernels": "coretype", "optimizers": "optimizer",
                "environments": "kernelspec"}

#: Columns of :func:`summarise` after the group column.
SUMMARY_COLUMNS = ("n", "n_failed", "n_distinct_energies", "energies_hex", "min_energy",
                   "max_energy", "min_error_mha", "median_error_mha", "max_error_mha",
                   "spread_mha", "median_nfev", "median_seconds")


def summarise(table, by: str):
    """Per group of ``by``: how many runs, how many distinct energies, error range.

    Args:
        table: a study table (needs ``by``, ``status``, ``energy``,
            ``energy_hex``, ``error_mha``).
        by: the group column, "threads", "coretype", "optimizer" or "kernelspec".

    Returns:
        DataFrame with ``by`` then :data:`SUMMARY_COLUMNS`, one row per group in
        order of first appearance.  Only runs with status "done" and an energy
        count: ``n`` of them (``n_failed`` the others), ``n_distinct_energies``
        by ``energy_hex`` (bit for bit), ``energies_hex`` the distinct values
        joined by ";", ``min_energy`` / ``max_energy`` in Ha, min / median /
        max ``error_mha``, ``spread_mha`` = (max - min energy) * 1000,
        ``median_nfev`` and ``median_seconds`` (s; NaN when the table has no
        such column).  Values are NaN for a group with no completed run.

    Raises:
        KeyError: ``by`` or a needed column is not in the table.
    """
    import pandas as pd

    missing = [c for c in (by, "status", "energy", "energy_hex", "error_mha")
               if c not in table.columns]
    if missing:
        raise KeyError(f"study table lacks column(s) {', '.join(missing)}")
    rows = []
    for group, g in table.groupby(by, sort=False):
        ok = g[(g["status"] == "done") & g["energy"].notna()]
        energies = ok["energy"].astype(float)
        errors = ok["error_mha"].astype(float)
        hexes = list(dict.fromkeys(ok["energy_hex"]))
        nan = float("nan")
        rows.append({
            by: group, "n": len(ok), "n_failed": len(g) - len(ok),
            "n_distinct_energies": len(hexes), "energies_hex": ";".join(hexes) or None,
            "min_energy": energies.min() if len(ok) else nan,
            "max_energy": energies.max() if len(ok) else nan,
            "min_error_mha": errors.min() if len(ok) else nan,
            "median_error_mha": errors.median() if len(ok) else nan,
            "max_error_mha": errors.max() if len(ok) else nan,
            "spread_mha": (energies.max() - energies.min()) * 1e3 if len(ok) else nan,
            **{f"median_{c}": (ok[c].astype(float).median() if len(ok) else nan)
               if c in ok.columns else nan for c in ("nfev", "seconds")},
        })
    return pd.DataFrame(rows, columns=[by, *SUMMARY_COLUMNS])


def _group_label(by: str, value) -> str:
    if by == "threads":
        return f"{value} thread" + ("" if int(value) == 1 else "s")
    if by in ("coretype", "kernelspec"):
        return str(value)
    return f"{by}={value}"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def finding(summary, by: str) -> str:
    """One sentence stating what the study measured, written from ``summary``.

    Args:
        summary: :func:`summarise` output for the same ``by``.
        by: "threads", "coretype", "kernelspec" or "optimizer" (other names
            are labelled ``by=value``); "optimizer" gives
            :func:`optimizer_finding`'s sentence (error, nfev and time side by
            side).

    Returns:
        E.g. "at 1 thread 3/3 runs identical; at 2 threads 2 distinct values
        in 3 runs, spread 1.2e-09 mHa; across groups 2 distinct values, the
        energy spans 1.2e-09 mHa (error 5.181379 to 5.181379 mHa)", or, when
        every completed run of every group has the same energy bit for bit,
        "1 thread and 2 threads give the same energy bit for bit
        (-1.13128651023 Ha, error 1.05e-06 mHa, 4 runs)".  Failed runs are
        counted in the sentence.
    """
    if by == "optimizer":
        return optimizer_finding(summary)
    parts, hexes, lo, hi = [], set(), math.inf, -math.inf
    labels = [_group_label(by, g) for g in summary[by]]
    failed = int(summary["n_failed"].sum())
    total = int(summary["n"].sum())
    for label, (_, s) in zip(labels, summary.iterrows()):
        n, k = int(s["n"]), int(s["n_distinct_energies"])
        where = f"at {label}" if by == "threads" else f"with {label}"
        bad = f" ({int(s['n_failed'])} failed)" if s["n_failed"] else ""
        if n == 0:
            parts.append(f"{where} no run completed{bad}")
            continue
        hexes |= set(str(s["energies_hex"]).split(";"))
        lo, hi = min(lo, s["min_energy"]), max(hi, s["max_energy"])
        if k == 1:
            parts.append(f"{where} {n}/{n} runs identical{bad}" if n > 1
                         else f"{where} 1 run{bad}")
        else:
            parts.append(f"{where} {k} distinct values in {n} runs, "
                         f"spread {s['spread_mha']:.3g} mHa{bad}")
    if total == 0:
        return "no run completed: " + "; ".join(parts)
    if len(hexes) == 1 and all(summary["n"] > 0) and not failed:
        s = summary.iloc[0]
        subject = _join(labels) if by == "threads" else (
            _join(labels) + (" kernels" if len(labels) > 1 else " kernel"))
        verb = "give" if len(labels) > 1 else "gives"
        errs = summary["median_error_mha"].iloc[0]
        return (f"{subject} {verb} the same energy bit for bit "
                f"({s['min_energy']:.12g} Ha, error {errs:.3g} mHa, {total} run"
                + ("s)" if total > 1 else ")"))
    text = "; ".join(parts)
    if len(summary) > 1:
        if len(hexes) == 1:
            text += "; every completed run gives the same energy bit for bit"
        else:
            text += (f"; across groups {len(hexes)} distinct values, the energy spans "
                     f"{(hi - lo) * 1e3:.3g} mHa (error {summary['min_error_mha'].min():.7g}"
                     f" to {summary['max_error_mha'].max():.7g} mHa)")
    return text


def optimizer_finding(summary) -> str:
    """The sentence of an optimiser study: per optimiser the error (mHa), nfev and
    wall time (s) side by side (medians over completed runs), whether its repeats
    agree bit for bit, then which optimiser has the lowest error, the fewest
    evaluations and the shortest time (ties all named).

    E.g. "COBYLA: error 1.05e-06 mHa, nfev 20, 9.7 s (2/2 runs bit-identical);
    L-BFGS-B: error 0 mHa, nfev 15, 8.7 s (2/2 runs bit-identical); lowest
    error L-BFGS-B, fewest evaluations L-BFGS-B, fastest L-BFGS-B".
    """
    parts = []
    for _, s in summary.iterrows():
        n, k = int(s["n"]), int(s["n_distinct_energies"])
        bad = f", {int(s['n_failed'])} failed" if s["n_failed"] else ""
        if n == 0:
            parts.append(f"{s['optimizer']}: no run completed{bad}")
            continue
        runs = ("1 run" if n == 1 else f"{n}/{n} runs bit-identical" if k == 1
                else f"{k} distinct values in {n} runs, spread {s['spread_mha']:.3g} mHa")
        error = "error" if k == 1 else "median error"
        parts.append(f"{s['optimizer']}: {error} {s['median_error_mha']:.3g} mHa, "
                     f"nfev {s['median_nfev']:.4g}, {s['median_seconds']:.3g} s "
                     f"({runs}{bad})")
    ok = summary[summary["n"] > 0]
    if not len(ok):
        return "no run completed: " + "; ".join(parts)
    text = "; ".join(parts)
    if len(ok) > 1:
        text += "; " + ", ".join(
            f"{what} {_join([str(o) for o in ok.loc[ok[col] == ok[col].min(), 'optimizer']])}"
            for what, col in (("lowest error", "median_error_mha"),
                              ("fewest evaluations", "median_nfev"),
                              ("fastest", "median_seconds")))
    return text
