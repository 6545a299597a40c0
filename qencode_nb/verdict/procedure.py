"""Tier 1, procedure: the entry's declared procedure against what the audit used.

docs/explanations/tiers.md, tier 1: every procedure field is
declared in the entry and the re-run used exactly the declared value.  A
field the entry does not declare is listed as ``undeclared`` with the value
used and where that value came from (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`);
it is never silently defaulted.  Tier 1 passes only when every field is
declared and equal.

Tier 1 has three states: ``pass``; ``incomplete`` when some field
could not be checked, because QEncode schema 4.0.0 cannot record it
(``early_stop``: the generator's default was used, with its source) or because
this mode does not exercise it (the run fields in replay mode) or because the
value used cannot be established; ``fail`` when a declared value was not the
one used, or the entry omits a field the schema records.  Each row of the table
says its ``effect`` on the tier and, unless it is ``equal``, the full ``reason``.

The fields are the table :data:`qencode_nb.entry.fields.FIELDS`; this module
collects what the stages used (:func:`used`), compares (:func:`table`) and
decides the tier (:func:`tier`); :func:`evaluate` returns a :class:`Procedure`.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.entry.fields import FIELDS, RUN_FIELDS, applies, declared, unrecordable

#: Row statuses.  ``equal`` and ``not used`` pass; ``differs`` fails tier 1;
#: ``undeclared`` fails it when QEncode schema 4.0.0 records the field and makes it
#: ``incomplete`` when the schema cannot (:data:`qencode_nb.entry.fields.UNRECORDABLE`);
#: ``not run`` (replay mode) and ``unverified`` (the value used cannot be
#: established, e.g. the source of a stored Hamiltonian that cannot be inferred)
#: make it ``incomplete``.
STATUSES = ("equal", "differs", "undeclared", "not used", "not run", "unverified")

#: A row's ``effect`` on tier 1, and the tier's own status values (besides "n/a",
#: tier 1 not evaluated): the worst effect of its rows.
EFFECTS = ("pass", "incomplete", "fail")

#: Why a field can be left out without failing tier 1 (the row's reason).
UNRECORDABLE_WHY = "QEncode schema 4.0.0 cannot record it"


@dataclass
class Procedure:
    """Tier 1 of one audit.

    Attributes:
        fields: the table rows (:func:`table`), one per procedure field.
        tier: ``{"status": "pass"|"incomplete"|"fail", "reasons": [...]}`` (:func:`tier`).
    """

    fields: list
    tier: dict

    def to_record(self) -> dict:
        """``{"fields", "tier"}`` (the ``fields`` record is ``fields``)."""
        return {"fields": self.fields, "tier": self.tier}


#: Where each stage's used value comes from, as the table's ``source`` column.
SOURCES = {"rebuild": "PySCF rebuild input", "rerun": "re-run configuration"}


def used(rebuilt, hamiltonian, problem, rerun) -> dict:
    """What the audit's stages actually used, per tier-1 field.

    Sources, by each field's ``used_by`` (:data:`qencode_nb.entry.fields.FIELDS`):
    the rebuild inputs (``ChemSummary.inputs``, the arguments the PySCF build
    ran with, also its cache key), the problem that was built (ansatz, reps,
    Z2 sectors), the Hamiltonian check (the path the stored terms are
    proven equal to by rebuild, when the stored Hamiltonian is used) and the re-run's
    recorded configuration (what the optimiser received).

    Args:
        rebuilt: the :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt` problem.
        hamiltonian: the :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`, or None.
        problem: the :class:`~qencode_nb.rerun.problem.Problem`.
        rerun: the :class:`~qencode_nb.rerun.rerun.Rerun`, or None (no re-run).

    Returns:
        ``{field: {"value", "source"[, "not_used"|"unverified"]}}`` for
        :func:`table`; run fields are absent without a re-run.
    """
    chem = rebuilt.chemistry
    inputs = chem.inputs or {}
    cfg = None if rerun is None else rerun.config
    problem_values = {"tapering_sectors": (problem.z2_sectors,
                                           "Z2 sectors of the rebuilt tapering"),
                      "ansatz": (problem.ansatz, "ansatz built"),
                      "reps": (problem.reps, "ansatz built")}
    out = {}
    for f in FIELDS:
        if f.used_by == "rebuild":
            if f.config_key in inputs:
                out[f.name] = {"value": inputs[f.config_key], "source": SOURCES["rebuild"]}
        elif f.used_by == "problem":
            if f.name == "reps" and problem.ansatz != "hea":
                continue
            value, source = problem_values[f.name]
            out[f.name] = {"value": value, "source": source}
        elif f.used_by == "hamiltonian":
            out[f.name] = _hamiltonian_source_used(inputs, hamiltonian, problem)
        elif cfg is not None:
            if f.name.startswith("adapt.") and not problem.is_adapt:
                continue
            if f.name == "restarts_requested" and problem.is_adapt:
                out[f.name] = {"value": None, "not_used": True,
                               "source": "the generator's ADAPT runs once: multistart is "
                                         "not used"}
                continue
            out[f.name] = {"value": cfg[f.config_key], "source": SOURCES["rerun"]}
    return out


def _hamiltonian_source_used(inputs: dict, hamiltonian, problem) -> dict:
    if problem.hamiltonian_origin == "stored":
        proven = None if hamiltonian is None else hamiltonian.hamiltonian_source
        basis = None if hamiltonian is None else hamiltonian.reason
        return {"value": proven, "unverified": proven is None,
                "source": "stored Hamiltonian; its path proven by rebuild: "
                          + (basis or "the Hamiltonian check")}
    return {"value": inputs.get("hamiltonian_source"),
            "source": "Hamiltonian rebuilt by qencode-nb"}


def evaluate(entry, rebuilt, hamiltonian, problem, rerun, mode: str = "full") -> Procedure:
    """Tier 1 of an audit: :func:`used` -> :func:`table` -> :func:`tier`.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt, hamiltonian, problem, rerun: as for :func:`used`.
        mode: the audit mode ("full", "replay", "rerun").
    """
    rows = table(entry, used(rebuilt, hamiltonian, problem, rerun), mode)
    return Procedure(fields=rows, tier=tier(rows))


def _equal(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return float(a) == float(b)
        except (TypeError, ValueError):
            return False
    return a == b


def _row_outcome(row: dict, f, entry, mode: str) -> tuple[str, str | None]:
    """``(effect, reason)`` of one table row; the reason in full (None when equal)."""
    status, name = row["status"], row["field"]
    used, source = row["used"], row["source"]
    if status == "equal":
        return "pass", None
    if status == "not used":
        return "pass", f"not used by the recorded procedure: {source}"
    if status == "differs":
        return "fail", f"declared {row['declared']!r}, used {used!r} ({source})"
    if status == "not run":
        return "incomplete", (f"declared {row['declared']!r}; not exercised (mode={mode}): "
                              "only a re-run uses it")
    if status == "unverified":
        return "incomplete", f"the value used cannot be established ({source})"
    why = entry.undeclared.get(name) or {}         # undeclared
    default, origin = why.get("used"), why.get("source") or source
    if name in unrecordable(entry):
        version = getattr(entry, "schema_version", "4.0.0")
        cannot = UNRECORDABLE_WHY.replace("4.0.0", version) + (
            f"; a params/ YAML declares it as {f.yaml_path}"
            if entry.kind == "params-yaml" else "")
        if used is None:     # not exercised in this mode
            return "incomplete", (f"undeclared ({cannot}) and not exercised (mode={mode}): "
                                  f"a re-run uses the generator default {default!r} "
                                  f"({origin})")
        return "incomplete", (f"undeclared ({cannot}): the generator default {used!r} was "
                              f"used ({origin})")
    if getattr(entry, "is_own", False):      # its schema requires only the procedure
        return "incomplete", (f"undeclared (a YAML entry of one's own may leave "
                              f"{row['declared_in']} out, issue 23): "
                              + (f"the generator default {used!r} was used ({origin})"
                                 if used is not None else
                                 f"not exercised (mode={mode}); a re-run uses {default!r} "
                                 f"({origin})"))
    return "fail", (f"undeclared: the entry omits {row['declared_in']}, which the schema "
                    "records; " + (f"the re-run used {used!r} ({origin})" if used is not None
                                   else f"not exercised (mode={mode}); a re-run uses "
                                        f"{default!r} ({origin})"))


def _tier_reason(row: dict) -> str | None:
    """A row's line among tier 1's reasons (None for a passing row)."""
    status, name, used = row["status"], row["field"], row.get("used")
    if effect(row) == "pass":
        return None
    if status == "differs":
        return f"{name}: declared {row['declared']!r}, re-run used {used!r}"
    if status == "undeclared" and effect(row) == "fail":
        return f"{name} undeclared: re-run used {used!r} ({row.get('source')})"
    if status == "unverified":
        return f"unverified: {name} ({row.get('source')})"
    return f"{name} {row.get('reason') or status + ' (' + str(row.get('source')) + ')'}"


def table(entry, used: dict, mode: str = "full") -> list[dict]:
    """The tier-1 table, one row per procedure field that applies to the entry.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        used: ``{field: {"value": v, "source": text}}`` as collected by
            :func:`used`; a field absent from it was
            not exercised (``not run``); ``{"value": None, "source": why,
            "not_used": True}`` marks a field the recorded procedure ignores
            (e.g. restarts for ADAPT).
        mode: the audit mode; in "replay" the run fields are ``not run``.

    Returns:
        A list of dicts ``{"field", "declared_in", "declared", "used",
        "source", "status", "effect", "reason"}``; ``declared`` is None for an
        undeclared field, ``status`` one of :data:`STATUSES`, ``effect`` one of
        :data:`EFFECTS`, ``reason`` the full sentence of a row that is not
        ``equal`` (None when it is).
    """
    decl = declared(entry)
    rows = []
    for f in FIELDS:
        if not applies(f, entry):
            continue
        name = f.name
        where = f.json_path if entry.kind == "qencode-json" else f.yaml_path
        u = used.get(name)
        row = {"field": name, "declared_in": where, "declared": decl.get(name),
               "used": None if u is None else u.get("value"),
               "source": None if u is None else u.get("source")}
        not_run = u is None or (mode == "replay" and name in RUN_FIELDS)
        if name not in decl:       # undeclared whether or not it ran
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
        row["effect"], row["reason"] = _row_outcome(row, f, entry, mode)
        rows.append(row)
    return rows


def tier(rows: list[dict]) -> dict:
    """Tier 1 from :func:`table` rows: ``{"status": pass|incomplete|fail, "reasons": [...]}``.

    ``fail`` when a row's effect is ``fail`` (a ``differs`` row, or an
    ``undeclared`` field the schema records); else ``incomplete`` when a row's
    effect is ``incomplete`` (a field QEncode schema 4.0.0 cannot record, run at
    the generator's default; fields this mode does not exercise; a value used that
    cannot be established); else ``pass``.  The reasons are every failing row's,
    then every incomplete row's (the fields not exercised in one line), in full.
    """
    failing = [_tier_reason(r) for r in rows if effect(r) == "fail"]
    incomplete = [_tier_reason(r) for r in rows
                  if effect(r) == "incomplete" and r["status"] != "not run"]
    not_run = [r["field"] for r in rows if r["status"] == "not run"]
    if not_run:
        incomplete.append(f"not exercised without a re-run: {', '.join(not_run)}")
    if failing:
        return {"status": "fail", "reasons": failing + incomplete}
    if incomplete:
        return {"status": "incomplete", "reasons": incomplete}
    return {"status": "pass", "reasons": ["every procedure field declared and equal"]}


def effect(row: dict) -> str:
    """A table row's effect on tier 1 (:data:`EFFECTS`): its ``effect``, or for a
    row recorded before rows had one, from its status (``equal``/``not used``
    pass, ``differs``/``undeclared`` fail, others incomplete)."""
    if row.get("effect") in EFFECTS:
        return row["effect"]
    return {"equal": "pass", "not used": "pass", "differs": "fail",
            "undeclared": "fail"}.get(row.get("status"), "incomplete")
