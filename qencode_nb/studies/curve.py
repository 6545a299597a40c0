"""A dissociation curve audited point by point (``qencode-nb curve``, ``notebooks/curve.ipynb``).

Each point of a QEncode v4 curve file becomes an entry of one's own
(:mod:`qencode_nb.studies.curve_points`: geometry rule, active space, the values the
file does not state and their sources), is rebuilt (PySCF -> OpenFermion -> Jordan-Wigner
-> Z2 tapering, through the rebuild cache) and re-run with ADAPT-VQE under the curve's
operator cap on the requested engine (``fast`` or ``sector``).  The regenerated energy,
gap against the rebuilt CASCI (mHa) and operator count are compared with the published
point.  A point that fails becomes a row with its error; the others go on.

Outputs in ``out``: ``curve.csv`` (:data:`CSV_COLUMNS`), ``curve_points.json`` (every
point's undeclared values with their sources, its tapering and engine; the measured BLAS
threads and kernels, ``blas``), and the figure
``curve.{png,pdf,svg}`` + ``curve.caption.md``
(:func:`qencode_nb.readout.curve_plot.curve_plot`).

Energies agree when ``|E_regenerated - E_published| <=``
:data:`qencode_nb.rules.STRICT_REPRODUCTION_HA` and the operator counts are equal; a
point is certified when its gap is below :data:`qencode_nb.rules.CERTIFICATION_THRESHOLD_HA`;
``changed`` is a certification that differs between published and regenerated.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from qencode_nb.rules import (CERTIFICATION_THRESHOLD_HA, CURVE_MAX_OPERATORS,
                              STRICT_REPRODUCTION_HA)
from qencode_nb.studies.curve_points import (assumptions, parse_active_space, point_params,
                                             read_curve, resolve_active_space)

__all__ = ["CSV_COLUMNS", "CurveResult", "audit_curve", "audit_point", "select_points"]

#: The columns of ``curve.csv``, in order (energies in Ha, gaps in mHa).
CSV_COLUMNS = ("R", "energy_published", "energy_regenerated", "energy_diff_ha",
               "gap_published_mha", "gap_regenerated_mha", "n_ops_published",
               "n_ops_regenerated", "certified_published", "certified_regenerated", "changed",
               "agrees", "casci_published", "casci_regenerated", "tapered_qubits",
               "z2_sectors", "engine", "stopped_early", "tied_iterations", "wall_s",
               "undeclared", "error")

#: The registered engines a curve's ADAPT re-runs run on; the first is the default.
ENGINES = ("fast", "sector")


def curve_engine(engine) -> str:
    """The engine a curve runs on for a run option's ``engine``
    (:class:`~qencode_nb.options.RunOptions`, checked by
    :func:`qencode_nb.options.check_engine`): that engine where it is one of
    :data:`ENGINES`, else the default (``fast``; None, the recorded backend, included).

    Raises:
        ParameterError: an engine that is not registered.
    """
    from qencode_nb.options import check_engine

    name = check_engine(engine)
    return name if name in ENGINES else ENGINES[0]


@dataclass
class CurveResult:
    """A curve's audit: ``table`` (a DataFrame of :data:`CSV_COLUMNS`), the points whose
    certification changed (``changed``: rows as dicts), the figure's three paths, the
    per-point records, the curve's label and the total wall time (s)."""

    table: object
    changed: list
    figure: tuple | None
    points: list
    label: str
    out: Path
    wall_s: float
    assumptions: dict = field(default_factory=dict)

    def report(self) -> str:
        """A few lines: points, agreement, failures and each changed certification."""
        t = self.table
        ok = t[t["error"].isna()]
        lines = [f"{self.label}: {len(t)} points, {len(ok)} re-run, "
                 f"{int(ok['agrees'].sum())} agree (|dE| <= {STRICT_REPRODUCTION_HA:g} Ha "
                 f"and the same operator count), {len(t) - len(ok)} failed, "
                 f"{len(self.changed)} certification changes; {self.wall_s:.1f} s"]
        for row in self.changed:
            lines.append(f"  certification changed at R={row['R']}: published gap "
                         f"{row['gap_published_mha']:.4g} mHa "
                         f"({'certified' if row['certified_published'] else 'not certified'})"
                         f", regenerated {row['gap_regenerated_mha']:.4g} mHa "
                         f"({'certified' if row['certified_regenerated'] else 'not certified'})")
        for _, row in t[t["error"].notna()].iterrows():
            lines.append(f"  R={row['R']} failed: {row['error']}")
        return "\n".join(lines)


def select_points(curve, points) -> list:
    """The curve's points at the bond lengths ``points`` (None: all; a list of numbers or
    a comma-separated string), matched to 1e-9 Angstrom.

    Raises:
        ParameterError: a bond length the curve does not hold (lists those it holds).
    """
    if points is None:
        return list(curve.points)
    if isinstance(points, str):
        points = [float(x) for x in points.split(",") if x.strip()]
    wanted = [float(x) for x in points]
    chosen = [p for p in curve.points if any(abs(p["R"] - r) < 1e-9 for r in wanted)]
    missing = [r for r in wanted if not any(abs(p["R"] - r) < 1e-9 for p in curve.points)]
    if missing:
        from qencode_nb.errors import ParameterError

        raise ParameterError(f"points {missing} are not on the curve; it holds R = "
                             + ", ".join(f"{p['R']:g}" for p in curve.points))
    return chosen


def audit_point(curve, point, active_space, assumed, engine: str) -> dict:
    """Rebuild and re-run one point: the regenerated values of its ``curve.csv`` row and
    of its record (engine record, ADAPT gradients, findings, the entry's undeclared
    fields).  Raises what the rebuild or the re-run raises (:func:`audit_curve` turns it
    into a row holding the error)."""
    from qencode_nb.entry.readers import from_own_params
    from qencode_nb.hamiltonian.check import hamiltonian_check, rebuild
    from qencode_nb.rerun.problem import build_problem
    from qencode_nb.rerun.rerun import rerun

    data = point_params(curve, point, active_space, assumed)
    entry = from_own_params(data, curve.path.with_name(f"{data['name']}.yaml"))
    rebuilt = rebuild(entry)
    # The sector is the generator's search on the rebuild (the file records none).
    entry.tapering_sectors = [int(x) for x in rebuilt.tapering.z2_sectors]
    problem = build_problem(entry, rebuilt, engine, hamiltonian_check(entry, rebuilt))
    run = rerun(entry, problem)
    casci = float(rebuilt.chemistry.e_casci)
    gap = (run.energy - casci) * 1e3
    n_ops = len(run.details.get("selected_operator_indices") or run.params)
    return {"energy_regenerated": float(run.energy), "gap_regenerated_mha": gap,
            "n_ops_regenerated": n_ops, "casci_regenerated": casci,
            "tapered_qubits": int(rebuilt.tapering.n_qubits_tapered),
            "z2_sectors": " ".join(str(s) for s in entry.tapering_sectors),
            "engine": problem.engine_record().get("used"),
            "engine_record": problem.engine_record(),
            "stopped_early": bool(run.stopped_early),
            "tied_iterations": " ".join(map(str, run.details.get("tied_iterations") or [])),
            "max_gradients": run.details.get("max_gradients"),
            "findings": list(run.findings),
            "undeclared_entry": entry.undeclared}


def _row(point, regenerated: dict | None, error: str | None, wall: float,
         undeclared: str) -> dict:
    threshold_mha = CERTIFICATION_THRESHOLD_HA * 1e3
    row = {c: None for c in CSV_COLUMNS}
    row.update(R=point["R"], energy_published=point["vqe"], gap_published_mha=point["gap_mha"],
               n_ops_published=int(point["n_ops"]), casci_published=point["casci"],
               certified_published=bool(point["gap_mha"] < threshold_mha),
               wall_s=round(wall, 2), undeclared=undeclared, error=error)
    if regenerated is not None:
        row.update({k: v for k, v in regenerated.items() if k in row})
        row["energy_diff_ha"] = row["energy_regenerated"] - point["vqe"]
        row["certified_regenerated"] = bool(row["gap_regenerated_mha"] < threshold_mha)
        row["changed"] = row["certified_regenerated"] != row["certified_published"]
        row["agrees"] = (abs(row["energy_diff_ha"]) <= STRICT_REPRODUCTION_HA
                         and row["n_ops_regenerated"] == row["n_ops_published"])
    return row


def _measured_blas() -> dict:
    """The BLAS threads and each OpenBLAS copy's kernel in force in this process, as
    threadpoolctl measures them after the points ran (:mod:`qencode_nb.notebook.pins`);
    ``qencode-nb curve`` pins them before numpy loads, a caller in-process does not."""
    from qencode_nb.notebook.pins import copy_kernels, measured_blas_threads

    return {"threads": measured_blas_threads(), "kernels": copy_kernels()}


def audit_curve(curve, engine: str = "fast", out=None, points=None, active_space=None,
                max_operators: int = CURVE_MAX_OPERATORS, plot: bool = True) -> CurveResult:
    """Audit a dissociation curve point by point (module docstring).

    Args:
        curve: the curve file's path (a relative path not found from the working folder
            is read from the checkout, so ``data/...`` works from ``notebooks/``).
        engine: ``"fast"`` or ``"sector"`` (the engines' ``engine`` parameter).
        out: output folder (default ``runs/curve-<molecule>``); created.
        points: bond lengths to audit (default all).
        active_space: ``"4,4"`` or ``[4, 4]`` to override; default
            :func:`~qencode_nb.studies.curve_points.resolve_active_space`.
        max_operators: the ADAPT cap (default the curves' 40).
        plot: write the figure.

    Raises:
        EntryError: an unreadable curve file.  ParameterError: an unknown engine or point.
    """
    import pandas as pd

    from qencode_nb.errors import ParameterError

    if engine not in ENGINES:
        raise ParameterError(f"engine {engine!r} is not accepted; accepted: "
                             + ", ".join(ENGINES))
    t0 = time.perf_counter()
    path = Path(curve)
    if not path.exists() and not path.is_absolute():
        from qencode_nb.paths import ROOT

        path = ROOT / path
    cf = read_curve(path)
    chosen = select_points(cf, points)
    out = Path(out if out is not None else f"runs/curve-{cf.molecule}")
    out.mkdir(parents=True, exist_ok=True)
    if active_space is None:
        asp, asp_record = resolve_active_space(cf)
    else:
        asp = parse_active_space(active_space)
        asp_record = {"used": list(asp), "source": "set by the caller (--active-space)"}
    assumed = assumptions(cf, asp, asp_record, max_operators)
    rows, records = [], []
    for point in chosen:
        start = time.perf_counter()
        regenerated, error = None, None
        try:
            regenerated = audit_point(cf, point, asp, assumed, engine)
        except Exception as exc:    # noqa: BLE001 - a failed point is a row, the run goes on
            error = f"{type(exc).__name__}: {exc}"
            tb = traceback.format_exc(limit=-3)
        undeclared = dict(assumed)
        for name, value in ((regenerated or {}).get("undeclared_entry") or {}).items():
            undeclared.setdefault(name, value)
        row = _row(point, regenerated, error, time.perf_counter() - start,
                   ";".join(sorted(undeclared)))
        rows.append(row)
        extra = {k: (regenerated or {}).get(k) for k in ("engine_record", "max_gradients",
                                                           "findings")}
        records.append({"R": point["R"], "row": row, "undeclared": undeclared, **extra,
                        **({"traceback": tb} if error else {})})
    table = pd.DataFrame(rows, columns=list(CSV_COLUMNS))
    from qencode_nb.paths import known_folders, scrub_value
    from qencode_nb.readout.published import published_csv

    # no absolute path of the machine in either file (the curve's, a traceback's)
    (out / "curve.csv").write_text(published_csv(table, out, [str(cf.path)]), encoding="utf-8")
    points = {"curve": str(cf.path), "label": cf.label(), "engine": engine,
              "active_space": list(asp), "blas": _measured_blas(), "points": records}
    points = scrub_value(json.loads(json.dumps(points, default=str)),
                         known_folders(out, [str(cf.path)]))
    (out / "curve_points.json").write_text(json.dumps(points, indent=1) + "\n",
                                           encoding="utf-8")
    figure = None
    if plot and table["error"].isna().any():
        from qencode_nb.figstyle import figure_paths
        from qencode_nb.readout.curve_plot import curve_plot

        curve_plot(table, out / "curve", cf.label(), engine)
        figure = tuple(figure_paths(out / "curve"))
    changed = [r for r in rows if r["changed"]]
    return CurveResult(table=table, changed=changed, figure=figure, points=records,
                       label=cf.label(), out=out, wall_s=time.perf_counter() - t0,
                       assumptions=assumed)
