"""The report table's columns and cells (``qencode-nb report``,
:mod:`qencode_nb.readout.report`).

:data:`COLUMNS` lists every column the page can show, ``compact`` marking the
default set (entry, molecule, basis, mapping / ansatz, optimiser, the errors and
movement in mHa, the margins in %, the tiers, the certification change, the verdict);
the rest appear under the page's "all columns" button.  :func:`cell` draws one cell:
errors and movement in mHa and margins in per cent exactly as the verdict card writes
them (:func:`qencode_nb.verdict.card_text.fmt_mha`,
:func:`~qencode_nb.verdict.card_text.fmt_margin`), every cell keeping its unrounded value for sorting and the CSV.  :func:`constant_columns`
finds the columns that read the same on every row: the page names them once, in its
header, and shows them only under "all columns".
"""

from __future__ import annotations

import math
from typing import NamedTuple

from qencode_nb.readout.report_header import short_commit
from qencode_nb.readout.report_tables import QPU_QUESTIONS
from qencode_nb.verdict.card_text import fmt_margin, fmt_mha


class Column(NamedTuple):
    """One column of the page.

    ``kind`` says how a cell is drawn: "run" (the entry's label, a link to its
    notebook page), "text", "verdict" (the verdict line without the entry id; a failed
    run's reason), "mha" (mHa, :func:`~qencode_nb.verdict.card_text.fmt_mha`),
    "margin" (a fraction shown in %, :func:`~qencode_nb.verdict.card_text.fmt_margin`),
    a number format ("d", "1f", "4g"), "commit" (a git commit's first 7 hex digits,
    :func:`~qencode_nb.readout.report_header.short_commit`), "badge" (a status with its
    ``<key>_reason`` on hover), "status", "flag" (True/False as a yes/no badge).
    ``description`` is the header's hover text (units); ``compact``: in the default
    set."""

    key: str
    header: str
    group: str
    kind: str
    description: str
    compact: bool = False

    @property
    def numeric(self) -> bool:
        """A column of numbers (right-aligned, tabular figures)."""
        return self.kind in ("mha", "margin", "d", "1f", "4g")


#: The table's columns, in order; the first one stays in view when the table scrolls.
COLUMNS = (
    Column("label", "entry", "", "run", "the entry's short name (two runs of one entry:"
           " the rest of the notebook's name in brackets); links to the executed notebook",
           True),
    Column("molecule", "molecule", "declared", "text", "problem.name", True),
    Column("basis", "basis", "declared", "text", "problem.basis", True),
    Column("mapping_ansatz", "mapping / ansatz", "declared", "text", "encoding.mapping and "
           "encoding.ansatz_type", True),
    Column("optimizer", "optimiser", "declared", "text", "run_config.optimizer (ADAPT: its "
           "inner optimiser)", True),
    Column("qubits", "qubits", "declared", "d", "qubits after Z2 tapering"),
    Column("published_error_mha", "pub.", "error (mHa)", "mha", "published error "
           "|E - E_exact| (mHa)", True),
    Column("error_mha", "regen.", "error (mHa)", "mha", "regenerated error of the re-run "
           "(mHa)", True),
    Column("movement_mha", "movement", "error (mHa)", "mha", "regenerated minus published "
           "error (mHa): negative when the re-run came closer to the exact energy", True),
    Column("threshold_mha", "threshold", "error (mHa)", "4g", "certification threshold "
           "(results.quality.gap_threshold, mHa)"),
    Column("margin_published", "pub.", "margin (%)", "margin", "published margin "
           "(threshold - error) / threshold, in % of the threshold", True),
    Column("margin_regenerated", "regen.", "margin (%)", "margin", "regenerated margin "
           "(threshold - error) / threshold, in % of the threshold", True),
    Column("tier_procedure", "procedure", "tiers", "badge", "tier 1: every procedure field "
           "declared and used as declared", True),
    Column("tier_certification", "certification", "tiers", "badge", "tier 2: regenerated "
           "error below the threshold", True),
    Column("tier_bit_identical", "bit-identical", "tiers", "badge", "tier 3: re-run energy "
           "equal to the published one to the last bit", True),
    Column("certification_change", "change", "certification", "text", "certification "
           "lost or gained by the re-run against the published one", True),
    Column("certified", "certified", "certification", "flag", "regenerated error < "
           "threshold"),
    Column("fragile", "fragile", "certification", "flag", "certified with regenerated "
           "margin < 20 % (inferred)"),
    Column("fragile_measured", "measured", "certification", "flag", "fragile_measured: "
           "certification changed under some perturbation of a robustness study"),
    Column("verdict", "verdict", "verdict", "verdict", "the audit's one-line verdict (a "
           "failed run: its reason)", True),
    Column("replay_status", "replay", "checks", "badge", "stored parameters on the stored "
           "Hamiltonian vs the published energy (1e-9 Ha)"),
    Column("integrity", "integrity", "checks", "badge", "SHA-256 recomputed by QEncode's "
           "rule"),
    Column("hamiltonian_status", "Hamiltonian", "checks", "badge", "the stored terms equal "
           "a rebuilt generator path (pass), none (fail), or CASSCF off the reference "
           "kernels (unverified)"),
    Column("consistency", "consistency", "checks", "badge", "the published numbers finite "
           "and consistent with each other and with the rebuild"),
    Column("alerts", "alerts", "checks", "badge", "integrity, Hamiltonian, replay or "
           "consistency failures (exit 3 from qencode-nb audit)"),
    Column("active_space", "active space", "checks", "badge", "the active space's "
           "boundary: 'warning' when it splits near-degenerate RHF orbitals (< 1e-4 Ha)"),
    Column("status", "status", "run", "status", "done, or failed with the reason"),
    Column("seconds", "time (s)", "run", "1f", "wall time of the run (s)"),
    Column("numeric_fingerprint", "fingerprint", "run", "text", "the numeric fingerprint's "
           "short hash (kernels, CPU, libraries)"),
    Column("stack", "stack", "run", "text", "the package stack that ran (current, or a "
           "stack's name such as the entry's recorded one, v3-8ab2c6341a79)"),
    Column("toolkit_commit", "qencode-nb commit", "run", "commit", "the git commit of the "
           "qencode-nb that ran the audit"),
) + tuple(Column(f"qpu_{q}", q, "Works on my QPU", "badge", f"Works on my QPU: {q}")
          for q in QPU_QUESTIONS)

#: Badge colour of a value (CSS class ``b-<name>``); anything else is "na".
BADGE_CLASS = {"pass": "ok", "yes": "ok", "done": "ok", "fail": "bad", "no": "bad",
               "failed": "bad", "inconsistent": "bad", "partly": "warn",
               "warning": "warn", "incomplete": "warn", "unverified": "warn", "ok": "ok"}

#: What each badge colour means (the page's colour legend), in the legend's order.
BADGE_MEANING = (("ok", "pass, yes, done: holds"),
                 ("warn", "incomplete, partly, unverified, warning; fragile: holds with "
                          "a reservation (hover for it)"),
                 ("bad", "fail, no, failed: does not hold"),
                 ("na", "n/a, unknown or none recorded"))


def missing(value) -> bool:
    """True for a value the table does not have (None, NaN, "")."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _hover(row, key: str, kind: str):
    """The hover text of a cell (the ``title`` attribute)."""
    if kind == "status":
        return row.get("failure") if row.get("status") != "done" else "the run recorded done"
    if kind == "badge":
        reason = row.get(f"{key}_reason")
        return None if missing(reason) else str(reason)
    if kind == "run":
        return f"{row.get('entry_id') or '(no entry id recorded)'}; notebook {row['notebook']}"
    if kind == "verdict":
        return row.get("failure") if row.get("status") != "done" else row.get("verdict")
    not_quoted = row.get("not_quoted") or {}
    if isinstance(not_quoted, dict) and key in not_quoted:
        return f"not quoted: {not_quoted[key]}"
    if key == "certified" and not missing(row.get("error_mha")):
        return (f"regenerated error {row['error_mha']:.6g} mHa against the threshold "
                f"{row.get('threshold_mha')} mHa")
    if key == "fragile_measured":
        return "a robustness study's certification differs from the published one under " \
               "some perturbation (robustness_summary.csv)"
    if kind in ("flag", "mha", "margin") and missing(row.get(key)):
        return "no re-run" if row.get("status") == "done" else row.get("failure")
    return None


def cell(row, column: Column) -> dict:
    """``{"key", "text", "value", "title", "badge", "failure"}`` of one table cell;
    ``value`` is what the column sorts by and the CSV holds (the unrounded number, or
    the text; "" when missing); ``failure`` a failed run's reason (verdict column)."""
    key, kind = column.key, column.kind
    value = row.get(key)
    out = {"key": key, "title": _hover(row, key, kind), "badge": None, "failure": None}
    if kind == "verdict" and row.get("status") != "done":
        return {**out, "text": str(row.get("status")), "value": str(row.get("status")),
                "badge": BADGE_CLASS.get(str(row.get("status")), "bad"),
                "failure": row.get("failure")}
    if missing(value) and out["title"] and out["title"].startswith("not quoted: "):
        return {**out, "text": "not quoted", "value": ""}
    if missing(value):
        return {**out, "text": "—", "value": "", "badge": "na" if kind in (
            "badge", "flag", "status") else None}
    if kind == "flag":
        flag = value if isinstance(value, bool) else str(value).lower() == "true"
        text = "yes" if flag else "no"
        return {**out, "text": text, "value": str(flag).lower(),
                "badge": ("warn" if flag else "ok") if key.startswith("fragile")
                else BADGE_CLASS[text]}
    if kind in ("badge", "status"):
        return {**out, "text": str(value), "value": str(value),
                "badge": BADGE_CLASS.get(str(value), "na")}
    if kind == "verdict":
        text = str(value).removeprefix(f"{row.get('entry_id')}: ")
        return {**out, "text": text, "value": text}
    if kind in ("text", "run"):
        return {**out, "text": str(value), "value": str(value)}
    if kind == "commit":
        return {**out, "text": short_commit(value), "value": str(value)}
    number = float(value)
    text = (fmt_mha(number) if kind == "mha" else fmt_margin(number) if kind == "margin"
            else str(int(number)) if kind == "d" else format(number, "." + kind))
    return {**out, "text": text, "value": repr(number)}


def constant_columns(rows: list[dict], columns) -> list[str]:
    """The keys of ``columns`` whose cells (``rows[i]["cells"]``, :func:`cell`) read the
    same on every row (text and colour), for two rows or more; never the first column
    (the row's name)."""
    if len(rows) < 2:
        return []
    out = []
    for i, column in enumerate(columns):
        if i == 0:
            continue
        seen = {(r["cells"][i]["text"], r["cells"][i]["badge"]) for r in rows}
        if len(seen) == 1:
            out.append(column.key)
    return out


def groups(columns, cells: dict | None = None) -> list[list]:
    """``[[group, span], ...]``: the group header over consecutive ``columns``; with
    ``cells`` (``{key: cell}``), ``[[group, [(column, cell), ...]], ...]`` instead."""
    out: list[list] = []
    for column in columns:
        item = (column, cells[column.key]) if cells is not None else None
        if out and out[-1][0] == column.group:
            out[-1][1] = out[-1][1] + [item] if cells is not None else out[-1][1] + 1
        else:
            out.append([column.group, [item] if cells is not None else 1])
    return out
