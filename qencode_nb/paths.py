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
#: Accepted package stack names (they name a folder under :func:`stacks_root` and the
#: Jupyter kernelspec ``qencode-nb-<name>``, which Jupyter restricts likewise): lower-case
#: letters, digits, ".", "_", "-"; a letter or digit first; at most 64 characters.
STACK_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"

#: The file name of a package stack's record inside its folder (qencode_nb.batch.stacks).
STACK_RECORD = "stack.json"


def stacks_root(root=None) -> Path:
    """Folder holding the package stacks (:mod:`qencode_nb.batch.stacks`): ``root``, else
    ``$QENCODE_NB_STACKS``, else ``~/.local/share/qencode-nb/stacks``."""
    import os

    if root is not None:
        return Path(root)
    env = os.environ.get("QENCODE_NB_STACKS")
    return Path(env) if env else Path.home() / ".local" / "share" / "qencode-nb" / "stacks"
