"""The stated claims: what QEncode's own files say about its results, quoted, with
where each was read and the named check (:mod:`qencode_nb.claims.facts`) that
computes the true value.

:data:`STATED` is the table (add a claim by adding a row).  :func:`check_stated`
finds each quote in its file (whitespace-insensitive; the line and the Markdown
section it sits in go in the table) and runs its check; a quote no longer in its
file is ``unverifiable: quote not found`` (the file changed: re-read it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from qencode_nb.claims import facts
from qencode_nb.claims.folder import Folder, registry_ids
from qencode_nb.claims.table import ClaimRow

KIND = "stated"


@dataclass(frozen=True)
class Stated:
    """One stated claim: ``id``, the ``quote`` as its ``file`` states it, the
    ``check`` computing the true value (``check(folder, registry) -> (status,
    evidence)``)."""

    id: str
    file: str
    quote: str
    check: Callable


STATED = (
    Stated("readme-v4-counts", "README.md", "7 molecules, 26 certified entries",
           facts.readme_v4_counts),
    Stated("readme-n2-gap", "README.md", "**CASSCF required**, 2.0 mHa gap",
           facts.n2_certified),
    Stated("readme-n2-certified", "README.md", "N₂ certified at cc-pVDZ",
           facts.n2_any_certified),
    Stated("readme-10-molecules", "README.md", "10 molecules, cc-pVDZ basis",
           facts.v4_molecule_count),
    Stated("readme-encodings-ansatze", "README.md", "3 qubit encodings, 2 ansatz families",
           facts.v4_encodings_ansatze),
    Stated("readme-signed", "README.md", "entries are signed with Ed25519", facts.v4_signed),
    Stated("readme-bk-excluded", "README.md", "BK excluded for all molecules except H₂ and HF",
           facts.bk_only_h2_hf),
    Stated("readme-par-uccsd-excluded", "README.md",
           "PAR/UCCSD excluded for LiH, H₂O, NH₃, N₂, benzene", facts.par_uccsd_excluded),
    Stated("readme-requirements-v4", "README.md", "pip install -r requirements-v4.txt",
           facts.file_exists("requirements-v4.txt")),
    Stated("citation-n2", "CITATION.cff", "N₂ is certified at 2.0 mHa", facts.n2_certified),
    Stated("citation-10-molecules", "CITATION.cff", "covers 10 molecules from H₂ to benzene",
           facts.v4_molecule_count),
    Stated("verify-bit-for-bit", "docs/VERIFY.md",
           "A matching hash confirms the result is bit-for-bit reproducible",
           facts.hash_is_reproduction),
    Stated("verify-requirements-txt", "docs/VERIFY.md", "pip install -r requirements.txt",
           facts.file_exists("requirements.txt")),
    Stated("changelog-n2", "CHANGELOG.md", "N₂ JW/UCCSD certified: gap = 2.015 mHa",
           facts.n2_certified),
    Stated("changelog-v31-counts", "CHANGELOG.md",
           "42 benchmark entries: 30 certified + 12 research (N₂) across 7 molecules and 3 "
           "mappings", facts.v31_counts),
    Stated("leaderboard-md-current-suite", "docs/leaderboard.md",
           "Suite v3.1 — 6-31G basis — 30 certified + 12 research entries across 7 molecules.",
           facts.v31_current),
    Stated("metadata-counts", "website/public/data/leaderboard_metadata.json",
           '"entries_included": 47', facts.metadata_counts),
)


def locate(text: str, quote: str) -> tuple[int, str] | None:
    """``(line, section)`` of ``quote`` in ``text`` (whitespace-insensitive; section:
    the last Markdown heading before it, or ""), or None when it is not there."""
    pattern = r"\s+".join(map(re.escape, quote.split()))
    match = re.search(pattern, text)
    if match is None:
        return None
    before = text[:match.start()]
    line_end = text.find("\n", match.start())
    upto = text if line_end < 0 else text[:line_end]
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", upto, flags=re.M)
    return before.count("\n") + 1, (headings[-1] if headings else "")


def check_stated(folder: Folder, registry: dict | None = None, table=STATED) -> list[ClaimRow]:
    """One :class:`ClaimRow` per stated claim of ``table`` (module docstring)."""
    registry = registry_ids() if registry is None else registry
    rows = []
    for claim in table:
        path = folder.root / claim.file
        text = path.read_text(encoding="utf-8") if path.is_file() else None
        found = locate(text, claim.quote) if text is not None else None
        label = f"{claim.id}: \u201c{claim.quote}\u201d"
        if found is None:
            why = "file not in the folder" if text is None else "quote not found"
            said = "is missing" if text is None else "no longer says this"
            rows.append(ClaimRow(KIND, label, claim.file, f"unverifiable: {why}",
                                 f"{claim.file} {said}"))
            continue
        line, section = found
        where = f"{claim.file}:{line}" + (f" ({section})" if section else "")
        status, evidence = claim.check(folder, registry)
        name = getattr(claim.check, "__name__", claim.check)
        rows.append(ClaimRow(KIND, label, where, status, f"{evidence} [check: {name}]"))
    return rows
