"""The robustness study's two tables: one row per run, one row per entry.

:func:`robustness_row` reads one executed audit notebook of a robustness study
(:mod:`qencode_nb.studies.robustness`) by its records (never by cell index):
regenerated error, certification, energy difference, nfev, ADAPT operators.
:func:`summarise_robustness` reduces those rows per entry to the measured
fragility (``fragile_measured``, ``lost_certification_in``) beside the
margin-based ``fragile`` inferred from the published margin.  Pure pandas on
the rows: the summary of ``robustness.csv`` read back is the same as the one
written.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.verdict.tiers import is_fragile

#: Columns of ``robustness.csv``, one row per entry x perturbation.  ``entry``
#: the entry file stem; ``perturbation`` the label ``threads=T coretype=C
#: kernelspec=K``; ``engine`` the requested audit.ipynb engine (empty: the
#: recorded backend), ``engine_used`` what ran (the ``engine`` record);
#: ``numpy_dispatch`` numpy's AVX-512 loops as the perturbation asked ("on", "off"; empty:
#: as the kernel profile has them);
#: ``status`` "ok" or "failed" with ``reason``; ``error_mha`` the regenerated
#: error |E_rerun - E_exact| (mHa); ``certified`` error < threshold;
#: ``delta_ha`` E_rerun - E_published (Ha); ``nfev`` the re-run's energy
#: evaluations; ``n_selected_operators`` the operators an ADAPT re-run selected
#: (empty for other ansätze); ``wall_s`` the run's wall time (s);
#: ``measured_threads`` what threadpoolctl measured and ``blas_kernel`` the
#: OpenBLAS CPU kernels it reported (joined by ","); the ``published_*``,
#: ``margin_published`` and ``threshold_mha`` (mHa) columns are the entry's, as
#: the run recorded them.
ROBUSTNESS_COLUMNS = ("entry", "perturbation", "threads", "coretype", "kernelspec",
                      "numpy_dispatch", "engine",
                      "engine_used", "status", "reason", "error_mha", "certified", "delta_ha",
                      "nfev", "n_selected_operators", "wall_s", "measured_threads",
                      "blas_kernel", "published_error_mha", "published_certified",
                      "margin_published", "threshold_mha", "notebook")

#: Columns of ``robustness_summary.csv`` (:func:`summarise_robustness`).
SUMMARY_COLUMNS = ("entry", "runs", "runs_ok", "runs_failed", "certified_fraction",
                   "error_min_mha", "error_median_mha", "error_max_mha", "published_error_mha",
                   "published_margin", "published_certified", "fragile", "fragile_measured",
                   "lost_certification_in", "gained_certification_in")

#: The audit records :func:`robustness_row` reads beyond
#: :func:`qencode_nb.readout.run_rows.run_row` (names of
#: :data:`qencode_nb.verdict.records.AUDIT_RECORDS`).
READ_RECORDS = ("certified", "published_certified", "margin_published", "difference",
                "rerun", "engine")


def robustness_row(out: Path, outcome: dict, *, entry: str, threads: int,
                   coretype: str | None, kernelspec: str, label: str,
                   engine: str | None, numpy_dispatch: str | None = None) -> dict:
    """One row of :data:`ROBUSTNESS_COLUMNS` from a run's executed notebook.

    Args:
        out: the study folder holding ``<outcome["name"]>.ipynb``.
        outcome: :func:`qencode_nb.batch.sweep.run_one`'s result (or its
            ``.outcome.json`` for a resumed run).
        entry, threads, coretype, kernelspec, label, engine, numpy_dispatch: the run's
            entry stem and perturbation, and the requested engine.

    ``status`` is "ok" only when the run recorded ``done`` and the runner saw
    no failure (:func:`qencode_nb.readout.run_rows.run_row`); else "failed" with
    the reason (a stage's error record, the per-run timeout, a dead kernel).
    """
    from qencode_nb.notebook.record import read_records
    from qencode_nb.readout.run_rows import run_row

    base = run_row(out, outcome)
    try:
        r = read_records(base["notebook"])
    except (OSError, ValueError):
        r = {}
    rerun = r.get("rerun") or {}
    selected = rerun.get("selected_operator_indices")
    return {
        "entry": entry, "perturbation": label, "threads": threads, "coretype": coretype,
        "kernelspec": kernelspec, "numpy_dispatch": numpy_dispatch, "engine": engine,
        "engine_used": (r.get("engine") or {}).get("used"),
        "status": "ok" if base["status"] == "done" else "failed",
        "reason": base["failure"], "error_mha": base["error_mha"],
        "certified": r.get("certified"),
        "delta_ha": (r.get("difference") or {}).get("delta_ha"),
        "nfev": base["nfev"],
        "n_selected_operators": len(selected) if isinstance(selected, list) else None,
        "wall_s": base["seconds"], "measured_threads": base["measured_threads"],
        "blas_kernel": base["kernel"],
        "published_error_mha": base["published_error_mha"],
        "published_certified": r.get("published_certified"),
        "margin_published": r.get("margin_published"),
        "threshold_mha": base["threshold_mha"], "notebook": base["notebook"],
    }


def as_flag(value):
    """True / False of a bool cell (also "True"/"False" read back from a CSV); None
    when empty."""
    import pandas as pd

    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower())
    if value is None or pd.isna(value):
        return None
    return bool(value)


def _first(values):
    """The first value that is not empty (None, NaN), else None."""
    import pandas as pd

    return next((v for v in values if v is not None and not pd.isna(v)), None)


def summarise_robustness(table):
    """Per entry: runs, certification across perturbations, error range, fragility.

    Args:
        table: rows of :data:`ROBUSTNESS_COLUMNS` (``robustness.csv``, or the
            table :func:`qencode_nb.studies.robustness.robustness` returns).

    Returns:
        DataFrame with :data:`SUMMARY_COLUMNS`, one row per entry in order of
        first appearance.  Only "ok" runs count in the measured columns:

        - ``runs`` all rows of the entry, ``runs_ok`` / ``runs_failed``;
        - ``certified_fraction``: certified ok runs / ok runs with a
          certification (NaN when none);
        - ``error_min_mha`` / ``error_median_mha`` / ``error_max_mha``: the
          regenerated errors of the ok runs (mHa);
        - ``published_error_mha`` (mHa), ``published_margin`` (the audit's
          ``margin_published`` record, (threshold - error) / threshold as
          :func:`qencode_nb.verdict.tiers.margin` computes it) and
          ``published_certified``: the entry's, from the first run that recorded them;
        - ``fragile`` (inferred from one number): published certified and
          published margin < :data:`qencode_nb.rules.FRAGILE_MARGIN`;
        - ``fragile_measured``: True when the certification of at least one ok
          run differs from the published certification (a certified entry that
          lost it, or an uncertified one that gained it, under some
          perturbation); since the published flag is one value, runs that
          disagree among themselves always make it True.  When no run recorded
          the published flag, True when the ok runs disagree among themselves.
          None when no ok run has a certification;
        - ``lost_certification_in`` / ``gained_certification_in``: the
          perturbation labels (joined by "; ") of the ok runs not certified
          while published certified / certified while published not; "" when none.

    Raises:
        KeyError: a column of :data:`ROBUSTNESS_COLUMNS` the summary needs is missing.
    """
    import pandas as pd

    needed = ("entry", "perturbation", "status", "error_mha", "certified",
              "published_error_mha", "published_certified", "margin_published")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise KeyError(f"robustness table lacks column(s) {', '.join(missing)}")
    nan = float("nan")
    rows = []
    for entry, g in table.groupby("entry", sort=False):
        ok = g[g["status"] == "ok"]
        errors = ok["error_mha"].astype(float).dropna()
        certs = [(label, as_flag(c)) for label, c in zip(ok["perturbation"], ok["certified"])]
        known = [c for _, c in certs if c is not None]
        pub_cert = as_flag(_first(g["published_certified"]))
        pub_margin = _first(g["margin_published"])
        fragile = (None if pub_cert is None or pub_margin is None
                   else bool(is_fragile(pub_cert, float(pub_margin))))
        if not known:
            measured = None
        elif pub_cert is None:
            measured = len(set(known)) > 1
        else:
            measured = any(c != pub_cert for c in known)
        rows.append({
            "entry": entry, "runs": len(g), "runs_ok": len(ok), "runs_failed": len(g) - len(ok),
            "certified_fraction": sum(known) / len(known) if known else nan,
            "error_min_mha": errors.min() if len(errors) else nan,
            "error_median_mha": errors.median() if len(errors) else nan,
            "error_max_mha": errors.max() if len(errors) else nan,
            "published_error_mha": _first(g["published_error_mha"]),
            "published_margin": pub_margin, "published_certified": pub_cert,
            "fragile": fragile, "fragile_measured": measured,
            "lost_certification_in": "; ".join(lb for lb, c in certs
                                               if pub_cert is True and c is False),
            "gained_certification_in": "; ".join(lb for lb, c in certs
                                                 if pub_cert is False and c is True),
        })
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


#: Columns of ``robustness_drift.csv`` (:func:`drift_table`): the four numbers of
#: QEncode's drift report, per perturbation and over all of them, each count
#: beside the entries it names ("; "-joined).
DRIFT_COLUMNS = ("scope", "entries", "strict_exceeded", "strict_exceeded_entries",
                 "lost_certification", "lost_certification_entries", "arithmetic_candidates",
                 "arithmetic_candidates_entries", "candidates_passed", "candidates_passed_entries",
                 "gained_certification", "gained_certification_entries")

#: The ``scope`` of :func:`drift_table`'s last row: every perturbation at once.
ALL_PERTURBATIONS = "all perturbations"


def _drift_counts(scope: str, groups) -> dict:
    """One :data:`DRIFT_COLUMNS` row from ``[(entry, ok rows of the entry in scope)]``."""
    from qencode_nb.rules import STRICT_REPRODUCTION_HA
    from qencode_nb.entry.labels import short_name

    strict, lost, candidates, passed, gained = [], [], [], [], []
    n = 0
    for entry, g in groups:
        deltas = g["delta_ha"].astype(float).abs().dropna()
        certs = [as_flag(c) for c in g["certified"]]
        known = [c for c in certs if c is not None]
        pub_cert = as_flag(_first(g["published_certified"]))
        pub_err = _first(g["published_error_mha"])
        threshold = _first(g["threshold_mha"])
        if not len(deltas) or not known or pub_cert is None:
            continue
        n += 1
        moved = float(deltas.max())                              # Ha, unsigned
        worst = float(g["error_mha"].astype(float).max())        # mHa
        name = short_name(entry)
        changed = any(c != pub_cert for c in known)
        if moved > STRICT_REPRODUCTION_HA and not changed:
            strict.append(f"{name} ({moved:.1e} Ha)")
        if not pub_cert and any(known) and pub_err is not None:
            best = float(g["error_mha"].astype(float).min())
            gained.append(f"{name} ({float(pub_err):.3f} -> {best:.3f} mHa)")
        if not pub_cert or pub_err is None or threshold is None:
            continue
        was_lost = any(c is False for c in known)
        if was_lost:
            lost.append(f"{name} ({float(pub_err):.3f} -> {worst:.3f} mHa)")
        if float(pub_err) + 1000.0 * moved >= float(threshold):
            text = (f"{name} ({float(pub_err):.3f} + {1000.0 * moved:.3f} >= "
                    f"{float(threshold):g} mHa; re-run {worst:.3f} mHa)")
            candidates.append(text)
            if not was_lost:
                passed.append(text)
    return {"scope": scope, "entries": n,
            "strict_exceeded": len(strict), "strict_exceeded_entries": "; ".join(strict),
            "lost_certification": len(lost), "lost_certification_entries": "; ".join(lost),
            "arithmetic_candidates": len(candidates),
            "arithmetic_candidates_entries": "; ".join(candidates),
            "candidates_passed": len(passed), "candidates_passed_entries": "; ".join(passed),
            "gained_certification": len(gained), "gained_certification_entries": "; ".join(gained)}


def drift_table(table):
    """QEncode's drift report for a robustness study: four counts per perturbation.

    QEncode re-ran 40 entries on a drifted environment and reported that 17
    exceeded the strict 1e-6 Ha tolerance while still valid, two lost
    certification, and that arithmetic (published error + unsigned movement)
    named four candidates of which two passed (fragility is
    established by re-running, never by arithmetic).  For each perturbation, and
    for all of them together (an entry's worst case over its runs), over the
    entries with an ok run:

    - ``strict_exceeded``: max |E_rerun - E_published| > :data:`qencode_nb.rules.
      STRICT_REPRODUCTION_HA` (1e-6 Ha) while no run changed the certification;
    - ``lost_certification``: published certified, and a run not certified;
    - ``arithmetic_candidates``: published certified and published error +
      1000 * max |E_rerun - E_published| >= threshold (mHa): the arithmetic
      says the entry may fail (every entry that lost certification is one,
      since |error change| <= |energy change|);
    - ``candidates_passed``: candidates whose runs all stayed certified;
    - ``gained_certification`` (beside QEncode's four): published not certified,
      and a run certified (named with the published and the smallest error).

    Args:
        table: rows of :data:`ROBUSTNESS_COLUMNS` (``robustness.csv``; uses
            ``entry``, ``perturbation``, ``status``, ``certified``, ``delta_ha``
            (Ha), ``error_mha``, ``published_error_mha``, ``published_certified``,
            ``threshold_mha`` (mHa)).

    Returns:
        DataFrame with :data:`DRIFT_COLUMNS`: one row per perturbation in order
        of first appearance, then the :data:`ALL_PERTURBATIONS` row.  The
        ``*_entries`` columns name the entries (``H4 JW ADAPT 1a2b``) with the
        numbers behind each count.

    Raises:
        KeyError: a column the table needs is missing.
    """
    import pandas as pd

    needed = ("entry", "perturbation", "status", "certified", "delta_ha", "error_mha",
              "published_error_mha", "published_certified", "threshold_mha")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise KeyError(f"robustness table lacks column(s) {', '.join(missing)}")
    ok = table[table["status"] == "ok"]
    rows = [_drift_counts(label, g.groupby("entry", sort=False))
            for label, g in ok.groupby("perturbation", sort=False)]
    rows.append(_drift_counts(ALL_PERTURBATIONS, ok.groupby("entry", sort=False)))
    return pd.DataFrame(rows, columns=list(DRIFT_COLUMNS))
