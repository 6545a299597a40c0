"""The evaluation log: every objective evaluation of a re-run, in order, as JSON lines.

audit.ipynb's ``evaluation_log`` names the file; the re-run
(:class:`qencode_nb.rerun.progress.Progress`) writes one line per evaluation the
optimiser makes, as it makes it::

    {"i": 0, "restart": 0, "x": ["0x0.0p+0", ...], "energy": "-0x1.2199e2c3be4b0p+0"}

``i`` is the 0-based evaluation index (the line's), ``restart`` the 0-based restart (an
ADAPT re-run: the 0-based outer iteration whose inner optimisation made it), ``x``
the parameters the objective was called with (radians) and ``energy`` the value it
returned to the optimiser (Ha, before the tapering constant correction), each as
:meth:`float.hex`, so a reader compares them to the last bit.  The same format is written
around QEncode's own generator (``qencode-nb study generator``), so the two traces are
compared line by line.  :func:`read_log` reads a file back.

This module imports nothing but the standard library (a process with only numpy loaded
writes it too).
"""

from __future__ import annotations

import json
from pathlib import Path


class EvaluationLog:
    """A log file open for writing (an existing file is truncated); usable as a context
    manager (closed on exit).

    Args:
        path: the file (its folder must exist).
    """

    def __init__(self, path):
        self.path = Path(path)
        self.lines = 0
        self._file = open(self.path, "w", encoding="utf-8")

    def write(self, restart: int, x, energy: float) -> None:
        """One evaluation: ``restart`` (0-based), ``x`` the parameters (radians, any
        iterable of numbers), ``energy`` the value returned (Ha); appended and flushed."""
        line = {"i": self.lines, "restart": int(restart),
                "x": [float.hex(float(v)) for v in x],
                "energy": float.hex(float(energy))}
        self._file.write(json.dumps(line) + "\n")
        self._file.flush()
        self.lines += 1

    def close(self) -> None:
        """Close the file (a second close does nothing)."""
        self._file.close()

    def __enter__(self) -> "EvaluationLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LoggedBackend:
    """An ADAPT backend (:class:`qencode_nb.engines.base.AdaptBackend`) whose inner
    objective writes every evaluation to ``log``: ``restart`` is the 0-based outer
    iteration (the selection's length minus one), ``x`` the angles, ``energy`` the
    value returned (Ha).  Screening (``pool_gradient``) is not written."""

    def __init__(self, backend, log: EvaluationLog):
        self.backend, self.log = backend, log
        self.n_pool = backend.n_pool

    def pool_gradient(self, selected, params):
        return self.backend.pool_gradient(selected, params)

    def energy(self, selected):
        f, step, log = self.backend.energy(selected), len(selected) - 1, self.log

        def logged(p):
            e = f(p)
            log.write(step, p, e)
            return e

        return logged

    def energy_and_grad(self, selected):
        fg = self.backend.energy_and_grad(selected)
        if fg is None:
            return None
        step, log = len(selected) - 1, self.log

        def logged(p):
            e, g = fg(p)
            log.write(step, p, e)
            return e, g

        return logged


def read_log(path) -> list[dict]:
    """The lines of an evaluation log, in order: ``{"i", "restart", "x", "energy"}`` with
    ``x`` a tuple of hex strings and ``energy`` a hex string (``float.fromhex`` gives
    the numbers back).  A missing or empty file: ``[]``.

    Raises:
        ValueError: a line that is not one evaluation (names the file and the 1-based
            line number, and what is wrong).
    """
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                doc = json.loads(text)
                line = {"i": doc["i"], "restart": doc["restart"], "x": tuple(doc["x"]),
                        "energy": doc["energy"]}
                for h in (line["energy"], *line["x"]):
                    float.fromhex(h)
                if not all(isinstance(line[k], int) and not isinstance(line[k], bool)
                           for k in ("i", "restart")):
                    raise ValueError("i and restart must be integers")
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}: line {number}: not an evaluation "
                                 f"({type(exc).__name__}: {exc}); accepted: "
                                 '{"i": int, "restart": int, "x": [hex, ...], '
                                 '"energy": hex}') from None
            out.append(line)
    return out
