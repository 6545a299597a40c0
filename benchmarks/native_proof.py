"""The native-path proof, fast (PySCF integrals in PennyLane's basis) against slow
(``qchem.molecular_hamiltonian``), on every slow build the cache holds.

Usage::

    python benchmarks/native_proof.py                       # the default cache folder
    python benchmarks/native_proof.py --cache DIR --json out.json
    python benchmarks/native_proof.py --build-slow "Li 0 0 0; H 0 0 1.6" sto-3g 2 5 bravyi_kitaev

Each ``native-<key>.json`` written by method ``pennylane`` (the audit's build before
issue 37, ``material`` without ``"method"``) under the PennyLane version installed here
holds the generator's operator and the seconds it took.  For each, in one process,
the same problem is built by method ``integrals``
(:func:`qencode_nb.hamiltonian.native.build_native`) and compared:
:func:`qencode_nb.hamiltonian.equivalence.compare_terms` on the terms (tolerance
1e-8 Ha, ``rules.COEFF_MATCH_HA``), the constant correction, the sectors and the qubit
count; where the terms differ, the four lowest eigenvalues (a rotation among
degenerate orbitals, LAPACK's choice in either build, changes terms but not the
spectrum).  Prints per problem the slow seconds (as recorded when it was built), the fast
seconds (measured now), the ratio and the equality; exit status 1 when any differs.
``--build-slow`` builds one problem both ways now, side by side (a cold slow build
can take minutes to half an hour in cc-pVDZ).

Runs at one BLAS thread (``harness``).  The slow seconds of cached files were
measured on this project's machines when they were built (load varies): compare the
ratios' order of magnitude, not the digits.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import glob
import json
import sys
import time
from pathlib import Path


def _compare(slow: dict, fast: dict) -> dict:
    from qencode_nb.hamiltonian.equivalence import compare_terms
    from qencode_nb.rules import COEFF_MATCH_HA

    cmp = compare_terms({s: c for s, c in slow["terms"]}, {s: c for s, c in fast["terms"]})
    dconst = abs(float(slow["constant_ha"]) - float(fast["constant_ha"]))
    same = (cmp.equal and dconst <= COEFF_MATCH_HA
            and list(slow["sectors"]) == list(fast["sectors"])
            and int(slow["num_qubits"]) == int(fast["num_qubits"]))
    rec = cmp.to_record()
    return {"equal": same, "equivalence": rec.get("equivalence"),
            "max_abs_dcoeff": rec.get("max_abs_dcoeff"), "constant_diff": dconst}


def _lowest(doc: dict, k: int = 4):
    """The ``k`` lowest eigenvalues (Ha) of a build's tapered terms plus its constant."""
    import numpy as np
    import pennylane as qml
    from scipy.sparse.linalg import eigsh

    from qencode_nb.entry.pauli_strings import parse_pauli_string

    n = int(doc["num_qubits"])
    sentence = qml.pauli.PauliSentence()
    for string, c in doc["terms"]:
        sentence[qml.pauli.PauliWord(parse_pauli_string(string))] = c
    matrix = sentence.to_mat(wire_order=list(range(n)), format="csr").real
    k = min(k, 2 ** n - 2)
    values = eigsh(matrix, k=k, which="SA", return_eigenvectors=False) if k > 0 else \
        np.linalg.eigvalsh(matrix.toarray())
    return np.sort(values) + float(doc["constant_ha"])


def _fast(problem: dict) -> tuple[dict, float]:
    from qencode_nb.entry.pauli_strings import format_pauli_word
    from qencode_nb.hamiltonian.native import build_native

    start = time.perf_counter()
    tap = build_native(problem["geometry"], problem["basis"], problem["num_electrons"],
                       problem["num_spatial_orbitals"], problem["mapping"],
                       problem["e_casci"], problem.get("tapering_rule", "v4"),
                       method="integrals")
    seconds = time.perf_counter() - start
    return ({"terms": [[format_pauli_word(w), complex(c).real] for w, c in tap.tapered_terms()],
             "constant_ha": float(tap.bk_constant_correction_ha or 0.0),
             "sectors": [int(s) for s in tap.z2_sectors],
             "num_qubits": int(tap.n_qubits_tapered)}, seconds)


def _label(p: dict) -> str:
    atoms = [a.split()[0] for a in p["geometry"].split(";") if a.strip()]
    formula = "".join(atoms) if len(atoms) < 5 else f"{len(atoms)} atoms"
    return (f"{formula} {p['basis']} ({p['num_electrons']}e,{p['num_spatial_orbitals']}o) "
            f"{p['mapping']} {p.get('tapering_rule', 'v4')}")


def main(argv=None) -> int:
    from importlib.metadata import version

    from qencode_nb.hamiltonian.cache import cache_root

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=None, help="cache root (default: the audit's)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    ap.add_argument("--build-slow", nargs=5, metavar=("GEOMETRY", "BASIS", "NE", "NO", "MAPPING"),
                    help="build this problem both ways now (e_casci 0, rule v4)")
    args = ap.parse_args(argv)

    rows = []
    if args.build_slow:
        from qencode_nb.hamiltonian.native import build_native
        from qencode_nb.entry.pauli_strings import format_pauli_word

        g, b, ne, no, m = args.build_slow
        problem = {"geometry": g, "basis": b, "num_electrons": int(ne),
                   "num_spatial_orbitals": int(no), "mapping": m, "e_casci": 0.0}
        start = time.perf_counter()
        tap = build_native(g, b, int(ne), int(no), m, 0.0, method="pennylane")
        slow_s = time.perf_counter() - start
        slow = {"terms": [[format_pauli_word(w), complex(c).real] for w, c in tap.tapered_terms()],
                "constant_ha": float(tap.bk_constant_correction_ha or 0.0),
                "sectors": [int(s) for s in tap.z2_sectors],
                "num_qubits": int(tap.n_qubits_tapered), "seconds": slow_s}
        sources = [(problem, slow)]
    else:
        folder = (args.cache or cache_root()) / "rebuild"
        installed = version("pennylane")
        sources = []
        for path in sorted(glob.glob(str(folder / "native-*.json"))):
            doc = json.loads(Path(path).read_text())
            material = doc.get("material", {})
            if material.get("method") is not None:
                continue                      # a fast build, not an oracle
            if material.get("environment", {}).get("versions", {}).get("pennylane") != installed:
                continue
            sources.append((material["problem"], doc))
    print(f"{'problem':58s} {'slow s':>8s} {'fast s':>8s} {'ratio':>8s}  equal  max|dc| Ha")
    failed = 0
    for problem, slow in sources:
        fast, fast_s = _fast(problem)
        cmp = _compare(slow, fast)
        slow_s = float(slow.get("seconds") or float("nan"))
        if not cmp["equal"]:
            # Terms differ: the same spectrum means the two builds differ by an
            # orbital rotation (degenerate orbitals, eigh's choice), not in physics.
            cmp["lowest_diff_ha"] = float(abs(_lowest(slow) - _lowest(fast)).max())
            cmp["same_spectrum"] = cmp["lowest_diff_ha"] <= 1e-8
        failed += not (cmp["equal"] or cmp.get("same_spectrum"))
        rows.append({"problem": problem, "slow_s": slow_s, "fast_s": fast_s, **cmp})
        print(f"{_label(problem):58s} {slow_s:8.2f} {fast_s:8.3f} {slow_s / fast_s:8.1f}  "
              f"{'yes' if cmp['equal'] else 'NO ':5s}  {cmp['max_abs_dcoeff'] or 0.0:.1e}"
              f" ({cmp['equivalence'] or 'lowest 4 eigenvalues within %.1e Ha' % cmp['lowest_diff_ha']})",
              flush=True)
    if rows:
        slow_total = sum(r["slow_s"] for r in rows)
        fast_total = sum(r["fast_s"] for r in rows)
        equal = sum(r["equal"] for r in rows)
        print(f"\n{len(rows)} problems: {equal} equal terms, {len(rows) - equal - failed} "
              f"same spectrum only, {failed} different; slow {slow_total:.1f} s, "
              f"fast {fast_total:.1f} s (ratio {slow_total / fast_total:.0f}); slowest fast "
              f"{max(r['fast_s'] for r in rows):.2f} s")
    else:
        print("no slow build in the cache under this PennyLane version")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
