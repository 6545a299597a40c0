"""The claims table: one :class:`ClaimRow` per checked claim (a leaderboard row, a
receipt's hash or signature, a stated claim), written as ``claims.csv``, read back,
printed, and summed up in an exit status.

A status is one of :data:`STATUSES`, optionally followed by ``": detail"``
(``"unverifiable: no public key"``).  ``false`` and ``stale`` are *flagged*
(:func:`flagged`): the claim contradicts the data, or held once and no longer does.
``unverifiable`` is not flagged: the data to check it is not at hand (an entry not in
the folder, no public key).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path

#: The statuses, in the order tables and counts list them.
STATUSES = ("holds", "stale", "false", "unverifiable")
#: The statuses that flag a claim (exit status 3).
FLAGGED = ("stale", "false")
#: claims.csv's columns, in order.
COLUMNS = ("kind", "claim", "where", "status", "evidence")
#: The file ``--out DIR`` writes.
CSV_NAME = "claims.csv"
#: Exit statuses of ``qencode-nb claims`` (as ``audit``/``show``: 0 / 3 / 2).
EXIT_OK, EXIT_FLAGGED, EXIT_BAD_INPUT = 0, 3, 2


@dataclass(frozen=True)
class ClaimRow:
    """One checked claim.

    Attributes:
        kind: "leaderboard", "receipt hash", "receipt signature" or "stated".
        claim: what is claimed, quoted or in words (a row: its file and entry id).
        where: where it was read (``file:line`` or ``file, section``).
        status: a :data:`STATUSES` word, optionally ``": detail"``.
        evidence: what the data says, in words with the numbers.
    """

    kind: str
    claim: str
    where: str
    status: str
    evidence: str

    def __post_init__(self):
        if status_word(self.status) not in STATUSES:
            raise ValueError(f"status {self.status!r}: accepted {STATUSES} (+ ': detail')")


def status_word(status: str) -> str:
    """The status word without its detail (``"unverifiable: no public key"`` ->
    ``"unverifiable"``)."""
    return status.split(":", 1)[0].strip()


def flagged(row: ClaimRow) -> bool:
    """Whether a row is flagged (stale or false)."""
    return status_word(row.status) in FLAGGED


def counts(rows) -> dict:
    """``{kind: {status word: n}}`` over ``rows`` (statuses in :data:`STATUSES` order)."""
    out: dict = {}
    for row in rows:
        out.setdefault(row.kind, Counter())[status_word(row.status)] += 1
    return {kind: {s: c[s] for s in STATUSES if c[s]} for kind, c in out.items()}


def exit_status(rows) -> int:
    """:data:`EXIT_FLAGGED` when a row is flagged, else :data:`EXIT_OK`."""
    return EXIT_FLAGGED if any(flagged(r) for r in rows) else EXIT_OK


def to_csv(rows) -> str:
    """The rows as CSV text with :data:`COLUMNS`' header."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([getattr(row, c) for c in COLUMNS])
    return buf.getvalue()


def write_csv(rows, out_dir) -> Path:
    """``out_dir/claims.csv`` (the folder made if missing), written atomically.  The rows
    name files relative to the checked folder (:func:`qencode_nb.claims.folder.rel`); any
    absolute path of the machine left in a cell (an error's text) is shortened
    (:func:`qencode_nb.paths.scrub`): the file is published."""
    from qencode_nb.atomic import write_atomic
    from qencode_nb.paths import known_folders, scrub

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / CSV_NAME
    folders = known_folders(out_dir)
    shown = [ClaimRow(**{c: scrub(getattr(r, c), folders) for c in COLUMNS}) for r in rows]
    write_atomic(path, to_csv(shown).encode("utf-8"))
    return path


def read_csv(path) -> list[ClaimRow]:
    """The rows of a ``claims.csv`` (:func:`write_csv`).

    Raises:
        ValueError: the file's header is not :data:`COLUMNS` or a status is unknown.
    """
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: header {reader.fieldnames}; accepted: {list(COLUMNS)}")
        return [ClaimRow(**{f.name: rec[f.name] for f in fields(ClaimRow)}) for rec in reader]


def text(rows, width: int = 100) -> str:
    """The table as text: one block per row (status, kind, where, claim, evidence),
    flagged rows first, then the counts per kind."""
    import textwrap

    order = sorted(rows, key=lambda r: (not flagged(r), STATUSES.index(status_word(r.status))))
    lines = []
    for r in order:
        lines.append(f"[{r.status}] {r.kind} | {r.where}")
        lines += textwrap.wrap(f"claim: {r.claim}", width, initial_indent="    ",
                               subsequent_indent="      ")
        lines += textwrap.wrap(f"evidence: {r.evidence}", width, initial_indent="    ",
                               subsequent_indent="      ")
    lines.append("")
    for kind, c in counts(rows).items():
        lines.append(f"{kind}: " + ", ".join(f"{n} {s}" for s, n in c.items()))
    return "\n".join(lines)


def as_dicts(rows) -> list[dict]:
    """The rows as dicts (for a template or a DataFrame)."""
    return [asdict(r) for r in rows]
