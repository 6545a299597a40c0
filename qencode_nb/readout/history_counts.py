"""A record sweep's table read back per release: audited, refused, replays, certification.

A sweep over a benchmark's whole record (:mod:`qencode_nb.batch.history`) writes one
``summary.csv`` whose ``record_release`` column names each run's release group
(``v1`` ... ``v4``, ``v2/trusted``).  :func:`release_counts` counts, per release:

- ``entries``: runs; ``audited``: runs that completed (status "done");
- ``refused``: runs stopped when the entry was read (a failure of the ``load`` stage,
  an ``EntryError``: a schema no reader knows, a structure fault), ``refused_reasons``
  their distinct reasons without the file path; ``failed``: runs that failed later;
- ``replay_pass`` / ``replay_fail`` / ``replay_na``: the completed audits' replay of the
  stored parameters (:func:`qencode_nb.readout.counts.replay_counts`);
- ``published_certified``: completed audits of entries published as certified;
  ``certification_held`` / ``certification_lost``: of those, the ones whose
  certification the audit reproduced / contradicted (:func:`certification_held`);
  ``certification_unchecked``: the ones the audit could not check (a replay ``n/a``:
  schemas 1.0.0 and 2.0.0 store no parameters this toolkit replays).

Pure pandas on the table: no run is started.
"""

from __future__ import annotations

import re

#: The column of a record sweep's ``summary.csv`` naming each run's release group.
RELEASE_COLUMN = "record_release"

#: The columns of :func:`release_counts`, in order.
COUNT_COLUMNS = ("release", "entries", "audited", "refused", "failed", "replay_pass",
                 "replay_fail", "replay_na", "published_certified", "certification_held",
                 "certification_lost", "certification_unchecked", "refused_reasons")

#: A failure of the ``load`` stage: the entry was refused when read (stage: type: message).
REFUSED = re.compile(r"^load: EntryError: (?:[^:]*\.json: )?(?P<reason>.*)$", re.S)


def refusal(failure) -> str | None:
    """The reason an entry was refused when read (the ``load`` stage's EntryError,
    without the file's path), or None for any other failure or none."""
    if not isinstance(failure, str):
        return None
    match = REFUSED.match(failure.strip())
    return match.group("reason") if match else None


def certification_held(row) -> bool | None:
    """Whether an audit reproduced a published certification.

    With a re-run (tier 2 ``certification`` reads pass or fail, modes full and rerun):
    the regenerated error is under the threshold (``certified``).  Replay only (mode
    replay): the stored parameters, replayed, give the published energy
    (``replay_status`` pass), so the published error stands.  None when the entry was
    not published as certified, or when neither check ran (docs/explanations/tiers.md,
    docs/explanations/replay.md).
    """
    if row.get("published_certified") is not True and row.get("published_certified") != "True":
        return None
    if row.get("tier_certification") in ("pass", "fail"):
        return row.get("certified") in (True, "True")
    if row.get("replay_status") in ("pass", "fail"):
        return row.get("replay_status") == "pass"
    return None


def release_counts(table, order=None):
    """Per-release counts of a record sweep's table (:data:`COUNT_COLUMNS`).

    Args:
        table: a record sweep's summary (rows of
            :func:`qencode_nb.readout.collect.audit_table` with :data:`RELEASE_COLUMN`).
        order: release labels in the order to list them (default: as first seen).

    Returns:
        A DataFrame, one row per release and a last row ``all`` summing the counts
        (``refused_reasons``: the distinct reasons joined by " | ").

    Raises:
        KeyError: the table has no :data:`RELEASE_COLUMN` (not a record sweep's).
    """
    import pandas as pd

    releases = list(order) if order is not None else list(dict.fromkeys(table[RELEASE_COLUMN]))
    rows = []
    for release in releases:
        part = table[table[RELEASE_COLUMN] == release]
        records = part.to_dict("records")
        done = [r for r in records if r["status"] == "done"]
        reasons = [refusal(r.get("failure")) for r in records if r["status"] != "done"]
        held = [certification_held(r) for r in done]
        published = [h is not None or r.get("published_certified") in (True, "True")
                     for h, r in zip(held, done)]
        rows.append({
            "release": release, "entries": len(records), "audited": len(done),
            "refused": sum(x is not None for x in reasons),
            "failed": sum(x is None for x in reasons),
            "replay_pass": sum(r.get("replay_status") == "pass" for r in done),
            "replay_fail": sum(r.get("replay_status") == "fail" for r in done),
            "replay_na": sum(r.get("replay_status") not in ("pass", "fail") for r in done),
            "published_certified": sum(published),
            "certification_held": sum(h is True for h in held),
            "certification_lost": sum(h is False for h in held),
            "certification_unchecked": sum(p and h is None for p, h in zip(published, held)),
            "refused_reasons": " | ".join(dict.fromkeys(x for x in reasons if x)) or None,
        })
    counts = pd.DataFrame(rows, columns=list(COUNT_COLUMNS))
    total = {c: counts[c].sum() for c in COUNT_COLUMNS[1:-1]}
    total.update(release="all", refused_reasons=None)
    return pd.concat([counts, pd.DataFrame([total])], ignore_index=True)


#: The columns of :func:`environment_rates`, in order.
ENVIRONMENT_COLUMNS = ("release", "entries", "recorded_stack", "audited_recorded",
                       "bit_identical_recorded", "certification_held_recorded",
                       "audited_current", "bit_identical_current",
                       "certification_held_current", "published_certified",
                       "not_bit_identical_recorded")


def _true(value) -> bool:
    return value is True or value == "True"


def environment_rates(recorded, current, order=None):
    """Per release, the same entries audited in their recorded environment and in the
    current one, side by side (issue 35: a result's last bits follow its stack and its
    kernels).

    Args:
        recorded: a record sweep's table under ``--stack recorded`` (each entry in its
            recorded stack and its release's kernel triple).
        current: the same runs in the current stack (the same table for a release whose
            recorded stack is the current one).
        order: release labels in the order to list them (default: as first seen).

    Returns:
        A DataFrame of :data:`ENVIRONMENT_COLUMNS`, one row per release:
        ``recorded_stack`` the stacks that ran (the ``stack`` column, distinct, joined by
        " "), ``audited_*`` the completed audits, ``bit_identical_*`` those whose re-run
        energy equals the published one to the last bit, ``certification_held_*`` those
        whose published certification the audit reproduced (:func:`certification_held`),
        ``published_certified`` the completed audits of entries published as certified
        (recorded environment), ``not_bit_identical_recorded`` the entry ids of the
        completed audits that did not come back to the bit in the recorded environment.
    """
    import pandas as pd

    releases = list(order) if order is not None else list(dict.fromkeys(recorded[RELEASE_COLUMN]))
    rows = []
    for release in releases:
        row = {"release": release}
        for name, table in (("recorded", recorded), ("current", current)):
            part = table[table[RELEASE_COLUMN] == release].to_dict("records")
            done = [r for r in part if r["status"] == "done"]
            held = [certification_held(r) for r in done]
            row[f"audited_{name}"] = len(done)
            row[f"bit_identical_{name}"] = sum(_true(r.get("bit_identical")) for r in done)
            row[f"certification_held_{name}"] = sum(h is True for h in held)
            if name == "recorded":
                row["entries"] = len(part)
                row["published_certified"] = sum(h is not None for h in held)
                row["recorded_stack"] = " ".join(dict.fromkeys(
                    str(r.get("stack")) for r in part if isinstance(r.get("stack"), str))) or None
                row["not_bit_identical_recorded"] = " ".join(
                    str(r.get("entry_id")) for r in done
                    if not _true(r.get("bit_identical")) and r.get("tier_bit_identical")
                    in ("pass", "fail", "n/a")) or None
        rows.append(row)
    return pd.DataFrame(rows, columns=list(ENVIRONMENT_COLUMNS))
