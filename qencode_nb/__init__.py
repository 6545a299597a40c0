"""qencode-nb: audit the reproducibility of QEncode VQE benchmark entries.

Importing this package must not import numpy (docs/layout.md): the
thread pins of :mod:`qencode_nb.notebook.pins` only work if they are set before the
first ``import numpy`` in a process.  Everything heavy is imported lazily by
the submodules that need it.
"""

from qencode_nb.notebook.record import RECORD_MIMETYPE, read_records, record

__all__ = ["RECORD_MIMETYPE", "read_records", "record", "__version__"]

__version__ = "0.1.0"
