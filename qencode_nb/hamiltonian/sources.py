"""Hamiltonian provenance by rebuild: which generator path the stored terms equal.

QEncode's generator built the qubit Hamiltonian along one of two paths and,
before v4.4, did not record which (``scripts/generate_entry_v4.py``, branch
master, commit a46b4ec, ``build_pl_hamiltonian``):

- ``of_bridge``: PySCF's active-space integrals -> OpenFermion -> mapping
  (:mod:`qencode_nb.hamiltonian.of_bridge`; the audit's rebuild);
- ``pennylane_native``: PennyLane's ``molecular_hamiltonian`` with its own
  Hartree-Fock (:mod:`qencode_nb.hamiltonian.native`), never for parity or CASSCF
  orbitals.

Each path is a :class:`Source` in :data:`SOURCES` (:func:`register`,
:func:`get`).  :func:`decide` turns the comparisons (``paths``, each a
:meth:`qencode_nb.hamiltonian.equivalence.TermComparison.to_record` plus the
constant correction's difference) into the check's outcome:

- ``pass``: the stored Hamiltonian equals a path (``hamiltonian_source``);
- ``fail``: it equals none: an alert naming the largest difference and its term;
- ``unverified``: it equals none, but the rebuild depends on the BLAS kernels
  (CASSCF orbitals) and the kernels in force are not the reference triple the
  entries were generated under: a warning naming the profile that reproduces
  it, not an alert; or a path that could have matched was skipped because its
  estimated build exceeds the proof budget (``--proof-budget``): ``native build
  skipped (estimated N s; --proof-budget to allow it)``.

A path is *proven* by building it, never inferred from an energy.  The paths
are tried in order (the declared one first) and a later one is built only
while none matched.  A path whose qubit count cannot be the stored one (the same
mapping, active space and tapering as the of_bridge rebuild give the rebuild's
count: the Z2 symmetries are the molecule's, not the orbitals' program's) is
decided without building it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from qencode_nb.rules import COEFF_MATCH_HA

STATUSES = ("pass", "fail", "unverified", "n/a")
"""Values of the ``hamiltonian`` record's ``status``."""


@dataclass(frozen=True)
class Source:
    """One generator path.

    Attributes:
        name: the ``provenance.hamiltonian_source`` value (QEncode schema 4.0.0).
        not_used_because: ``(mapping, orbital_optimization) -> str | None``,
            why the generator would not have taken this path for the problem.
        build: ``(entry, rebuilt, cache_dir, budget_s) -> (terms, constant_ha, info)``
            (``rebuilt`` a :class:`~qencode_nb.hamiltonian.rebuild.Rebuilt`):
            ``terms`` ``{pauli_string: coefficient (Ha)}``, ``constant_ha`` the
            tapering's constant correction (0.0 when none), ``info`` a dict
            added to the path's record (e.g. ``cache_status``, ``seconds``);
            raises :class:`~qencode_nb.errors.ProofSkipped` when a cold build's
            estimate exceeds ``budget_s`` (seconds, None: no limit).
    """

    name: str
    not_used_because: Callable
    build: Callable


SOURCES: dict[str, Source] = {}
"""The registered paths, in the order they are tried after the declared one."""


def register(source: Source) -> Source:
    """Add ``source`` to :data:`SOURCES` (a name registered twice is replaced)."""
    SOURCES[source.name] = source
    return source


def get(name: str) -> Source:
    """The registered path ``name``.

    Raises:
        EntryError: no path of that name (field ``provenance.hamiltonian_source``),
            listing the registered ones.
    """
    from qencode_nb.errors import EntryError

    if name not in SOURCES:
        raise EntryError(f"no Hamiltonian path named {name!r}; registered: "
                         f"{', '.join(SOURCES)}", field="provenance.hamiltonian_source")
    return SOURCES[name]


def _of_bridge_terms(entry, rebuilt, cache_dir, budget_s=None):
    from qencode_nb.entry.pauli_strings import format_pauli_word

    tap = rebuilt.tapering
    terms = {format_pauli_word(word): c for word, c in tap.tapered_terms()}
    return terms, float(tap.bk_constant_correction_ha or 0.0), {}


def _native_terms(entry, rebuilt, cache_dir, budget_s=None):
    from qencode_nb.hamiltonian.native import cached_native

    chem = rebuilt.chemistry
    ne, no = entry.active_space
    doc, status = cached_native(entry.geometry, entry.basis, ne, no, entry.mapping,
                                chem.e_casci, cache_dir=cache_dir,
                                tapering_rule=getattr(entry, "tapering_rule", "v4"),
                                budget_s=budget_s)
    return ({s: c for s, c in doc["terms"]}, float(doc["constant_ha"]),
            {"cache_status": status, "seconds": doc.get("seconds")})


def _never(mapping, orbital_optimization):
    return None


def _native_not_used(mapping, orbital_optimization):
    from qencode_nb.hamiltonian.native import not_used_because

    return not_used_because(mapping, orbital_optimization)


register(Source("of_bridge", _never, _of_bridge_terms))
register(Source("pennylane_native", _native_not_used, _native_terms))


def compare_path(stored: dict, constant_stored: float, terms: dict,
                 constant_ha: float) -> dict:
    """One path's record: :func:`qencode_nb.hamiltonian.equivalence.compare_terms`
    of the stored terms against the path's, plus ``constant_diff_ha`` (path minus
    stored constant correction, Ha); ``equal`` needs both within
    :data:`~qencode_nb.rules.COEFF_MATCH_HA`.  ``built`` is True."""
    from qencode_nb.hamiltonian.equivalence import compare_terms

    record = compare_terms(stored, terms).to_record()
    diff = float(constant_ha) - float(constant_stored)
    record.update(built=True, constant_diff_ha=diff)
    if abs(diff) > COEFF_MATCH_HA:
        record["equal"] = False
        if (record["max_abs_dcoeff"] or 0.0) < abs(diff):
            record.update(max_abs_dcoeff=abs(diff),
                          max_abs_dcoeff_term="bk_constant_correction_ha")
    return record


def qubit_count_mismatch(stored_qubits: int | None, rebuilt) -> str | None:
    """Why no path of the entry's mapping, active space and tapering can give the
    stored qubit count, or None: the of_bridge rebuild's tapered count is what any
    such path gives (decided before any other path is built)."""
    if stored_qubits is None:
        return None
    found = int(rebuilt.tapering.n_qubits_tapered)
    if int(stored_qubits) == found:
        return None
    return (f"cannot give the stored {int(stored_qubits)} qubits: the declared mapping, "
            f"active space and tapering give {found} (the of_bridge rebuild)")


def prove(entry, rebuilt, stored: dict, constant_stored: float, of_bridge: dict, *,
          cache_dir=None, budget_s: float | None = None,
          stored_qubits: int | None = None) -> dict:
    """Every path's record for an entry: ``{name: record}``.

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rebuilt: the of_bridge rebuild (:class:`~qencode_nb.hamiltonian.rebuild.Rebuilt`).
        stored: the stored terms ``{pauli_string: coefficient (Ha)}``.
        constant_stored: the entry's ``bk_constant_correction_ha`` (0.0 when none).
        of_bridge: the of_bridge path's record, already compared.
        budget_s: the proof budget (seconds; None: no limit,
            :data:`~qencode_nb.rules.PROOF_BUDGET_S` from the notebook and CLI).
        stored_qubits: the stored ``num_qubits`` (:func:`qubit_count_mismatch`).

    A path the generator would not have taken reads ``{"built": False,
    "reason": ...}``; one not needed because an earlier one matched reads
    ``{"built": False, "reason": "not needed: ..."}``; one that cannot give the
    stored qubit count ``{"built": False, "reason": "cannot give ..."}``; one over
    the budget ``{"built": False, "skipped": True, "estimated_seconds": N,
    "reason": "native build skipped (estimated N s; --proof-budget to allow it)"}``.
    """
    from qencode_nb.errors import ProofSkipped

    paths = {"of_bridge": of_bridge}
    found = "of_bridge" if of_bridge.get("equal") else None
    impossible = qubit_count_mismatch(stored_qubits, rebuilt)
    order = sorted(SOURCES, key=lambda n: n != entry.hamiltonian_source)
    for name in order:
        if name in paths:
            continue
        source = SOURCES[name]
        why = source.not_used_because(entry.mapping, entry.orbital_optimization)
        if why:
            paths[name] = {"built": False, "reason": why}
        elif found:
            paths[name] = {"built": False,
                           "reason": f"not needed: the stored Hamiltonian equals {found}"}
        elif impossible:
            paths[name] = {"built": False, "reason": impossible}
        else:
            try:
                terms, constant, info = source.build(entry, rebuilt, cache_dir, budget_s)
            except ProofSkipped as skipped:
                paths[name] = {"built": False, "skipped": True, "reason": str(skipped),
                               "estimated_seconds": skipped.estimated_s}
                continue
            paths[name] = {**compare_path(stored, constant_stored, terms, constant), **info}
            found = name if paths[name]["equal"] else None
    return paths


def kernel_note() -> str | None:
    """None under the reference kernel triple, else the sentence naming the
    OpenBLAS kernels in force (numpy, scipy, PySCF; measured by
    :func:`qencode_nb.notebook.pins.copy_kernels`) and the profile that
    reproduces the QEncode v4 entries
    (:data:`qencode_nb.notebook.blas_profiles.REFERENCE`)."""
    import os

    from qencode_nb.notebook.blas_profiles import REFERENCE, is_reference, reference_clause
    from qencode_nb.notebook.pins import PROFILE_VAR, copy_kernels

    kernels = copy_kernels()
    if "pyscf" not in kernels and os.environ.get(PROFILE_VAR) == REFERENCE.name:
        # A cache hit loads no PySCF; its key holds the profile it was built under.
        kernels["pyscf"] = REFERENCE.coretypes["pyscf"]
    if is_reference(kernels):
        return None
    return f"rebuilt under the OpenBLAS kernels {reference_clause(kernels)}"


def _difference(name: str, p: dict) -> str:
    if p.get("skipped"):
        return f"{name} skipped"
    if not p.get("built"):
        return f"{name} not built ({p.get('reason')})"
    term = p.get("max_abs_dcoeff_term")
    where = f" at {term}" if term else ""
    how = (f" after conjugation by {p['conjugating_pauli']}"
           if p.get("conjugating_pauli") else "")
    return f"{name} differs by {p.get('max_abs_dcoeff', float('nan')):.3e} Ha{where}{how}"


def _ha(value: float, digits: int) -> str:
    """``value`` (Ha) in e-notation with ``digits`` decimals and no padded exponent
    (``1e-8``, ``5.3e-15``)."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def agreement(name: str, p: dict) -> str:
    """How the stored terms equal the path ``name``, in words: the verdict card's
    Hamiltonian line (:func:`qencode_nb.verdict.card_text.check_rows`) and the one rule
    for its wording.

    ``p`` is the path's record (:func:`compare_path`; Ha throughout).  Every Pauli
    coefficient and the constant correction equal to the bit: ``equal to the of_bridge
    rebuild to the last bit``; else the tolerance the check used
    (:data:`~qencode_nb.rules.COEFF_MATCH_HA`, the record's ``tolerance_ha``), how many
    coefficients differ and the largest |difference|: ``equal to the of_bridge rebuild
    within 1e-8 Ha; 153 of 155 coefficients differ (largest difference 5.3e-15 Ha)``.
    An equivalence other than the same terms in the same order is named (``in another
    term order``, ``up to conjugation by Z1 (54 signs flipped; same spectrum)``).  A
    record written before ``coeffs_differing`` existed gives the tolerance and the
    largest difference only (or ``to the last bit`` when that is 0.0 Ha).
    """
    head = f"equal to the {name} rebuild"
    how = p.get("equivalence")
    if how == "term order":
        head += " in another term order,"
    elif how == "pauli conjugation":
        head += (f" up to conjugation by {p.get('conjugating_pauli')} "
                 f"({p.get('n_sign_flips')} signs flipped; same spectrum),")
    constant = float(p.get("constant_diff_ha") or 0.0)
    largest = max(float(p.get("max_abs_dcoeff") or 0.0), abs(constant))
    differing, compared = p.get("coeffs_differing"), p.get("coeffs_compared")
    if differing is None and largest == 0.0:
        differing = 0
    if differing == 0 and constant == 0.0:
        return f"{head} to the last bit"
    within = f"{head} within {_ha(float(p.get('tolerance_ha') or COEFF_MATCH_HA), 0)} Ha"
    largest_text = f"largest difference {_ha(largest, 1)} Ha"
    if differing is None:
        return f"{within} ({largest_text})"
    subjects = ([f"{differing} of {compared} coefficients"] if differing else []) + (
        ["the constant correction"] if constant else [])
    verb = "differs" if len(subjects) == 1 and (differing or 0) <= 1 else "differ"
    return f"{within}; {' and '.join(subjects)} {verb} ({largest_text})"


def _equal_phrase(name: str, p: dict) -> str:
    how = p.get("equivalence")
    if how == "pauli conjugation":
        how = (f"up to conjugation by {p['conjugating_pauli']} ({p['n_sign_flips']} "
               "coefficients differ in sign only; same spectrum)")
    return (f"the stored terms equal the {name} rebuild ({how}; largest |dc| "
            f"{p.get('max_abs_dcoeff') or 0.0:.1e} Ha <= {COEFF_MATCH_HA:.0e} Ha)")


def decide(paths: dict, *, recorded: str | None, kernel_dependent: bool = False,
           kernels_note: str | None = None) -> dict:
    """The outcome of the provenance check from every path's record.

    Args:
        paths: ``{name: record}`` (:func:`prove`, or the of_bridge one alone).
        recorded: ``provenance.hamiltonian_source`` (None when undeclared).
        kernel_dependent: the rebuild depends on the BLAS kernels (CASSCF orbitals).
        kernels_note: when the kernels in force are not the reference triple,
            the sentence naming them and the profile that reproduces the
            entries (:func:`qencode_nb.hamiltonian.check.kernel_note`); None under
            the reference triple.

    Returns:
        ``{"hamiltonian_source", "status", "reason", "kernel_dependent",
        "source_matches"}`` (fields of
        :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`); ``status`` one of
        :data:`STATUSES`.
    """
    found = next((n for n, p in paths.items() if p.get("equal")), None)
    if found:
        reason = _equal_phrase(found, paths[found])
        status = "pass"
    else:
        reason = ("the stored Hamiltonian equals no generator path: "
                  + "; ".join(_difference(n, p) for n, p in paths.items())
                  + f" (tolerance {COEFF_MATCH_HA:.0e} Ha)")
        skipped = [p["reason"] for p in paths.values() if p.get("skipped")]
        if skipped:
            status = "unverified"
            reason = "; ".join(skipped) + "; " + reason
        elif kernel_dependent and kernels_note:
            status = "unverified"
            reason += ("; the rebuild depends on the OpenBLAS kernels (CASSCF orbitals): "
                       + kernels_note)
        else:
            status = "fail"
    return {"hamiltonian_source": found, "status": status, "reason": reason,
            "kernel_dependent": kernel_dependent,
            "source_matches": None if recorded is None or found is None
            else recorded == found}
