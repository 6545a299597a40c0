"""What a sweep runs: its targets (folders, entry files, bundled names) expanded into
entry files, and the named subsets of a database (``--subset``).

:func:`resolve_targets` and :func:`select_subset` are what :func:`qencode_nb.batch.sweep.sweep`,
the record sweep (:mod:`qencode_nb.batch.history`) and the robustness study
(:mod:`qencode_nb.studies.robustness`) call before anything is written; a typo is refused
naming the closest names.  :mod:`qencode_nb.batch.sweep` re-exports them.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.errors import EntryError


def resolve_targets(items) -> list[str]:
    """Expand sweep targets: a folder gives its ``*.json`` entry files (sorted, release
    metadata left out: :func:`qencode_nb.entry.release_files.entry_files`), a file
    itself, anything else a bundled ``params/`` name.

    Raises:
        EntryError: a folder with no JSON entry, a path that does not exist, or a name
            that is not bundled ("did you mean ...",
            :func:`qencode_nb.entry.lookup.check_reference`).
    """
    from qencode_nb.entry.lookup import check_reference
    from qencode_nb.entry.release_files import entry_files
    from qencode_nb.paths import PARAMS_DIR

    out = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            out += [str(p.resolve()) for p in entry_files(item, field="targets")]
        elif path.is_file():
            out.append(str(path.resolve()))
        elif (PARAMS_DIR / f"{item}.yaml").is_file():
            out.append(str(item))
        else:   # "did you mean ..." for a name, the closest files for a path
            check_reference(item, field="targets", folders=True)
    return out


#: Named subsets of a database, as entry-name prefixes (``--subset``).  ``ci``:
#: fast entries covering HEA (COBYLA, 1 and 10 restarts), UCCSD (JW, BK, parity
#: with the tapering-constant quirk, 10/10 restarts) and ADAPT (QNode engine).
SUBSETS = {
    "ci": ("H2_ccpvdz_JW_HEA_v4", "H2_ccpvdz_BK_UCCSD_v4", "HF_ccpvdz_PAR_HEA_v4",
           "LiH_ccpvdz_PAR_HEA_v4", "BeH2_ccpvdz_PAR_UCCSD_v4", "H4_ccpvdz_JW_ADAPT_v4",
           "H2CO_ccpvdz_JW_ADAPT_v4"),
}


def select_subset(targets: list[str], subset: str | None) -> list[str]:
    """Keep the targets of a named subset (:data:`SUBSETS`); None keeps all.

    Raises:
        EntryError: an unknown subset name (lists the accepted ones), or a
            subset entry that is missing from the targets.
    """
    if subset is None:
        return targets
    if subset not in SUBSETS:
        raise EntryError(f"{subset!r} is not accepted; accepted: {', '.join(SUBSETS)}",
                         field="subset")
    kept, missing = [], []
    for prefix in SUBSETS[subset]:
        hits = [t for t in targets if Path(t).name.startswith(prefix)]
        (kept.extend(hits) if hits else missing.append(prefix))
    if missing:
        raise EntryError(f"{subset!r} needs {', '.join(missing)}, not among the "
                         "targets (pass the database folder)", field="subset")
    return kept
