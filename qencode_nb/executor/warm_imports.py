"""Imported once by each local pool worker of a sweep, study or robustness study
(:func:`qencode_nb.executor.run_process.warm_up`), so that every run forked from
it finds papermill imported.

jsonschema imports its optional IRI format checker, rfc3987_syntax, which builds
a lark grammar at import (most of papermill's import time).  The
notebook schemas nbformat validates against use no IRI formats, so the checker
is left out in the run processes (jsonschema skips a format whose checker fails
to import), as ``python -m qencode_nb.executor.execute`` does; a library importer
of qencode_nb is unaffected.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)

import papermill  # noqa: E402,F401  (registers the qencode-nb engine's entry point)

import qencode_nb.executor.execute  # noqa: E402,F401

# What a kernel imports to start (IPython, ipykernel, its debugger's debugpy, tornado):
# a run's kernel forked from its template (qencode_nb.executor.kernel_fork) finds them
# imported.  None of them imports numpy.
import ipykernel.ipkernel  # noqa: E402,F401
import ipykernel.kernelapp  # noqa: E402,F401
