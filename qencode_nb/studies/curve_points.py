"""A QEncode v4 dissociation curve read point by point, each point an entry of one's own.

QEncode's ``releases/v4/curves/<molecule>_dissociation.json`` (suite v4.3) state per
point only ``R``, the classical references (``hf``, ``ccsd_t``, ``casscf``, ``casci``)
and the ADAPT result (``vqe``, ``gap_mha`` against CASCI, ``n_ops``); the file states the
molecule, basis, active space, orbitals and method once.  They record no versions, seed,
hash, mapping or tapering, and the script that made them is not published.
:func:`point_params` turns one point into the data of a YAML entry of one's own
(:func:`qencode_nb.entry.readers.from_own_params`), every value the file does not state
listed in :func:`assumptions` with its source.

**Geometry rule** (:data:`GEOMETRY`; QEncode's catalog ``molecules_v4.json`` at
qencode-benchmark master a46b4ec writes these molecules on the z axis, in Angstrom, in
this atom order): the diatomics H2, HF and LiH are ``A 0 0 0; B 0 0 R`` with the bond
length R (H2: H, H; HF: H first, then F; LiH: Li first, then H; N2: N, N); the hydrogen
chains H4 and H6 are linear, ``H 0 0 k*R`` for k = 0 .. n-1, R the spacing between
neighbours (the catalog's chains are spaced 1.0 Angstrom).

**Active space.** The file states it once (``"active_space": "[2,2]"``; the README's
table repeats it per molecule).  :func:`resolve_active_space` rebuilds the first point's
CASCI with it and, when that misses the published CASCI by more than
:data:`qencode_nb.rules.REFERENCE_MATCH_HA`, with QEncode's catalog active space for the
molecule; the one that matches is used, and the check's outcome is an assumption of
every point.

Importing this module imports nothing heavy (no numpy).
"""

from __future__ import annotations

import json
from pathlib import Path

from qencode_nb.errors import EntryError
from qencode_nb.rules import (ADAPT_QNODE_MAX_QUBITS, CERTIFICATION_THRESHOLD_HA,
                              CURVE_MAX_OPERATORS, GENERATOR_DEFAULTS, GENERATOR_MAPPING,
                              REFERENCE_MATCH_HA)

__all__ = ["CATALOG_ACTIVE_SPACE", "GEOMETRY", "CurveFile", "assumptions", "geometry",
           "point_params", "read_curve", "resolve_active_space"]

#: Per molecule: the atoms in catalog order and whether it is a chain (spacing R) or a
#: diatomic (bond length R).  Source: QEncode ``molecules_v4.json`` (a46b4ec).
GEOMETRY = {
    "h2": (("H", "H"), "diatomic"),
    "hf": (("H", "F"), "diatomic"),
    "lih": (("Li", "H"), "diatomic"),
    "n2": (("N", "N"), "diatomic"),
    "h4": (("H",) * 4, "chain"),
    "h6": (("H",) * 6, "chain"),
}

#: QEncode's catalog ``v4_active_space`` (``molecules_v4.json``, a46b4ec), which the
#: curves README repeats: (active electrons, active spatial orbitals).
CATALOG_ACTIVE_SPACE = {"h2": (2, 2), "hf": (2, 2), "lih": (4, 4), "n2": (6, 6),
                        "h4": (4, 4), "h6": (6, 6)}

#: The keys every point of a curve file holds.
POINT_KEYS = ("R", "hf", "casci", "vqe", "gap_mha", "n_ops")


class CurveFile:
    """A curve file as read: ``molecule`` (lower case), ``basis``, ``orbitals``,
    ``active_space`` (as stated), ``method``, ``points`` (dicts, in file order), ``path``."""

    def __init__(self, path: Path, raw: dict):
        self.path = path
        self.molecule = str(raw["molecule"]).lower()
        self.basis = raw["basis"]
        self.orbitals = raw["orbitals"]
        self.method = raw.get("method", "")
        self.active_space = parse_active_space(raw["active_space"], path)
        self.points = list(raw["points"])

    def label(self) -> str:
        """``H2 cc-pvdz [2,2] casscf``: the curve in a caption."""
        ne, no = self.active_space
        return f"{self.molecule.upper()} {self.basis} [{ne},{no}] {self.orbitals}"


def parse_active_space(value, path=None) -> tuple[int, int]:
    """``"[2,2]"``, ``[2, 2]`` or ``"2,2"`` -> ``(2, 2)``."""
    try:
        items = json.loads(value) if isinstance(value, str) and value.strip().startswith("[") \
            else (value.split(",") if isinstance(value, str) else value)
        ne, no = (int(x) for x in items)
        return ne, no
    except (TypeError, ValueError) as exc:
        raise EntryError(f"{value!r} is not accepted ({exc}); accepted: [electrons, "
                         "orbitals]", field="active_space", path=path) from None


def read_curve(path) -> CurveFile:
    """Read a QEncode v4 dissociation-curve JSON file.

    Raises:
        EntryError: unreadable, not JSON, a missing key, or a molecule without a
            geometry rule (:data:`GEOMETRY`).
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EntryError(f"cannot read: {exc.strerror}", path=path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EntryError(f"not a JSON curve file ({exc})", path=path) from None
    for key in ("molecule", "basis", "orbitals", "active_space", "points"):
        if key not in raw:
            raise EntryError("required field is missing", field=key, path=path)
    curve = CurveFile(path, raw)
    if curve.molecule not in GEOMETRY:
        raise EntryError(f"{raw['molecule']!r} has no geometry rule; accepted: "
                         + ", ".join(sorted(GEOMETRY)), field="molecule", path=path)
    for i, p in enumerate(curve.points):
        missing = [k for k in POINT_KEYS if k not in p]
        if missing:
            raise EntryError(f"required field {missing[0]!r} is missing",
                             field=f"points[{i}]", path=path)
    return curve


def geometry(molecule: str, R: float) -> str:
    """The PySCF atom string (Angstrom) of ``molecule`` at ``R`` (:data:`GEOMETRY`)."""
    atoms, kind = GEOMETRY[molecule.lower()]
    if kind == "diatomic":
        return f"{atoms[0]} 0.0 0.0 0.0; {atoms[1]} 0.0 0.0 {R!r}"
    return "; ".join(f"{a} 0.0 0.0 {k * R!r}" for k, a in enumerate(atoms))


def resolve_active_space(curve: CurveFile) -> tuple[tuple[int, int], dict]:
    """The active space the curve was computed in, and its assumption record.

    The stated one, unless the first point's rebuilt CASCI (PySCF, the curve's
    orbitals) misses the published ``casci`` by more than
    :data:`~qencode_nb.rules.REFERENCE_MATCH_HA` and the catalog's
    (:data:`CATALOG_ACTIVE_SPACE`) matches it.  Runs PySCF once or twice.
    """
    from qencode_nb.hamiltonian.chemistry import run_chemistry

    first = curve.points[0]
    stated = curve.active_space
    candidates = [stated] + [a for a in (CATALOG_ACTIVE_SPACE[curve.molecule],) if a != stated]
    misses = {}
    for asp in candidates:
        chem = run_chemistry(geometry(curve.molecule, first["R"]), curve.basis, 0, 0,
                             asp[0], asp[1], curve.orbitals)
        misses[asp] = abs(chem.e_casci - first["casci"])
        if misses[asp] <= REFERENCE_MATCH_HA:
            break
    used = min(misses, key=misses.get)
    text = "; ".join(f"[{a[0]},{a[1]}] gives CASCI {d:.2e} Ha from the published one"
                     for a, d in misses.items())
    if used == stated:
        source = f"the file's active_space; at R={first['R']}: {text}"
    else:
        source = (f"the file states active_space [{stated[0]},{stated[1]}] but at "
                  f"R={first['R']} {text}; [{used[0]},{used[1]}] is QEncode's catalog "
                  "v4_active_space (molecules_v4.json) and the curves README's")
    return used, {"used": list(used), "source": source}


def inner_optimizer(active_space) -> str:
    """The generator's ADAPT optimiser string for a problem of this size: the QNode
    engine with inner COBYLA up to :data:`~qencode_nb.rules.ADAPT_QNODE_MAX_QUBITS`
    qubits (untapered count here, which bounds the tapered one), else the statevector
    engine with its default inner L-BFGS-B (``--adapt-inner bfgs``)."""
    if 2 * active_space[1] <= ADAPT_QNODE_MAX_QUBITS:
        return "ADAPT-VQE (COBYLA inner)"
    return "ADAPT-VQE (L-BFGS-B inner, statevector engine)"


def assumptions(curve: CurveFile, active_space: tuple[int, int], asp_record: dict,
                max_operators: int) -> dict:
    """``{what: {"used": value, "source": where it comes from}}``: every value a point
    needs that the curve file does not state."""
    def gen(field):
        value, source = GENERATOR_DEFAULTS[field]
        return {"used": value, "source": f"not in the curve file; {source}"}

    cap_source = ("not in the curve file; the curves README's 40-operator cap "
                  "(rules.CURVE_MAX_OPERATORS)" if max_operators == CURVE_MAX_OPERATORS
                  else "not in the curve file; set by the caller (--cap)")
    return {
        "geometry": {"used": "diatomic: A 0 0 0; B 0 0 R / chain: H 0 0 k*R (Angstrom)",
                     "source": "not in the curve file; QEncode's catalog molecules_v4.json "
                               "(z axis, catalog atom order); R as bond length or spacing"},
        "active_space": asp_record,
        "mapping": {"used": GENERATOR_MAPPING,
                    "source": "not in the curve file; generator default --mapping "
                              "jordan_wigner (rules.GENERATOR_MAPPING)"},
        "tapering": {"used": "Z2 tapering, sector by the generator's search",
                     "source": "not in the curve file; generator default (tapering on "
                               "unless --no-taper; _find_optimal_sector)"},
        "adapt.gradient_threshold": gen("adapt.gradient_threshold"),
        "adapt.max_operators": {"used": max_operators, "source": cap_source},
        "adapt.inner_optimizer": {
            "used": inner_optimizer(active_space),
            "source": "not in the curve file (method 'ADAPT-VQE (commutator gradients)'); "
                      "generator --adapt-engine auto: QNode engine, inner COBYLA, at <= "
                      f"{ADAPT_QNODE_MAX_QUBITS} qubits (rules.ADAPT_QNODE_MAX_QUBITS)"},
        "max_iterations": gen("max_iterations"),
        "seed": gen("seed"),
        "hamiltonian_source": gen("hamiltonian_source"),
        "early_stop": gen("early_stop"),
        "certification_threshold_ha": {
            "used": CERTIFICATION_THRESHOLD_HA,
            "source": "not in the curve file; QEncode v4's gap_threshold "
                      "(rules.CERTIFICATION_THRESHOLD_HA), compared with gap_mha"},
        "charge_spin": {"used": [0, 0], "source": "not in the curve file; neutral singlets "
                                                  "as in QEncode's catalog"},
    }


def point_params(curve: CurveFile, point: dict, active_space, assumed: dict) -> dict:
    """The data of a YAML entry of one's own for one curve point (its published result
    included); ``tapering_sectors`` is left empty for the rebuild's search to fill."""
    R = point["R"]
    published = {"energy_ha": point["vqe"], "casci_energy_ha": point["casci"],
                 "hf_energy_ha": point["hf"], "num_params": int(point["n_ops"]),
                 "certified": bool(point["gap_mha"] < CERTIFICATION_THRESHOLD_HA * 1e3)}
    return {
        "name": f"{curve.molecule}_R{R}",
        "description": f"{curve.label()} at R = {R} Angstrom ({curve.path.name})",
        "problem": {"molecule": curve.molecule.upper(), "geometry": geometry(curve.molecule, R),
                    "basis": curve.basis, "charge": 0, "spin": 0,
                    "active_space": list(active_space), "orbital_optimization": curve.orbitals},
        "encoding": {"mapping": assumed["mapping"]["used"], "ansatz": "adapt",
                     "adapt": {"gradient_threshold": assumed["adapt.gradient_threshold"]["used"],
                               "max_operators": assumed["adapt.max_operators"]["used"]},
                     "tapering_sectors": []},
        "run": {"optimizer": assumed["adapt.inner_optimizer"]["used"],
                "max_iterations": assumed["max_iterations"]["used"],
                "restarts": GENERATOR_DEFAULTS["restarts_requested"][0],
                "seed": assumed["seed"]["used"]},
        "published": published,
        "threshold_ha": assumed["certification_threshold_ha"]["used"],
    }
