"""The on-disk rebuild cache: location, atomic files, lock, load/store, cached_rebuild.

docs/explanations/engines.md and docs/layout.md (the rebuild cache).  The key is
:mod:`qencode_nb.hamiltonian.cache_key`'s,
the stored payload :mod:`qencode_nb.hamiltonian.cache_payload`'s.

Location: ``cache_dir`` argument, else ``$QENCODE_NB_CACHE``, else
``$XDG_CACHE_HOME/qencode-nb``, else ``~/.cache/qencode-nb``; files live in
its ``rebuild/`` folder as ``<key>.json``.

Concurrency: a file is written to a temporary name in the same folder,
flushed, fsync'ed and moved into place with ``os.replace`` (atomic on POSIX;
:func:`qencode_nb.atomic.write_atomic`), so a reader sees the old file, the new file or none, never a partial one.
Builders of one key also take an advisory ``fcntl.flock`` on ``<key>.lock``,
so concurrent processes needing the same entry build it once and the others
read it.

Integrity: every file carries the SHA-256 of its payload and its key
material; a file that does not parse, whose checksum, key or format differs,
or whose stored operators do not parse is reported (:class:`CacheWarning`),
counted in :data:`STATS` and rebuilt -- never trusted.

Importing this module imports neither numpy nor PySCF; a cache hit loads the three
OpenBLAS copies (numpy, ``scipy.linalg``, ``pyscf.lib``: the key holds the kernel each
one runs, measured) but imports neither PennyLane nor OpenFermion (the restored
:class:`~qencode_nb.hamiltonian.cache_payload.RestoredTaperResult` builds its
PennyLane operators when they are first read).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

from qencode_nb.atomic import write_atomic
from qencode_nb.errors import CacheCorrupt, CacheWarning
from qencode_nb.hamiltonian.cache_key import (
    FORMAT,
    FORMAT_VERSION,
    canonical_json,
    cache_key,
    environment_material,
    key_material,
    sha256_json,
)
from qencode_nb.hamiltonian.cache_payload import (
    CHEM_FIELDS,
    ChemSummary,
    build_payload,
    check_payload,
    restore,
)
from qencode_nb.hamiltonian.exact import exact_ground_energy
from qencode_nb.rules import OF_BRIDGE_VERIFY_TOL_HA

ENV_CACHE_DIR = "QENCODE_NB_CACHE"
SUBDIR = "rebuild"

STATS = {"hits": 0, "misses": 0, "corrupt": 0, "builds": 0, "writes": 0}
"""Per-process counters (a hit never calls PySCF)."""


def cache_root(path=None) -> Path:
    """The cache root: ``path``, ``$QENCODE_NB_CACHE``, ``$XDG_CACHE_HOME/qencode-nb``
    or ``~/.cache/qencode-nb`` (first that is given)."""
    if path is not None:
        return Path(path)
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "qencode-nb"


def path_for(key: str, cache_dir_=None) -> Path:
    """The file of ``key`` under the cache root."""
    return cache_root(cache_dir_) / SUBDIR / f"{key}.json"


def side_file(prefix: str, material: dict, compute, *, enabled: bool = True,
              cache_dir_=None) -> tuple[dict, str]:
    """A small JSON result kept beside the rebuild cache: ``(fields, status)``.

    The file is ``<prefix>-<key>.json`` in the rebuild cache folder, ``key`` the
    SHA-256 of ``material`` (what the result depends on: a rebuild key, a
    format number, the environment), holding ``{"material": material,
    "fields_sha256": SHA-256 of the fields' canonical JSON, **fields}``.  A file with
    the same material whose fields hash to the stored checksum is a ``"hit"``;
    otherwise ``compute()`` gives the fields (a JSON-serialisable dict), written
    atomically (``"built"``), or not written when ``enabled`` is False (``"not
    cached"``: e.g. a rebuild without a cache key).  A file that exists but does not
    parse, holds other material or fails its checksum (truncated, edited, written by a
    format without one) is never served: a :class:`CacheWarning` names it and why, it
    counts in :data:`STATS` ``corrupt``, and it is rebuilt (status ``"rebuilt: <why>"``).
    Used for the ADAPT pool indices, the tapered pool's Pauli words, the stored
    Hamiltonian's ground energy, the RHF orbitals and the native-path proof.

    Args:
        prefix: the file name's prefix (``pool``, ``words``, ``ground``).
        material: JSON-serialisable dict the result depends on.
        compute: ``() -> dict`` of the result's fields.
        enabled: read and write the file (False: compute only).
        cache_dir_: cache root (:func:`cache_root`).
    """
    key = sha256_json(material)
    path = path_for(key, cache_dir_).with_name(f"{prefix}-{key}.json")
    status = "built"
    if enabled:
        doc, why = _side_read(path, material)
        if why is None:
            return doc, "hit"
        if why != "absent":
            report_corrupt(path, why)
            status = f"rebuilt: {why}"
    fields = compute()
    if not enabled:
        return fields, "not cached"
    # The checksum of the fields as a reader gets them back from JSON: a dict keyed by
    # ints (the words' wires) reads back keyed by strings, which sort otherwise in the
    # canonical JSON (wire 10 before 2), so a checksum of the written objects never
    # matched and such a file was rebuilt at every read (issue 37: H10's words, 45 s).
    text = json.dumps({"material": material, **fields})
    checksum = sha256_json({k: v for k, v in json.loads(text).items() if k != "material"})
    if not write_or_warn(lambda: write_atomic(path, json.dumps(
            {"material": material, **fields, SIDE_CHECKSUM: checksum}).encode()), path):
        return fields, "not cached: the file could not be written"
    STATS["writes"] += 1
    return fields, status


def report_corrupt(path: Path, why) -> None:
    """Count a cache file that cannot be served (:data:`STATS` ``corrupt``) and warn,
    naming it and why (:class:`CacheWarning`); the caller rebuilds it."""
    STATS["corrupt"] += 1
    warnings.warn(f"qencode-nb cache file {path} is corrupt ({why}); rebuilding it",
                  CacheWarning, stacklevel=4)


def write_or_warn(write, path: Path) -> bool:
    """Run ``write()`` (a cache file's atomic write); a cache is a by-product, so when the
    file cannot be written (a full disk, a file size limit, a read-only cache folder) a
    :class:`CacheWarning` names it and why, nothing is left half written
    (:func:`qencode_nb.atomic.write_atomic`), and the caller goes on with the result it
    computed.  Returns whether the file was written."""
    try:
        write()
    except OSError as exc:
        warnings.warn(f"qencode-nb cache file {path} not written ({exc.strerror or exc}); "
                      "the result is used uncached", CacheWarning, stacklevel=3)
        return False
    return True


#: The key of a side file's checksum (:func:`side_file`).
SIDE_CHECKSUM = "fields_sha256"


def _side_read(path: Path, material: dict) -> tuple[dict | None, str | None]:
    """``(document without its checksum, None)`` of the side file ``path`` when it can be
    served, else ``(None, why)``: ``"absent"``, a parse error, other material, a
    checksum mismatch or none."""
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None, "absent"
    except (OSError, ValueError) as exc:
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    if not isinstance(doc, dict) or doc.get("material") != material:
        return None, "it holds another result's material"
    checksum = doc.pop(SIDE_CHECKSUM, None)
    if checksum != sha256_json({k: v for k, v in doc.items() if k != "material"}):
        return None, "checksum mismatch" if checksum else "no checksum"
    return doc, None


def _document(key: str, material: dict, payload: dict) -> bytes:
    return canonical_json({"format": FORMAT, "format_version": FORMAT_VERSION, "key": key,
                       "key_material": material, "payload": payload,
                       "payload_sha256": sha256_json(payload),
                       "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def store(key: str, material: dict, payload: dict, cache_dir_=None) -> Path:
    """Write one entry's payload under ``key`` (atomic)."""
    path = path_for(key, cache_dir_)
    write_atomic(path, _document(key, material, payload))
    STATS["writes"] += 1
    return path


def load(key: str, cache_dir_=None):
    """``(ChemSummary, TaperResult)`` of ``key``, or ``None`` when absent.

    Raises:
        CacheCorrupt: the file exists but fails a check (parse, format,
            key, key-material hash, payload checksum, structure, Pauli
            strings and wire count of the stored operators).
    """
    path = path_for(key, cache_dir_)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CacheCorrupt(f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise CacheCorrupt("not a JSON object")
    if doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
        raise CacheCorrupt(f"format {doc.get('format')!r} v{doc.get('format_version')!r}, "
                           f"expected {FORMAT!r} v{FORMAT_VERSION}")
    if doc.get("key") != key:
        raise CacheCorrupt(f"file holds key {doc.get('key')!r}")
    if sha256_json(doc.get("key_material")) != key:
        raise CacheCorrupt("key material does not hash to the key")
    payload = doc.get("payload")
    if sha256_json(payload) != doc.get("payload_sha256"):
        raise CacheCorrupt("payload checksum mismatch")
    check_payload(payload)
    return restore(payload)


class _Lock:
    """Advisory exclusive lock on ``<key>.lock`` (no-op without ``fcntl``)."""

    def __init__(self, path: Path, enabled: bool = True):
        self.path = path
        self.enabled = enabled
        self.handle = None

    def __enter__(self):
        if not self.enabled:
            return self
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a+b")  # noqa: SIM115
        fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            import fcntl

            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
        return False


def _exact_energies(H_tapered, correction):
    """``(e_tapered, e_qubit, method)``: the tapered operator's ground energy
    (the generator's ``e_exact_qubit`` procedure), plus ``correction`` (Ha)."""
    wires = sorted(H_tapered.wires)
    if not wires:
        return None, None, "no wire"
    e, method = exact_ground_energy(H_tapered, wires, with_method=True)
    return e, e + (correction or 0.0), method


def _try_load(key, root):
    """``(result or None, status)``; a corrupt file is reported, never returned."""
    try:
        result = load(key, root)
    except CacheCorrupt as exc:
        report_corrupt(path_for(key, root), exc)
        return None, f"corrupt: {exc}"
    return result, ("hit" if result is not None else "absent")


def _mark(chem: ChemSummary, hit: bool, status: str, key: str, path: Path,
          inputs: dict) -> None:
    chem.inputs = dict(inputs)
    chem.cache_hit = hit
    chem.cache_status = status
    chem.cache_key = key
    chem.cache_path = str(path)


def cached_rebuild(geometry: str, basis: str, charge: int, spin: int,
                   num_electrons: int, num_spatial_orbitals: int,
                   orbital_optimization: str, mapping: str,
                   hamiltonian_source: str | None = "of_bridge", *,
                   classical: bool = False,
                   verify_tol: float | None = OF_BRIDGE_VERIFY_TOL_HA,
                   cache_dir=None, refresh: bool = False, lock: bool = True,
                   light: bool = False, tapering_rule: str = "v4"):
    """:func:`qencode_nb.hamiltonian.rebuild.rebuild_tapered` through the on-disk cache.

    Args:
        geometry ... mapping: the declared procedure (see
            :func:`~qencode_nb.hamiltonian.rebuild.rebuild_tapered`).
        hamiltonian_source: ``"of_bridge"`` or ``None`` (undeclared: builds
            of_bridge); ``"pennylane_native"`` raises :class:`CapabilityMissing`.
        classical, verify_tol: passed to the rebuild; both enter the key.
        cache_dir: cache root (see :func:`cache_root`).
        refresh: rebuild and overwrite even when a valid file exists.
        lock: take the per-key ``flock`` while checking and building.
        light: :func:`qencode_nb.hamiltonian.rebuild.rebuild_tapered_light` (no
            diagonalisation; the exact ground energy is the CASCI one).
        tapering_rule: ``"v4"`` or ``"v3"`` (schema 3.0.0;
            :func:`qencode_nb.hamiltonian.tapering.taper`); enters the key when not "v4".

    Returns:
        ``(ChemSummary, TaperResult)``; ``ChemSummary.cache_hit`` says whether
        the result came from disk (then PySCF was not called).

    Raises:
        EntryError, CapabilityMissing, HamiltonianMismatch: as the rebuild.
    """
    material = key_material(geometry, basis, charge, spin, num_electrons,
                            num_spatial_orbitals, orbital_optimization, mapping,
                            hamiltonian_source, classical=classical, verify_tol=verify_tol,
                            light=light, tapering_rule=tapering_rule)
    key = sha256_json(material)
    root = cache_dir
    path = path_for(key, root)
    status = "refresh"
    if not refresh:
        result, status = _try_load(key, root)
        if result is not None:
            STATS["hits"] += 1
            _mark(result[0], True, status, key, path, material["problem"])
            return result
    with _Lock(path.with_suffix(".lock"), lock):
        if not refresh:
            # Another process may have (re)built it while we waited for the lock.
            try:
                result = load(key, root)
            except CacheCorrupt:  # already reported above
                result = None
            if result is not None:
                STATS["hits"] += 1
                _mark(result[0], True, "hit", key, path, material["problem"])
                return result
        STATS["misses"] += 1
        from qencode_nb.hamiltonian.rebuild import rebuild_tapered, rebuild_tapered_light

        start = time.perf_counter()
        if light:
            chem, tap = rebuild_tapered_light(geometry, basis, charge, spin, num_electrons,
                                              num_spatial_orbitals, orbital_optimization,
                                              mapping, classical=classical)
            e_tap = e_qubit = chem.e_casci
            method = "CASCI (jordan_wigner tapering is exact; not diagonalised)"
        else:
            chem, tap = rebuild_tapered(geometry, basis, charge, spin, num_electrons,
                                        num_spatial_orbitals, orbital_optimization, mapping,
                                        classical=classical, verify_tol=verify_tol,
                                        tapering_rule=tapering_rule)
            e_tap, e_qubit, method = _exact_energies(tap.H_tapered,
                                                     tap.bk_constant_correction_ha)
        seconds = time.perf_counter() - start
        STATS["builds"] += 1
        payload = build_payload(chem, tap, e_tap, e_qubit, method, seconds)
        write_or_warn(lambda: store(key, material, payload, root), path)
    summary = ChemSummary(**{name: getattr(chem, name) for name in CHEM_FIELDS},
                          e_exact_tapered_ha=e_tap, e_exact_qubit_ha=e_qubit,
                          exact_method=method, build_seconds=seconds,
                          integrals=payload["integrals"])
    _mark(summary, False, status, key, path, material["problem"])
    return summary, tap


def entry_fields(entry) -> dict:
    """The rebuild fields of an :class:`~qencode_nb.entry.model.Entry` or a raw
    QEncode 4.0.0 dict, as keyword arguments of :func:`cached_rebuild`."""
    if isinstance(entry, dict):
        from qencode_nb.hamiltonian.rebuild import entry_field

        names = {"geometry": "problem.geometry", "basis": "problem.basis",
                 "charge": "problem.charge", "spin": "problem.spin",
                 "num_electrons": "problem.active_space.num_electrons",
                 "num_spatial_orbitals": "problem.active_space.num_spatial_orbitals",
                 "orbital_optimization": "problem.orbital_optimization",
                 "mapping": "encoding.mapping"}
        fields = {k: entry_field(entry, v) for k, v in names.items()}
        fields["hamiltonian_source"] = (entry.get("provenance") or {}).get(
            "hamiltonian_source")
        return fields
    ne, no = entry.active_space
    fields = {"geometry": entry.geometry, "basis": entry.basis, "charge": entry.charge,
              "spin": entry.spin, "num_electrons": ne, "num_spatial_orbitals": no,
              "orbital_optimization": entry.orbital_optimization, "mapping": entry.mapping,
              "hamiltonian_source": entry.hamiltonian_source}
    strip = getattr(entry, "tapering_rule", "v4")
    if strip != "v4":           # schema 3.0.0: its generator's real-part strip
        fields["tapering_rule"] = strip
    return fields


def cached_rebuild_entry(entry, **kwargs):
    """:func:`cached_rebuild` with the fields of an ``Entry`` or raw QEncode dict."""
    return cached_rebuild(**entry_fields(entry), **kwargs)


def clear(cache_dir=None, key: str | None = None) -> int:
    """Remove cached files (all, or only ``key``'s); returns how many were removed.

    Removes ``<key>.json``, ``<key>.lock`` and leftover ``.tmp-*`` files.
    """
    folder = cache_root(cache_dir) / SUBDIR
    if not folder.is_dir():
        return 0
    if key is None:
        victims = [p for p in folder.iterdir()
                   if p.suffix in (".json", ".lock") or p.name.startswith(".tmp-")]
    else:
        victims = [folder / f"{key}.json", folder / f"{key}.lock"]
        victims += list(folder.glob(f".tmp-{key[:16]}-*"))
    removed = 0
    for p in victims:
        try:
            p.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed


__all__ = ["ChemSummary", "FORMAT_VERSION", "STATS",
           "cache_key", "cache_root", "cached_rebuild", "cached_rebuild_entry", "clear",
           "entry_fields", "environment_material", "key_material", "load", "path_for",
           "store"]
