"""record() inside a real kernel, read_records() outside; NaN/inf round-trip as numbers."""

from __future__ import annotations

import math

import nbformat
import papermill
import pytest

from qencode_nb import RECORD_MIMETYPE, read_records
from qencode_nb.notebook.record import decode, encode


def test_encode_decode_non_finite_floats():
    value = {"a": float("nan"), "b": [float("inf"), -math.inf, 1.5], "c": None}
    back = decode(encode(value))
    assert math.isnan(back["a"]) and back["b"][0] == math.inf and back["b"][1] == -math.inf
    assert back["b"][2] == 1.5 and back["c"] is None


def test_unrecordable_value_names_its_type():
    with pytest.raises(TypeError, match="object"):
        encode(object())


@pytest.mark.notebook
def test_records_round_trip_through_an_executed_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            "import numpy as np\nfrom qencode_nb import record\n"
            "record('nan', float('nan'))\nrecord('inf', np.float64('inf'))\n"
            "record('ninf', -np.inf)\nrecord('arr', np.arange(3))\n"
            "record('nested', {'e': np.float64(-1.25), 'ok': True, 'xs': [x, 2]})\n"
            "record('x', x)\nrecord('x', x + 1)"),
        nbformat.v4.new_markdown_cell("records are found by mimetype, not cell index"),
        nbformat.v4.new_code_cell("record('done', True)"),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src, out = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    papermill.execute_notebook(str(src), str(out), parameters={"x": 41}, progress_bar=False)
    r = read_records(out)
    assert isinstance(r["nan"], float) and math.isnan(r["nan"])
    assert r["inf"] == math.inf and r["ninf"] == -math.inf
    assert r["arr"] == [0, 1, 2]
    assert r["nested"] == {"e": -1.25, "ok": True, "xs": [41, 2]}
    assert r["x"] == 42, "the last record of a name wins"
    assert r["done"] is True
    executed = nbformat.read(str(out), as_version=4)
    mimes = [o.get("data", {}).keys() for c in executed.cells for o in c.get("outputs", [])]
    assert sum(RECORD_MIMETYPE in m for m in mimes) == 8
