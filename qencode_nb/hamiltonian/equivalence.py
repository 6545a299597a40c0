"""Two qubit Hamiltonians compared term by term, up to the documented equivalences.

A stored Hamiltonian *equals* a rebuilt one when, after at most one of these
equivalences, every Pauli term's coefficient agrees within the tolerance
(:data:`qencode_nb.rules.COEFF_MATCH_HA`, 1e-8 Ha):

- **term order**: the same Pauli strings in another order (a sum does not
  depend on the order of its terms);
- **Pauli conjugation** (a sign gauge): the rebuilt operator conjugated by one
  Pauli operator ``P``, which flips the sign of exactly the terms that
  anticommute with ``P`` and leaves the spectrum unchanged (``P H P`` is
  unitarily equivalent to ``H``).  A molecular orbital's sign is arbitrary
  (an eigenvector of the Fock matrix is defined up to sign, and which sign an
  eigensolver returns depends on the BLAS kernel); flipping orbital signs
  maps the qubit Hamiltonian to such a conjugate.  Measured on QEncode's
  NH3 PAR/HEA entry rebuilt under the Sandybridge or Nehalem OpenBLAS kernel:
  54 of 121 coefficients differ in sign only, |c| equal to
  1.4e-14 Ha, spectra to 7e-14 Ha.

``P`` is found, not assumed: each term whose coefficient matches the rebuilt
one up to sign gives one linear equation over GF(2) (the term anticommutes
with ``P`` exactly when its sign flipped), solved by Gaussian elimination
on the symplectic (x | z) bit vectors; a term that matches neither way, or
an inconsistent system, means no such ``P`` exists.  No library in the lock
solves GF(2) systems; the elimination is a few lines on Python integers.

Coefficients are in Ha; Pauli strings are QEncode's canonical format
(``"X0Y1Z3"``, ``"I"``: :func:`qencode_nb.entry.pauli_strings.format_pauli_word`).
Imports nothing heavy (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.entry.pauli_strings import parse_pauli_string
from qencode_nb.rules import COEFF_MATCH_HA

EQUIVALENCES = ("identical", "term order", "pauli conjugation")
"""How a match was found, in the order tried: the same terms in the same
order, the same terms in another order, or conjugation by a Pauli operator."""


@dataclass
class TermComparison:
    """Stored vs rebuilt terms (:func:`compare_terms`); Ha throughout.

    Attributes:
        equal: the stored terms equal the rebuilt ones within ``tolerance_ha``
            after ``equivalence``.
        equivalence: one of :data:`EQUIVALENCES`, or ``None`` when not equal.
        max_abs_dcoeff: the largest |stored - rebuilt| over every Pauli
            string of either side (a string absent on one side counts with
            coefficient 0), after the equivalence when one was found, else
            as compared directly.
        max_abs_dcoeff_term: its Pauli string (``None`` with no term).
        max_abs_dcoeff_raw: the largest difference before any equivalence.
        conjugating_pauli: ``P`` of the Pauli conjugation that the terms
            matching up to sign determine (e.g. ``"Z1"``), else ``None``; when
            set on an unequal comparison, ``max_abs_dcoeff`` is taken after it.
        n_sign_flips: number of terms whose sign the conjugation flips.
        n_missing, n_extra: strings only in the stored / only in the rebuilt
            terms (with |c| above the tolerance).
        tolerance_ha: the tolerance used.
        coeffs_differing: how many Pauli strings of either side have a
            coefficient (Ha) that is not the other side's to the bit (compared as
            ``max_abs_dcoeff`` is: real parts, after the conjugation when one was
            found; a string on one side only counts); 0: equal to the last bit.
        coeffs_compared: how many Pauli strings were compared (both sides' union).
    """

    equal: bool
    equivalence: str | None
    max_abs_dcoeff: float | None
    max_abs_dcoeff_term: str | None
    max_abs_dcoeff_raw: float | None
    conjugating_pauli: str | None = None
    n_sign_flips: int = 0
    n_missing: int = 0
    n_extra: int = 0
    tolerance_ha: float = COEFF_MATCH_HA
    coeffs_differing: int | None = None
    coeffs_compared: int | None = None

    def to_record(self) -> dict:
        """The comparison as a JSON-able dict (the ``hamiltonian`` record's ``paths``)."""
        return {"equal": self.equal, "equivalence": self.equivalence,
                "max_abs_dcoeff": self.max_abs_dcoeff,
                "max_abs_dcoeff_term": self.max_abs_dcoeff_term,
                "max_abs_dcoeff_raw": self.max_abs_dcoeff_raw,
                "conjugating_pauli": self.conjugating_pauli,
                "n_sign_flips": self.n_sign_flips, "n_missing": self.n_missing,
                "n_extra": self.n_extra, "tolerance_ha": self.tolerance_ha,
                "coeffs_differing": self.coeffs_differing,
                "coeffs_compared": self.coeffs_compared}


def _real(c) -> float:
    return complex(c).real


def symplectic(pauli_string: str) -> tuple[int, int]:
    """``(x bits, z bits)`` of a Pauli string as integers (bit ``w`` = wire ``w``)."""
    x = z = 0
    for wire, letter in parse_pauli_string(pauli_string).items():
        if letter in ("X", "Y"):
            x |= 1 << wire
        if letter in ("Z", "Y"):
            z |= 1 << wire
    return x, z


def pauli_string_of(x: int, z: int) -> str:
    """The Pauli string of symplectic bits ``(x, z)`` ("I" for none)."""
    letters = []
    wire = 0
    while x >> wire or z >> wire:
        bx, bz = (x >> wire) & 1, (z >> wire) & 1
        if bx or bz:
            letters.append(("Y" if bz else "X") if bx else "Z")
            letters[-1] += str(wire)
        wire += 1
    return "".join(letters) or "I"


def solve_conjugation(flips: dict[str, int]) -> tuple[int, int] | None:
    """A Pauli ``P = (a | b)`` anticommuting with exactly the flipped strings.

    Args:
        flips: ``{pauli_string: 1 if its sign flipped else 0}``.

    Returns:
        ``(a, b)``: x and z bits of ``P`` (``(0, 0)``, the identity, when
        nothing flipped), or ``None`` when no Pauli has that pattern.  A
        string ``(x | z)`` anticommutes with ``P`` when ``a.z + b.x`` is odd.
    """
    width = max((max(parse_pauli_string(s), default=-1) for s in flips), default=-1) + 1
    pivots: dict[int, tuple[int, int]] = {}       # pivot bit -> (row, rhs)
    for string, rhs in flips.items():
        x, z = symplectic(string)
        row = z | (x << width)                     # unknowns: a (width bits), b (width bits)
        for bit in sorted(pivots, reverse=True):
            if (row >> bit) & 1:
                prow, prhs = pivots[bit]
                row ^= prow
                rhs ^= prhs
        if row == 0:
            if rhs:
                return None
            continue
        pivots[row.bit_length() - 1] = (row, rhs)
    # Back-substitution: free unknowns are 0.
    solution = 0
    for bit in sorted(pivots):
        row, rhs = pivots[bit]
        rest = row & ~(1 << bit)
        if (bin(rest & solution).count("1") + rhs) % 2:
            solution |= 1 << bit
    mask = (1 << width) - 1
    return solution & mask, (solution >> width) & mask


def anticommutes(pauli_string: str, conj: tuple[int, int]) -> bool:
    """Whether ``pauli_string`` anticommutes with the Pauli ``conj = (a, b)``."""
    x, z = symplectic(pauli_string)
    a, b = conj
    return (bin(a & z).count("1") + bin(b & x).count("1")) % 2 == 1


def _max_diff(stored: dict, rebuilt: dict, sign=None):
    """``(max |Δc| (Ha), its string, strings whose coefficients differ at all, strings
    compared)`` over the union of strings; ``sign(s)`` = ±1 on rebuilt."""
    best, term, differing, compared = None, None, 0, 0
    for s in list(stored) + [s for s in rebuilt if s not in stored]:
        r = _real(rebuilt.get(s, 0.0)) * (sign(s) if sign else 1)
        a = _real(stored.get(s, 0.0))
        d = abs(a - r)
        compared += 1
        if a != r:
            differing += 1
        if best is None or d > best:
            best, term = d, s
    return best, term, differing, compared


def compare_terms(stored: dict, rebuilt: dict, *,
                  tolerance_ha: float = COEFF_MATCH_HA) -> TermComparison:
    """Compare two Hamiltonians given as ``{pauli_string: coefficient (Ha)}``.

    Args:
        stored: the entry's terms, in their stored order.
        rebuilt: a rebuilt path's terms, in its order (complex coefficients
            are compared by their real part: both sides are Hermitian sums of
            Pauli strings with real coefficients; an imaginary part left by
            the Bravyi-Kitaev tapering is the rebuild's ``max_imaginary_abs_ha``).
        tolerance_ha: largest accepted |Δc| (default
            :data:`~qencode_nb.rules.COEFF_MATCH_HA`).

    Returns:
        :class:`TermComparison`: equal after ``identical``, ``term order`` or
        ``pauli conjugation`` (tried in that order), or not equal with the
        largest difference and its term.
    """
    raw, raw_term, differing, compared = _max_diff(stored, rebuilt)
    missing = [s for s in stored if s not in rebuilt and abs(_real(stored[s])) > tolerance_ha]
    extra = [s for s in rebuilt if s not in stored and abs(_real(rebuilt[s])) > tolerance_ha]
    base = dict(max_abs_dcoeff_raw=raw, n_missing=len(missing), n_extra=len(extra),
                tolerance_ha=tolerance_ha, coeffs_compared=compared)
    if raw is None or raw <= tolerance_ha:
        same_order = list(stored) == list(rebuilt)
        return TermComparison(equal=True,
                              equivalence="identical" if same_order else "term order",
                              max_abs_dcoeff=raw, max_abs_dcoeff_term=raw_term,
                              coeffs_differing=differing, **base)
    not_equal = TermComparison(equal=False, equivalence=None, max_abs_dcoeff=raw,
                               max_abs_dcoeff_term=raw_term, coeffs_differing=differing,
                               **base)
    if missing or extra:
        return not_equal
    flips = {}
    for s in stored:
        a, b = _real(stored[s]), _real(rebuilt.get(s, 0.0))
        same, flipped = abs(a - b) <= tolerance_ha, abs(a + b) <= tolerance_ha
        if same == flipped:
            continue      # |c| within the tolerance of 0 (no information), or no sign matches
        flips[s] = 0 if same else 1
    conj = solve_conjugation(flips)
    if conj is None or conj == (0, 0):
        return not_equal

    def sign(s):
        return -1 if anticommutes(s, conj) else 1

    # Not equal: the largest difference left after the conjugation the other terms
    # fix, so a single edited coefficient is named even under a sign gauge.
    after, after_term, differing, _ = _max_diff(stored, rebuilt, sign)
    equal = after <= tolerance_ha
    return TermComparison(equal=equal, equivalence="pauli conjugation" if equal else None,
                          max_abs_dcoeff=after, max_abs_dcoeff_term=after_term,
                          conjugating_pauli=pauli_string_of(*conj),
                          coeffs_differing=differing,
                          n_sign_flips=sum(1 for s in stored if sign(s) < 0), **base)
