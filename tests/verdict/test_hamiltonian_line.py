"""The card's Hamiltonian line says what it means (issue 59, item 4): "to the last bit"
only when every coefficient equals the rebuild's to the bit, else the check's
tolerance (rules.COEFF_MATCH_HA), how many coefficients differ and the largest
difference (Ha); the term-order equivalence is never called "identical".

Real entries: the LiH PAR/HEA entry of ../shared/qencode-v4/db (the bundled ``lih``),
re-sealed copies of it whose stored coefficients are the rebuild's own (equal to the
bit), one of them moved by one ulp (``math.nextafter``); NH3 PAR/HEA
(tests/data/qencode-v4-public) for a Pauli conjugation.  The check runs in-process on
a rebuild cached in a pytest temporary folder.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from conftest import LIH_PAR_HEA, ROOT, reseal

NH3_PAR_HEA = (ROOT / "tests" / "data" / "qencode-v4-public"
               / "NH3_ccpvdz_PAR_HEA_v4_tapered__sha256_aa3769fb20846ec5.json")


@pytest.fixture(scope="module")
def lih_rebuild(tmp_path_factory):
    """``(cache_dir, Rebuilt, {canonical pauli_string: rebuilt coefficient (Ha)})`` of
    the LiH PAR/HEA entry, rebuilt once into a temporary cache."""
    from qencode_nb.entry import load
    from qencode_nb.entry.pauli_strings import format_pauli_word
    from qencode_nb.hamiltonian.cache import cached_rebuild_entry
    from qencode_nb.hamiltonian.rebuild import Rebuilt

    cache_dir = tmp_path_factory.mktemp("qnb-cache")
    rebuilt = Rebuilt(*cached_rebuild_entry(load(LIH_PAR_HEA), cache_dir=cache_dir))
    terms = {format_pauli_word(word): complex(c)
             for word, c in rebuilt.tapering.tapered_terms()}
    assert all(c.imag == 0.0 for c in terms.values())      # parity: real coefficients
    return cache_dir, rebuilt, {s: c.real for s, c in terms.items()}


def _audit_line(path, cache_dir, rebuilt) -> tuple[dict, tuple]:
    """The ``hamiltonian`` record of the entry at ``path`` and the card's row for it."""
    from qencode_nb.entry import load
    from qencode_nb.hamiltonian.hamcheck import check_entry
    from qencode_nb.verdict.card_text import check_rows

    record = check_entry(load(path), cache_dir=cache_dir, rebuilt=rebuilt).to_record()
    rows = [row for row in check_rows({"hamiltonian": record}) if row[0] == "hamiltonian"]
    assert len(rows) == 1
    return record, rows[0]


def _stored_as_rebuilt(tmp_path, rebuilt_terms, name, *, moved=None, shuffle=False):
    """A re-sealed copy of LiH PAR/HEA whose stored coefficients are the rebuild's
    (the stored strings and order kept); ``moved``: the index of one coefficient
    moved up by one ulp; ``shuffle``: the stored terms in another order."""
    from qencode_nb.entry.pauli_strings import format_pauli_word, parse_pauli_string

    def edit(raw):
        terms = raw["artifacts"]["qubit_hamiltonian"]["pauli_terms"]
        for t in terms:
            t["coefficient"] = rebuilt_terms[format_pauli_word(
                parse_pauli_string(t["pauli_string"]))]
        if moved is not None:
            terms[moved]["coefficient"] = math.nextafter(terms[moved]["coefficient"],
                                                         math.inf)
        if shuffle:
            random.Random(59).shuffle(terms)

    return reseal(tmp_path, LIH_PAR_HEA, edit, name)


def test_a_rebuild_equal_to_the_bit_reads_to_the_last_bit(lih_rebuild, tmp_path):
    cache_dir, rebuilt, terms = lih_rebuild
    record, row = _audit_line(_stored_as_rebuilt(tmp_path, terms, "bits"), cache_dir,
                              rebuilt)
    assert record["coeffs_bit_identical"] is True and record["coeffs_differing"] == 0
    assert record["paths"]["of_bridge"]["coeffs_differing"] == 0
    assert row == ("hamiltonian", "pass", f"{len(terms)} terms, 5 qubits, equal to the "
                   "of_bridge rebuild to the last bit")
    # The same terms in another order: said so, never "identical".
    record, row = _audit_line(_stored_as_rebuilt(tmp_path, terms, "order", shuffle=True),
                              cache_dir, rebuilt)
    assert record["paths"]["of_bridge"]["equivalence"] == "term order"
    assert record["coeffs_differing"] == 0
    assert row[2] == (f"{len(terms)} terms, 5 qubits, equal to the of_bridge rebuild in "
                      "another term order, to the last bit")


def test_one_coefficient_one_ulp_away_is_counted_with_the_tolerance(lih_rebuild,
                                                                    tmp_path):
    from qencode_nb.entry.pauli_strings import format_pauli_word, parse_pauli_string

    cache_dir, rebuilt, terms = lih_rebuild
    raw = json.loads(LIH_PAR_HEA.read_text())
    index = 7
    stored = raw["artifacts"]["qubit_hamiltonian"]["pauli_terms"][index]
    c = terms[format_pauli_word(parse_pauli_string(stored["pauli_string"]))]
    ulp = math.nextafter(c, math.inf) - c
    record, row = _audit_line(_stored_as_rebuilt(tmp_path, terms, "ulp", moved=index),
                              cache_dir, rebuilt)
    assert record["status"] == "pass" and record["coeffs_bit_identical"] is False
    assert record["coeffs_differing"] == 1 and record["max_abs_dcoeff"] == ulp
    ob = record["paths"]["of_bridge"]
    assert (ob["coeffs_differing"], ob["coeffs_compared"]) == (1, len(terms))
    assert row[2] == (f"{len(terms)} terms, 5 qubits, equal to the of_bridge rebuild "
                      f"within 1e-8 Ha; 1 of {len(terms)} coefficients differs (largest "
                      f"difference {ulp:.1e} Ha)")
    assert "identical" not in row[2]


def test_the_stored_entry_line_agrees_with_its_record(lih_rebuild):
    """The entry as published: however many coefficients differ on this host's
    kernels, the line states the record's count and largest difference."""
    from qencode_nb.rules import COEFF_MATCH_HA

    cache_dir, rebuilt, _ = lih_rebuild
    record, (_, status, text) = _audit_line(LIH_PAR_HEA, cache_dir, rebuilt)
    assert status == "pass" and COEFF_MATCH_HA == 1e-8
    n = record["n_terms"]
    if record["coeffs_bit_identical"]:
        assert record["coeffs_differing"] == 0
        assert text.endswith("equal to the of_bridge rebuild to the last bit")
    else:
        assert 0 < record["coeffs_differing"] <= n
        assert text.endswith(
            f"equal to the of_bridge rebuild within 1e-8 Ha; {record['coeffs_differing']} "
            f"of {n} coefficients differ{'s' if record['coeffs_differing'] == 1 else ''} "
            f"(largest difference {record['max_abs_dcoeff']:.1e} Ha)")


def test_a_pauli_conjugation_and_an_older_record_are_worded_by_the_same_rule():
    from qencode_nb.entry.pauli_strings import format_pauli_word, parse_pauli_string
    from qencode_nb.hamiltonian.equivalence import anticommutes, symplectic
    from qencode_nb.hamiltonian.sources import agreement, compare_path

    raw = json.loads(NH3_PAR_HEA.read_text())
    stored = {format_pauli_word(parse_pauli_string(t["pauli_string"])): t["coefficient"]
              for t in raw["artifacts"]["qubit_hamiltonian"]["pauli_terms"]}
    conj = symplectic("Z1")
    flipped = {s: (-c if anticommutes(s, conj) else c) for s, c in stored.items()}
    p = compare_path(stored, 0.0, flipped, 0.0)
    assert p["equivalence"] == "pauli conjugation" and p["coeffs_differing"] == 0
    assert agreement("of_bridge", p) == (
        f"equal to the of_bridge rebuild up to conjugation by {p['conjugating_pauli']} "
        f"({p['n_sign_flips']} signs flipped; same spectrum), to the last bit")
    # A constant correction one ulp away is no longer "to the last bit".
    p = compare_path(stored, 0.25, stored, math.nextafter(0.25, 1.0))
    assert p["coeffs_differing"] == 0 and p["constant_diff_ha"] > 0
    assert agreement("of_bridge", p) == (
        "equal to the of_bridge rebuild within 1e-8 Ha; the constant correction differs "
        f"(largest difference {p['constant_diff_ha']:.1e} Ha)")
    # A record written before coeffs_differing: the tolerance and the largest only.
    old = {k: v for k, v in compare_path(stored, 0.0, dict(stored, Z0=stored["Z0"] + 3e-15),
                                         0.0).items()
           if k not in ("coeffs_differing", "coeffs_compared")}
    assert agreement("of_bridge", old) == (
        "equal to the of_bridge rebuild within 1e-8 Ha (largest difference "
        f"{old['max_abs_dcoeff']:.1e} Ha)")
