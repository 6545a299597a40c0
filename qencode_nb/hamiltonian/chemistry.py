"""PySCF reference chemistry as QEncode computes it.

Source: ``run_pyscf_suite`` of the public generator
``scripts/generate_entry_v4.py`` (qencode-benchmark commit e1f44cd).  The
procedure and its order are the generator's, because PySCF's numbers (and so
every integral downstream) depend on them:

1. RHF on the molecule (``mol.verbose = 0``, default convergence settings);
2. optionally MP2, CCSD and CCSD(T) on that RHF (``classical=True``);
3. optionally CASSCF with ``(n_alpha, n_beta) = (ne // 2, ne - ne // 2)``
   active electrons (``orbital_optimization="casscf"``); its MO coefficients
   replace the RHF ones for everything after it;
4. CASCI in the active space: the VQE reference energy;
5. a second, 2-root CASCI for the first excited state.

All energies are in Hartree (Ha).  PySCF and numpy are imported inside the
functions so that ``import qencode_nb`` stays free of numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qencode_nb.errors import EntryError

ORBITAL_OPTIMIZATIONS = ("hf", "casscf")


@dataclass
class ChemistryEnergies:
    """The scalar results of :func:`run_chemistry` (energies in Ha; no PySCF object):
    what :class:`ChemistryResult` holds beside its PySCF objects, and what the rebuild
    cache stores (:class:`qencode_nb.hamiltonian.cache_payload.ChemSummary`).

    Attributes:
        orbital_optimization: the orbitals actually used, ``"hf"`` or
            ``"casscf"``.  It reads ``"hf"`` when CASSCF was requested and
            failed, as in the generator; ``casscf_error`` then says why.
        num_electrons, num_spatial_orbitals: the active space ``[ne, no]``.
        e_hf: RHF total energy.
        e_casci: CASCI ground energy (the entry's
            ``results.reference.casci_ground_energy_hartree``).
        e_casci_first_excited: second root of a 2-root CASCI, or ``None``
            when that solve failed (the generator swallows the failure).
        e_casscf: CASSCF total energy, ``None`` unless CASSCF ran.
        e_mp2, e_ccsd, e_ccsd_t: classical comparison, ``None`` unless
            ``classical=True`` (and ``None`` for a method that failed).
        casscf_error: the exception text when a requested CASSCF failed.
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

    @property
    def uses_casscf_orbitals(self) -> bool:
        """True when the active space is built on CASSCF orbitals."""
        return self.orbital_optimization == "casscf"


@dataclass(kw_only=True)
class ChemistryResult(ChemistryEnergies):
    """What :func:`run_chemistry` computed: :class:`ChemistryEnergies` and the PySCF
    objects behind them.

    Attributes:
        mf: the converged PySCF RHF object.  Not modified by anything here.
        mo_coeff: the MO coefficients the CASCI reference (and the qubit
            Hamiltonian) use: the CASSCF ones when orbital optimisation ran,
            else ``mf.mo_coeff``.  Shape ``(n_ao, n_mo)``.
    """

    mf: Any
    mo_coeff: Any


def active_electron_split(num_electrons: int) -> tuple[int, int]:
    """``(ne // 2, ne - ne // 2)``: the generator's alpha/beta split.

    The entry's ``problem.spin`` is given to the molecule, not to this split.
    """
    n_alpha = num_electrons // 2
    return n_alpha, num_electrons - n_alpha


def check_active_space(total_electrons: int, num_orbitals: int, num_electrons: int,
                       num_spatial_orbitals: int) -> None:
    """Refuse an active space the molecule cannot hold, before PySCF asserts on it.

    The generator's CASCI puts ``(total - num_electrons) / 2`` doubly occupied core
    orbitals below ``num_spatial_orbitals`` active ones (``pyscf.mcscf.CASCI``), so
    ``num_electrons`` may not exceed the molecule's electrons or twice the active
    orbitals, the core must be a whole number of orbitals, and core plus active
    orbitals may not exceed the basis's.

    Raises:
        EntryError: field ``problem.active_space``, naming what the molecule allows.
    """
    core2 = total_electrons - num_electrons
    why = None
    if num_electrons > total_electrons:
        why = f"{num_electrons} active electrons but the molecule has {total_electrons}"
    elif num_electrons > 2 * num_spatial_orbitals:
        why = (f"{num_electrons} electrons do not fit in {num_spatial_orbitals} spatial "
               "orbitals")
    elif core2 % 2:
        why = (f"{total_electrons} electrons minus {num_electrons} active leaves an odd "
               "number for the doubly occupied core")
    elif core2 // 2 + num_spatial_orbitals > num_orbitals:
        why = (f"{core2 // 2} core + {num_spatial_orbitals} active orbitals exceed the "
               f"basis's {num_orbitals}")
    if why:
        raise EntryError(
            f"active space [{num_electrons}e, {num_spatial_orbitals}o] does not fit: {why}; "
            f"accepted: num_electrons <= {total_electrons} with the same parity, and "
            f"core + active orbitals <= {num_orbitals}", field="problem.active_space")


def _check_inputs(geometry, basis, num_electrons, num_spatial_orbitals,
                  orbital_optimization):
    if not isinstance(geometry, str) or not geometry.strip():
        raise EntryError(
            f"geometry {geometry!r} is not a PySCF atom string; accepted: "
            "'Li 0 0 0; H 0 0 1.6' (Angstrom)", field="problem.geometry")
    if not isinstance(basis, str) or not basis:
        raise EntryError(f"basis {basis!r} is not a basis-set name (e.g. 'cc-pvdz')",
                         field="problem.basis")
    for name, value in (("num_electrons", num_electrons),
                        ("num_spatial_orbitals", num_spatial_orbitals)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EntryError(f"{name} {value!r} is not a positive integer",
                             field=f"problem.active_space.{name}")
    if num_electrons > 2 * num_spatial_orbitals:
        raise EntryError(
            f"num_electrons {num_electrons} does not fit in {num_spatial_orbitals} "
            "spatial orbitals", field="problem.active_space.num_electrons")
    if orbital_optimization not in ORBITAL_OPTIMIZATIONS:
        raise EntryError(
            f"orbital_optimization {orbital_optimization!r} is not accepted; "
            f"accepted: {', '.join(ORBITAL_OPTIMIZATIONS)}",
            field="problem.orbital_optimization")


def _casci(mf, num_spatial_orbitals, nelec, mo_coeff, nroots=1):
    """One PySCF CASCI run; ``mo_coeff=None`` keeps the RHF orbitals."""
    from pyscf import mcscf

    mc = mcscf.CASCI(mf, num_spatial_orbitals, nelec)
    if mo_coeff is not None:
        mc.mo_coeff = mo_coeff
    if nroots != 1:
        mc.fcisolver.nroots = nroots
    mc.run()
    return mc.e_tot


def run_chemistry(geometry: str, basis: str, charge: int, spin: int,
                  num_electrons: int, num_spatial_orbitals: int,
                  orbital_optimization: str = "hf",
                  classical: bool = False) -> ChemistryResult:
    """RHF, optional CASSCF, CASCI (+ first excited) as QEncode runs them.

    Reproduces ``run_pyscf_suite`` of ``generate_entry_v4.py`` step for step
    (see the module docstring for the order).

    Args:
        geometry: PySCF atom string in Angstrom, e.g. ``"Li 0 0 0; H 0 0 1.6"``
            (``problem.geometry``).
        basis: basis-set name, e.g. ``"cc-pvdz"`` (``problem.basis``).
        charge, spin: ``problem.charge`` and ``problem.spin`` (2S).
        num_electrons, num_spatial_orbitals: active space ``[ne, no]``
            (``problem.active_space``).
        orbital_optimization: ``"hf"`` (canonical RHF orbitals) or
            ``"casscf"`` (``problem.orbital_optimization``).
        classical: also run MP2, CCSD and CCSD(T) (before CASSCF, as the
            generator does).  Failures leave the energy ``None``.

    Returns:
        :class:`ChemistryResult`, energies in Ha.

    Raises:
        EntryError: a field has a value that is not accepted, or PySCF cannot
            build the molecule from them.
    """
    _check_inputs(geometry, basis, num_electrons, num_spatial_orbitals,
                  orbital_optimization)
    from pyscf import gto, mcscf, scf

    mol = gto.Mole()
    mol.atom = geometry
    mol.basis = basis
    mol.charge = charge
    mol.spin = spin
    mol.verbose = 0
    try:
        mol.build()
    except (RuntimeError, ValueError, KeyError) as exc:
        raise EntryError(
            f"PySCF cannot build the molecule from geometry {geometry!r}, basis "
            f"{basis!r}, charge {charge}, spin {spin}: {exc}; accepted: element "
            "symbols with x y z in Angstrom, and a charge/spin (2S) the electron "
            "count allows", field="problem.geometry/basis/charge/spin") from None

    check_active_space(mol.nelectron, mol.nao, num_electrons, num_spatial_orbitals)
    mf = scf.RHF(mol).run()
    e_hf = float(mf.e_tot)

    e_mp2 = e_ccsd = e_ccsd_t = None
    if classical:
        e_mp2, e_ccsd, e_ccsd_t = _classical_comparison(mf)

    nelec = active_electron_split(num_electrons)
    casscf_mo = None
    e_casscf = None
    casscf_error = None
    used = "hf"
    if orbital_optimization == "casscf":
        try:
            solver = mcscf.CASSCF(mf, num_spatial_orbitals, nelec)
            solver.run()
            e_casscf = float(solver.e_tot)
            casscf_mo = solver.mo_coeff
            used = "casscf"
        except Exception as exc:  # the generator falls back to HF orbitals
            casscf_error = f"{type(exc).__name__}: {exc}"

    e_casci = float(_casci(mf, num_spatial_orbitals, nelec, casscf_mo))

    e_first = None
    try:
        roots = _casci(mf, num_spatial_orbitals, nelec, casscf_mo, nroots=2)
        if hasattr(roots, "__len__") and len(roots) > 1:
            e_first = float(roots[1])
    except Exception:  # the generator records None on any failure
        e_first = None

    return ChemistryResult(
        mf=mf,
        mo_coeff=casscf_mo if casscf_mo is not None else mf.mo_coeff,
        orbital_optimization=used,
        num_electrons=num_electrons,
        num_spatial_orbitals=num_spatial_orbitals,
        e_hf=e_hf,
        e_casci=e_casci,
        e_casci_first_excited=e_first,
        e_casscf=e_casscf,
        e_mp2=e_mp2,
        e_ccsd=e_ccsd,
        e_ccsd_t=e_ccsd_t,
        casscf_error=casscf_error,
    )


def _classical_comparison(mf):
    """MP2, CCSD, CCSD(T) totals (Ha) on ``mf``; ``None`` for a failed method."""
    e_mp2 = e_ccsd = e_ccsd_t = None
    try:
        from pyscf import mp

        e_mp2 = float(mp.MP2(mf).run().e_tot)
    except Exception:
        pass
    try:
        from pyscf import cc

        ccsd = cc.CCSD(mf).run()
        e_ccsd = float(ccsd.e_tot)
        e_ccsd_t = float(ccsd.e_tot + ccsd.ccsd_t())
    except Exception:
        pass
    return e_mp2, e_ccsd, e_ccsd_t


def mean_field_for_active_space(chem: ChemistryResult):
    """The mean-field object whose ``mo_coeff`` defines the active space.

    The plain RHF object for HF orbitals; for CASSCF orbitals a shallow copy
    of it with ``mo_coeff`` replaced (as ``build_pl_hamiltonian`` does), so
    the caller's ``chem.mf`` is never mutated.
    """
    if not chem.uses_casscf_orbitals:
        return chem.mf
    import copy

    mf = copy.copy(chem.mf)
    mf.mo_coeff = chem.mo_coeff
    return mf


def active_space_integrals(chem: ChemistryResult) -> dict:
    """The CASCI active-space Hamiltonian of ``chem`` as plain data.

    The same integrals the of_bridge Hamiltonian is built from
    (``mcscf.CASCI(mf, no, ne).get_h1eff()`` and ``get_h2eff()`` on
    :func:`mean_field_for_active_space`), for the sector engine.

    Returns:
        ``{"norb", "nelec": [n_alpha, n_beta], "h1": norb x norb nested list
        (Ha), "h2": the 8-fold packed two-electron integrals (Ha, chemist
        notation, ``ao2mo.restore(8, ...)``, length npair*(npair+1)/2 with
        npair = norb*(norb+1)/2), "ecore": core energy (Ha)}``.
    """
    from pyscf import ao2mo, mcscf

    no, ne = chem.num_spatial_orbitals, chem.num_electrons
    cas = mcscf.CASCI(mean_field_for_active_space(chem), no, ne)
    h1, ecore = cas.get_h1eff()
    h2 = ao2mo.restore(8, cas.get_h2eff(), no)
    return {"norb": int(no), "nelec": list(active_electron_split(ne)),
            "h1": [[float(x) for x in row] for row in h1],
            "h2": [float(x) for x in h2], "ecore": float(ecore)}
