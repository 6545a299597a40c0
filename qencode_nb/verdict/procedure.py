"""Tier 1, procedure: the entry's declared procedure against what the re-run used.

DESIGN.md, "What reproducible means here", tier 1: every procedure field is
declared in the entry and the re-run used exactly the declared value.  A
field the entry does not declare is listed as ``undeclared`` with the value
used and where that value came from (:data:`GENERATOR_DEFAULTS`); it is never
silently defaulted.  Tier 1 passes only when every field is declared and
equal.

This module holds the field list, the generator defaults and the comparison;
:func:`qencode_nb.verdict.audit.procedure_used` collects what the stages used.
"""

from __future__ import annotations

#: The generator's defaults, used for a field an entry leaves out.  Source:
#: the argument parser of QEncode's ``scripts/generate_entry_v4.py`` (v4.4,
#: commit e1f44cd).  ``{field: (value, where it comes from)}``.
GENERATOR_DEFAULTS = {
    "max_iterations": (500, "generator default --max-iter 500"),
    "restarts_requested": (3, "generator default --multistart 3"),
    "seed": (42, "generator default --seed 42"),
    "backend": ("default.qubit", "generator default --backend default.qubit"),
    "optimizer": ("COBYLA", "generator default --optimizer cobyla"),
    "reps": (2, "generator default --reps 2"),
    "adapt.gradient_threshold": (1e-3, "generator default --adapt-threshold 1e-3 (Ha)"),
    "adapt.max_operators": (100, "generator default --adapt-max-ops 100"),
    "hamiltonian_source": ("of_bridge", "generator default --use-of-bridge"),
    "early_stop": (True, "generator default: early stop on unless --no-early-stop; "
                         "QEncode records whether a run stopped early "
                         "(run_config.early_stopped), not whether early stop was enabled"),
    "adapt.engine": ("auto", "generator default --adapt-engine auto: QNode at <= 12 "
                             "tapered qubits, statevector above"),
}

#: The procedure fields, in report order: ``(field, QEncode 4.0.0 path,
#: params/*.yaml path, applies to)``; ``applies to`` is a set of ansatz names
#: or None (every entry).
FIELDS = (
    ("geometry", "problem.geometry", "problem.geometry", None),
    ("basis", "problem.basis", "problem.basis", None),
    ("charge", "problem.charge", "problem.charge", None),
    ("spin", "problem.spin", "problem.spin", None),
    ("active_space", "problem.active_space", "problem.active_space", None),
    ("orbital_optimization", "problem.orbital_optimization",
     "problem.orbital_optimization", None),
    ("mapping", "encoding.mapping", "encoding.mapping", None),
    ("tapering_sectors", "encoding.tapering.sectors", "encoding.tapering_sectors", None),
    ("hamiltonian_source", "provenance.hamiltonian_source", "encoding.hamiltonian_source",
     None),
    ("ansatz", "encoding.ansatz_type", "encoding.ansatz", None),
    ("reps", "encoding.ansatz_reps", "encoding.reps", {"hea"}),
    ("adapt.gradient_threshold", "encoding.adapt_metadata.gradient_threshold",
     "encoding.adapt.gradient_threshold", {"adapt"}),
    ("adapt.max_operators", "encoding.adapt_metadata.max_operators",
     "encoding.adapt.max_operators", {"adapt"}),
    ("adapt.inner_optimizer", "run_config.optimizer", "run.optimizer", {"adapt"}),
    ("adapt.engine", "run_config.optimizer", "run.optimizer", {"adapt"}),
    ("optimizer", "run_config.optimizer", "run.optimizer", None),
    ("max_iterations", "run_config.max_iterations", "run.max_iterations", None),
    ("restarts_requested", "run_config.multistart_requested", "run.restarts", None),
    ("early_stop", "(not recorded by QEncode 4.0.0)", "run.early_stop", None),
    ("seed", "run_config.seed", "run.seed", None),
    ("backend", "run_config.backend_type", "run.backend", None),
)

#: Fields that only the re-run exercises (``not run`` in replay mode).
RUN_FIELDS = frozenset({"adapt.gradient_threshold", "adapt.max_operators",
                        "adapt.inner_optimizer", "adapt.engine", "optimizer",
                        "max_iterations", "restarts_requested", "early_stop", "seed",
                        "backend"})

#: Row statuses.  ``equal`` and ``not used`` pass; ``differs`` and
#: ``undeclared`` fail tier 1; ``not run`` (replay mode) and ``unverified``
#: (the value used cannot be established, e.g. the source of a stored
#: Hamiltonian that cannot be inferred) make it n/a.
STATUSES = ("equal", "differs", "undeclared", "not used", "not run", "unverified")


def default(field: str):
    """``(value, source)`` of the generator's default for ``field``.

    Raises:
        KeyError: no default is known (the field must be declared).
    """
    return GENERATOR_DEFAULTS[field]


def declared(entry) -> dict:
    """``{field: value}`` of the procedure as the entry declares it.

    Values are canonical (vocabulary table) and JSON-able: active space as
    ``[ne, no]``, the optimiser as its canonical name.  A field listed in
    ``entry.undeclared`` is absent from the result.
    """
    opt = entry.optimizer
    values = {
        "geometry": entry.geometry, "basis": entry.basis, "charge": entry.charge,
        "spin": entry.spin, "active_space": list(entry.active_space),
        "orbital_optimization": entry.orbital_optimization, "mapping": entry.mapping,
        "tapering_sectors": list(entry.tapering_sectors),
        "hamiltonian_source": entry.hamiltonian_source, "ansatz": entry.ansatz,
        "reps": entry.reps, "optimizer": opt.name, "max_iterations": entry.max_iterations,
        "restarts_requested": entry.restarts_requested, "seed": entry.seed,
        "backend": entry.backend, "early_stop": entry.early_stop,
    }
    if entry.ansatz == "adapt":
        meta = entry.adapt or {}
        values.update({"adapt.gradient_threshold": meta.get("gradient_threshold"),
                       "adapt.max_operators": meta.get("max_operators"),
                       "adapt.inner_optimizer": opt.inner, "adapt.engine": opt.engine})
    return {k: v for k, v in values.items()
            if k not in entry.undeclared and v is not None}


def _equal(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return float(a) == float(b)
        except (TypeError, ValueError):
            return False
    return a == b


def table(entry, used: dict, mode: str = "full") -> list[dict]:
    """The tier-1 table, one row per procedure field that applies to the entry.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        used: ``{field: {"value": v, "source": text}}`` as collected by
            :func:`qencode_nb.verdict.audit.procedure_used`; a field absent from it was
            not exercised (``not run``); ``{"value": None, "source": why,
            "not_used": True}`` marks a field the recorded procedure ignores
            (e.g. restarts for ADAPT).
        mode: the audit mode; in "replay" the run fields are ``not run``.

    Returns:
        A list of dicts ``{"field", "declared_in", "declared", "used",
        "source", "status"}``; ``declared`` is None for an undeclared field,
        ``status`` one of :data:`STATUSES`.
    """
    decl = declared(entry)
    rows = []
    for name, json_path, yaml_path, applies in FIELDS:
        if applies is not None and entry.ansatz not in applies:
            continue
        where = json_path if entry.kind == "qencode-json" else yaml_path
        u = used.get(name)
        row = {"field": name, "declared_in": where, "declared": decl.get(name),
               "used": None if u is None else u.get("value"),
               "source": None if u is None else u.get("source")}
        not_run = u is None or (mode == "replay" and name in RUN_FIELDS)
        if name not in decl:       # undeclared fails tier 1 whether or not it ran
            row["status"] = "undeclared"
            why = entry.undeclared.get(name) or {}
            row["source"] = why.get("source") or row["source"]
            if not_run:
                row["used"] = None
                row["source"] = f"not exercised (mode={mode}); " + str(row["source"])
        elif not_run:
            row["status"] = "not run"
            row["source"] = row["source"] or f"not exercised (mode={mode})"
        elif u.get("not_used"):
            row["status"] = "not used"
        elif u.get("unverified"):
            row["status"] = "unverified"
        else:
            row["status"] = "equal" if _equal(decl[name], u.get("value")) else "differs"
        rows.append(row)
    return rows


def tier(rows: list[dict]) -> dict:
    """Tier 1 from :func:`table` rows: ``{"status": pass|fail|n/a, "reasons": [...]}``.

    Fails on any ``differs`` or ``undeclared`` row; n/a when some field was
    not exercised (replay mode) and none failed; passes otherwise.
    """
    reasons = []
    for r in rows:
        if r["status"] == "differs":
            reasons.append(f"{r['field']}: declared {r['declared']!r}, re-run used "
                           f"{r['used']!r}")
        elif r["status"] == "undeclared":
            reasons.append(f"{r['field']} undeclared: re-run used {r['used']!r} "
                           f"({r['source']})")
    if reasons:
        return {"status": "fail", "reasons": reasons}
    not_run = [r["field"] for r in rows if r["status"] == "not run"]
    unverified = [f"{r['field']} ({r['source']})" for r in rows if r["status"] == "unverified"]
    if not_run or unverified:
        return {"status": "n/a",
                "reasons": ([f"not exercised without a re-run: {', '.join(not_run)}"]
                            if not_run else [])
                + [f"unverified: {u}" for u in unverified]}
    return {"status": "pass", "reasons": ["every procedure field declared and equal"]}
