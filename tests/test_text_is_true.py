"""The text users read names what exists (issue 38, item 6): every ``qencode_nb.…``
module path in the CLI's ``--help``, README.md, CONTRIBUTING.md, the documentation and
the notebooks imports; every file of this repository they name exists; CONTRIBUTING.md's
room order is the one ``tests/test_layout.py`` enforces."""

from __future__ import annotations

import argparse
import importlib
import re

import pytest
from conftest import ROOT
from test_layout import ROOM_ORDER

from qencode_nb.cli import build_parser

#: A dotted name of the package (not a key such as ``metadata.qencode_nb.kind``).
MODULE_PATH = re.compile(r"(?<![\w.])qencode_nb(?:\.[A-Za-z_]\w*)+")
#: A path of this repository, relative to its root.
REPO_PATH = re.compile(r"(?<![\w/.~-])((?:qencode_nb|tests|benchmarks|notebooks|docs|params|"
                       r"examples|binder)/[\w/.-]*\w)")
#: Paths the text names that are not files of a clean checkout, with the reason.
NOT_IN_THE_CHECKOUT = {
    "docs/_build": "the documentation build's output (CONTRIBUTING.md, how to build it)",
    "docs/leaderboard.md": "QEncode's own docs/leaderboard.md (its record, ../shared)",
}


def _texts() -> dict[str, str]:
    texts = {}
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
             *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb")),
             *sorted((ROOT / "docs" / "tutorials").glob("*.ipynb"))]
    for path in files:
        rel = path.relative_to(ROOT)
        if not {"_build", "jupyter_execute", "_autosummary"} & set(rel.parts):
            texts[str(rel)] = path.read_text()

    def helps(parser, prog):
        yield prog, parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from helps(sub, f"{prog} {name}")

    for prog, text in helps(build_parser(), "qencode-nb"):
        texts[f"{prog} --help"] = text
    return texts


def _resolves(dotted: str) -> bool:
    """``dotted`` is a module, or a module's attribute (a class, function, constant)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


@pytest.fixture(scope="module")
def texts():
    return _texts()


def test_the_texts_are_read(texts):
    """The scan covers what it claims: every subcommand's help and the documents."""
    assert "qencode-nb audit --help" in texts and "qencode-nb study kernels --help" in texts
    assert {"README.md", "CONTRIBUTING.md", "docs/glossary.md", "docs/layout.md",
            "notebooks/audit.ipynb"} <= set(texts)
    assert sum(len(MODULE_PATH.findall(t)) for t in texts.values()) > 100


def test_every_module_path_in_help_docs_and_contributing_imports(texts):
    stale = {}
    for source, text in texts.items():
        for dotted in set(MODULE_PATH.findall(text)):
            if not _resolves(dotted):
                stale.setdefault(dotted, []).append(source)
    assert not stale, f"module paths that do not import: {stale}"


def test_the_scan_finds_a_stale_path():
    """The check can fail: the names issue 38 found in ``--help`` do not import."""
    assert not _resolves("qencode_nb.rerun.ci_space_map.unmappable_reason")
    assert not _resolves("qencode_nb.rerun.fast_engine")
    assert _resolves("qencode_nb.engines.sector.mapping.unmappable_reason")
    assert _resolves("qencode_nb.rules.PROOF_BUDGET_S")


def test_every_repository_file_the_text_names_exists(texts):
    missing = {}
    for source, text in texts.items():
        for path in set(REPO_PATH.findall(text)):
            if any(path == p or path.startswith(p + "/") for p in NOT_IN_THE_CHECKOUT):
                continue
            if not (ROOT / path).exists():
                missing.setdefault(path, []).append(source)
    assert not missing, f"files named in the text that do not exist: {missing}"


@pytest.mark.parametrize("page,arrow", [("CONTRIBUTING.md", "->"), ("docs/layout.md", "→")])
def test_the_pages_give_the_room_order_the_layout_test_enforces(page, arrow):
    text = re.sub(r"\s+", " ", (ROOT / page).read_text())
    order = re.search(rf"rules {arrow} paths(?: {arrow} \w+)+", text)
    assert order, f"{page} no longer writes the room order"
    written = order.group(0).split(f" {arrow} ")
    enforced = [room.removeprefix("qencode_nb.") for room in ROOM_ORDER if room != "qencode_nb"]
    assert written == enforced
