"""The rebuild cache's payload: what is stored of a rebuild, its checks, its restore.

What is stored, per problem: the rebuilt chemistry energies (RHF, CASCI,
CASSCF ...), the Z2-tapered qubit Hamiltonian, every
:class:`~qencode_nb.hamiltonian.tapering.TaperResult` field (symmetry generators
and Pauli-X operators as Pauli-term lists, Z2 sectors, tapered HF state, qubit
counts, constant correction, imaginary-strip facts), the exact ground energy
of the tapered operator and the active-space integrals.  PySCF objects are
never stored: the file is JSON, whose floats round-trip exactly (``repr``).
The writer checks with ``qml.equal`` that the operators rebuilt from the file
(``PauliSentence.operation()``) equal the fresh ones before it stores them.

:func:`restore` returns a :class:`RestoredTaperResult`: its Pauli strings are
validated on load without PennyLane, and its PennyLane operators are built
from the stored terms only when first read, so that a cache hit which only
needs the terms (the Hamiltonian check, the fast engine's
:meth:`~qencode_nb.hamiltonian.tapering.TaperResult.tapered_terms`) never imports
PennyLane.

The payload key of the Z2 sectors is ``"sectors"`` (format version 2, kept
when ``TaperResult.sectors`` became ``z2_sectors``).  Numpy and PennyLane are
imported inside the functions; :func:`restore` imports numpy (the HF state's
array), never PennyLane.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

from qencode_nb.errors import CacheCorrupt, QencodeNbError
from qencode_nb.hamiltonian.chemistry import ChemistryEnergies
from qencode_nb.hamiltonian.tapering import TaperResult


@dataclass
class ChemSummary(ChemistryEnergies):
    """The scalar results of :class:`~qencode_nb.hamiltonian.chemistry.ChemistryResult`
    (:class:`~qencode_nb.hamiltonian.chemistry.ChemistryEnergies`: no PySCF object), plus
    the exact ground energies and cache facts.

    Energies in Ha.  ``e_exact_tapered_ha`` is the lowest eigenvalue of the
    tapered operator alone; ``e_exact_qubit_ha`` adds the constant correction
    (the entry's ``exact_qubit_ground_energy_hartree``).  ``cache_hit`` is
    ``True`` when nothing was computed (PySCF not called); ``cache_status``
    says ``hit``, ``absent``, ``refresh`` or ``corrupt: <reason>``.
    """

    e_exact_tapered_ha: float | None = None
    e_exact_qubit_ha: float | None = None
    exact_method: str | None = None
    build_seconds: float | None = None
    cache_hit: bool = False
    cache_status: str = ""
    cache_key: str = ""
    cache_path: str = ""
    #: The inputs the build used (the ``problem`` part of
    #: :func:`~qencode_nb.hamiltonian.cache_key.key_material`):
    #: geometry (Angstrom), basis, charge, spin, active_space [ne, no],
    #: orbital_optimization, mapping, hamiltonian_source ... (audit tier 1).
    inputs: dict | None = None
    #: Active-space integrals for the sector engine
    #: (:func:`qencode_nb.hamiltonian.chemistry.active_space_integrals`).
    integrals: dict | None = None


#: The chemistry fields the payload stores (``chem``): those of
#: :class:`~qencode_nb.hamiltonian.chemistry.ChemistryEnergies`, in order.
CHEM_FIELDS = tuple(f.name for f in fields(ChemistryEnergies))


def _opt_float(x):
    return None if x is None else float(x)


def _terms_of(operator) -> list:
    """``[[pauli_string, re, im], ...]`` in ``pauli_rep`` order (im kept exactly)."""
    import numpy as np

    from qencode_nb.entry.pauli_strings import format_pauli_word

    return [[format_pauli_word(dict(word)), float(np.real(c)), float(np.imag(c))]
            for word, c in operator.pauli_rep.items()]


def _sentence_of(terms):
    import numpy as np
    from pennylane.pauli import PauliSentence, PauliWord

    from qencode_nb.entry.pauli_strings import parse_pauli_string

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


def build_payload(chem, tap, e_tapered, e_qubit, method, seconds) -> dict:
    """The JSON-able payload of one rebuild.

    Args:
        chem: :class:`~qencode_nb.hamiltonian.chemistry.ChemistryResult` (its
            :data:`CHEM_FIELDS` and active-space integrals are stored).
        tap: :class:`~qencode_nb.hamiltonian.tapering.TaperResult`.
        e_tapered, e_qubit: exact ground energy of the tapered operator and
            with the constant correction (Ha, ``None`` when not computed).
        method: how ``e_tapered`` was obtained.
        seconds: build time.

    Returns:
        ``{"chem", "exact", "taper", "integrals", "build_seconds"}``; operators
        as ``{"terms": [[pauli_string, re, im], ...], "wire_order", "equal"}``.
    """
    from qencode_nb.hamiltonian.chemistry import active_space_integrals

    n_tap = tap.n_qubits_tapered
    full = list(range(tap.n_qubits_full))
    sentence_wires = list(tap.H_tapered.pauli_rep.wires)
    h_spec = _operator_spec(tap.H_tapered, [list(range(n_tap)), None, sentence_wires])
    return {
        "chem": {name: getattr(chem, name) for name in CHEM_FIELDS},
        "exact": {"e_exact_tapered_ha": e_tapered, "e_exact_qubit_ha": e_qubit,
                  "method": method},
        "taper": {
            "H_tapered": h_spec,
            "hf_tapered": [int(x) for x in tap.hf_tapered],
            "hf_tapered_dtype": str(getattr(tap.hf_tapered, "dtype", "int64")),
            "generators": [_operator_spec(g, [full, None]) for g in tap.generators],
            "paulixops": [_operator_spec(p, [full, None]) for p in tap.paulixops],
            "sectors": [int(s) for s in tap.z2_sectors],
            "n_qubits_full": int(tap.n_qubits_full),
            "n_qubits_tapered": int(n_tap),
            "e_sector_ground_ha": float(tap.e_sector_ground_ha),
            "bk_constant_correction_ha": _opt_float(tap.bk_constant_correction_ha),
            "bk_imaginary_stripped": bool(tap.bk_imaginary_stripped),
            "bk_max_imaginary_abs_ha": _opt_float(tap.bk_max_imaginary_abs_ha),
            "max_imaginary_abs_ha": float(tap.max_imaginary_abs_ha),
        },
        "integrals": active_space_integrals(chem),
        "build_seconds": seconds,
    }


def _require(mapping, name, types, where):
    if not isinstance(mapping, dict) or name not in mapping:
        raise CacheCorrupt(f"{where}.{name} missing")
    value = mapping[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise CacheCorrupt(f"{where}.{name} has type {type(value).__name__}")
    return value


_NUM = (int, float)
_OPT_NUM = (int, float, type(None))


def check_payload(payload) -> None:
    """Structure and type check of a parsed payload.

    Raises:
        CacheCorrupt: naming the first field that is missing, of the wrong
            type or of inconsistent length.
    """
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
    # PennyLane's qchem.taper_hf can give fewer entries than the tapered Hamiltonian has
    # wires (LiH STO-3G BK v3: 8 qubits, 3 generators, 5 wires, a state of 4), never more;
    # requiring equality refused every such payload, so those entries rebuilt on every run
    if len(tap["hf_tapered"]) > tap["n_qubits_tapered"]:
        raise CacheCorrupt("taper.hf_tapered is longer than n_qubits_tapered")
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


def _spec_wires(spec) -> list:
    """The sorted wires of the operator :func:`_operator_of` builds from ``spec``.

    Without PennyLane, by ``PauliSentence.operation``'s rule: the union of the
    words' wires, plus the ``wire_order`` when one is given and the sentence
    holds the identity or nothing (its ``Identity`` acts on ``wire_order``).

    Raises:
        CacheCorrupt: a malformed or repeated Pauli string, a wire order that
            is not a list of integers.
    """
    from qencode_nb.entry.pauli_strings import format_pauli_word, parse_pauli_string

    wires, seen, identity = set(), set(), False
    for string, _, _ in spec["terms"]:
        try:
            word = parse_pauli_string(string)
        except QencodeNbError as exc:
            raise CacheCorrupt(f"operators cannot be rebuilt: {exc}") from None
        canonical = format_pauli_word(word)
        if canonical in seen:
            raise CacheCorrupt(f"Pauli string {string!r} appears twice")
        seen.add(canonical)
        identity = identity or not word
        wires.update(word)
    order = spec["wire_order"]
    if order is not None and not all(isinstance(w, int) and not isinstance(w, bool)
                                     for w in order):
        raise CacheCorrupt(f"wire_order {order!r} is not a list of integers")
    if order and (identity or not seen):
        wires.update(order)
    return sorted(wires)


class RestoredTaperResult(TaperResult):
    """A :class:`~qencode_nb.hamiltonian.tapering.TaperResult` read from the cache.

    Every scalar field, ``hf_tapered`` and ``z2_sectors`` are set on load;
    ``H_tapered``, ``generators`` and ``paulixops`` are PennyLane operators
    built from the stored Pauli terms (``PauliSentence.operation()``, as
    before) on first read and kept (``functools.cached_property``), so that
    PennyLane is imported only by code that reads them.
    :meth:`tapered_terms` and :meth:`tapered_wires` read the stored terms and
    never import PennyLane; they equal the base class's answers on the built
    operator (the built operator's ``pauli_rep`` is the stored sentence).

    Reading an operator raises :class:`CacheCorrupt` if PennyLane cannot build
    it (the strings were already validated by :func:`restore`).
    """

    def __init__(self, specs: dict, **fields):
        self._specs = specs
        for name, value in fields.items():
            setattr(self, name, value)
        self.num_symmetries = len(specs["generators"])

    @staticmethod
    def _build(spec, what):
        try:
            return _operator_of(spec)
        except CacheCorrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means: do not trust
            raise CacheCorrupt(f"{what} cannot be rebuilt: {type(exc).__name__}: "
                               f"{exc}") from None

    @functools.cached_property
    def H_tapered(self):  # noqa: N802 - the dataclass field's name
        """The tapered PennyLane operator (Ha), built on first read."""
        return self._build(self._specs["H_tapered"], "H_tapered")

    @functools.cached_property
    def generators(self) -> list:
        """The symmetry generators (PennyLane operators), built on first read."""
        return [self._build(s, "generators") for s in self._specs["generators"]]

    @functools.cached_property
    def paulixops(self) -> list:
        """The Pauli-X operators (PennyLane operators), built on first read."""
        return [self._build(s, "paulixops") for s in self._specs["paulixops"]]

    def tapered_terms(self) -> list:
        """:meth:`TaperResult.tapered_terms` from the stored terms (no PennyLane)."""
        from qencode_nb.entry.pauli_strings import parse_pauli_string

        terms = self._specs["H_tapered"]["terms"]
        complex_ = any(t[2] != 0.0 for t in terms)
        return [(parse_pauli_string(string), complex(re, im) if complex_ else float(re))
                for string, re, im in terms]

    def tapered_wires(self) -> list:
        """:meth:`TaperResult.tapered_wires` from the stored terms (no PennyLane)."""
        return _spec_wires(self._specs["H_tapered"])


def symmetry_terms(tap) -> dict:
    """The Z2 symmetry of a tapered problem as plain data, for keys that name content.

    ``{"n_qubits_full", "generators", "paulixops", "sectors"}``: the symmetry generators'
    and Pauli-X operators' ``[[pauli_string, re, im], ...]`` (the payload's term lists,
    :func:`_terms_of`) and the Z2 sectors.  A :class:`RestoredTaperResult` answers from
    its stored terms without PennyLane; a fresh
    :class:`~qencode_nb.hamiltonian.tapering.TaperResult` from its operators.  Both give
    the same lists for the same operators (the file holds what :func:`_terms_of` wrote,
    and JSON floats round-trip exactly).

    Args:
        tap: a :class:`~qencode_nb.hamiltonian.tapering.TaperResult`.
    """
    if isinstance(tap, RestoredTaperResult):
        generators = [[list(t) for t in s["terms"]] for s in tap._specs["generators"]]
        paulixops = [[list(t) for t in s["terms"]] for s in tap._specs["paulixops"]]
    else:
        generators = [_terms_of(g) for g in tap.generators]
        paulixops = [_terms_of(p) for p in tap.paulixops]
    return {"n_qubits_full": int(tap.n_qubits_full), "generators": generators,
            "paulixops": paulixops, "sectors": [int(s) for s in tap.z2_sectors]}


def restore(payload: dict):
    """``(ChemSummary, RestoredTaperResult)`` from a payload that passed
    :func:`check_payload`.

    Imports numpy, not PennyLane: the Pauli strings of every operator are
    parsed here, the operators themselves are built when first read
    (:class:`RestoredTaperResult`).

    Raises:
        CacheCorrupt: a malformed or repeated Pauli string, a bad wire order or
            HF-state dtype, or a tapered operator that acts on another number
            of wires than the file says.
    """
    import numpy as np

    t = payload["taper"]
    specs = {"H_tapered": t["H_tapered"], "generators": list(t["generators"]),
             "paulixops": list(t["paulixops"])}
    try:
        n_wires = len(_spec_wires(specs["H_tapered"]))
        for spec in (*specs["generators"], *specs["paulixops"]):
            _spec_wires(spec)
        hf = np.array(t["hf_tapered"], dtype=np.dtype(t["hf_tapered_dtype"]))
    except CacheCorrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure means: do not trust
        raise CacheCorrupt(f"operators cannot be rebuilt: {type(exc).__name__}: {exc}") \
            from None
    if n_wires != t["n_qubits_tapered"]:
        raise CacheCorrupt(f"tapered operator acts on {n_wires} wires, file says "
                           f"{t['n_qubits_tapered']}")
    taper = RestoredTaperResult(
        specs, hf_tapered=hf, z2_sectors=list(t["sectors"]),
        n_qubits_full=t["n_qubits_full"], n_qubits_tapered=t["n_qubits_tapered"],
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
