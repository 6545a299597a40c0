"""Every test whose outcome can depend on the host kind carries ``hostkind`` (issue 51), so
.ci/run's passes as the other host kinds (tests/as_host_kind.py) select them all.

Read with :mod:`ast`, without running anything: a test that reads the kernel profile or the
CPU (:data:`HOST_NAMES`: ``by_profile``, ``reference_only``, ``needs_coretype``, the CPU
flags, the kernels measured, the test profile) must be marked ``hostkind`` or ``bitlevel``
(which implies it, tests/conftest.py), on itself, its class or its module's
``pytestmark``.  The tests marked beyond these were found by running the whole suite as an
emulated Zen 3 on an AVX-512 host and comparing it test by test with the native run
(CONTRIBUTING.md, "The three host kinds"; :data:`FOUND_BY_EMULATION` lists them).
"""

from __future__ import annotations

import ast

from conftest import ROOT

TESTS = ROOT / "tests"

#: Names whose use makes a test's outcome follow the host kind.
HOST_NAMES = frozenset({
    "by_profile", "reference_only", "needs_profile", "needs_coretype", "coretype_missing",
    "TEST_PROFILE", "openblas_kernels", "lih_par_hea_error_mha", "LIH_PAR_HEA_ERROR_MHA",
    "cpu_flags", "real_cpu_flags", "runnable_coretypes", "copy_kernels", "_needs_emulation",
})

#: Marks that select a test in the host-kind passes.
HOST_MARKS = ("hostkind", "bitlevel")


def _marks(decorators) -> set:
    """The ``pytest.mark.<name>`` names among decorators (or a pytestmark value)."""
    out = set()
    for node in decorators:
        for sub in ast.walk(node):
            if (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute)
                    and sub.value.attr == "mark"):
                out.add(sub.attr)
    return out


def _module_marks(tree) -> set:
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                 for t in node.targets)):
            return _marks([node.value])
    return set()


def _uses(node, helpers: dict) -> set:
    """The :data:`HOST_NAMES` a function uses, directly or through a module-level helper
    function of its file (``helpers``: name -> names it uses)."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    used = names & HOST_NAMES
    for name in names & set(helpers):
        used |= helpers[name]
    return used


def _unmarked_in(tree, where: str):
    """``where::test (names used)`` of every test of a module's ``tree`` using a host name
    without a host mark."""
    module = _module_marks(tree)
    helpers = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("test_"):
            helpers[node.name] = {n.id for n in ast.walk(node)
                                  if isinstance(n, ast.Name)} & HOST_NAMES
    scopes = [(node, set()) for node in tree.body if isinstance(node, ast.FunctionDef)]
    scopes += [(f, _marks(c.decorator_list)) for c in tree.body
               if isinstance(c, ast.ClassDef) for f in c.body
               if isinstance(f, ast.FunctionDef)]
    for func, outer in scopes:
        if not func.name.startswith("test_"):
            continue
        used = _uses(func, helpers)
        if used and not (module | outer | _marks(func.decorator_list)) & set(HOST_MARKS):
            yield f"{where}::{func.name} ({', '.join(sorted(used))})"


def _unmarked():
    """:func:`_unmarked_in` over every test file."""
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name != "test_host_kind_marks.py":
            yield from _unmarked_in(ast.parse(path.read_text(), str(path)),
                                    str(path.relative_to(ROOT)))


def test_the_scan_finds_an_unmarked_test_and_accepts_each_way_of_marking():
    source = """
import pytest
from conftest import by_profile, needs_coretype

def _helper():
    return TEST_PROFILE

def test_plain():
    assert by_profile({"reference": 1, "portable": 1})

def test_through_a_helper():
    assert _helper()

@needs_coretype("Cooperlake")
def test_skips_by_cpu():
    pass

@pytest.mark.hostkind
def test_marked():
    assert by_profile({"reference": 1, "portable": 1})

@pytest.mark.bitlevel
def test_bitlevel():
    assert by_profile({"reference": 1, "portable": 1})

@pytest.mark.hostkind
class TestMarked:
    def test_in_class(self):
        assert by_profile({"reference": 1, "portable": 1})

def test_host_free():
    assert 1
"""
    got = list(_unmarked_in(ast.parse(source), "m.py"))
    assert got == ["m.py::test_plain (by_profile)",
                   "m.py::test_through_a_helper (TEST_PROFILE)",
                   "m.py::test_skips_by_cpu (needs_coretype)"]
    marked = list(_unmarked_in(ast.parse("import pytest\npytestmark = pytest.mark.hostkind\n"
                                         + source), "m.py"))
    assert marked == []


def test_every_test_reading_the_host_is_marked_hostkind():
    bad = list(_unmarked())
    assert not bad, ("tests whose outcome follows the host kind without @pytest.mark.hostkind "
                     "(or bitlevel): " + "; ".join(bad))
