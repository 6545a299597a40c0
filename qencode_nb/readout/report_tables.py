"""The report's table (:mod:`qencode_nb.readout.report`): one row per executed audit.

:func:`report_table` reads the audit notebooks of a runs folder (those whose
``metadata.qencode_nb.kind`` is "audit", :func:`qencode_nb.readout.manifest.audit_notebooks`;
never guessed from a file name) into one row per run: the
:func:`~qencode_nb.readout.collect.audit_table` columns, the entry's molecule,
mapping, ansatz and tapered qubits, the reasons behind the three tiers, the replay
and integrity, the measured fragility of a robustness study in the same folder
(``robustness_summary.csv``) and the five "Works on my QPU" answers
(:data:`QPU_QUESTIONS`), and where the run's data and code came from (the entry's
folder, file SHA-256 and QEncode release, the toolkit's version and commit, the CPU:
the report's header, :mod:`qencode_nb.readout.report_header`).
:func:`report_notebooks` refuses a folder without audit
notebooks (:class:`ReportError`); runs of one entry are told apart by
:func:`qencode_nb.readout.plots.run_labels`, as on the margin plot.

Failed runs are rows too, with their failure reason.  Units: errors in mHa, margins
as fractions of the threshold, times in s, replay |ΔE| in Ha.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import QencodeNbError, ReportError
from qencode_nb.verdict.qpu_questions import QUESTIONS

#: The "Works on my QPU" questions, in column order (code, environment, documentation,
#: hardware, executability); each answered yes, partly or no
#: (:mod:`qencode_nb.verdict.qpu_questions`, the audit's ``works_on_my_qpu`` record).
QPU_QUESTIONS = QUESTIONS

#: The record an audit writes the answers to, when it does.
QPU_RECORD = "works_on_my_qpu"

#: The three tiers: ``(key, audit_table column, title)``.
TIERS = (("procedure", "tier_procedure", "procedure"),
         ("certification", "tier_certification", "certification"),
         ("bit_identical", "tier_bit_identical", "bit-identical"))

#: Columns of :func:`report_table` beyond :data:`~qencode_nb.readout.collect.AUDIT_COLUMNS`.
#: ``label`` tells runs apart (two runs of one entry get their notebook's tail in
#: brackets, as the margin plot's ticks); ``run`` the notebook's file stem;
#: ``qubits`` the tapered qubit count; ``fragile_measured`` from a robustness study's
#: summary (None without one); ``<column>_reason`` the text shown on hover; ``qpu_<q>`` and
#: ``qpu_<q>_reason`` for each question of :data:`QPU_QUESTIONS`; ``active_space`` the
#: Hamiltonian stage's boundary check ("ok" / "warning", the warning on hover);
#: ``consistency`` its record's status; ``alerts`` "fail" with the alerts on hover, or
#: "pass"; ``not_quoted`` ``{column: reason}`` of the numbers a failed check contradicts
#: (:func:`qencode_nb.verdict.consistency.unquotable`), shown as "not quoted".
#: ``basis``, ``optimizer`` (as declared: "cobyla", "adapt (cobyla inner)") and
#: ``mapping_ansatz`` ("jordan_wigner / hea") describe the entry; ``entry_source`` is
#: the file the run read (an absolute path: never shown, the report scrubs it),
#: ``entry_folder`` that file's folder's name, ``entry_file_sha256`` its bytes' SHA-256
#: (the integrity record), ``release`` the QEncode release whose registry holds that
#: file byte for byte (:func:`qencode_nb.entry.database.release_of`; None: not a
#: release file), ``entry_generator_commit`` the entry's own
#: ``provenance.tool_versions.git_commit``; ``toolkit_version`` and ``toolkit_commit``
#: (``<sha>`` or ``<sha>+dirty``) the qencode-nb that ran the audit and ``cpu`` its
#: CPU model (the ``provenance`` record).
EXTRA_COLUMNS = ("label", "run", "molecule", "basis", "mapping", "ansatz",
                 "mapping_ansatz", "optimizer", "qubits",
                 "tier_procedure_reason", "tier_certification_reason",
                 "tier_bit_identical_reason", "replay_status_reason", "integrity_reason",
                 "fragile_measured", "active_space", "active_space_reason",
                 "hamiltonian_status_reason", "consistency", "consistency_reason",
                 "alerts", "alerts_reason", "not_quoted") + tuple(
                     c for q in QPU_QUESTIONS for c in (f"qpu_{q}", f"qpu_{q}_reason")) + (
                 "entry_source", "entry_folder", "entry_file_sha256", "release",
                 "entry_generator_commit", "toolkit_version", "toolkit_commit", "cpu")


#: What a report looks for in its folder (the error says so).
LOOKED_FOR = ("executed audit notebooks: *.ipynb whose metadata.qencode_nb.kind is "
              "\"audit\" (a sweep's or a robustness study's --out folder)")


def report_notebooks(folder) -> list[Path]:
    """The audit notebooks of ``folder`` (:func:`~qencode_nb.readout.manifest.audit_notebooks`).

    Raises:
        ReportError: ``folder`` is not a folder, or holds no audit notebook (the
            message names the folder and :data:`LOOKED_FOR`; it counts the other
            ``*.ipynb`` found there).
    """
    from qencode_nb.readout.manifest import audit_notebooks

    folder = Path(folder)
    if not folder.is_dir():
        raise ReportError(f"{str(folder)!r} is not a folder; a report reads a folder of "
                          f"{LOOKED_FOR}", folder=folder, looked_for=LOOKED_FOR)
    found = audit_notebooks(folder)
    if not found:
        others = len(list(folder.glob("*.ipynb")))
        raise ReportError(f"folder {str(folder)!r} holds no audit notebook ({others} other "
                          f".ipynb); looked for {LOOKED_FOR}", folder=folder,
                          looked_for=LOOKED_FOR)
    return found


def optimizer_text(optimizer) -> str:
    """An entry's optimiser (:class:`qencode_nb.entry.vocabulary.Optimizer`) as one short
    text: ``cobyla``, ``adapt (cobyla inner)``, ``adam (lr 0.01)``."""
    extra = (f"{optimizer.inner} inner" if optimizer.inner else
             f"lr {optimizer.learning_rate:g}" if optimizer.learning_rate else None)
    return optimizer.name + (f" ({extra})" if extra else "")


def _entry_facts(records: dict, parameters: dict) -> dict:
    """Molecule, basis, mapping, ansatz, optimiser, tapered qubits: from the entry the
    run read (its ``entry_source`` record, else the papermill ``entry`` and ``db``
    parameters), else from the ``fields`` and ``hamiltonian`` records (as declared);
    None where neither says."""
    from qencode_nb.entry import load

    source = records.get("entry_source") or parameters.get("entry")
    try:
        e = load(source, db=parameters.get("db")) if source else None
    except (QencodeNbError, OSError, ValueError, KeyError, TypeError):
        e = None
    if e is not None:
        qubits = e.tapered_num_qubits   # None in a YAML of one's own: the rebuild's count
        return {"molecule": e.name, "basis": e.basis, "mapping": e.mapping,
                "ansatz": e.ansatz, "optimizer": optimizer_text(e.optimizer),
                "qubits": qubits if qubits is not None
                else (records.get("hamiltonian") or {}).get("num_qubits")}
    declared = {f.get("field"): f.get("declared") for f in records.get("fields") or []
                if isinstance(f, dict)}
    return {"molecule": None, "basis": declared.get("basis"),
            "mapping": declared.get("mapping"), "ansatz": declared.get("ansatz"),
            "optimizer": declared.get("optimizer"),
            "qubits": (records.get("hamiltonian") or {}).get("num_qubits")}


def _origin(records: dict, parameters: dict) -> dict:
    """Where the run's entry and code came from (the ``entry_source``, ``integrity``,
    ``entry_provenance`` and ``provenance`` records): the columns ``entry_source`` to
    ``cpu`` of :data:`EXTRA_COLUMNS`; None where the run recorded nothing."""
    from qencode_nb.entry.database import release_of

    source = records.get("entry_source") or parameters.get("entry")
    source = str(source) if source else None
    digest = (records.get("integrity") or {}).get("file_sha256")
    prov = records.get("provenance") if isinstance(records.get("provenance"), dict) else {}
    git = prov.get("git") or {}
    commit = git.get("commit")
    tools = (records.get("entry_provenance") or {}).get("tool_versions") or {}
    return {"entry_source": source,
            "entry_folder": (Path(source).parent.name or None) if source else None,
            "entry_file_sha256": digest,
            "release": release_of(Path(source).name, digest) if source and digest else None,
            "entry_generator_commit": tools.get("git_commit"),
            "toolkit_version": (prov.get("packages") or {}).get("qencode-nb"),
            "toolkit_commit": (commit + ("+dirty" if git.get("dirty") else ""))
            if commit else None,
            "cpu": prov.get("cpu")}


def _replay_reason(rep: dict | None) -> str | None:
    if not rep:
        return None
    if rep.get("abs_delta_ha") is None:
        return rep.get("reason")
    text = (f"|ΔE| {rep['abs_delta_ha']:.3g} Ha against the published energy, tolerance "
            f"{rep.get('tolerance_ha', 0):g} Ha; {rep.get('engine')} on the "
            f"{rep.get('hamiltonian')} Hamiltonian")
    return text + ("; bit-identical" if rep.get("identical") else "")


def qpu_answers(records: dict) -> dict:
    """``{question: (answer, reason)}`` for :data:`QPU_QUESTIONS`: the audit's
    ``works_on_my_qpu`` record when it wrote one, else
    :func:`qencode_nb.verdict.qpu_questions.answers` of its records."""
    given = records.get(QPU_RECORD)
    if not isinstance(given, list):
        from qencode_nb.verdict.qpu_questions import answers

        given = answers(records)
    return {a.get("question"): (a.get("answer"), a.get("reason"))
            for a in given if isinstance(a, dict)}


def _extras(path: Path, failure: str | None) -> dict:
    """The :data:`EXTRA_COLUMNS` of one run (without ``label`` and
    ``fragile_measured``), from its notebook's records."""
    import nbformat

    from qencode_nb.notebook.record import iter_records

    nb = nbformat.read(str(path), as_version=4)
    r = dict(iter_records(nb))
    parameters = (nb.metadata.get("papermill") or {}).get("parameters") or {}
    row = {"run": path.stem, **_entry_facts(r, parameters), **_origin(r, parameters)}
    row["mapping_ansatz"] = " / ".join(str(row.get(k) or "?") for k in ("mapping", "ansatz")) \
        if row.get("mapping") or row.get("ansatz") else None
    tiers = r.get("tiers") or {}
    for key, column, _ in TIERS:
        reasons = (tiers.get(key) or {}).get("reasons")
        row[f"{column}_reason"] = "; ".join(map(str, reasons)) if reasons else \
            (None if tiers else failure)
    row["replay_status_reason"] = _replay_reason(r.get("replay")) or failure
    integ = r.get("integrity") or {}
    row["integrity_reason"] = "; ".join(integ.get("reasons") or []) or (
        f"SHA-256 recomputed by QEncode's rule: {integ.get('recomputed')}; signature "
        f"{integ.get('signature')}" if integ else failure)
    ham = r.get("hamiltonian") if isinstance(r.get("hamiltonian"), dict) else {}
    row["hamiltonian_status_reason"] = ham.get("reason") or failure
    cons = r.get("consistency") if isinstance(r.get("consistency"), dict) else {}
    row["consistency"] = cons.get("status")
    row["consistency_reason"] = "; ".join(map(str, cons.get("reasons") or [])) or (
        None if cons else failure)
    alerts = r.get("alerts")
    row["alerts"] = None if alerts is None else ("fail" if alerts else "pass")
    row["alerts_reason"] = ("; ".join(map(str, alerts)) if alerts else
                            "none" if alerts is not None else failure)
    from qencode_nb.verdict.consistency import unquotable

    row["not_quoted"] = unquotable(r) or None
    boundary = ham.get("active_space_boundary") or {}
    row["active_space"] = boundary.get("status")
    row["active_space_reason"] = boundary.get("warning") or (
        "no orbital pair across the boundary within "
        f"{boundary.get('tolerance_ha')} Ha" if boundary else failure)
    for q, (answer, reason) in qpu_answers(r).items():
        if q in QPU_QUESTIONS:
            row[f"qpu_{q}"], row[f"qpu_{q}_reason"] = answer, reason
    return row


def measured_fragility(folder) -> dict | None:
    """``{entry: fragile_measured}`` from a robustness study's ``robustness_summary.csv``
    in ``folder`` (True, False, or None where no ok run had a certification); None when
    there is no such file."""
    import pandas as pd

    from qencode_nb.readout.robustness_tables import as_flag

    path = Path(folder) / "robustness_summary.csv"
    if not path.is_file():
        return None
    summary = pd.read_csv(path)
    return {str(e): as_flag(v) for e, v in zip(summary["entry"], summary["fragile_measured"])}


def _fragility_of(entry_id, run: str, measured: dict):
    for entry, value in measured.items():
        if entry == entry_id or run == entry or run.startswith(entry + "__"):
            return value
    return None


def report_table(folder):
    """One row per audit notebook of ``folder``, in file-name order: the
    :func:`~qencode_nb.readout.collect.audit_table` columns (errors in mHa, margins as
    fractions, ``seconds`` the wall time in s, values as audit_table gives them) then
    :data:`EXTRA_COLUMNS`.  Failed runs are rows, ``status`` "failed" with ``failure``.

    Raises:
        ReportError: no folder, or no audit notebook in it (:func:`report_notebooks`).
    """
    import pandas as pd

    from qencode_nb.readout.collect import AUDIT_COLUMNS, audit_table

    paths = report_notebooks(folder)
    table = audit_table(paths)
    extras = pd.DataFrame([_extras(p, f) for p, f in zip(paths, table["failure"])],
                          dtype=object, columns=[c for c in EXTRA_COLUMNS
                                   if c not in ("label", "fragile_measured")])
    table = pd.concat([table, extras], axis=1)
    for i, not_quoted in enumerate(table["not_quoted"]):   # never shown as a number
        for column in (not_quoted or {}):
            if column in table.columns:
                table[column] = table[column].astype(object)
                table.at[i, column] = None
    from qencode_nb.readout.plots import run_labels

    table["label"] = run_labels(table["entry_id"], table["notebook"])
    measured = measured_fragility(folder)
    table["fragile_measured"] = None if measured is None else [
        _fragility_of(e, r, measured) for e, r in zip(table["entry_id"], table["run"])]
    return table[list(AUDIT_COLUMNS) + list(EXTRA_COLUMNS)]
