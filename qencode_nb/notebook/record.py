"""Named values recorded inside a notebook and read back from the file.

Inside a notebook, :func:`record` displays a JSON output with the mimetype
:data:`RECORD_MIMETYPE` (DESIGN.md, "The notebook contract").  Outside,
:func:`read_records` finds those outputs by mimetype, never by cell index.

JSON has no NaN or infinity.  They are encoded as ``{"$float": "nan"}``,
``{"$float": "inf"}`` and ``{"$float": "-inf"}`` and decoded back to
``float`` values, so they round-trip as numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

RECORD_MIMETYPE = "application/vnd.qencode-nb.record+json"

_FLOAT_TAG = "$float"


def encode(value):
    """Turn ``value`` into plain JSON data (numpy scalars/arrays included).

    Non-finite floats become ``{"$float": "nan"|"inf"|"-inf"}``; tuples and
    sets become lists; dict keys become strings.

    Raises:
        TypeError: a value with no JSON form (names its type).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return {_FLOAT_TAG: "nan"}
        if math.isinf(value):
            return {_FLOAT_TAG: "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [encode(v) for v in sorted(value, key=repr)]
    if isinstance(value, Path):
        return str(value)
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if callable(tolist):
        return encode(tolist())
    raise TypeError(f"cannot record a value of type {type(value).__name__}: {value!r}")


def decode(data):
    """Inverse of :func:`encode`."""
    if isinstance(data, dict):
        if set(data) == {_FLOAT_TAG}:
            return float(data[_FLOAT_TAG])
        return {k: decode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [decode(v) for v in data]
    return data


def record(name: str, value) -> None:
    """Record ``value`` under ``name`` in the running notebook.

    Emits one display output ``{RECORD_MIMETYPE: {"name": name, "value":
    encode(value)}, "text/plain": ""}``: machine-readable, and blank where a
    reader looks (the verdict card, :mod:`qencode_nb.verdict.card`, shows the
    values); the empty text keeps JupyterLab from reporting a missing
    renderer.  A later record of the same name wins when read back, and in
    the kernel :func:`recorded` returns the values so far.

    Raises:
        TypeError: ``name`` is not a str, or ``value`` has no JSON form.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"record name must be a non-empty str, got {name!r}")
    payload = {"name": name, "value": encode(value)}
    json.dumps(payload, allow_nan=False)  # fail here, not in the collector
    from IPython.display import display

    _RECORDED[name] = decode(payload["value"])
    display({RECORD_MIMETYPE: payload, "text/plain": ""}, raw=True)


#: The records of this process so far, ``{name: decoded value}`` (last one wins).
_RECORDED: dict = {}


def recorded() -> dict:
    """The records made in this kernel so far, ``{name: value}`` as
    :func:`read_records` would read them back (a copy)."""
    return dict(_RECORDED)


def iter_records(notebook):
    """Yield ``(name, value)`` for every record output of a notebook node, in order."""
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) or []:
            data = output.get("data") or {}
            payload = data.get(RECORD_MIMETYPE)
            if payload is None:
                continue
            if isinstance(payload, str):  # some writers store JSON as text
                payload = json.loads(payload)
            yield payload["name"], decode(payload["value"])


def read_records(path) -> dict:
    """All records of an executed notebook, ``{name: value}`` (last one wins).

    Args:
        path: an ``.ipynb`` file (str or Path).

    Raises:
        FileNotFoundError: no such file.
        nbformat.reader.NotJSONError: the file is not a notebook.
    """
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return dict(iter_records(nb))
