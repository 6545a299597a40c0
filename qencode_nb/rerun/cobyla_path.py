"""A COBYLA restart's path, kept and verified: scipy's COBYLA is not run again when
every energy of a stored path is recomputed here to the bit.

scipy's COBYLA (``scipy.optimize._cobyla``, Powell's Fortran in scipy < 1.16) is a
deterministic function of its start point, options and the sequence of objective
values it is given: it calls no BLAS, no numpy ufunc and nothing of the numeric
environment, so the kernels, BLAS threads and numpy's dispatch cannot move it; its
own work grows with the parameter count ``n`` (``O(n**2)`` a step and more), and for
N2 JW/UCCSD (10,000 steps at ``n = 404``) it is nearly the whole re-run: 6-7 min of
COBYLA against well under a second of energies.

So a restart whose COBYLA took :data:`qencode_nb.rules.COBYLA_PATH_MIN_S` or more
stores its path: every point COBYLA asked for and the energy it got, in order
(``cobyla-paths/<key>.npz`` under the rebuild cache root).  A later run of the same
restart -- another kernel profile, thread count or numpy dispatch of a robustness
study, the same audit again -- evaluates its own energy at every stored point, in
order, and compares the bits.  All equal: COBYLA here would be given the very same
values, so it would ask for the very same points and return the stored result,
which is taken (the path's best point, its energy and the evaluation count) without
running it.  The first difference: the restart runs COBYLA as usual.  Either way the
energies the re-run reports are the ones computed here.  The ``rerun`` record's
``details.cobyla_paths`` counts the restarts verified and run, and where a check
failed, at which evaluation.

The key (:func:`key_material`) holds what identifies the restart (the checkpoint's
material without the numeric environment, the restart index, the start point's
bits) and the COBYLA build (scipy's version and the SHA-256 of the ``_cobyla``
extension): a key that matched another problem could only fail its check.
``QENCODE_NB_COBYLA_PATHS=off`` runs every restart's COBYLA and stores nothing.
"""

from __future__ import annotations

import time
from pathlib import Path

#: Subfolder of the cache root holding the paths.
SUBDIR = "cobyla-paths"

#: Bump when a path file's content or meaning changes.
FORMAT = 1

#: The environment variable that turns paths off: ``off``; ``on`` or unset keeps them on.
ENV_VAR = "QENCODE_NB_COBYLA_PATHS"

#: Accepted values of :data:`ENV_VAR`.
SETTINGS = ("on", "off")


def paths_setting() -> str:
    """``"on"`` or ``"off"``: :data:`ENV_VAR`, default ``on``.

    Raises:
        ParameterError: the variable is set to another value (names it and the accepted).
    """
    from qencode_nb.options import env_choice

    return env_choice(ENV_VAR, SETTINGS, "on")


def cobyla_build() -> dict | None:
    """scipy's version and the SHA-256 of its compiled COBYLA (``_cobyla``), or None where
    ``minimize(method="COBYLA")`` is not that Fortran: scipy 1.16 and later run PRIMA's
    Python port (numpy linear algebra, which follows the kernels; a package stack such
    as QEncode's v3 one has scipy 1.17), so no path is kept or taken there."""
    import hashlib

    import scipy

    try:
        major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
        from scipy.optimize import _cobyla
    except (ImportError, ValueError):
        return None
    if (major, minor) >= (1, 16) or not getattr(_cobyla, "__file__", None):
        return None
    return {"scipy": scipy.__version__,
            "cobyla_sha256": hashlib.sha256(Path(_cobyla.__file__).read_bytes()).hexdigest()}


def key_material(run_material: dict, restart: int, x0, build: dict | None = None) -> dict:
    """What identifies one COBYLA restart: the re-run's checkpoint material
    (:func:`qencode_nb.rerun.checkpoint.material`) without the numeric environment
    (``threads``, ``numeric``: a path is checked, not trusted), the restart index, the
    start point's SHA-256 and the COBYLA build (``build``, default :func:`cobyla_build`)."""
    import hashlib

    import numpy as np

    kept = {k: v for k, v in run_material.items() if k not in ("threads", "numeric")}
    start = np.ascontiguousarray(x0, dtype=np.float64)
    return {"format": FORMAT, "run": kept, "restart": int(restart),
            "x0_sha256": hashlib.sha256(start.tobytes()).hexdigest(),
            **(build or cobyla_build() or {"scipy": None})}


class CobylaPaths:
    """The paths of one re-run's COBYLA restarts: :meth:`run` each restart through it.

    Args:
        run_material: the re-run's checkpoint material.
        cache_dir: cache root (default :func:`qencode_nb.hamiltonian.cache.cache_root`).
        enabled: False runs every restart's COBYLA and stores nothing (default:
            :func:`paths_setting`).

    Raises:
        ParameterError: :data:`ENV_VAR` has a value that is not accepted.
    """

    def __init__(self, run_material: dict, cache_dir=None, enabled: bool | None = None):
        from qencode_nb.hamiltonian.cache import cache_root

        self.run_material = run_material
        self.folder = cache_root(cache_dir) / SUBDIR
        self.enabled = paths_setting() == "on" if enabled is None else bool(enabled)
        self.why_off = None if self.enabled else "off"
        self.build = cobyla_build() if self.enabled else None   # hashed once a run
        if self.enabled and self.build is None:
            import scipy

            self.enabled = False
            self.why_off = (f"scipy {scipy.__version__} has no compiled Fortran COBYLA "
                            "(1.16 and later run PRIMA's Python port)")
        self.verified = 0
        self.ran = 0
        self.stored = 0
        self.mismatches: list[str] = []

    def record(self) -> dict:
        """``{"enabled", "verified", "ran", "stored", "mismatches"}`` for the re-run
        record (``details.cobyla_paths``), and ``"why_off"`` where paths are off."""
        out = {"enabled": self.enabled, "verified": self.verified, "ran": self.ran,
               "stored": self.stored, "mismatches": list(self.mismatches)}
        if self.why_off:
            out["why_off"] = self.why_off
        return out

    def _path(self, restart: int, x0) -> Path:
        from qencode_nb.hamiltonian.cache_key import sha256_json

        material = key_material(self.run_material, restart, x0, self.build)
        return self.folder / f"{sha256_json(material)}.npz"

    def run(self, restart: int, energy, x0, minimize_cobyla):
        """One COBYLA restart: ``(fun, x, nfev)``.

        Args:
            restart: the restart index (0-based).
            energy: the counted energy (:class:`qencode_nb.rerun.progress.Progress`'s
                wrapper, with ``inner``, the plain function, and ``progress``), or any
                callable ``params -> float`` (Ha).
            x0: start point (radians), shape ``(n,)``.
            minimize_cobyla: ``(f, x0) -> scipy OptimizeResult``: COBYLA with the
                run's options.
        """
        import numpy as np

        path = self._path(restart, x0) if self.enabled else None
        stored = _read(path) if path is not None else None
        if stored is not None:
            xs, fs, best = stored
            inner = getattr(energy, "inner", energy)
            for k, (x, f) in enumerate(zip(xs, fs)):
                value = float(inner(np.array(x)))
                if np.float64(value).tobytes() != np.float64(f).tobytes():
                    self.mismatches.append(
                        f"restart {restart}: evaluation {k + 1} of {len(fs)} gave "
                        f"{value!r} Ha, the stored path {float(f)!r} Ha; COBYLA ran")
                    break
            else:
                progress = getattr(energy, "progress", None)
                if progress is not None:     # the trace a run of COBYLA would have left
                    progress.replayed(xs, [float(f) for f in fs])
                self.verified += 1
                return float(fs[best]), np.array(xs[best]), len(fs)
        xs, fs = [], []

        def f(p):
            value = float(energy(p))
            xs.append(np.array(p, dtype=np.float64))
            fs.append(value)
            return value

        start = time.perf_counter()
        res = minimize_cobyla(f, x0)
        seconds = time.perf_counter() - start
        self.ran += 1
        if path is not None:
            self._store(path, res, xs, fs, seconds)
        return res.fun, res.x, int(res.nfev)

    def _store(self, path: Path, res, xs, fs, seconds: float) -> None:
        """Keep a path worth keeping: COBYLA took :data:`~qencode_nb.rules.COBYLA_PATH_MIN_S`
        or more, and its result is one of its evaluated points (then the stored result
        is read back from the path alone)."""
        import io

        import numpy as np

        from qencode_nb.rules import COBYLA_PATH_MIN_S

        if seconds < COBYLA_PATH_MIN_S or int(res.nfev) != len(fs) or not fs:
            return
        x_end = np.asarray(res.x, dtype=np.float64)
        best = next((k for k, x in enumerate(xs) if np.array_equal(x, x_end)
                     and np.float64(fs[k]).tobytes() == np.float64(res.fun).tobytes()), None)
        if best is None:
            return
        from qencode_nb.atomic import write_atomic

        buffer = io.BytesIO()
        np.savez(buffer, xs=np.array(xs), fs=np.array(fs, dtype=np.float64),
                 best=np.array(best), format=np.array(FORMAT))
        try:
            write_atomic(path, buffer.getvalue())
        except OSError:     # a cache is a by-product: a full disk costs only the path
            return
        self.stored += 1


def _read(path: Path):
    """``(xs, fs, best)`` of a stored path, or None (absent, unreadable or of another
    format: the restart then runs COBYLA; a wrong path can only fail its check)."""
    import zipfile

    import numpy as np

    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as doc:
            xs, fs, best = doc["xs"], doc["fs"], int(doc["best"])
            ok = int(doc["format"]) == FORMAT
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if not ok or xs.ndim != 2 or len(xs) != len(fs) or not 0 <= best < len(fs):
        return None
    return xs, fs, best
