"""Sphinx configuration of the qencode-nb documentation site.

Build (warnings are errors; CONTRIBUTING.md, .ci/run):

    .venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html

The tutorials (``docs/tutorials/*.ipynb``, committed without outputs) are executed at
build time by myst-nb; a failing cell fails the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))            # the checkout's qencode_nb, whatever is installed
sys.path.insert(0, str(DOCS / "_ext"))

# The tutorials' kernels import qencode_nb from this checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

import qencode_nb  # noqa: E402

project = "qencode-nb"
author = "the qencode-nb developers"
copyright = "qencode-nb developers; MIT"
release = version = qencode_nb.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "qnb_docs",
]

exclude_patterns = [
    "_build", "jupyter_execute", "**.ipynb_checkpoints",
    # data and notes of measured results, linked from the pages, not pages themselves
    "results",
    # included by reference/glossary.md and reference/layout.md (their paths stay, the
    # README and the code point to them)
    "glossary.md", "layout.md",
]

html_theme = "furo"
html_title = "qencode-nb"
html_favicon = "_static/favicon.svg"
html_static_path = ["_static"]
templates_path = ["_templates"]

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

# -- the tutorials: executed at every build --------------------------------------------
# "force" executes every tutorial on every build (CI, the site test); set
# QNB_DOCS_EXECUTION=cache to reuse a local jupyter-cache between builds while writing.
nb_execution_mode = os.environ.get("QNB_DOCS_EXECUTION", "force")
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
# myst-nb's timeout is per cell; every tutorial cell stays far below it (the whole
# tutorial takes under about 90 s, docs/tutorials/README in CONTRIBUTING.md).
nb_execution_timeout = 240
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# Each tutorial runs in its own folder under the build folder (never the repository root).
nb_execution_in_temp = True

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# Type hints name objects Sphinx cannot resolve (numpy, pandas, third-party classes);
# they are shown as text, not links.
nitpicky = False
suppress_warnings = ["myst.header"]
napoleon_use_ivar = True                 # dataclass "Attributes:" as fields, not duplicates
autodoc_default_options["ignore-module-all"] = True   # a package's re-exports are documented once, where defined


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values as plain text (``|E - E_exact|``, ``|ΔE|``); in
    reStructuredText a ``|`` starts a substitution.  Escape every ``|`` outside inline
    literals so the docstrings stay as the code reads them."""
    import re

    text = "\n".join(lines)
    if "|" not in text:
        return
    parts = re.split(r"(``.+?``|(?<![`\w])`[^`]+`)", text, flags=re.S)
    text = "".join(p if p.startswith("`") else p.replace("|", r"\|") for p in parts)
    lines[:] = text.split("\n")


def _without_machine_paths():
    """Values shown by autodoc (module constants such as ``paths.ROOT``, default
    arguments) are reprs taken on the building machine; name the checkout
    ``<repository>`` instead of quoting this machine's path."""
    import sphinx.util.inspect as sphinx_inspect

    original = sphinx_inspect.object_description
    if getattr(original, "_qnb_wrapped", False):
        return

    def object_description(obj, *args, **kwargs):
        return original(obj, *args, **kwargs).replace(str(ROOT), "<repository>")

    object_description._qnb_wrapped = True
    sphinx_inspect.object_description = object_description


_without_machine_paths()


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
