"""The sector engine's kept pool (:mod:`qencode_nb.engines.sector.pool_store`): kept once
per content, read back bit for bit, the same in every numeric environment, never served
when damaged.  The oracle is the pool built without the store
(:func:`qencode_nb.engines.ansatz.tapered_pool_excitations` and
:func:`qencode_nb.engines.sector.generators.generator`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import SHARED_DB, pinned_env
from test_sector import _h4_generators, h4  # noqa: F401  (h4: the fixture)

FIELDS = ("src", "tgt", "val", "a", "b", "v")


def assert_same_generator(x, y):
    """Every array of two Generators equal, dtype and layout included."""
    import numpy as np

    for name in FIELDS:
        left, right = getattr(x, name), getattr(y, name)
        assert left.dtype == right.dtype, name
        assert left.flags.c_contiguous == right.flags.c_contiguous, name
        assert np.array_equal(left, right), name


@pytest.fixture(scope="module")
def h4_space(h4):
    """The H4 [4e,4o] CI space (36 determinants) and its 26 excitation generators."""
    from qencode_nb.engines.sector import space as S

    return S.from_chemistry(h4[0]), _h4_generators()


def test_from_pairs_gives_back_every_generator_bit_for_bit(h4_space):
    """All 26 H4 excitations: the Generator read back from its pairs (a, b, v) equals
    the one built from the Pauli words, array for array and dtype for dtype."""
    from qencode_nb.engines.sector.generators import from_pairs, generator

    sec, gens = h4_space
    assert len(gens) == 26
    for G in gens:
        built = generator(sec, G)
        assert_same_generator(from_pairs(built.a, built.b, built.v, sec.dim), built)


@pytest.mark.parametrize("change, message", [
    (lambda a, b, v: (a, b, 2 * v), "weights"),
    (lambda a, b, v: (b, a, v), "a < b"),
    (lambda a, b, v: (a, b + 10**6, v), "a < b"),
    (lambda a, b, v: (a[:0], b[:0], v[:0]), "a < b"),
    (lambda a, b, v: (a.astype(float), b, v), "not integers"),
])
def test_from_pairs_refuses_what_is_not_a_signed_permutation(h4_space, change, message):
    from qencode_nb.engines.sector.generators import NotAnExcitation, from_pairs, generator

    sec, gens = h4_space
    built = generator(sec, gens[0])
    with pytest.raises(NotAnExcitation, match=message):
        from_pairs(*change(built.a, built.b, built.v), sec.dim)


def test_from_pairs_refuses_a_determinant_in_two_pairs(h4_space):
    import numpy as np

    from qencode_nb.engines.sector.generators import NotAnExcitation, from_pairs, generator

    sec, gens = h4_space
    built = generator(sec, gens[0])
    a = built.a.copy()
    a[1] = a[0]
    with pytest.raises(NotAnExcitation, match="two pairs"):
        from_pairs(a, built.b, built.v, sec.dim)
    assert np.array_equal(built.a[:1], a[:1])


def test_a_restored_tapering_keys_the_pool_as_the_fresh_one(h4_space):
    """The pool's key names the symmetry's terms: read from a cache payload (no
    PennyLane) or from the fresh operators, the material is the same."""
    from qencode_nb.engines.pool_key import pool_material
    from qencode_nb.hamiltonian import cache_payload
    from qencode_nb.hamiltonian.rebuild import rebuild_tapered

    raw = json.loads(next(SHARED_DB.glob("H4_ccpvdz_JW_UCCSD_*.json")).read_text())
    p = raw["problem"]
    chem, tap = rebuild_tapered(p["geometry"], p["basis"], p["charge"], p["spin"], 4, 4,
                                p["orbital_optimization"], "jordan_wigner")
    payload = json.loads(json.dumps(cache_payload.build_payload(chem, tap, None, None,
                                                                "none", 0.0)))
    _, restored = cache_payload.restore(payload)
    assert isinstance(restored, cache_payload.RestoredTaperResult)
    fresh = pool_material("sector-pool", 1, 4, tap)
    assert pool_material("sector-pool", 1, 4, restored) == fresh
    assert fresh["n_qubits_full"] == 8 and len(fresh["generators"]) == tap.num_symmetries
    assert "rebuild_key" not in fresh and "cache_key" not in json.dumps(fresh)


@pytest.fixture(scope="module")
def h8():
    from qencode_nb import entry as entries
    from qencode_nb.engines.ansatz import uccsd_excitations
    from qencode_nb.engines.sector import space as S
    from qencode_nb.hamiltonian.check import rebuild

    e = entries.load(next(SHARED_DB.glob("H8_ccpvdz_JW_ADAPT_*.json")))
    rebuilt = rebuild(e)
    excitations = uccsd_excitations(e.active_space[0], rebuilt.tapering.n_qubits_full)
    return e, rebuilt, S.from_summary(rebuilt.chemistry), excitations


def _oracle(e, rebuilt, sec, excitations):
    """The H8 pool built without the store: kept indices and Generators."""
    import pennylane as qml

    from qencode_nb.engines.ansatz import tapered_pool_excitations
    from qencode_nb.engines.sector.generators import generators

    tap = rebuilt.tapering
    pool = tapered_pool_excitations(e.active_space[0], tap.n_qubits_full, tap.generators,
                                    tap.paulixops, tap.z2_sectors)
    names = [(g.__name__, list(w)) for g, w in excitations]
    kept = [names.index((g.__name__, list(w))) for g, w, _ in pool]
    with qml.QueuingManager.stop_recording():
        gens = generators(sec, [qml.generator(g(0.0, wires=list(w)), format="observable")
                                for g, w, _ in pool])
    return kept, gens


@pytest.fixture(scope="module")
def kept_h8(h8, tmp_path_factory):
    """A cache root holding the H8 pool, and the first call's result."""
    from qencode_nb.engines.sector.pool_store import sector_pool

    root = tmp_path_factory.mktemp("pools")
    return root, sector_pool(*h8, cache_dir=root)


@pytest.mark.slow
def test_the_h8_pool_is_built_once_and_read_back_equal(h8, kept_h8):
    """H8 [8e,8o] (real entry, 4,900 determinants): the first call builds and keeps the
    pool, the second reads it; both equal the pool built without the store (278
    generators, every array bit for bit)."""
    from qencode_nb.engines.sector.pool_store import sector_pool

    kept, gens = _oracle(*h8)
    assert len(gens) == 278
    root, first = kept_h8
    second = sector_pool(*h8, cache_dir=root)
    assert (first[2], second[2]) == ("built", "hit")
    assert len(list(root.rglob("sector-pool-*.npz"))) == 1
    for got_kept, got_gens, _ in (first, second):
        assert got_kept == kept
        for x, y in zip(got_gens, gens, strict=True):
            assert_same_generator(x, y)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "weights", "material"])
def test_a_damaged_pool_file_is_rebuilt_with_a_warning(h8, kept_h8, tmp_path, damage):
    """A cut file, one whose weights are not +1/-1, and one holding another pool's
    material are never served: a CacheWarning names the file, and the pool is built
    again, equal to the first."""
    import io
    import shutil

    import numpy as np

    from qencode_nb.engines.sector.pool_store import sector_pool
    from qencode_nb.errors import CacheWarning

    root, (kept, gens, _) = kept_h8
    shutil.copytree(root, tmp_path, dirs_exist_ok=True)
    (path,) = tmp_path.rglob("sector-pool-*.npz")
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-1000])
    else:
        with np.load(path) as doc:
            arrays = {name: doc[name] for name in doc.files}
        if damage == "weights":
            arrays["v"] = arrays["v"] * 2
        else:
            arrays["material"] = np.frombuffer(b'{"kind": "other"}', dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        path.write_bytes(buffer.getvalue())
    with pytest.warns(CacheWarning, match=path.name):
        again, again_gens, status = sector_pool(*h8, cache_dir=tmp_path)
    assert status.startswith("rebuilt: ")
    assert again == kept
    for x, y in zip(again_gens, gens, strict=True):
        assert_same_generator(x, y)


_OTHER_ENVIRONMENT = r"""
import hashlib, json, sys
from qencode_nb.notebook.pins import pin
pin(1, sys.argv[2])
import numpy as np
from types import SimpleNamespace
from qencode_nb.engines.ansatz import uccsd_excitations
from qencode_nb.engines.sector import space as S
from qencode_nb.engines.sector.pool_store import _build
from qencode_nb.hamiltonian.cache_payload import _operator_of
m = json.loads(open(sys.argv[1]).read())
tap = SimpleNamespace(
    n_qubits_full=m["n_qubits_full"], z2_sectors=m["sectors"],
    generators=[_operator_of({"terms": t, "wire_order": list(range(m["n_qubits_full"]))})
                for t in m["generators"]],
    paulixops=[_operator_of({"terms": t, "wire_order": list(range(m["n_qubits_full"]))})
               for t in m["paulixops"]])
norb = m["n_qubits_full"] // 2
sec = S.from_integrals(np.zeros((norb, norb)), np.zeros((norb,) * 4), 0.0, norb,
                       tuple(m["nelec"]))
arrays = _build(SimpleNamespace(active_space=(m["num_electrons"], norb)), tap, sec,
                uccsd_excitations(m["num_electrons"], m["n_qubits_full"]))
print(json.dumps({k: hashlib.sha256(v.tobytes()).hexdigest() + str(v.dtype)
                  for k, v in sorted(arrays.items())}))
"""


@pytest.mark.slow
def test_the_h8_pool_is_the_same_under_other_kernels_and_numpy_dispatch(h8, tmp_path):
    """Why one file serves every numeric environment: a process under Sandybridge
    kernels in all three BLAS copies with numpy's AVX-512 loops off (a triple no host of
    this project runs by default) builds the H8 pool from the same symmetry terms into
    the same arrays, byte for byte."""
    import hashlib

    from qencode_nb.engines.pool_key import pool_material
    from qencode_nb.engines.sector.pool_store import _build
    from qencode_nb.notebook.blas_profiles import kernel_spec

    e, rebuilt, sec, excitations = h8
    material = {**pool_material("sector-pool", 1, e.active_space[0], rebuilt.tapering),
                "nelec": list(sec.nelec)}
    (tmp_path / "material.json").write_text(json.dumps(material))
    here = {k: hashlib.sha256(v.tobytes()).hexdigest() + str(v.dtype)
            for k, v in sorted(_build(e, rebuilt.tapering, sec, excitations).items())}
    spec = kernel_spec(dict.fromkeys(("numpy", "scipy", "pyscf"), "Sandybridge"),
                       numpy_avx512=False)
    proc = subprocess.run([sys.executable, "-c", _OTHER_ENVIRONMENT,
                           str(tmp_path / "material.json"), spec],
                          capture_output=True, text=True, env=pinned_env(1))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == here
