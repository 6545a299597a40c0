"""qencode-nb's own rebuild against the Hamiltonian QEncode's generator built, per entry of a
generator study folder, to the bit and in order (issue 59).

    .venv/bin/python docs/results/v4-recorded/rebuild_vs_generator.py STUDY CORETYPE OUT.csv

STUDY is a ``qencode-nb study generator --out`` folder (one folder per entry holding
``generator-entry.json``), CORETYPE the kernels its runs measured (``portable`` on a CPU
without AVX-512: the study's ``blas_coretype`` column).  This process pins them before numpy
is imported, rebuilds each entry as the audit's Hamiltonian stage does
(:func:`qencode_nb.hamiltonian.check.rebuild`, through the rebuild cache) and compares its
terms with the generator's (:func:`qencode_nb.studies.generator_compare.hamiltonian_difference`)
and with the stored ones.  The study itself records the same comparison since it gained
``rebuild_is_generators``; this script measures it for study folders made before that.
"""

from __future__ import annotations

import glob
import sys
from pathlib import Path


def main(study: str, coretype: str, out: str) -> None:
    from qencode_nb.notebook.pins import pin

    kernels = pin(1, coretype)["profile"]["kernels"]
    import pandas as pd

    from qencode_nb.entry import load
    from qencode_nb.entry.pauli_strings import format_pauli_word
    from qencode_nb.hamiltonian.check import rebuild
    from qencode_nb.studies.generator_compare import hamiltonian_difference

    roots = ["../shared/qencode-v4/db", "../shared/qencode-history/releases/*/db"]
    rows = []
    for folder in sorted(Path(study).iterdir()):
        produced = folder / "generator-entry.json"
        if not produced.is_file():
            continue
        source = [p for r in roots for p in glob.glob(f"{r}/{folder.name}.json")][0]
        entry = load(source)
        ours = [{"pauli_string": format_pauli_word(w), "coefficient": c}
                for w, c in rebuild(entry).tapering.tapered_terms()]
        vs_generator = hamiltonian_difference(load(str(produced)).pauli_terms, ours)
        vs_stored = hamiltonian_difference(entry.pauli_terms, ours)
        rows.append({"entry_id": entry.entry_id,
                     "kernels": ",".join(f"{k}={v}" for k, v in sorted(kernels.items())),
                     "rebuild_is_generators": vs_generator["identical"],
                     "differing_from_generator": vs_generator["coefficients_differing"],
                     "terms": vs_generator["terms"],
                     "differing_from_stored": vs_stored["coefficients_differing"],
                     "largest_from_stored_ha": vs_stored["largest_difference_ha"]})
    pd.DataFrame(rows).to_csv(out, index=False)


if __name__ == "__main__":
    main(*sys.argv[1:4])
