"""Where the checkout's folders are: the one place that knows the repository layout.

``ROOT`` is the checkout (or installed tree) holding ``params/`` and
``notebooks/``; an editable install (``pip install -e .``, as README says)
keeps it the repository itself.
"""

from pathlib import Path

#: The repository root (the folder above the ``qencode_nb`` package).
ROOT = Path(__file__).resolve().parent.parent
#: Bundled entries (``params/<name>.yaml``) and study parameter files.
PARAMS_DIR = ROOT / "params"
#: The notebooks the runner executes (audit, threading, suite, figures).
NOTEBOOKS = ROOT / "notebooks"
#: The QEncode JSON files of the entries ``params/`` names (MIT, QEncode's license; LICENSE
#: and NOTICE beside them), which complete a bundled entry when no ``db`` is given.
BUNDLED_DB = ROOT / "data" / "qencode-v4"
