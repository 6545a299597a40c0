"""The named checks of the stated claims (:mod:`qencode_nb.claims.stated`): each
computes the true value from the folder and its database and returns
``(status, evidence)``.

Every check takes a :class:`qencode_nb.claims.folder.Folder` and the v4.4 registry
(``{entry id: file SHA-256}``).  What a count rests on is said in its evidence: the
database folder may hold fewer entries than the release (``../shared/qencode-v4``
holds 40 of the 54); an entry it lacks is counted by its certified leaderboard row
when one lists it (those rows are themselves checked against the registry,
:mod:`qencode_nb.claims.leaderboards`).
"""

from __future__ import annotations

import csv
from collections import Counter

from qencode_nb.claims.folder import Folder, read_json
from qencode_nb.claims.leaderboards import RESEARCH_TABLE

#: The gap below which QEncode certifies (Ha; generate_entry_v4.py GAP_THRESHOLD).
GAP_THRESHOLD_HA = 0.01
CATALOG = "molecules_v4.json"


def _level(raw):
    return (raw.get("trust") or {}).get("level")


def _leaderboard_rows(folder: Folder, certified: bool) -> list[dict]:
    out = []
    for path in folder.leaderboards:
        if (path.name == RESEARCH_TABLE) == certified:
            continue
        with open(path, newline="", encoding="utf-8") as fh:
            out += [dict(r, _table=path.name) for r in csv.DictReader(fh)]
    return out


def v4_census(folder: Folder, registry: dict) -> dict:
    """The v4 release's entries counted: ``release`` (registry entries), ``present``
    (in the database folder), ``certified`` (present and certified, plus absent ones
    a certified leaderboard lists), ``unknown`` (absent and on no leaderboard: trust
    unknown), ``molecules`` (names in the release's entry ids), ``certified_molecules``,
    ``trust`` (levels of the present entries)."""
    present = {i: folder.entry(p) for i, p in folder.db_entries.items()}
    listed = {r["entry_id"]: r for r in _leaderboard_rows(folder, certified=True)}
    research = {r["entry_id"] for r in _leaderboard_rows(folder, certified=False)}
    ids = sorted(set(registry) | set(present))
    certified = {i for i, raw in present.items() if _level(raw) == "certified"}
    certified |= {i for i in listed if i not in present and i in registry}
    absent = [i for i in ids if i not in present]
    unknown = [i for i in absent if i not in listed and i not in research]
    name = (lambda i: (present[i].get("problem") or {}).get("name") if i in present
            else i.split("_", 1)[0])
    return {"release": len(registry), "present": len(present), "absent": absent,
            "certified": len(certified), "unknown": unknown,
            "molecules": sorted({name(i) for i in ids}),
            "certified_molecules": sorted({name(i) for i in certified}),
            "trust": Counter(_level(raw) for raw in present.values()),
            "from_leaderboard": len(certified - set(present))}


def catalog(folder: Folder) -> dict | None:
    """``molecules_v4.json`` beside the database folder or in the folder, or None."""
    for base in ([folder.db.parent] if folder.db else []) + [folder.root]:
        if (base / CATALOG).is_file():
            return read_json(base / CATALOG)
    return None


def _census_words(c: dict) -> str:
    return (f"the v4.4 registry lists {c['release']} entries, the database folder holds "
            f"{c['present']} ({dict(c['trust'])}); certified: {c['certified']} "
            f"({c['certified'] - c['from_leaderboard']} present and certified + "
            f"{c['from_leaderboard']} absent ones a certified leaderboard row lists"
            + (f"; {len(c['unknown'])} absent and on no leaderboard, trust unknown: "
               f"{', '.join(c['unknown'])}" if c["unknown"] else "") + ")")


def readme_v4_counts(folder: Folder, registry: dict):
    """README: "7 molecules, 26 certified entries" (suite v4, current)."""
    c = v4_census(folder, registry)
    cat = catalog(folder)
    n_cat = len(cat.get("entries") or []) if cat else None
    words = (f"{_census_words(c)}; {len(c['molecules'])} molecule names in the release's "
             f"entry ids, {len(c['certified_molecules'])} with a certified entry"
             + (f"; {CATALOG} lists {n_cat} molecules" if n_cat is not None else ""))
    holds = c["certified"] == 26 and len(c["certified_molecules"]) == 7
    return ("holds" if holds else "stale", words)


def _n2(folder: Folder):
    """The N2 entries of the database folder, the N2 ids certified leaderboards list,
    and the N2 ids certified (present and certified, or listed)."""
    n2 = {i: folder.entry(p) for i, p in folder.db_entries.items()
          if (folder.entry(p).get("problem") or {}).get("name") == "N2"}
    listed = {r["entry_id"]: r for r in _leaderboard_rows(folder, certified=True)
              if r.get("molecule") == "N2"}
    certified = sorted({i for i, raw in n2.items() if _level(raw) == "certified"} | set(listed))
    return n2, listed, certified


def _gap_mha(folder: Folder, entry_id: str, listed: dict):
    file = folder.db_entries.get(entry_id)
    gap = (((folder.entry(file).get("results") or {}).get("quality") or {})
           .get("abs_vqe_exact_gap") if file else float(listed[entry_id]["gap"]))
    return gap * 1e3


def n2_certified(folder: Folder, registry: dict):
    """README/CITATION/CHANGELOG: N2 (JW/UCCSD) certified at about 2.0 mHa: holds when an
    N2 entry is certified with a gap within 0.5 mHa of 2.0 mHa."""
    n2, listed, certified = _n2(folder)
    jw = [(i, raw) for i, raw in n2.items()
          if (raw.get("encoding") or {}).get("mapping") == "jordan_wigner"
          and "uccsd" in str((raw.get("encoding") or {}).get("ansatz_type")).lower()]
    parts = []
    for i, raw in jw:
        gap = ((raw.get("results") or {}).get("quality") or {}).get("abs_vqe_exact_gap")
        parts.append(f"{i}: trust.level {_level(raw)}, gap {gap * 1e3:.3f} mHa "
                     f"(certification needs < {GAP_THRESHOLD_HA * 1e3:g} mHa)")
    gaps = {i: _gap_mha(folder, i, listed) for i in certified}
    parts.append(f"{len(n2)} N2 entries in the database folder; certified N2 entries: "
                 + (", ".join(f"{i} ({g:.3f} mHa)" for i, g in gaps.items()) or "none"))
    if not n2 and not listed:
        return ("unverifiable: no N2 entry in the database folder", "; ".join(parts))
    ok = any(abs(g - 2.0) <= 0.5 for g in gaps.values())
    return ("holds" if ok else "stale", "; ".join(parts))


def n2_any_certified(folder: Folder, registry: dict):
    """README: N2 certified at cc-pVDZ (any N2 entry certified)."""
    n2, listed, certified = _n2(folder)
    gaps = {i: _gap_mha(folder, i, listed) for i in certified}
    words = (f"certified N2 entries: " + (", ".join(f"{i} ({g:.3f} mHa)" for i, g in gaps.items())
             or "none") + f"; the database folder holds {len(n2)} N2 entries")
    if not n2 and not listed:
        return ("unverifiable: no N2 entry in the database folder", words)
    return ("holds" if certified else "stale", words)


def v4_molecule_count(folder: Folder, registry: dict, claimed: int = 10):
    """README/CITATION: suite v4 covers 10 molecules."""
    c = v4_census(folder, registry)
    cat = catalog(folder)
    names = [e.get("molecule") for e in (cat or {}).get("entries", [])]
    n = len(names) if cat else len(c["molecules"])
    words = (f"{CATALOG} lists {len(names)}: {', '.join(map(str, names))}; " if cat else "") \
        + f"the release's entry ids name {len(c['molecules'])}: {', '.join(c['molecules'])}"
    return ("holds" if n == claimed else "stale", words)


def v4_encodings_ansatze(folder: Folder, registry: dict):
    """README: "3 qubit encodings, 2 ansatz families"."""
    enc = [(raw.get("encoding") or {}) for raw in map(folder.entry, folder.db_entries.values())]
    maps = Counter(e.get("mapping") for e in enc)
    ans = Counter(e.get("ansatz_type") for e in enc)
    words = (f"the database folder's {len(enc)} entries: mappings {dict(maps)}; "
             f"ansatz types {dict(ans)}")
    return ("holds" if len(maps) == 3 and len(ans) == 2 else "stale", words)


def v4_signed(folder: Folder, registry: dict):
    """README: entries are signed with Ed25519."""
    raws = [folder.entry(p) for p in folder.db_entries.values()]
    signed = sum(1 for raw in raws if (raw.get("trust") or {}).get("signature_b64"))
    words = (f"{signed} of the {len(raws)} entries in the database folder carry a "
             "trust.signature_b64; no public key is published")
    if not raws:
        return ("unverifiable: no entry in the database folder", words)
    return ("holds" if signed == len(raws) else "false", words)


def hash_is_reproduction(folder: Folder, registry: dict):
    """VERIFY.md: a matching hash confirms bit-for-bit reproduction."""
    from qencode_nb.entry.hashing import HASH_EXCLUDED_KEYS, qencode_sha256

    v31 = [p for ps in folder.release_entries.values() for p in ps if "v3.1" in p.parts]
    recomputes = moved = 0
    for p in v31:
        raw = folder.entry(p)
        recorded = (raw.get("provenance") or {}).get("entry_hash_sha256") or ""
        recomputes += qencode_sha256(raw) == recorded
        moved += not raw.get("entry_id", "").endswith(recorded[:16])
    words = ("the hash is SHA-256 of the entry's own JSON minus "
             f"{len(HASH_EXCLUDED_KEYS)} volatile keys (QEncode's rule): anyone can "
             "recompute it from the file, so a match shows the file is unchanged (tamper "
             "detection), not how its numbers were computed")
    if v31:
        words += (f"; releases/v3.1/db: {recomputes} of {len(v31)} stored hashes recompute "
                  f"from their files, and {moved} of {len(v31)} entry ids do not end in "
                  "their stored hash (QEncode rehashed them after generation, "
                  "scripts/rehash_entries_v3.py): a re-run prints the hash of what it "
                  "generates, not the stored one")
    return ("false", words)


def file_exists(name: str):
    """A check that ``name`` (relative to the folder) exists."""
    def check(folder: Folder, registry: dict):
        path = folder.root / name
        near = sorted(p.name for p in folder.root.glob("requirements*.txt"))
        words = (f"{name} {'exists' if path.exists() else 'does not exist'} in the folder"
                 + (f"; it holds {', '.join(near)}" if near else ""))
        return ("holds" if path.exists() else "false", words)
    check.__name__ = f"file_exists({name!r})"
    return check


def v31_counts(folder: Folder, registry: dict, current: bool = False):
    """CHANGELOG/docs: suite v3.1 has 30 certified + 12 research entries, 7 molecules
    (``current``: and it is the current suite)."""
    raws = [folder.entry(p) for ps in folder.release_entries.values() for p in ps
            if "v3.1" in p.parts]
    if not raws:
        return ("unverifiable: no releases/v3.1/db entries in the folder", "")
    levels = Counter(_level(raw) for raw in raws)
    mols = sorted({(raw.get("problem") or {}).get("name") for raw in raws})
    maps = sorted({(raw.get("encoding") or {}).get("mapping") for raw in raws})
    words = (f"releases/v3.1/db: {len(raws)} entries, trust levels {dict(levels)}, "
             f"{len(mols)} molecules ({', '.join(mols)}), {len(maps)} mappings")
    ok = len(raws) == 42 and levels["certified"] == 30 and len(mols) == 7
    if ok and current:
        meta = folder.metadata or {}
        words += (f"; but the published leaderboards are suite {meta.get('suite_version')} "
                  f"({meta.get('entries_included')} certified, default basis "
                  f"{meta.get('default_basis')})")
        ok = str(meta.get("suite_version")) in ("3.1", "None")
        return ("holds" if ok else "stale", words)
    return ("holds" if ok else "false", words)


def v31_current(folder: Folder, registry: dict):
    """docs/leaderboard.md: "Current suite: Suite v3.1 ..."."""
    return v31_counts(folder, registry, current=True)


def metadata_counts(folder: Folder, registry: dict):
    """leaderboard_metadata.json: entries_included, beats_classical_count,
    validated_count against the tables and the census."""
    meta = folder.metadata
    if meta is None:
        return ("unverifiable: no leaderboard_metadata.json", "")
    cert = _leaderboard_rows(folder, certified=True)
    acc = [r for r in cert if r["_table"] == "leaderboard_accuracy.csv"] or cert
    research = _leaderboard_rows(folder, certified=False)
    beats = sum(1 for r in acc if r.get("beats_classical") == "True")
    c = v4_census(folder, registry)
    got = {"entries_included": len(acc), "beats_classical_count": beats,
           "validated_count": len(research)}
    diff = {k: (meta.get(k), v) for k, v in got.items() if meta.get(k) != v}
    words = (f"accuracy table: {len(acc)} rows, {beats} beats_classical; research table: "
             f"{len(research)} rows; census: {c['certified']} certified; metadata "
             + ", ".join(f"{k} {meta.get(k)}" for k in got))
    if c["certified"] != meta.get("entries_included"):
        diff["certified census"] = (meta.get("entries_included"), c["certified"])
    if diff:
        words += "; differs: " + ", ".join(f"{k} states {a}, is {b}" for k, (a, b) in diff.items())
    return ("holds" if not diff else "false", words)


def bk_only_h2_hf(folder: Folder, registry: dict):
    """README: BK excluded for every molecule but H₂ and HF."""
    ids = set(registry) | set(folder.db_entries)
    bk = sorted({i.split("_", 1)[0] for i in ids if "_BK_" in i})
    return ("holds" if set(bk) <= {"H2", "HF"} else "false",
            f"entry ids with _BK_ (registry and database folder): molecules {', '.join(bk)}")


def par_uccsd_excluded(folder: Folder, registry: dict):
    """README: PAR/UCCSD excluded for LiH, H₂O, NH₃, N₂, benzene."""
    ids = set(registry) | set(folder.db_entries)
    par = sorted({i.split("_", 1)[0] for i in ids if "_PAR_UCCSD_" in i})
    bad = set(par) & {"LiH", "H2O", "NH3", "N2", "benzene"}
    return ("holds" if not bad else "false",
            f"entry ids with _PAR_UCCSD_: molecules {', '.join(par)}"
            + (f"; of the excluded ones: {', '.join(sorted(bad))}" if bad else ""))

