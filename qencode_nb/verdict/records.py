"""The audit's record names: the one list that ``audit.ipynb``, ``collect`` and
``studies`` use.

Tools outside the project read these names from executed audit notebooks
(mimetype ``application/vnd.qencode-nb.record+json``), so each keeps its name
and meaning; a new record is added here first.  Energies in Ha, errors and
thresholds in mHa, margins as fractions.
"""

#: ``{record name: meaning}``, in the order an audit writes them.
AUDIT_RECORDS = {
    "parameters_in_force": "the notebook parameters' values at the pin cell (qencode_nb.notebook.contract.capture)",
    "blas_threads": "BLAS threads measured by threadpoolctl (every pool)",
    "blas_coretype": "OPENBLAS_CORETYPE in force when numpy's OpenBLAS loaded, or None "
                     "(each copy's kernel: blas_profile)",
    "blas_profile": "the blas_coretype asked for, what was used (a profile, host or one "
                    "coretype; the reason for a fallback), the OpenBLAS kernel each copy "
                    "measured, and l2 (KiB, OPENBLAS_L2_SIZE) where a kernel spec set it",
    "kernel_mismatches": "OpenBLAS pools not running the requested kernel",
    "entry_id": "QEncode entry_id",
    "entry_source": "the file the entry was read from",
    "entry_provenance": "the entry's own provenance: tool_versions (pins, git_commit), environment (platform, BLAS threads)",
    "recorded_environment": "the environment the entry records (qencode_nb.environment.recorded): its release (v3, v4; None when no QEncode requirements file pins its tool_versions), the stack's pip requirements, the release's requirements file and kernel triple with its source, and what is unknown and why, and the entry's created_utc (the date its stack is resolved at)",
    "mode": "audit mode: full, replay or rerun",
    "strict": "whether strict mode was requested",
    "provenance": "versions vs pins, git, platform, CPU, every BLAS pool, the numeric fingerprint (numeric: every OpenBLAS copy, numpy dispatch, numba CPU, libc, variables, hash)",
    "stack": "the package stack that ran (qencode_nb.environment.in_force.stack_in_force): the stack asked for (current, recorded, a name), the one in force (name, kernelspec, Python, the recorded packages' versions and their key), the entry's recorded stack name, whether every recorded pin is installed, why the stack asked for did not run (not_used), and the running stack's lock: lock_key, resolved_at (the date it was resolved at, None when undated), resolved_on, resolution_fallback (why a dated resolution was not made)",
    "integrity": "SHA-256 by QEncode's rule, the entry's own signature state and the public key it was checked with (signature_key), QEncode's signing_key_id, the entry file's own SHA-256 (file_sha256)",
    "hamiltonian": "the Hamiltonian check: terms (the largest coefficient difference, in Ha, "
                   "and how many coefficients differ to the bit: coeffs_differing; the "
                   "rebuilt terms' digest to the bit: rebuilt_terms_sha256), "
                   "ground energies, fingerprint, cache; "
                   "hamiltonian_source proven by rebuilding each generator path (paths), "
                   "status pass / fail / unverified with its reason",
    "engine": "engine requested (None, qnode, faithful, sector, fast) and used, and why the requested one did not run; faithful: the recorded QNode arithmetic ran on the faithful engine (the same bits, issue 60), else faithful_reason: why the plain QNode ran (None: another engine was asked for)",
    "replay": "energy of the stored optimal parameters vs the published energy, and the qubit Hamiltonian it ran on (hamiltonian: stored or rebuilt (of_bridge))",
    "rerun": "the re-run: energy, nfev, restarts, configuration used (config.hamiltonian: the qubit Hamiltonian it optimised, stored or rebuilt (of_bridge)), findings, COBYLA restarts verified from a kept path and run (cobyla_paths), the sector pool read or built (sector_pool_cache), and with evaluation_log set the log's path and the lines written (evaluation_log: path, lines; note where fewer than the evaluations: restored restarts, ADAPT)",
    "rerun_energy": "the re-run energy (Ha, tapering constant included), or None",
    "rerun_trace": "the re-run's energy per evaluation (ADAPT: per operator), Ha, and restart starts; None without a re-run",
    "fields": "tier 1: every procedure field as declared and as used (status; effect on tier 1: pass, incomplete or fail; the full reason of a row that is not equal)",
    "undeclared": "procedure fields the entry does not declare",
    "error_mha": "regenerated error |E_rerun - E_exact| (mHa)",
    "published_error_mha": "published error (mHa); None when the entry publishes no energy",
    "movement_mha": "signed movement: regenerated - published error (mHa)",
    "margin_regenerated": "(threshold - regenerated error) / threshold",
    "margin_published": "(threshold - published error) / threshold",
    "published_certified": "the entry's own certification flag",
    "threshold_mha": "the entry's certification threshold (mHa)",
    "reference_energy": "exact ground energy of the qubit Hamiltonian (Ha): the published one, else (an entry of one's own) the rebuilt Hamiltonian's",
    "certified": "regenerated error below the threshold",
    "fragile": "certified with margin below the fragile margin",
    "certification_change": "gained/lost certification, or None",
    "bit_identical": "re-run energy equal to the published one to the last bit",
    "difference": "re-run vs published energy: delta, ulps, float.hex",
    "consistency": "internal consistency of the published numbers (finite, gap, variational bound, references, certification flag; each failure names the field and value; contradicts: the verdict records a failure contradicts)",
    "alerts": "integrity, Hamiltonian, replay and consistency failures",
    "tiers": "the three tiers: procedure (pass, incomplete, fail), certification, bit_identical",
    "verdict": "the one-line summary",
    "works_on_my_qpu": "the five questions (code, environment, documentation, hardware, executability): yes/partly/no with the reason (unknown: the entry was never read)",
    "done": "the last record: the run completed",
}

#: Written only when a stage fails: ``{"stage", "type", "message"}``.
ERROR_RECORD = "error"

#: The verdict's records (written from :meth:`Verdict.to_record`), in order.
VERDICT_RECORDS = ("error_mha", "published_error_mha", "movement_mha", "margin_regenerated",
                   "margin_published", "published_certified", "threshold_mha",
                   "reference_energy", "certified", "fragile", "certification_change",
                   "bit_identical", "difference", "consistency", "alerts", "tiers")
