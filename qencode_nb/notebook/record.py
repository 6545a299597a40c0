"""Named values recorded inside a notebook and read back from the file.

Inside a notebook, :func:`record` displays a JSON output with the mimetype
:data:`RECORD_MIMETYPE` (docs/explanations/notebook-contract.md).  Outside,
:func:`read_records` finds those outputs by mimetype, never by cell index.

JSON has no NaN or infinity.  They are encoded as ``{"$float": "nan"}``,
``{"$float": "inf"}`` and ``{"$float": "-inf"}`` and decoded back to
``float`` values, so they round-trip as numbers.

One run, one set of records: the audit's pin cell calls :func:`start_run`, which
forgets the kernel's records so far and names the run; every record made after it
carries that name (``"run"`` in its payload).  A second Run All in the same kernel
(JupyterLab) thus starts from no record, and a notebook file that still holds
outputs of an earlier run (cells a stopped run did not reach) reads back the
records of its latest run only (:func:`iter_records`).
"""

from __future__ import annotations

import json
import math
import os
import time
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
    the kernel :func:`recorded` returns the values so far.  After
    :func:`start_run` the payload also names the run: ``"run": <run id>``.

    Raises:
        TypeError: ``name`` is not a str, or ``value`` has no JSON form.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"record name must be a non-empty str, got {name!r}")
    payload = {"name": name, "value": encode(value)}
    if _RUN["id"] is not None:
        payload["run"] = _RUN["id"]
    json.dumps(payload, allow_nan=False)  # fail here, not in the collector
    from IPython.display import display

    _RECORDED[name] = decode(payload["value"])
    display({RECORD_MIMETYPE: payload, "text/plain": ""}, raw=True)


#: The records of this process's current run so far, ``{name: decoded value}``
#: (last one wins).
_RECORDED: dict = {}

#: The current run's id (:func:`start_run`), None before the first.
_RUN: dict = {"id": None}


def start_run() -> str:
    """Start a fresh set of records in this kernel: forget every record made so far
    and name the run that starts now.

    The audit's pin cell calls it first, so a second run in the same kernel
    (JupyterLab's Run All again, or another ``entry``) never shows a record of the
    first: :func:`recorded` is empty until the new run records, and the new run's
    records carry its id.

    Returns:
        the run id: the start time in ns since the epoch (20 digits, so ids sort
        by time as strings), ``-`` and the kernel's process id.
    """
    _RECORDED.clear()
    _RUN["id"] = f"{time.time_ns():020d}-{os.getpid()}"
    return _RUN["id"]


def current_run() -> str | None:
    """The id of the run :func:`start_run` started last in this kernel, or None."""
    return _RUN["id"]


def recorded() -> dict:
    """The records made in this kernel's current run so far (since :func:`start_run`),
    ``{name: value}`` as :func:`read_records` would read them back (a copy)."""
    return dict(_RECORDED)


def _payloads(notebook):
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) or []:
            data = output.get("data") or {}
            payload = data.get(RECORD_MIMETYPE)
            if payload is None:
                continue
            if isinstance(payload, str):  # some writers store JSON as text
                payload = json.loads(payload)
            yield payload


def latest_run(notebook) -> str | None:
    """The id of the latest run whose records a notebook node holds (run ids sort
    by start time, :func:`start_run`), or None when no record names a run."""
    runs = [p["run"] for p in _payloads(notebook) if isinstance(p.get("run"), str)]
    return max(runs) if runs else None


def iter_records(notebook, every_run: bool = False):
    """Yield ``(name, value)`` for the record outputs of a notebook node, in order.

    Args:
        notebook: a notebook node (or its JSON as a dict).
        every_run: also the records of earlier runs.  By default only the latest
            run's records (:func:`latest_run`) and records that name no run (written
            before runs were named, or by the runner outside the kernel) are
            yielded: a cell that a second run did not reach keeps the first run's
            outputs in the file, and they are not this run's.
    """
    latest = None if every_run else latest_run(notebook)
    for payload in _payloads(notebook):
        run = payload.get("run")
        if latest is not None and run is not None and run != latest:
            continue
        yield payload["name"], decode(payload["value"])


def read_records(path) -> dict:
    """The records of an executed notebook's latest run, ``{name: value}`` (last one
    wins; :func:`iter_records`).

    Args:
        path: an ``.ipynb`` file (str or Path).

    Raises:
        FileNotFoundError: no such file.
        nbformat.reader.NotJSONError: the file is not a notebook.
    """
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    return dict(iter_records(nb))
