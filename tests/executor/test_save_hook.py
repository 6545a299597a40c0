"""The notebooks' committed kernel metadata and the save hook that keeps it
(qencode_nb/executor/save_hook.py; the JupyterLab round trip is tests/test_jupyterlab.py)."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest
import yaml

from conftest import ROOT
from qencode_nb.executor.save_hook import (PYTHON3_DISPLAY_NAME, REFERENCE_PYTHON,
                                           is_source, keep_kernel_metadata,
                                           normalise_metadata)

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _python_pin(path) -> str:
    deps = yaml.safe_load(path.read_text())["dependencies"]
    return next(d for d in deps if isinstance(d, str) and d.startswith("python="))[7:]


def test_reference_python_is_the_environment_pin():
    assert _python_pin(ROOT / "environment.yml") == REFERENCE_PYTHON
    assert _python_pin(ROOT / "binder" / "environment.yml") == REFERENCE_PYTHON


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_metadata_is_what_jupyterlab_writes_on_the_reference_environment(path):
    """kernelspec as ipykernel's python3 kernelspec names itself, language_info as the
    ipykernel kernel reports it with the reference Python; the kind is kept."""
    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelspec import get_kernel_dict

    meta = json.loads(path.read_text())["metadata"]
    assert meta["kernelspec"] == {"display_name": get_kernel_dict()["display_name"],
                                  "language": "python", "name": "python3"}
    assert meta["kernelspec"]["display_name"] == PYTHON3_DISPLAY_NAME
    assert meta["language_info"] == dict(IPythonKernel.language_info, version=REFERENCE_PYTHON)
    assert meta["qencode_nb"]["kind"] == path.stem
    assert is_source(meta)


def _model(metadata: dict) -> dict:
    return {"type": "notebook", "format": "json",
            "content": {"cells": [], "nbformat": 4, "nbformat_minor": 5,
                        "metadata": metadata}}


def _as_lab_writes(version="3.11.7") -> dict:
    meta = json.loads((ROOT / "notebooks" / "audit.ipynb").read_text())["metadata"]
    meta["language_info"]["version"] = version
    return meta


def test_hook_sets_the_kernels_python_back_to_the_reference():
    committed = json.loads((ROOT / "notebooks" / "audit.ipynb").read_text())["metadata"]
    model = _model(_as_lab_writes("3.11.7"))
    keep_kernel_metadata(model=model, path="notebooks/audit.ipynb")
    assert model["content"]["metadata"] == committed
    meta = _as_lab_writes()
    meta["kernelspec"]["display_name"] = "Python 3"
    assert normalise_metadata(meta) and meta == committed
    assert not normalise_metadata(meta)


def test_hook_leaves_executed_kindless_and_other_kernels_alone():
    executed = _as_lab_writes()
    executed["papermill"] = {"parameters": {}}
    kindless = _as_lab_writes()
    del kindless["qencode_nb"]
    for meta in (executed, kindless):
        model = _model(copy.deepcopy(meta))
        keep_kernel_metadata(model=model, path="out.ipynb")
        assert model["content"]["metadata"] == meta
    other = _as_lab_writes()
    other["kernelspec"] = {"name": "qencode-nb-latest", "display_name": "qencode-nb latest",
                           "language": "python"}
    normalise_metadata(other)
    assert other["kernelspec"]["display_name"] == "qencode-nb latest"
    assert other["language_info"]["version"] == REFERENCE_PYTHON
    text = {"type": "file", "format": "text", "content": "x"}
    keep_kernel_metadata(model=text, path="a.txt")
    assert text == {"type": "file", "format": "text", "content": "x"}


def test_jupyter_config_enables_the_extension_and_binder_start_puts_it_first():
    config = json.loads((ROOT / "jupyter-config" / "jupyter_server_config.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"qencode_nb.executor.save_hook": True}}}
    from qencode_nb.executor import save_hook

    assert save_hook._jupyter_server_extension_points() == [{"module": save_hook.__name__}]
    for before, want in ((None, str(ROOT / "jupyter-config")),
                         ("/elsewhere", f"{ROOT / 'jupyter-config'}:/elsewhere")):
        env = {"PATH": "/usr/bin:/bin", **({"JUPYTER_CONFIG_PATH": before} if before else {})}
        out = subprocess.run(["bash", str(ROOT / "binder" / "start"), "env"], env=env,
                             capture_output=True, text=True, check=True).stdout
        assert dict(l.split("=", 1) for l in out.splitlines() if "=" in l)[
            "JUPYTER_CONFIG_PATH"] == want
