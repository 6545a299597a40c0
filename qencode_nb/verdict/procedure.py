"""Tier 1, procedure: the entry's declared procedure against what the audit used.

DESIGN.md, "What reproducible means here", tier 1: every procedure field is
declared in the entry and the re-run used exactly the declared value.  A
field the entry does not declare is listed as ``undeclared`` with the value
used and where that value came from (:data:`qencode_nb.rules.GENERATOR_DEFAULTS`);
it is never silently defaulted.  Tier 1 passes only when every field is
declared and equal.

The fields are the table :data:`qencode_nb.entry.fields.FIELDS`; this module
collects what the stages used (:func:`used`), compares (:func:`table`) and
decides the tier (:func:`tier`); :func:`evaluate` returns a :class:`Procedure`.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.entry.fields import FIELDS, RUN_FIELDS, applies, declared

#: Row statuses.  ``equal`` and ``not used`` pass; ``differs`` and
#: ``undeclared`` fail tier 1; ``not run`` (replay mode) and ``unverified``
#: (the value used cannot be established, e.g. the source of a stored
#: Hamiltonian that cannot be inferred) make it n/a.
STATUSES = ("equal", "differs", "undeclared", "not used", "not run", "unverified")


@dataclass
class Procedure:
    """Tier 1 of one audit.

    Attributes:
        fields: the table rows (:func:`table`), one per procedure field.
        tier: ``{"status": "pass"|"fail"|"n/a", "reasons": [...]}``.
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
    Z2 sectors), the Hamiltonian check (the source inferred from the
    fingerprint when the stored Hamiltonian is used) and the re-run's
    recorded configuration (what the optimiser received).

    Args:
        rebuilt: ``(ChemSummary, TaperResult)`` of the rebuild.
        hamiltonian: the Hamiltonian check record (dict) or None.
        problem: the :class:`~qencode_nb.rerun.problem.Problem`.
        rerun: the :class:`~qencode_nb.rerun.rerun.Rerun`, or None (no re-run).

    Returns:
        ``{field: {"value", "source"[, "not_used"|"unverified"]}}`` for
        :func:`table`; run fields are absent without a re-run.
    """
    chem, _ = rebuilt
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
        h = hamiltonian or {}
        inferred = h.get("hamiltonian_source_inferred")
        return {"value": inferred, "unverified": inferred is None,
                "source": "stored Hamiltonian; source inferred from "
                          + (h.get("inference_basis") or "the Hamiltonian check")}
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
        "source", "status"}``; ``declared`` is None for an undeclared field,
        ``status`` one of :data:`STATUSES`.
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
