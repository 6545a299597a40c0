"""On-disk cache of an entry's reference data (DESIGN.md, "Performance").

What is cached, per problem: the rebuilt chemistry energies (RHF, CASCI,
CASSCF ...), the Z2-tapered qubit Hamiltonian as QEncode ``pauli_terms``,
every :class:`~qencode_nb.problem.hamiltonian.TaperResult` field (symmetry generators
and Pauli-X operators as Pauli-term lists, sectors, tapered HF state, qubit
counts, constant correction, imaginary-strip facts) and the exact ground
energy of the tapered operator.  PySCF objects are never stored: the file is
JSON, whose floats round-trip exactly (``repr``), and PennyLane operators are
rebuilt on load through ``PauliSentence.operation()``; the writer checks with
``qml.equal`` that the rebuilt operators equal the fresh ones before it
stores them.

Key: SHA-256 of the canonical JSON of :func:`key_material`: every field of
the declared procedure that determines the result (geometry, basis, charge,
spin, active space, orbital optimisation, mapping, Hamiltonian source,
``classical``, ``verify_tol``), this cache's format version, a SHA-256 of the
code that computes the result (``chemistry.py``, ``hamiltonian.py``,
``rebuild.py``), the installed versions of pyscf, pennylane, openfermion,
numpy and scipy, the BLAS thread and kernel variables (``OPENBLAS_CORETYPE``
changes PySCF's numbers by a few ulps; the thread count moved an N2 CASCI
root by 2e-5 Ha) and the CPU model (OpenBLAS picks its kernel from it when
no coretype is forced).  Like the thread pins, ``OPENBLAS_CORETYPE`` only
acts when set before numpy is loaded; the key records the variable, not the
kernel a library already loaded.

Location: ``cache_dir`` argument, else ``$QENCODE_NB_CACHE``, else
``$XDG_CACHE_HOME/qencode-nb``, else ``~/.cache/qencode-nb``; files live in
its ``rebuild/`` folder as ``<key>.json``.

Concurrency: a file is written to a temporary name in the same folder,
flushed, fsync'ed and moved into place with ``os.replace`` (atomic on POSIX),
so a reader sees the old file, the new file or none, never a partial one.
Builders of one key also take an advisory ``fcntl.flock`` on ``<key>.lock``,
so concurrent processes needing the same entry build it once and the others
read it.

Integrity: every file carries the SHA-256 of its payload and its key
material; a file that does not parse, whose checksum, key or format differs,
or whose operators cannot be rebuilt is reported (:class:`CacheWarning`),
counted in :data:`STATS` and rebuilt -- never trusted.

Importing this module imports neither numpy nor PySCF; a cache hit imports
numpy and PennyLane but not PySCF or OpenFermion.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from qencode_nb.errors import CapabilityMissing, EntryError, QencodeNbError

FORMAT = "qencode-nb-rebuild-cache"
FORMAT_VERSION = 2
"""Bump when the payload layout or its meaning changes."""

ENV_CACHE_DIR = "QENCODE_NB_CACHE"
SUBDIR = "rebuild"

KEY_PACKAGES = ("pyscf", "pennylane", "openfermion", "numpy", "scipy")
"""Installed distributions whose versions enter the key."""

CODE_FILES = ("chemistry.py", "hamiltonian.py", "rebuild.py")
"""Modules of qencode_nb whose source enters the key (any edit invalidates)."""

BUILDABLE_SOURCES = ("of_bridge",)
"""Hamiltonian paths this version can rebuild.  ``None`` (an entry that does
not declare its source) builds ``of_bridge``, the generator's default since
v4.4; ``pennylane_native`` raises :class:`CapabilityMissing`."""

STATS = {"hits": 0, "misses": 0, "corrupt": 0, "builds": 0, "writes": 0}
"""Per-process counters (a hit never calls PySCF)."""


class CacheWarning(RuntimeWarning):
    """A cache file was unreadable or inconsistent and is being rebuilt."""


class CacheCorrupt(QencodeNbError, ValueError):
    """A cache file failed a check (raised inside :func:`load`, reported as a warning)."""


# ---------------------------------------------------------------------------
# Location and key
# ---------------------------------------------------------------------------

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


def _package_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _code_sha256() -> str:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in CODE_FILES:
        digest.update(name.encode() + b"\0")
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment_material() -> dict:
    """The environment part of the key: versions, code, BLAS variables, CPU."""
    from qencode_nb.notebook.pins import KERNEL_VARS, THREAD_VARS

    return {
        "versions": {name: _package_version(name) for name in KEY_PACKAGES},
        "code_sha256": _code_sha256(),
        "blas_env": {var: os.environ.get(var) for var in (*KERNEL_VARS, *THREAD_VARS)},
        "cpu": {"machine": platform.machine(), "model": _cpu_model(),
                "count": os.cpu_count()},
    }


def _built_source(hamiltonian_source):
    if hamiltonian_source is None:
        return "of_bridge"
    if hamiltonian_source in BUILDABLE_SOURCES:
        return hamiltonian_source
    if hamiltonian_source == "pennylane_native":
        raise CapabilityMissing(
            "rebuilding a 'pennylane_native' Hamiltonian is not implemented; "
            f"buildable: {', '.join(BUILDABLE_SOURCES)}")
    raise EntryError(f"hamiltonian_source {hamiltonian_source!r} is not accepted; "
                     "accepted: of_bridge, pennylane_native, or undeclared (null)",
                     field="provenance.hamiltonian_source")


def key_material(geometry: str, basis: str, charge: int, spin: int,
                 num_electrons: int, num_spatial_orbitals: int,
                 orbital_optimization: str, mapping: str,
                 hamiltonian_source: str | None = "of_bridge", *,
                 classical: bool = False, verify_tol: float | None = 1e-4,
                 environment: dict | None = None, light: bool = False) -> dict:
    """Everything that determines a rebuild, as a JSON-able dict.

    ``hamiltonian_source`` enters as the path actually built (``None`` ->
    ``"of_bridge"``).  ``environment`` defaults to :func:`environment_material`.
    """
    problem = {
        "geometry": geometry, "basis": basis, "charge": charge, "spin": spin,
        "active_space": [num_electrons, num_spatial_orbitals],
        "orbital_optimization": orbital_optimization, "mapping": mapping,
        "hamiltonian_source": _built_source(hamiltonian_source),
        "classical": bool(classical), "verify_tol": verify_tol,
    }
    if light:   # only then, so that the keys of full rebuilds do not change
        problem["light"] = True
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "problem": problem,
            "environment": environment_material() if environment is None else environment}


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True).encode()


def _sha256(obj) -> str:
    return hashlib.sha256(_canonical(obj)).hexdigest()


def cache_key(*args, **kwargs) -> str:
    """SHA-256 (hex) of :func:`key_material` (same arguments)."""
    return _sha256(key_material(*args, **kwargs))


# ---------------------------------------------------------------------------
# Payload: what is stored
# ---------------------------------------------------------------------------

@dataclass
class ChemSummary:
    """The scalar results of :class:`~qencode_nb.problem.chemistry.ChemistryResult`
    (no PySCF object), plus the exact ground energies and cache facts.

    Energies in Ha.  ``e_exact_tapered_ha`` is the lowest eigenvalue of the
    tapered operator alone; ``e_exact_qubit_ha`` adds the constant correction
    (the entry's ``exact_qubit_ground_energy_hartree``).  ``cache_hit`` is
    ``True`` when nothing was computed (PySCF not called); ``cache_status``
    says ``hit``, ``absent``, ``refresh`` or ``corrupt: <reason>``.
    """

    orbital_optimization: str
    num_electrons: int
    num_spatial_orbitals: int
    e_hf: float
    e_casci: float
    e_casci_first_excited: float | None = None
    e_casscf: float | None = None
    e_mp2: float | None = None
    e_ccsd: float | None = None
    e_ccsd_t: float | None = None
    casscf_error: str | None = None
    e_exact_tapered_ha: float | None = None
    e_exact_qubit_ha: float | None = None
    exact_method: str | None = None
    build_seconds: float | None = None
    cache_hit: bool = False
    cache_status: str = ""
    cache_key: str = ""
    cache_path: str = ""
    #: The inputs the build used (the ``problem`` part of :func:`key_material`):
    #: geometry (Angstrom), basis, charge, spin, active_space [ne, no],
    #: orbital_optimization, mapping, hamiltonian_source ... (audit tier 1).
    inputs: dict | None = None
    #: Active-space integrals for the sector engine
    #: (:func:`qencode_nb.problem.chemistry.active_space_integrals`).
    integrals: dict | None = None

    @property
    def uses_casscf_orbitals(self) -> bool:
        return self.orbital_optimization == "casscf"

    @property
    def active_electrons_split(self) -> tuple[int, int]:
        n_alpha = self.num_electrons // 2
        return n_alpha, self.num_electrons - n_alpha


_CHEM_FIELDS = ("orbital_optimization", "num_electrons", "num_spatial_orbitals", "e_hf",
                "e_casci", "e_casci_first_excited", "e_casscf", "e_mp2", "e_ccsd",
                "e_ccsd_t", "casscf_error")


def _opt_float(x):
    return None if x is None else float(x)


def _terms_of(operator) -> list:
    """``[[pauli_string, re, im], ...]`` in ``pauli_rep`` order (im kept exactly)."""
    import numpy as np

    from qencode_nb.problem.hamiltonian import format_pauli_word

    return [[format_pauli_word(dict(word)), float(np.real(c)), float(np.imag(c))]
            for word, c in operator.pauli_rep.items()]


def _sentence_of(terms):
    import numpy as np
    from pennylane.pauli import PauliSentence, PauliWord

    from qencode_nb.problem.hamiltonian import parse_pauli_string

    complex_ = any(t[2] != 0.0 for t in terms)
    sentence = PauliSentence()
    for string, re, im in terms:
        word = PauliWord(parse_pauli_string(string))
        if word in sentence:
            raise CacheCorrupt(f"Pauli string {string!r} appears twice")
        sentence[word] = np.complex128(complex(re, im)) if complex_ else np.float64(re)
    return sentence


def _operator_of(spec):
    """Rebuild a PennyLane operator from ``{"terms": ..., "wire_order": ...}``."""
    sentence = _sentence_of(spec["terms"])
    wire_order = spec["wire_order"]
    return sentence.operation() if wire_order is None else sentence.operation(
        wire_order=list(wire_order))


def _operator_spec(operator, candidates) -> dict:
    """Terms of ``operator`` and the first wire order whose rebuild ``qml.equal``s it.

    ``candidates`` are tried in order (``None`` = ``operation()`` without one);
    ``equal`` is ``False`` when none reproduces the object (the term values
    are still exact).
    """
    import pennylane as qml

    terms = _terms_of(operator)
    for wire_order in candidates:
        spec = {"terms": terms, "wire_order": wire_order}
        try:
            if qml.equal(_operator_of(spec), operator):
                return {**spec, "equal": True}
        except Exception:  # noqa: BLE001 - a candidate that cannot even be built
            continue
    return {"terms": terms, "wire_order": candidates[0], "equal": False}


def _exact(H_tapered, correction):
    """Ground energy of the tapered operator as the generator's ``e_exact_qubit``
    (see :func:`qencode_nb.problem.hamcheck.exact_ground`)."""
    from qencode_nb.problem.hamcheck import exact_ground

    wires = sorted(H_tapered.wires)
    if not wires:
        return None, None, "no wire"
    e, method = exact_ground(H_tapered, wires)
    return e, e + (correction or 0.0), method


def _payload(chem, tap, e_tapered, e_qubit, method, seconds) -> dict:
    n_tap = tap.n_qubits_tapered
    full = list(range(tap.n_qubits_full))
    sentence_wires = list(tap.H_tapered.pauli_rep.wires)
    h_spec = _operator_spec(tap.H_tapered, [list(range(n_tap)), None, sentence_wires])
    return {
        "chem": {name: getattr(chem, name) for name in _CHEM_FIELDS},
        "exact": {"e_exact_tapered_ha": e_tapered, "e_exact_qubit_ha": e_qubit,
                  "method": method},
        "taper": {
            "H_tapered": h_spec,
            "hf_tapered": [int(x) for x in tap.hf_tapered],
            "hf_tapered_dtype": str(getattr(tap.hf_tapered, "dtype", "int64")),
            "generators": [_operator_spec(g, [full, None]) for g in tap.generators],
            "paulixops": [_operator_spec(p, [full, None]) for p in tap.paulixops],
            "sectors": [int(s) for s in tap.sectors],
            "n_qubits_full": int(tap.n_qubits_full),
            "n_qubits_tapered": int(n_tap),
            "e_sector_ground_ha": float(tap.e_sector_ground_ha),
            "bk_constant_correction_ha": _opt_float(tap.bk_constant_correction_ha),
            "bk_imaginary_stripped": bool(tap.bk_imaginary_stripped),
            "bk_max_imaginary_abs_ha": _opt_float(tap.bk_max_imaginary_abs_ha),
            "max_imaginary_abs_ha": float(tap.max_imaginary_abs_ha),
        },
        "integrals": chem_integrals(chem),
        "build_seconds": seconds,
    }


def chem_integrals(chem) -> dict:
    """:func:`qencode_nb.problem.chemistry.active_space_integrals` of a fresh build."""
    from qencode_nb.problem.chemistry import active_space_integrals

    return active_space_integrals(chem)


def _require(mapping, name, types, where):
    if not isinstance(mapping, dict) or name not in mapping:
        raise CacheCorrupt(f"{where}.{name} missing")
    value = mapping[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise CacheCorrupt(f"{where}.{name} has type {type(value).__name__}")
    return value


_NUM = (int, float)
_OPT_NUM = (int, float, type(None))


def _check_payload(payload) -> None:
    """Structure and type check of a parsed payload; raises :class:`CacheCorrupt`."""
    if not isinstance(payload, dict):
        raise CacheCorrupt("payload is not an object")
    chem = _require(payload, "chem", (dict,), "payload")
    for name in ("e_hf", "e_casci"):
        _require(chem, name, _NUM, "chem")
    for name in ("e_casci_first_excited", "e_casscf", "e_mp2", "e_ccsd", "e_ccsd_t"):
        _require(chem, name, _OPT_NUM, "chem")
    _require(chem, "orbital_optimization", (str,), "chem")
    _require(chem, "num_electrons", (int,), "chem")
    _require(chem, "num_spatial_orbitals", (int,), "chem")
    _require(chem, "casscf_error", (str, type(None)), "chem")
    exact = _require(payload, "exact", (dict,), "payload")
    _require(exact, "e_exact_tapered_ha", _OPT_NUM, "exact")
    _require(exact, "e_exact_qubit_ha", _OPT_NUM, "exact")
    tap = _require(payload, "taper", (dict,), "payload")
    for name in ("H_tapered",):
        _check_spec(_require(tap, name, (dict,), "taper"), f"taper.{name}")
    for name in ("generators", "paulixops"):
        for i, spec in enumerate(_require(tap, name, (list,), "taper")):
            _check_spec(spec, f"taper.{name}[{i}]")
    for name in ("hf_tapered", "sectors"):
        values = _require(tap, name, (list,), "taper")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise CacheCorrupt(f"taper.{name} holds a non-integer")
    if len(tap["sectors"]) != len(tap["generators"]) or \
            len(tap["paulixops"]) != len(tap["generators"]):
        raise CacheCorrupt("taper: generators, paulixops and sectors differ in length")
    for name in ("n_qubits_full", "n_qubits_tapered"):
        _require(tap, name, (int,), "taper")
    if len(tap["hf_tapered"]) != tap["n_qubits_tapered"]:
        raise CacheCorrupt("taper.hf_tapered length differs from n_qubits_tapered")
    _require(tap, "e_sector_ground_ha", _NUM, "taper")
    _require(tap, "bk_constant_correction_ha", _OPT_NUM, "taper")
    _require(tap, "bk_imaginary_stripped", (bool,), "taper")
    _require(tap, "bk_max_imaginary_abs_ha", _OPT_NUM, "taper")
    _require(tap, "max_imaginary_abs_ha", _NUM, "taper")
    _require(tap, "hf_tapered_dtype", (str,), "taper")
    ints = _require(payload, "integrals", (dict,), "payload")
    norb = _require(ints, "norb", (int,), "integrals")
    _require(ints, "ecore", _NUM, "integrals")
    h1 = _require(ints, "h1", (list,), "integrals")
    h2 = _require(ints, "h2", (list,), "integrals")
    npair = norb * (norb + 1) // 2
    if len(h1) != norb or any(not isinstance(r, list) or len(r) != norb for r in h1):
        raise CacheCorrupt(f"integrals.h1 is not {norb} x {norb}")
    if len(h2) != npair * (npair + 1) // 2:
        raise CacheCorrupt(f"integrals.h2 has {len(h2)} values, want {npair * (npair + 1) // 2}")
    if len(_require(ints, "nelec", (list,), "integrals")) != 2:
        raise CacheCorrupt("integrals.nelec is not [n_alpha, n_beta]")


def _check_spec(spec, where):
    terms = _require(spec, "terms", (list,), where)
    for i, term in enumerate(terms):
        if (not isinstance(term, list) or len(term) != 3 or not isinstance(term[0], str)
                or not all(isinstance(x, _NUM) and not isinstance(x, bool)
                           for x in term[1:])):
            raise CacheCorrupt(f"{where}.terms[{i}] is not [pauli_string, re, im]")
    wire_order = spec.get("wire_order", "missing")
    if wire_order is not None and not isinstance(wire_order, list):
        raise CacheCorrupt(f"{where}.wire_order is not a list or null")


def _restore(payload: dict):
    """``(ChemSummary, TaperResult)`` from a checked payload."""
    import numpy as np

    from qencode_nb.problem.hamiltonian import TaperResult

    t = payload["taper"]
    try:
        H = _operator_of(t["H_tapered"])
        generators = [_operator_of(s) for s in t["generators"]]
        paulixops = [_operator_of(s) for s in t["paulixops"]]
        hf = np.array(t["hf_tapered"], dtype=np.dtype(t["hf_tapered_dtype"]))
    except CacheCorrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure means: do not trust
        raise CacheCorrupt(f"operators cannot be rebuilt: {type(exc).__name__}: {exc}") \
            from None
    if len(H.wires) != t["n_qubits_tapered"]:
        raise CacheCorrupt(f"tapered operator acts on {len(H.wires)} wires, file says "
                           f"{t['n_qubits_tapered']}")
    taper = TaperResult(
        H_tapered=H, hf_tapered=hf, generators=generators, paulixops=paulixops,
        sectors=list(t["sectors"]), n_qubits_full=t["n_qubits_full"],
        n_qubits_tapered=t["n_qubits_tapered"],
        e_sector_ground_ha=t["e_sector_ground_ha"],
        bk_constant_correction_ha=t["bk_constant_correction_ha"],
        bk_imaginary_stripped=t["bk_imaginary_stripped"],
        bk_max_imaginary_abs_ha=t["bk_max_imaginary_abs_ha"],
        max_imaginary_abs_ha=t["max_imaginary_abs_ha"],
    )
    ex = payload["exact"]
    chem = ChemSummary(**payload["chem"], e_exact_tapered_ha=ex["e_exact_tapered_ha"],
                       e_exact_qubit_ha=ex["e_exact_qubit_ha"], exact_method=ex.get("method"),
                       build_seconds=payload.get("build_seconds"),
                       integrals=payload["integrals"])
    return chem, taper


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def path_for(key: str, cache_dir_=None) -> Path:
    """The file of ``key`` under the cache root."""
    return cache_root(cache_dir_) / SUBDIR / f"{key}.json"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder,
    fsync, ``os.replace``); concurrent writers leave one complete file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.stem[:16]}-",
                               suffix=".json")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    STATS["writes"] += 1


def _document(key: str, material: dict, payload: dict) -> bytes:
    return _canonical({"format": FORMAT, "format_version": FORMAT_VERSION, "key": key,
                       "key_material": material, "payload": payload,
                       "payload_sha256": _sha256(payload),
                       "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def store(key: str, material: dict, payload: dict, cache_dir_=None) -> Path:
    """Write one entry's payload under ``key`` (atomic)."""
    path = path_for(key, cache_dir_)
    write_atomic(path, _document(key, material, payload))
    return path


def load(key: str, cache_dir_=None):
    """``(ChemSummary, TaperResult)`` of ``key``, or ``None`` when absent.

    Raises:
        CacheCorrupt: the file exists but fails a check (parse, format,
            key, key-material hash, payload checksum, structure, rebuild).
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
    if _sha256(doc.get("key_material")) != key:
        raise CacheCorrupt("key material does not hash to the key")
    payload = doc.get("payload")
    if _sha256(payload) != doc.get("payload_sha256"):
        raise CacheCorrupt("payload checksum mismatch")
    _check_payload(payload)
    return _restore(payload)


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


def _try_load(key, root):
    """``(result or None, status)``; a corrupt file is reported, never returned."""
    try:
        result = load(key, root)
    except CacheCorrupt as exc:
        STATS["corrupt"] += 1
        warnings.warn(f"qencode-nb cache file {path_for(key, root)} is corrupt "
                      f"({exc}); rebuilding it", CacheWarning, stacklevel=3)
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
                   classical: bool = False, verify_tol: float | None = 1e-4,
                   cache_dir=None, refresh: bool = False, lock: bool = True,
                   light: bool = False):
    """:func:`qencode_nb.problem.rebuild.rebuild_tapered` through the on-disk cache.

    Args:
        geometry ... mapping: the declared procedure (see
            :func:`~qencode_nb.problem.rebuild.rebuild_tapered`).
        hamiltonian_source: ``"of_bridge"`` or ``None`` (undeclared: builds
            of_bridge); ``"pennylane_native"`` raises :class:`CapabilityMissing`.
        classical, verify_tol: passed to the rebuild; both enter the key.
        cache_dir: cache root (see :func:`cache_root`).
        refresh: rebuild and overwrite even when a valid file exists.
        lock: take the per-key ``flock`` while checking and building.
        light: :func:`qencode_nb.problem.rebuild.rebuild_tapered_light` (no
            diagonalisation; the exact ground energy is the CASCI one).

    Returns:
        ``(ChemSummary, TaperResult)``; ``ChemSummary.cache_hit`` says whether
        the result came from disk (then PySCF was not called).

    Raises:
        EntryError, CapabilityMissing, HamiltonianMismatch: as the rebuild.
    """
    material = key_material(geometry, basis, charge, spin, num_electrons,
                            num_spatial_orbitals, orbital_optimization, mapping,
                            hamiltonian_source, classical=classical, verify_tol=verify_tol,
                            light=light)
    key = _sha256(material)
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
        from qencode_nb.problem.rebuild import rebuild_tapered, rebuild_tapered_light

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
                                        classical=classical, verify_tol=verify_tol)
            e_tap, e_qubit, method = _exact(tap.H_tapered, tap.bk_constant_correction_ha)
        seconds = time.perf_counter() - start
        STATS["builds"] += 1
        payload = _payload(chem, tap, e_tap, e_qubit, method, seconds)
        store(key, material, payload, root)
    summary = ChemSummary(**{name: getattr(chem, name) for name in _CHEM_FIELDS},
                          e_exact_tapered_ha=e_tap, e_exact_qubit_ha=e_qubit,
                          exact_method=method, build_seconds=seconds,
                          integrals=payload["integrals"])
    _mark(summary, False, status, key, path, material["problem"])
    return summary, tap


def entry_fields(entry) -> dict:
    """The rebuild fields of an :class:`~qencode_nb.entry.model.Entry` or a raw
    QEncode 4.0.0 dict, as keyword arguments of :func:`cached_rebuild`."""
    if isinstance(entry, dict):
        from qencode_nb.problem.rebuild import _field

        names = {"geometry": "problem.geometry", "basis": "problem.basis",
                 "charge": "problem.charge", "spin": "problem.spin",
                 "num_electrons": "problem.active_space.num_electrons",
                 "num_spatial_orbitals": "problem.active_space.num_spatial_orbitals",
                 "orbital_optimization": "problem.orbital_optimization",
                 "mapping": "encoding.mapping"}
        fields = {k: _field(entry, v) for k, v in names.items()}
        fields["hamiltonian_source"] = (entry.get("provenance") or {}).get(
            "hamiltonian_source")
        return fields
    ne, no = entry.active_space
    return {"geometry": entry.geometry, "basis": entry.basis, "charge": entry.charge,
            "spin": entry.spin, "num_electrons": ne, "num_spatial_orbitals": no,
            "orbital_optimization": entry.orbital_optimization, "mapping": entry.mapping,
            "hamiltonian_source": entry.hamiltonian_source}


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


__all__ = ["CacheCorrupt", "CacheWarning", "ChemSummary", "FORMAT_VERSION", "STATS",
           "cache_key", "cache_root", "cached_rebuild", "cached_rebuild_entry", "clear",
           "entry_fields", "environment_material", "key_material", "load", "path_for",
           "store", "write_atomic"]
