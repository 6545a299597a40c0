"""Saving a notebook source from JupyterLab leaves its kernel metadata as committed.

When JupyterLab connects a kernel to a notebook it writes the kernel's facts into the
notebook's top-level metadata: ``kernelspec.display_name`` (the kernelspec's, "Python 3
(ipykernel)" for ipykernel's ``python3``) and the whole ``language_info`` of the kernel's
``kernel_info_reply``, ``version`` included: the patch release of whichever Python runs
the kernel (3.11.7 here, 3.11.15 on Binder).  The notebooks in ``notebooks/`` hold this
metadata as JupyterLab writes it on the reference environment (``environment.yml``:
Python 3.11.15), so there opening and saving one changes nothing; elsewhere only
``language_info.version`` would change, and :func:`keep_kernel_metadata` sets it back.

It is a pre-save hook of Jupyter server's contents manager, registered by this module
as a Jupyter server extension.  ``jupyter-config/jupyter_server_config.json`` enables
the extension; ``binder/start`` puts that folder on ``$JUPYTER_CONFIG_PATH``, so
JupyterLab on Binder and ``binder/start .venv/bin/jupyter lab`` locally (README) use it.

The hook touches only a notebook *source* of this toolkit: one whose metadata names its
``qencode_nb`` kind and that papermill has not executed (an executed notebook keeps the
versions its kernel reported).  It changes nothing else of the notebook.
"""

from __future__ import annotations

#: The Python of the reference environment (``environment.yml``'s ``python=`` pin,
#: what every QEncode v4.4 entry records); the ``language_info.version`` of a source.
REFERENCE_PYTHON = "3.11.15"

#: ``kernelspec.display_name`` of ipykernel's ``python3`` kernelspec, as committed.
PYTHON3_DISPLAY_NAME = "Python 3 (ipykernel)"


def is_source(metadata: dict) -> bool:
    """True for the metadata of a qencode-nb notebook source: it names its kind
    (``metadata.qencode_nb.kind``) and papermill has not executed it."""
    kind = metadata.get("qencode_nb")
    return isinstance(kind, dict) and "kind" in kind and "papermill" not in metadata


def normalise_metadata(metadata: dict) -> bool:
    """Set the kernel facts JupyterLab rewrote back to the committed ones, in place.

    ``language_info.version`` of a Python kernel becomes :data:`REFERENCE_PYTHON`;
    the ``python3`` kernelspec's ``display_name`` becomes :data:`PYTHON3_DISPLAY_NAME`.
    A kernelspec chosen on purpose (another name) and every other key are kept.

    Returns:
        Whether anything changed.
    """
    before = repr(metadata)
    language = metadata.get("language_info")
    if isinstance(language, dict) and language.get("name") == "python" and "version" in language:
        language["version"] = REFERENCE_PYTHON
    kernelspec = metadata.get("kernelspec")
    if isinstance(kernelspec, dict) and kernelspec.get("name") == "python3":
        kernelspec["display_name"] = PYTHON3_DISPLAY_NAME
    return repr(metadata) != before


def keep_kernel_metadata(model: dict, path: str, contents_manager=None, **kwargs) -> None:
    """Jupyter server pre-save hook: :func:`normalise_metadata` on a notebook source.

    Args:
        model: the contents model being saved (``type``, ``content``); changed in place.
        path: the API path of the file (logged).
        contents_manager: the server's contents manager (its log is used).
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    metadata = model["content"].setdefault("metadata", {})
    if is_source(metadata) and normalise_metadata(metadata) and contents_manager is not None:
        contents_manager.log.info("qencode-nb: kept the committed kernel metadata of %s", path)


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter server's discovery of this extension (the module itself)."""
    return [{"module": "qencode_nb.executor.save_hook"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Register :func:`keep_kernel_metadata` with the server's contents manager (beside
    any other pre-save hook)."""
    serverapp.contents_manager.register_pre_save_hook(keep_kernel_metadata)
    serverapp.log.info("qencode-nb: notebook sources keep their kernel metadata on save")
