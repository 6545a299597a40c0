"""Every numeric rule of the audit, each written once, with its source.

Two kinds live here:

- **QEncode generator constants**: numbers hard-coded in QEncode's
  ``scripts/generate_entry_v4.py`` (repository qencode-benchmark, branch
  ``master``, v4.4, commit e1f44cd) or its argument parser.  A re-run must use
  them to follow the recorded procedure.
- **Audit rules**: qencode-nb's own thresholds and tolerances (source
  docs/explanations/tiers.md or a measurement named in the docstring).

Importing this module imports nothing heavy (no numpy).
"""

# ---------------------------------------------------------------------------
# QEncode generator: certification and early stop
# ---------------------------------------------------------------------------
CERTIFICATION_THRESHOLD_HA = 0.01
"""QEncode schema 4.0.0 ``results.quality.gap_threshold`` of every v4 entry:
certified when ``|E - E_exact| < 0.01`` Ha (generator ``assemble_entry``)."""

EARLY_STOP_HA = 0.01
"""The generator's early stop: ``|E - e_target| < 0.01`` Ha, with ``e_target``
the CASCI energy (``run_vqe`` and the ADAPT loops, after each restart or
outer iteration; hard-coded, not the entry's threshold)."""

# ---------------------------------------------------------------------------
# QEncode generator: optimiser options (run_vqe and the ADAPT inner loops)
# ---------------------------------------------------------------------------
COBYLA_RHOBEG = 0.5
"""COBYLA's initial trust-region radius (radians), ``options={"rhobeg": 0.5}``."""

COBYLA_PATH_MIN_S = 10.0
"""A COBYLA restart that took this long or longer (s) keeps its path for later runs to
verify instead of running COBYLA again (:mod:`qencode_nb.rerun.cobyla_path`; qencode-nb's
choice: N2 JW/UCCSD's restart takes minutes, a HEA restart of a v4 entry under a second,
and a path is 8 bytes per parameter per evaluation)."""

COBYLA_PATH_APART_COST = 1e8
"""A robustness study runs the perturbations of an entry one after the other when its
expected COBYLA cost per restart (published steps x parameters squared,
:func:`qencode_nb.batch.pool.cobyla_path_key`) is at least this: N2 JW/UCCSD 1.6e9 (one
restart of 562 s on a 2-core AMD EPYC), the next v4 COBYLA entry, benzene JW/HEA, 4e6 a
restart (qencode-nb's choice, between the two)."""

LBFGSB_FTOL = 1e-12
"""L-BFGS-B ``ftol`` of the generator's run_vqe and ADAPT inner loops."""

LBFGSB_GTOL = 1e-8
"""L-BFGS-B ``gtol`` of the generator's run_vqe and ADAPT inner loops."""

ADAM_DEFAULT_LR = 0.05
"""Adam step size when an optimiser string gives none (``"Adam"`` without
``(lr=...)``; qencode-nb's choice for optimiser studies, as ``Adam(lr=0.05)``)."""

# ---------------------------------------------------------------------------
# QEncode generator: ADAPT-VQE
# ---------------------------------------------------------------------------
ADAPT_ENGINES = ("qnode", "statevector")
"""The generator's ADAPT engines (``--adapt-engine``; ``auto`` picks by size)."""

ADAPT_INNER_OPTIMIZERS = ("cobyla", "l-bfgs-b")
"""Inner optimisers the generator's ADAPT loops accept."""

ADAPT_QNODE_MAX_QUBITS = 12
"""``--adapt-engine auto``: QNode engine up to this many tapered qubits,
statevector engine above."""

# ---------------------------------------------------------------------------
# QEncode generator: the defaults of its argument parser
# ---------------------------------------------------------------------------
GENERATOR_DEFAULTS = {
    "max_iterations": (500, "generator default --max-iter 500"),
    "restarts_requested": (3, "generator default --multistart 3"),
    "seed": (42, "generator default --seed 42"),
    "backend": ("default.qubit", "generator default --backend default.qubit"),
    "optimizer": ("COBYLA", "generator default --optimizer cobyla"),
    "reps": (2, "generator default --reps 2"),
    "adapt.gradient_threshold": (1e-3, "generator default --adapt-threshold 1e-3 (Ha)"),
    "adapt.max_operators": (100, "generator default --adapt-max-ops 100"),
    "hamiltonian_source": ("of_bridge", "generator default --use-of-bridge"),
    "early_stop": (True, "generator default: early stop on unless --no-early-stop; "
                         "QEncode records whether a run stopped early "
                         "(run_config.early_stopped), not whether early stop was enabled"),
    "adapt.engine": ("auto", "generator default --adapt-engine auto: QNode at <= 12 "
                             "tapered qubits, statevector above"),
}
"""``{tier-1 field: (value, where it comes from)}``, used for a field an entry
leaves out (it is then reported as undeclared, never silently defaulted)."""

# ---------------------------------------------------------------------------
# QEncode generator: the Hamiltonian (of_bridge) and tapering
# ---------------------------------------------------------------------------
OF_BRIDGE_VERIFY_TOL_HA = 1e-4
"""The generator's of_bridge check: ``|E_exact(qubit H) - E_CASCI|`` must not
exceed 1e-4 Ha."""

DROP_INTEGRAL_HA = 1e-12
"""Integrals (Ha) of magnitude below this are not added (of_bridge)."""

DROP_QUBIT_TERM_HA = 1e-12
"""Qubit terms whose real coefficient is below this (Ha) are dropped (of_bridge)."""

TAPER_CONSTANT_THRESHOLD_HA = 0.1
"""A Z2-sector ground energy further than this from CASCI triggers the
constant correction of ``apply_tapering`` (every mapping, not only BK);
QEncode records it as ``encoding.tapering.bk_constant_correction_ha``."""

STRIP_IMAGINARY_REL = 1e-6
"""``strip_imaginary_from_hamiltonian``: a tapered operator is rebuilt from the
real parts of its coefficients when some |Im c| exceeds this times max |c|."""

STRIP_DROP_REAL_HA = 1e-14
"""``strip_imaginary_from_hamiltonian``: terms with |Re c| at or below this (Ha) are dropped."""

STRIP_VERIFY_TOL_HA = 1e-3
"""``strip_imaginary_from_hamiltonian``: the stripped operator's ground energy
must stay within this (Ha) of the reference."""

# ---------------------------------------------------------------------------
# Qubit cut-offs (the generator's, then ours)
# ---------------------------------------------------------------------------
QML_MATRIX_MAX_QUBITS = 12
"""Up to this many qubits a dense matrix comes from ``qml.matrix`` (the
generator's call, bit for bit); from 13 to :data:`EXACT_DENSE_MAX_QUBITS` it is
``sparse_matrix().real.toarray()`` diagonalised by the same
``numpy.linalg.eigvalsh`` (PennyLane's dense path took > 10 min for H8's
13-qubit operator; the two differ only in summation order, ground energies
<= 4e-13 Ha apart, measured on the shared entries)."""

EXACT_DENSE_MAX_QUBITS = 14
"""Dense diagonalisation up to this many qubits, sparse ``eigsh`` above (the
generator's ``e_exact_qubit`` switch)."""

Z2_SECTOR_DENSE_MAX_QUBITS = 13
"""The generator's Z2-sector search (``_find_optimal_sector``) diagonalises
densely up to 13 tapered qubits, sparse above."""

VERIFY_DENSE_MAX_QUBITS = 10
"""Above this many qubits the generator's of_bridge check uses the sparse
eigensolver instead of the dense one."""

TAPER_OPERATION_MAX_QUBITS = 12
"""Largest untapered qubit count for which the generator tapers operations
with ``qchem.taper_operation`` (dense ``2^N x 2^N`` matrices); above it the
tapered pool is built from generators (``B**3 = -B`` checked)."""

LIGHT_REBUILD_ABOVE_QUBITS = 16
"""Above this many untapered qubits (H10, 20) the rebuild is light: no
diagonalisation in the qubit space, the CASCI energy as the exact one.  H8
(16 qubits) still takes the full path (ours; fits in 24 GiB)."""

# ---------------------------------------------------------------------------
# Audit rules (docs/explanations/tiers.md)
# ---------------------------------------------------------------------------
FRAGILE_MARGIN = 0.20
"""A certified entry whose margin ``(threshold - error) / threshold`` is below
this is fragile (docs/explanations/margin.md)."""

STRICT_REPRODUCTION_HA = 1e-6
"""QEncode's strict reproduction tolerance: a re-run whose energy moves more than
1e-6 Ha from the published one "exceeded the strict tolerance" (QEncode's drift
report: 17 of 40 entries exceeded it while still valid).
Used only to count, in the robustness study's drift table, and for a dissociation
curve point's ``agrees`` (:mod:`qencode_nb.studies.curve`); the tiers do not use it."""

ACTIVE_BOUNDARY_TOL_HA = 1e-4
"""An orbital inside the active space and one outside whose RHF orbital energies
lie closer than this (Ha) make the active space's boundary ambiguous: which of
the two is active can change with last-digit arithmetic or SCF convergence.
Why 1e-4 Ha: PySCF's RHF converges to ``conv_tol = 1e-9`` Ha with the orbital
gradient to ``conv_tol_grad = sqrt(conv_tol)`` = 3.2e-5 (PySCF ``scf.hf``
defaults, used by the generator), and orbital energies are determined no better
than about that gradient; 1e-4 is three times it.  Exact degeneracies (a
symmetry pair split by the boundary) fall under it too.  The audit records a
warning, it decides no tier."""

REPLAY_TOL_HA = 1e-9
"""A replay passes when ``|E(stored params) - E_published| <= 1e-9`` Ha."""

VARIATIONAL_TOL_HA = 1e-9
"""Energies this far below the exact ground energy (Ha) break the variational
bound: the Hamiltonian, the reference or the published energy is inconsistent."""

GAP_CONSISTENCY_REL = 1e-9
"""Relative tolerance when recomputing the published gap from the published energies."""

REFERENCE_MATCH_HA = 1e-6
"""Largest |recorded - recomputed| (Ha) of a reference energy: the exact qubit ground
energy against the stored terms' own ground energy (or the rebuilt one when they are
equal), the CASCI and Hartree-Fock energies against the rebuild's.  Measured on the 40
shared entries and NH3 PAR/HEA under the portable kernel profile: exact ground
energy within 1.1e-9 Ha (H10), CASCI within 1.7e-9 Ha (benzene; PySCF's iterative CASCI
converges to ~1e-9 Ha), Hartree-Fock within 9.7e-13 Ha; 1e-6 Ha is the fingerprint's
scale (:data:`FINGERPRINT_THRESHOLD_HA`), ~600x above them."""

FINGERPRINT_THRESHOLD_HA = 1e-6
"""Fingerprint ``|E_exact - E_CASCI|`` below which a Hamiltonian is inferred to
be ``of_bridge``.  The generator's comments: of_bridge "matches CASCI to
~1e-15 Ha"; pennylane_native "deviates from CASCI by up to ~3.6e-4 Ha" (HF,
H2O), 1.4e-4 (LiH), 1.3e-4 (NH3).  Measured on the 40 shared entries: <=
2.8e-13 Ha up to 12 qubits, 1.8e-9 / 1.9e-9 Ha for H10 / H8 (PySCF's
iterative CASCI converges to ~1e-9 Ha).  1e-6 sits ~500x above the worst
of_bridge value and 10x below the smallest native one."""

GENERATOR_ANG_TO_BOHR = 1.8897259886
"""Angstrom -> Bohr factor of QEncode's generator (``ANG_TO_BOHR`` in
``scripts/generate_entry_v4.py``, qencode-benchmark master a46b4ec), used to
rebuild the ``pennylane_native`` path exactly as it was called."""

COEFF_MATCH_HA = 1e-8
"""Largest |coefficient difference| (Ha) for which two Hamiltonians count as the
same build, after the equivalences of :mod:`qencode_nb.hamiltonian.equivalence`
(PySCF moves by a few ulps with the BLAS kernel; measured rebuilt-vs-stored
differences on the 27 shared entries with Hartree-Fock orbitals are <= 1e-13 Ha).
An edited coefficient above it is a Hamiltonian alert."""

PROOF_BUDGET_S = 60.0
"""Default ``--proof-budget`` (seconds): the longest a cold ``pennylane_native``
build may be estimated to take before the provenance check skips it and reads
``unverified`` (issue 37: "never an unbounded wait")."""

NATIVE_ESTIMATE = {"constant_s": 1.0, "ao4_s": 2.0e-7, "qubit4_s": 0.25, "v3_qubit4_s": 26.0}
"""Estimated seconds of a cold ``pennylane_native`` build by method ``integrals``:
``constant_s + ao4_s * n_ao**4 + (qubit4_s + [rule v3] * v3_qubit4_s) * (n_qubits / 10)**4``
(``n_ao`` PennyLane's basis functions, ``n_qubits = 2 * active orbitals``).  Bounds
every build measured by ``benchmarks/native_proof.py`` (61 problems, 2026-12-05,
slowest 14.9 s: N2 6-31G (6e,6o) rule v3, estimated 55 s; PennyLane's mapping of N2
cc-pVDZ (10e,10o) 2.3 s, estimated 5 s); the v3 term is schema 3.0.0's sector search
(one tapering per sector), which dominates the small v3 problems."""

WEYL_REUSE_HA = 1e-9
"""When stored and rebuilt operators differ by at most this (operator norm,
bounded by the sum of |coefficient differences|, Weyl's inequality), the
stored operator's ground energy is taken from the rebuilt one."""

SECTOR_REPLAY_MAX_DCOEFF_HA = 1e-8
"""The sector engine replays stored ADAPT angles on the rebuilt active-space
Hamiltonian only when the rebuilt and stored qubit Hamiltonians agree to this
(largest |coefficient difference|, Ha)."""

B_CUBED_TOL = 1e-8
"""A tapered excitation generator ``B`` must satisfy ``B**3 = -B`` to this
(max-abs entry) for the closed-form exponential to hold."""

B_CUBED_BOUND_MARGIN = 4.0
"""Factor by which a Pauli-coefficient bound of ``max|B**3 + B|`` must clear
:data:`B_CUBED_TOL` for :func:`qencode_nb.engines.excitation_check.keeps` to decide
without the generator's matrix (ours: far above the ~1e-16 relative rounding of either
computation)."""

B_CUBED_TINY_COEFFICIENT = 1e-12
"""A non-zero Pauli coefficient of a tapered generator below this (dimensionless) sends
:func:`qencode_nb.engines.excitation_check.keeps` to the generator's matrix, whose
summation could round an entry to exactly zero (ours)."""

# ---------------------------------------------------------------------------
# QEncode v4 dissociation curves (releases/v4/curves, qencode-benchmark master a46b4ec)
# ---------------------------------------------------------------------------
CURVE_MAX_OPERATORS = 40
"""The ADAPT operator cap of QEncode's v4 dissociation curves
(``releases/v4/curves/README.md``: "Points that hit the 40-operator cap do not reach
the certification threshold"); the curve files do not record it."""

GENERATOR_MAPPING = "jordan_wigner"
"""The generator's default qubit mapping (``--mapping``, default ``jordan_wigner``,
``scripts/generate_entry_v4.py`` at a46b4ec); the curve files record none."""

# ---------------------------------------------------------------------------
# Entry files: what a reader accepts of a file's shape
# ---------------------------------------------------------------------------
MAX_ENTRY_DEPTH = 32
"""How deeply an entry file may nest (the root object is level 1): four times the
deepest real entry (8 levels; every file of ``../shared/qencode-v4/db`` and
``../shared/qencode-history/releases``, measured 2026-12 for issue 36), far below
Python's recursion limit, so that no later stage (the hash rules, the records) meets a
nesting it cannot walk (:mod:`qencode_nb.entry.jsontext`)."""

# ---------------------------------------------------------------------------
# Plans: a sweep's predicted wall time (qencode-nb sweep --plan, batch/plan.py)
# ---------------------------------------------------------------------------
PLAN_WARM_MIN_CALLS = 3
"""A plan times at least this many warm evaluations of an entry's re-run function (its
median is the seconds per evaluation; qencode-nb's choice, issue 53: "median of 3")."""

PLAN_WARM_MIN_S = 1.0
"""... and keeps timing a fast one until this many seconds are spent (s), so that the
median of millisecond calls samples a shared host over a second, not one quiet moment
(2026-12-07, BeH2 PAR/HEA beside two sweeps on 2 cores: 0.3 s gave 4.4 ms an evaluation,
its run took 6.0 ms; qencode-nb's choice)."""

PLAN_WARM_BUDGET_S = 2.0
"""A plan stops timing warm evaluations (or COBYLA's own steps) of one function once
this many seconds are spent (s), after at least one (issue 53: "until 2 s spent")."""

PLAN_MEASURE_TIMEOUT_S = 1800.0
"""The longest one entry's plan measurement may take (s; its child process is killed
and the entry planned without a prediction, the reason in ``plan.csv``).  H10's cold
rebuild and statevector replay are the longest (minutes; qencode-nb's choice)."""

PLAN_NOTEBOOK_S = 1.5
"""Seconds an audit run spends outside what a plan measures: the kernel's start, the
verdict, the figure and the notebook's saves (s).  Measured 2026-12-07 on a 2-core AMD
EPYC (Zen 4) shared with two sweeps: H2 JW/UCCSD's full audit, per cell (papermill's
durations) and as a sweep run, against the plan's measurement of the same entry
(docs/howto/audit-a-whole-record.md, "Plan and shard a release")."""

PLAN_SHARED_CPU_SHARE = 0.9
"""A plan whose timed evaluations got less than this share of a core (median over its
entries, ``cpu_share``) says so under its total: its predictions hold for runs under the
same load.  Issue 53's v4 sweep on a 2-core AMD EPYC (Zen 4) at load 3 to 5: the same
entry's seconds per evaluation measured 0.051, 0.121 and 0.142 s over one morning (H4
JW/UCCSD), and the runs took a median 2.3x their plan, made at a quieter moment; one H4
PAR/HEA evaluation took 0.019 s at half a core against the plan's 0.0081 s
(qencode-nb's choice of threshold)."""

PLAN_SWEEP_S = 8.0
"""Seconds a ``qencode-nb sweep`` spends once, whatever its entries: the command's
start, the plan of its folder (resume's probe), the pool's warm workers, summary.csv,
the margin plot and the crate (s).  Measured as :data:`PLAN_NOTEBOOK_S` (the CLI's wall
time less its one run's)."""
