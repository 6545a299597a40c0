"""Mutated real QEncode entries for the fuzz suite (issue 36, item 7;
``tests/entry/test_fuzz.py``): Hypothesis strategies that take a real entry of each
schema (1.0.0 to 4.0.0) and break it the ways a file breaks, then write it as JSON text.

A mutation acts on the parsed entry (:func:`mutated_entry`): a member's type swapped,
a member deleted, a member duplicated (written twice in the text: JSON duplicate keys),
a number made NaN, infinite, huge or tiny, a unit changed (a ``units`` member, or
energies scaled to eV / kcal/mol, a geometry to bohr), a string or a key made of odd
unicode (lone surrogates, NUL, right-to-left marks), a value nested deeply; then,
sometimes, on the text (truncated, a byte flipped, a BOM, Latin-1).  The location is
drawn by descending from the root one member at a time, so every depth is reached.

:data:`SEEDS` are the real entries mutated; :func:`fuzz_examples` the example count
(``QNB_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import copy
import json
import math
import os
from pathlib import Path

from hypothesis import strategies as st

from conftest import SHARED_DB, SHARED_HISTORY

RELEASES = SHARED_HISTORY / "releases"

#: The real entries mutated, per schema: small ones (every example parses and writes
#: one), of every ansatz, mapping and section shape the reader branches on.
SEEDS = {
    "1.0.0": [RELEASES / "v1" / "db" / n for n in (
        "H2_sto3g_JW_uccsd_v1__sha256_35b2b9a55f67ff1e.json",
        "H2_sto3g_JW_hardware_efficient_v1__sha256_07ddc3bb339b9836.json",
        "LiH_sto3g_JW_geom_v1__sha256_073949db597035cb.json")],
    "2.0.0": [RELEASES / "v2" / "trusted" /
              "H2_sto3g_JW_hardware_efficient_v1__sha256_07ddc3bb339b9836.json",
              RELEASES / "v2" / "db" / "H2_sto3g_JW_geom_v1__sha256_ab4e15697ba4058a.json",
              RELEASES / "v2" / "db" / "LiH_sto3g_JW_geom_v1__sha256_073949db597035cb.json"],
    "3.0.0": [RELEASES / "v3" / "db" / "H2_sto3g_BK_HEA_v3_tapered__sha256_aaa6a9815728b873.json",
              RELEASES / "v3" / "db" / "LiH_sto3g_PAR_HEA_v3_tapered__sha256_7fc4047434d49c40.json",
              RELEASES / "v3.1" / "db" /
              "H2_631g_JW_UCCSD_v3_tapered__sha256_c311a3dfdda0df10.json"],
    "4.0.0": [SHARED_DB / n for n in (
        "LiH_ccpvdz_PAR_HEA_v4_tapered__sha256_e94da71e7eb3b98e.json",
        "H2_ccpvdz_BK_UCCSD_v4_tapered__sha256_d3f280f5c8f32ccc.json",
        "H4_ccpvdz_JW_ADAPT_v4_tapered__sha256_39f9134a722ad612.json")],
}

#: Examples per schema in CI; ``QNB_FUZZ_EXAMPLES`` sets another count (the larger run
#: of docs/howto/fuzz.md).
CI_EXAMPLES = 500


def fuzz_examples() -> int:
    """Examples per schema: ``QNB_FUZZ_EXAMPLES`` when set (an integer >= 1), else
    :data:`CI_EXAMPLES`."""
    text = os.environ.get("QNB_FUZZ_EXAMPLES")
    if text is None:
        return CI_EXAMPLES
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"QNB_FUZZ_EXAMPLES={text!r} is not accepted; accepted: an "
                         "integer >= 1 (examples per schema)")
    return int(text)


class Raw:
    """JSON text written as it is (a number no float holds, a nesting too deep to build)."""

    def __init__(self, text: str):
        self.text = text


class Twice(dict):
    """A JSON object written with some keys twice: ``extra`` holds ``(key, value)``
    pairs written after the object's own members."""

    def __init__(self, items, extra):
        super().__init__(items)
        self.extra = list(extra)


def dumps(obj, ensure_ascii: bool = True) -> str:
    """JSON text of ``obj`` (NaN and infinities as Python's json writes them), with
    :class:`Raw` values as they are and :class:`Twice` keys twice."""
    if isinstance(obj, Raw):
        return obj.text
    if isinstance(obj, dict):
        pairs = list(obj.items()) + (obj.extra if isinstance(obj, Twice) else [])
        return "{" + ", ".join(json.dumps(k, ensure_ascii=ensure_ascii) + ": "
                               + dumps(v, ensure_ascii) for k, v in pairs) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(dumps(v, ensure_ascii) for v in obj) + "]"
    return json.dumps(obj, ensure_ascii=ensure_ascii)


# --- values ---------------------------------------------------------------------------

#: Strings a file should not hold: a lone surrogate, NUL, a right-to-left override,
#: zero-width joiners, combining marks, an emoji, a very long string.
ODD_STRINGS = ["\ud800", "\x00", "\u202eevil", "\u200d\u200d", "e\u0301\u0301", "🧪",
               "Ω" * 3, "", " ", "x" * 10_000, "None", "NaN", "1e999"]

#: Numbers at the edges: NaN, infinities, the largest and smallest floats, huge ints
#: (one beyond any float, one beyond Python's 4300-digit int parsing limit).
EDGE_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 0, -1,
                2 ** 63, -(2 ** 63), 10 ** 400, Raw("1e999"), Raw("-1e999"),
                Raw("9" * 5000), Raw("1" + "0" * 400 + ".5")]

odd_text = st.one_of(st.sampled_from(ODD_STRINGS), st.text(max_size=30))

#: Values of another type than the one they replace (containers fresh each time: a
#: later mutation may change them).
other_values = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, "", "x", [], {}, [None], {"x": 1}])
    .map(copy.deepcopy),
    st.sampled_from(EDGE_NUMBERS), odd_text,
    st.lists(st.integers(-3, 3), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))


def deep(depth: int, kind: str) -> Raw:
    """``depth`` nested lists or objects as JSON text."""
    if kind == "list":
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a": ' * depth + "1" + "}" * depth)


deep_values = st.builds(deep, st.sampled_from([20, 200, 900, 5_000, 100_000]),
                        st.sampled_from(["list", "object"]))

#: Scale factors of a wrong unit: Ha -> eV, Ha -> kcal/mol, Angstrom -> bohr, mHa.
UNIT_FACTORS = {"eV": 27.211386245988, "kcal/mol": 627.509474, "bohr": 1.8897261246,
                "mHa": 1000.0}
WRONG_UNITS = ["bohr", "eV", "kcal/mol", "HARTREE", "hartree ", "Ångström", "", "\ud800"]


# --- locations ------------------------------------------------------------------------

@st.composite
def location(draw, root):
    """``(parent, key)`` of one member of ``root``, drawn by descending one member at a
    time (at each level: stop here, or go on into a member)."""
    parent, key = root, None
    node = root
    while True:
        if isinstance(node, dict) and node:
            keys = list(node)
        elif isinstance(node, list) and node:
            keys = list(range(len(node)))
        else:
            break
        if key is not None and draw(st.integers(0, 3)) == 0:
            break
        parent, key = node, draw(st.sampled_from(keys))
        node = node[key]
    if key is None:      # the root is empty or not a container: no member to act on
        return None
    return parent, key


def _members(node, prefix=""):
    """``(parent, key, value)`` of every member at any depth (lists: first 3 items)."""
    items = (node.items() if isinstance(node, dict)
             else enumerate(node[:3]) if isinstance(node, list) else ())
    for key, value in items:
        yield node, key, value
        yield from _members(value)


# --- mutations ------------------------------------------------------------------------

def _set(parent, key, value):
    parent[key] = value


def _swap_type(draw, root):
    where = draw(location(root))
    if where:
        _set(*where, draw(other_values))
    return "type swapped"


def _delete(draw, root):
    where = draw(location(root))
    if where:
        parent, key = where
        del parent[key]
    return "member deleted"


def _duplicate(draw, root):
    """A key written twice: the parent object becomes a :class:`Twice` in its own
    parent (the copy holds the same value or another type)."""
    objects = [(p, k, v) for p, k, v in _members(root) if isinstance(v, dict) and v]
    if not objects:
        return "duplicate (no object)"
    parent, key, obj = draw(st.sampled_from(objects))
    name = draw(st.sampled_from(list(obj)))
    value = draw(st.one_of(st.just(obj[name]), other_values))
    parent[key] = Twice(obj, [(name, value)])
    return "key duplicated"


def _edge_number(draw, root):
    numbers = [(p, k) for p, k, v in _members(root)
               if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers:
        _set(*draw(st.sampled_from(numbers)), draw(st.sampled_from(EDGE_NUMBERS)))
    return "edge number"


def _wrong_unit(draw, root):
    """A ``units`` member changed; else energies (``*_hartree*``, ``*_ha``) scaled to
    another unit; else the geometry's coordinates scaled to bohr."""
    members = list(_members(root))
    units = [(p, k) for p, k, v in members if isinstance(k, str) and "unit" in k]
    energies = [(p, k) for p, k, v in members if isinstance(k, str)
                and ("hartree" in k or k.endswith("_ha")) and isinstance(v, float)]
    choice = draw(st.integers(0, 1))
    if units and (choice == 0 or not energies):
        _set(*draw(st.sampled_from(units)), draw(st.sampled_from(WRONG_UNITS)))
        return "unit changed"
    factor = draw(st.sampled_from(sorted(UNIT_FACTORS.values())))
    if energies and choice == 1:
        for parent, key in energies:
            parent[key] *= factor
        return "energies rescaled"
    problem = root.get("problem") if isinstance(root, dict) else None
    if isinstance(problem, dict) and isinstance(problem.get("geometry"), str):
        problem["geometry"] = "; ".join(
            " ".join([atom.split()[0]] + [repr(float(x) * factor) for x in atom.split()[1:]])
            for atom in problem["geometry"].split(";"))
        return "geometry rescaled"
    return "unit (none)"


def _unicode(draw, root):
    """A string value, or a key, replaced by odd unicode."""
    members = list(_members(root))
    if draw(st.booleans()):
        strings = [(p, k) for p, k, v in members if isinstance(v, str)]
        if strings:
            _set(*draw(st.sampled_from(strings)), draw(odd_text))
        return "unicode value"
    objects = [v for _, _, v in members if isinstance(v, dict) and v] + [root]
    obj = draw(st.sampled_from(objects))
    old = draw(st.sampled_from(list(obj)))
    obj[draw(odd_text)] = obj.pop(old)
    return "unicode key"


def _nest(draw, root):
    where = draw(location(root))
    if where:
        _set(*where, draw(deep_values))
    return "deep nesting"


#: The tree mutations by name, each listed as often as it is drawn: a key written twice
#: and a deep nesting are refused wherever they are, so they are drawn less often than
#: the mutations whose outcome depends on where they land.
MUTATIONS = {"type": _swap_type, "delete": _delete, "duplicate": _duplicate,
             "number": _edge_number, "unit": _wrong_unit, "unicode": _unicode,
             "nest": _nest}
DRAWN = ("type", "type", "type", "delete", "delete", "number", "number", "unit", "unicode",
         "duplicate", "nest")


@st.composite
def mutated_entry(draw, path: Path):
    """``(bytes, [what was done])``: the real entry at ``path`` with 1 to 3 tree
    mutations (:data:`MUTATIONS`, drawn as :data:`DRAWN`), written as JSON text (ASCII
    escapes or raw UTF-8, lone surrogates passed through), then in one example of eight
    a text mutation."""
    root = json.loads(Path(path).read_text(encoding="utf-8"))
    done = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(DRAWN))
        done.append(MUTATIONS[name](draw, root))
    ascii_only = draw(st.booleans())
    data = dumps(root, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 7)) == 0:
        data, what = draw(text_mutation(data))
        done.append(what)
    return data, done


@st.composite
def text_mutation(draw, data: bytes):
    """``(bytes, what)``: ``data`` truncated, a byte flipped, a BOM put before it, or
    re-encoded as Latin-1."""
    kind = draw(st.sampled_from(["truncate", "flip", "bom", "latin-1"]))
    at = draw(st.integers(0, 999)) * len(data) // 1000     # anywhere in the file
    if kind == "truncate":
        return data[:at], "truncated"
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:], \
            "byte flipped"
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, "BOM"
    return data.decode("utf-8", "replace").replace("\ufffd", "?").encode(
        "latin-1", "replace"), "Latin-1"
