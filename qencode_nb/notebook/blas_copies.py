"""Loading one OpenBLAS copy of an audit (numpy's, scipy's, PySCF's) as its package
would, at the least cost: the pin (:func:`qencode_nb.notebook.pins.pin`) and the
numeric fingerprint (:func:`qencode_nb.notebook.fingerprint.measured_numerics`) load
each copy under its own ``OPENBLAS_CORETYPE`` before anything else imports it.  Which
copies there are, and the module that loads each, is :mod:`blas_profiles`
(``COPIES``, ``COPY_MODULES``).  Importing this module imports nothing heavy.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
from pathlib import Path

from qencode_nb.notebook.blas_profiles import COPY_MODULES

#: Where loading a copy's package is dearer than the copy itself: ``(package, folder,
#: library)``, the shared library inside the installed package that links the copy and
#: that the package's import loads first.  ``pyscf.lib``'s import (0.18 s on the 2-core
#: Xeon, numpy and scipy already loaded; a warm audit needs nothing else of PySCF) loads
#: ``pyscf/lib/libnp_helper.so`` (``pyscf.lib.numpy_helper``, through
#: ``numpy.ctypeslib.load_library``: ``dlopen`` with ``RTLD_LOCAL``), which links
#: ``libopenblas-r0-*.so`` and ``libgomp``: loading that library the same way loads the
#: same copy under the same ``OPENBLAS_CORETYPE``, and a later ``import pyscf.lib`` finds
#: it loaded.
COPY_LIBRARIES = {"pyscf": ("pyscf", "lib", "libnp_helper")}


def load_copy(copy: str) -> None:
    """Load the OpenBLAS copy ``copy`` (a name of ``blas_profiles.COPIES``) into this
    process as its package loads it: through :data:`COPY_LIBRARIES` where listed and
    present (the package itself is not imported), else by importing its module of
    ``blas_profiles.COPY_MODULES``.  The copy reads ``OPENBLAS_CORETYPE`` as it loads
    (the caller sets it).

    Args:
        copy: ``"numpy"``, ``"scipy"`` or ``"pyscf"``.

    Raises:
        ImportError: the package is not installed.
        OSError: its library does not load.
    """
    if copy in COPY_LIBRARIES:
        package, folder, library = COPY_LIBRARIES[copy]
        spec = importlib.util.find_spec(package)     # finds; imports nothing
        if spec is None:
            raise ImportError(f"No module named {package!r}", name=package)
        for root in spec.submodule_search_locations or ():
            found = sorted((Path(root) / folder).glob(f"{library}.*"))
            if found:
                ctypes.CDLL(str(found[0]))
                return
    importlib.import_module(COPY_MODULES[copy])


__all__ = ["COPY_LIBRARIES", "load_copy"]
