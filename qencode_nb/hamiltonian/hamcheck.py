"""Hamiltonian check: a rebuilt qubit Hamiltonian against the stored one.

docs/explanations/tiers.md / the Hamiltonian check: rebuilt vs stored Pauli
terms, exact ground energies, and the ``hamiltonian_source`` the stored terms
are proven to equal by rebuilding each generator path
(:mod:`qencode_nb.hamiltonian.sources`: of_bridge, and PennyLane's native path
when of_bridge does not match; equal after term order or a Pauli
conjugation, :mod:`qencode_nb.hamiltonian.equivalence`).  Energies in Ha.

The fingerprint |E_exact(qubit H) - E_CASCI| is reported, not used to decide:
QEncode's generator says of_bridge matches CASCI to ~1e-15 Ha and PennyLane's
native ``molecular_hamiltonian`` (its own Hartree-Fock) lands up to 3.6e-4 Ha
away, but an edited coefficient moves it too.

The thresholds are :data:`qencode_nb.rules.FINGERPRINT_THRESHOLD_HA` (with
its sources), :data:`qencode_nb.rules.COEFF_MATCH_HA` and
:data:`qencode_nb.rules.WEYL_REUSE_HA`; ground energies come from
:func:`qencode_nb.hamiltonian.exact.exact_ground_energy`.  Numpy and PennyLane are
imported inside the functions, and only when an operator must be diagonalised:
given a :class:`~qencode_nb.hamiltonian.tapering.TaperResult` with its ground energy
(a cache hit), the comparison runs on Pauli-term lists and imports neither: a
stored Hamiltonian within :data:`WEYL_REUSE_HA` of the rebuilt one reuses its
ground energy, any other has its own ground energy cached
(:func:`stored_ground_energy`).
"""

from __future__ import annotations

from dataclasses import replace

from qencode_nb.hamiltonian.exact import exact_ground_energy
from qencode_nb.entry.pauli_strings import (
    format_pauli_word,
    parse_pauli_string,
    validate_pauli_terms,
)
from qencode_nb.hamiltonian import sources
from qencode_nb.hamiltonian.hamrecord import HamiltonianCheck
from qencode_nb.hamiltonian.pauli import from_pauli_terms
from qencode_nb.rules import COEFF_MATCH_HA, FINGERPRINT_THRESHOLD_HA, WEYL_REUSE_HA

MAX_LISTED = 20
"""``missing`` / ``extra`` list at most this many Pauli strings."""


def _canonical_terms(pauli_terms) -> dict:
    """``{canonical pauli_string: coefficient}`` of QEncode terms, in order."""
    return {format_pauli_word(parse_pauli_string(t["pauli_string"])): t["coefficient"]
            for t in pauli_terms}


def terms_sha256(terms: dict) -> str:
    """The SHA-256 (hex) of a Hamiltonian's terms to the bit and in their order: the lines
    ``<pauli string> <real part as float.hex> <imaginary part as float.hex>``.

    Args:
        terms: ``{canonical pauli string: coefficient (Ha, real or complex)}`` in term order
            (the rebuild's ``pauli_rep`` order; :func:`pauli_terms_sha256` for QEncode's
            list).  Two operators with equal digests sum the same numbers in the same order.
    """
    import hashlib

    lines = "".join(f"{s} {complex(c).real.hex()} {complex(c).imag.hex()}\n"
                    for s, c in terms.items())
    return hashlib.sha256(lines.encode()).hexdigest()


def pauli_terms_sha256(pauli_terms) -> str:
    """:func:`terms_sha256` of QEncode ``pauli_terms`` (``[{"pauli_string", "coefficient"}]``,
    e.g. the terms QEncode's generator serialised), strings in canonical form."""
    return terms_sha256(_canonical_terms(pauli_terms))


def _rebuilt_terms(H) -> dict:
    """``{pauli_string: complex coefficient}`` of an operator's ``pauli_rep``."""
    return {format_pauli_word(dict(word)): complex(c) for word, c in H.pauli_rep.items()}


def _rebuilt_side(rebuilt_H, num_qubits: int):
    """``(terms, wires, operator)`` of the rebuilt side of :func:`compare_hamiltonian`.

    ``terms``: ``{pauli_string: complex coefficient}`` in ``pauli_rep`` order;
    ``wires``: the sorted wires the operator acts on; ``operator()``: the
    PennyLane operator (built, and PennyLane imported, only when called).
    """
    if hasattr(rebuilt_H, "tapered_terms"):   # a TaperResult (cache-restored or fresh)
        terms = {format_pauli_word(word): complex(c)
                 for word, c in rebuilt_H.tapered_terms()}
        return terms, rebuilt_H.tapered_wires(), lambda: rebuilt_H.H_tapered
    if isinstance(rebuilt_H, list):
        top = max((max(parse_pauli_string(t["pauli_string"]), default=-1)
                   for t in rebuilt_H), default=-1)
        rebuilt_H = from_pauli_terms(rebuilt_H, max(num_qubits, top + 1))
    operator = rebuilt_H
    return _rebuilt_terms(operator), sorted(operator.wires), lambda: operator


def compare_hamiltonian(stored_terms, num_qubits: int, rebuilt_H, *,
                        e_exact_stored: float | None, e_casci: float,
                        constant_ha: float | None = 0.0,
                        constant_rebuilt_ha: float | None = None,
                        hamiltonian_source_recorded: str | None = None,
                        rebuilt_ground_ha: float | None = None,
                        diagonalise_stored: str = "auto",
                        ground_is_casci: bool = False, cache_dir=None,
                        kernel_dependent: bool = False,
                        kernels_note: str | None = None) -> HamiltonianCheck:
    """Compare a stored tapered Hamiltonian with a rebuilt (of_bridge) one.

    Args:
        stored_terms: the entry's ``artifacts.qubit_hamiltonian.pauli_terms``.
        num_qubits: the entry's ``artifacts.qubit_hamiltonian.num_qubits``.
        rebuilt_H: the rebuilt tapered problem, built through of_bridge: a
            :class:`~qencode_nb.hamiltonian.tapering.TaperResult` (its
            ``tapered_terms()`` and ``tapered_wires()``; its PennyLane operator
            only when ``rebuilt_ground_ha`` is not given), a PennyLane operator
            (e.g. ``TaperResult.H_tapered``) or a list of QEncode terms.
        e_exact_stored: the entry's ``exact_qubit_ground_energy_hartree``
            (``None`` when not recorded).
        e_casci: the entry's ``casci_ground_energy_hartree``.
        constant_ha: the entry's ``bk_constant_correction_ha`` (``None`` = 0),
            added to the stored operator's energies.
        constant_rebuilt_ha: the rebuild's correction; default ``constant_ha``.
        hamiltonian_source_recorded: ``provenance.hamiltonian_source`` (``None``
            when undeclared).
        rebuilt_ground_ha: lowest eigenvalue of ``rebuilt_H`` alone when
            already known (e.g. :attr:`ChemSummary.e_exact_tapered_ha` from the
            cache); otherwise it is computed.
        diagonalise_stored: ``"auto"`` (diagonalise the stored operator unless
            it is within :data:`WEYL_REUSE_HA` of the rebuilt one), ``"always"``
            or ``"never"`` (always reuse with the reported bound).
        ground_is_casci: ``rebuilt_ground_ha`` is the CASCI energy, not a
            diagonalisation (the light rebuild above 16 qubits); the
            fingerprint is then not informative and the coefficients decide.
        cache_dir: cache root of the stored ground energy's side file
            (:func:`stored_ground_energy`; None: the default root).
        kernel_dependent, kernels_note: as :func:`qencode_nb.hamiltonian.sources.decide`
            takes them (CASSCF orbitals; the kernels in force when not the
            reference triple).

    Returns:
        :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck` with the term
        comparison (:func:`_term_sets`), the ground energies
        (:func:`_ground_energies`), the fingerprint (:func:`_fingerprint`) and the
        of_bridge path's outcome (:func:`_source_decision`); the chemistry and
        cache fields are None.  :func:`check_entry` adds the other paths.

    Raises:
        EntryError: malformed stored terms (``validate_pauli_terms``).
        ValueError: ``diagonalise_stored`` not one of the three values.
    """
    if diagonalise_stored not in ("auto", "always", "never"):
        raise ValueError(f"diagonalise_stored {diagonalise_stored!r}; accepted: "
                         "auto, always, never")
    validate_pauli_terms(stored_terms, num_qubits)  # as from_pauli_terms does, no PennyLane
    stored = _canonical_terms(stored_terms)
    rebuilt, rebuilt_wires_sorted, rebuilt_operator = _rebuilt_side(rebuilt_H, num_qubits)
    constant = float(constant_ha or 0.0)
    constant_rebuilt = constant if constant_rebuilt_ha is None else float(constant_rebuilt_ha)

    terms = _term_sets(stored, rebuilt, constant, constant_rebuilt)
    ground = _ground_energies(
        stored_terms, num_qubits, rebuilt_operator,
        rebuilt_wires_sorted or list(range(num_qubits)), rebuilt_ground_ha,
        constant=constant, constant_rebuilt=constant_rebuilt,
        reuse=diagonalise_stored == "never" or (
            diagonalise_stored == "auto" and terms["weyl_bound_ha"] <= WEYL_REUSE_HA),
        weyl_bound_ha=terms["weyl_bound_ha"], e_exact_stored=e_exact_stored,
        cache_dir=cache_dir)
    fingerprint = _fingerprint(stored, rebuilt, e_casci, ground["ground_energy"],
                               ground["ground_energy_stored_terms"],
                               informative=constant == 0.0 and not ground_is_casci)
    paths = {"of_bridge": sources.compare_path(stored, constant, rebuilt, constant_rebuilt)}
    return HamiltonianCheck(
        num_qubits=num_qubits, n_qubits_rebuilt=len(rebuilt_wires_sorted), **terms,
        **ground, e_casci=e_casci, **fingerprint,
        **_source_decision(paths, hamiltonian_source_recorded, kernel_dependent,
                           kernels_note))


def _term_sets(stored: dict, rebuilt: dict, constant: float,
               constant_rebuilt: float) -> dict:
    """The term comparison's :class:`HamiltonianCheck` fields: the Pauli-string
    sets and order, ``missing`` / ``extra`` (at most :data:`MAX_LISTED`), the
    largest |Δ coefficient| (Ha) and its string, bit identity and how many
    coefficients differ (a string on one side only counts; 0 exactly when
    ``coeffs_bit_identical``), and the Weyl bound (Ha) on any eigenvalue shift."""
    missing = [s for s in stored if s not in rebuilt]
    extra = [s for s in rebuilt if s not in stored]
    common = [s for s in stored if s in rebuilt]
    dcoeff = {s: abs(rebuilt[s] - stored[s]) for s in common}
    max_term = max(dcoeff, key=dcoeff.get) if dcoeff else None
    weyl = (sum(dcoeff.values()) + sum(abs(stored[s]) for s in missing)
            + sum(abs(rebuilt[s]) for s in extra) + abs(constant_rebuilt - constant))
    return {
        "n_terms": len(rebuilt), "n_terms_stored": len(stored),
        "terms_match": not missing and not extra,
        "order_match": list(stored) == list(rebuilt),
        "missing": missing[:MAX_LISTED], "extra": extra[:MAX_LISTED],
        "n_missing": len(missing), "n_extra": len(extra),
        "max_abs_dcoeff": dcoeff[max_term] if max_term is not None else None,
        "max_abs_dcoeff_term": max_term,
        "coeffs_bit_identical": (not missing and not extra
                                 and all(rebuilt[s] == stored[s] for s in common)),
        "coeffs_differing": (len(missing) + len(extra)
                             + sum(1 for s in common if rebuilt[s] != stored[s])),
        "rebuilt_terms_sha256": terms_sha256(rebuilt),
        "weyl_bound_ha": weyl, "constant_ha": constant,
        "constant_rebuilt_ha": constant_rebuilt}


def _ground_energies(stored_terms, num_qubits: int, rebuilt_operator, rebuilt_wires,
                     rebuilt_ground_ha: float | None, *, constant: float,
                     constant_rebuilt: float, reuse: bool, weyl_bound_ha: float,
                     e_exact_stored: float | None, cache_dir) -> dict:
    """The ground-energy :class:`HamiltonianCheck` fields (Ha): the rebuilt
    operator's (given, else the generator's e_exact_qubit procedure on
    ``rebuilt_operator()``) and the stored terms' (reused from the rebuilt one
    within the Weyl bound when ``reuse``, else :func:`stored_ground_energy`), each
    plus its constant correction."""
    if rebuilt_ground_ha is None:
        rebuilt_ground_ha, ground_method = exact_ground_energy(
            rebuilt_operator(), rebuilt_wires, with_method=True)
    else:
        ground_method = "given"
    ground = rebuilt_ground_ha + constant_rebuilt
    if reuse:
        ground_stored_terms = rebuilt_ground_ha + constant
        stored_method = f"reused rebuilt ground (Weyl bound {weyl_bound_ha:.3e} Ha)"
    else:
        stored_ground, stored_method = stored_ground_energy(stored_terms, num_qubits,
                                                            cache_dir=cache_dir)
        ground_stored_terms = stored_ground + constant
    return {"ground_energy": ground, "ground_method": ground_method,
            "ground_energy_stored": e_exact_stored,
            "ground_energy_diff": None if e_exact_stored is None
            else ground - e_exact_stored,
            "ground_energy_stored_terms": ground_stored_terms,
            "stored_ground_method": stored_method}


def _fingerprint(stored: dict, rebuilt: dict, e_casci: float, ground: float,
                 ground_stored_terms: float, *, informative: bool) -> dict:
    """The fingerprint :class:`HamiltonianCheck` fields (Ha): |E_exact - E_CASCI|
    of the stored and of the rebuilt operator, the thresholds, and the trace and
    squared-norm differences (rebuilt minus stored; invariant under the tapering
    Clifford and active-orbital rotations)."""
    return {
        "fingerprint_ha": abs(ground_stored_terms - e_casci),
        "fingerprint_rebuilt_ha": abs(ground - e_casci),
        "fingerprint_informative": informative,
        "fingerprint_threshold_ha": FINGERPRINT_THRESHOLD_HA,
        "coeff_match_ha": COEFF_MATCH_HA,
        "trace_diff_ha": complex(rebuilt.get("I", 0.0) - stored.get("I", 0.0)).real,
        "norm_sq_diff_ha2": (sum(abs(v) ** 2 for v in rebuilt.values())
                             - sum(abs(v) ** 2 for v in stored.values()))}


def _source_decision(paths: dict, recorded: str | None, kernel_dependent: bool,
                     kernels_note: str | None) -> dict:
    """The outcome :class:`HamiltonianCheck` fields over ``paths``
    (:func:`qencode_nb.hamiltonian.sources.decide`): ``paths``, ``hamiltonian_source``,
    ``status``, ``reason``, ``kernel_dependent``, ``source_matches`` and
    ``hamiltonian_source_recorded``."""
    return {"hamiltonian_source_recorded": recorded, "paths": paths,
            **sources.decide(paths, recorded=recorded, kernel_dependent=kernel_dependent,
                             kernels_note=kernels_note)}


#: Format of the stored-ground cache file (``ground-<key>.json``).
STORED_GROUND_FORMAT = 1


def stored_ground_energy(stored_terms, num_qubits: int, *,
                         cache_dir=None) -> tuple[float, str]:
    """``(ground energy (Ha), method)`` of a stored Hamiltonian by
    :func:`~qencode_nb.hamiltonian.exact.exact_ground_energy` on wires ``0..n-1``.

    The result is kept in ``ground-<key>.json`` beside the rebuild cache
    (under ``cache_dir``, :func:`qencode_nb.hamiltonian.cache.cache_root`), keyed
    by the terms and the environment (package versions, code, BLAS variables,
    CPU: :func:`qencode_nb.hamiltonian.cache_key.environment_material`), so a warm
    run reads it back without PennyLane (the diagonalisation builds a PennyLane
    operator).  An unreadable file is recomputed
    (:func:`qencode_nb.hamiltonian.cache.side_file`).
    """
    from qencode_nb.hamiltonian import cache
    from qencode_nb.hamiltonian.cache_key import environment_material, sha256_json

    def compute():
        energy, method = exact_ground_energy(from_pauli_terms(stored_terms, num_qubits),
                                             list(range(num_qubits)), with_method=True)
        return {"energy": energy, "method": method}

    material = {"kind": "stored-ground", "format": STORED_GROUND_FORMAT,
                "terms": sha256_json(stored_terms), "num_qubits": int(num_qubits),
                "environment": environment_material()}
    doc, _ = cache.side_file("ground", material, compute, cache_dir_=cache_dir)
    return float(doc["energy"]), str(doc["method"])


def check_entry(entry, *, cache_dir=None, diagonalise_stored: str = "auto",
                rebuilt=None, proof_budget: float | None = None) -> HamiltonianCheck:
    """Rebuild an entry through the cache and compare its stored Hamiltonian.

    Args:
        entry: :class:`~qencode_nb.entry.model.Entry` with a stored Hamiltonian
            (a QEncode JSON entry, or a params entry completed from ``db``).
        cache_dir: cache root (see :func:`qencode_nb.hamiltonian.cache.cache_root`).
        rebuilt: the entry already rebuilt (:class:`~qencode_nb.hamiltonian.rebuild.Rebuilt`,
            :func:`qencode_nb.hamiltonian.check.rebuild`); rebuilt here through the cache
            (:func:`qencode_nb.hamiltonian.cache.cached_rebuild_entry`) when None.
        proof_budget: seconds a cold build of another path may be estimated to take
            (:func:`qencode_nb.hamiltonian.sources.prove`'s ``budget_s``; None: no limit).

    Returns:
        :func:`compare_hamiltonian`'s :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`
        plus ``cache_hit``, ``cache_key``, ``e_casci_rebuilt`` and ``e_casci_diff``
        from the rebuild; its ``paths`` hold every registered generator path
        (:func:`qencode_nb.hamiltonian.sources.prove`: PennyLane's native path is
        built, through its cache, only when the stored terms do not equal the
        of_bridge rebuild and the generator could have taken it), and the
        outcome keys are :func:`~qencode_nb.hamiltonian.sources.decide`'s over all
        of them.  CASSCF orbitals make the rebuild kernel-dependent: off the
        reference kernel triple a mismatch is ``unverified``, not ``fail``.

    Raises:
        EntryError: the entry stores no Hamiltonian, or a field is not accepted.
        CapabilityMissing: the declared source cannot be rebuilt.
    """
    from qencode_nb.errors import EntryError
    from qencode_nb.hamiltonian.cache import cached_rebuild_entry
    from qencode_nb.hamiltonian.rebuild import Rebuilt

    if entry.pauli_terms is None:
        raise EntryError("the entry stores no qubit Hamiltonian; load it with its db",
                         field="artifacts.qubit_hamiltonian.pauli_terms")
    if rebuilt is None:
        rebuilt = Rebuilt(*cached_rebuild_entry(entry, cache_dir=cache_dir))
    chem, tap = rebuilt.chemistry, rebuilt.tapering
    light = (chem.exact_method or "").startswith("CASCI")
    kernel_dependent = entry.orbital_optimization == "casscf"
    note = sources.kernel_note()
    num_qubits = (entry.raw["artifacts"]["qubit_hamiltonian"]["num_qubits"]
                  if entry.raw else entry.tapered_num_qubits)
    result = compare_hamiltonian(
        entry.pauli_terms, num_qubits, tap,
        e_exact_stored=entry.exact_ground_energy, e_casci=entry.casci_energy,
        constant_ha=entry.bk_constant_correction_ha,
        constant_rebuilt_ha=tap.bk_constant_correction_ha or 0.0,
        hamiltonian_source_recorded=entry.hamiltonian_source,
        rebuilt_ground_ha=chem.e_exact_tapered_ha,
        diagonalise_stored="never" if light else diagonalise_stored,
        ground_is_casci=light, cache_dir=cache_dir, kernel_dependent=kernel_dependent,
        kernels_note=note)
    paths = sources.prove(entry, rebuilt, _canonical_terms(entry.pauli_terms),
                          float(entry.bk_constant_correction_ha or 0.0),
                          result.paths["of_bridge"], cache_dir=cache_dir,
                          budget_s=proof_budget, stored_qubits=num_qubits)
    return replace(result, **_source_decision(paths, entry.hamiltonian_source,
                                              kernel_dependent, note),
                   cache_hit=chem.cache_hit, cache_key=chem.cache_key,
                   e_casci_rebuilt=chem.e_casci,
                   e_casci_diff=chem.e_casci - entry.casci_energy)
