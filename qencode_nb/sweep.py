"""Audit many entries: audit.ipynb once per entry, each in its own pinned kernel.

Runs go to a local process pool (``workers`` processes, each starting its own
Jupyter kernel through the pinned papermill engine).  A sweep is resumable:
an entry whose executed notebook recorded ``done`` with the same inputs (the
parameters and the entry file's SHA-256, kept in ``<name>.inputs.json``
beside the notebook) is not run again.  The summary is
:func:`qencode_nb.collect.audit_table` written as ``summary.csv``.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from qencode_nb.errors import EntryError


def resolve_targets(items) -> list[str]:
    """Expand sweep targets: a folder gives its ``*.json`` files (sorted), a file
    itself, anything else a bundled ``params/`` name.

    Raises:
        EntryError: a folder with no JSON file, or a name that is neither.
    """
    from qencode_nb.entries import PARAMS_DIR, bundled_names

    out = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise EntryError(f"folder {item!r} holds no .json entry", field="targets")
            out += [str(p.resolve()) for p in found]
        elif path.is_file():
            out.append(str(path.resolve()))
        elif (PARAMS_DIR / f"{item}.yaml").is_file():
            out.append(str(item))
        else:
            raise EntryError(f"{item!r} is neither a folder, a file nor a bundled entry; "
                             "bundled: " + ", ".join(bundled_names()), field="targets")
    return out


def _entry_digest(target: str) -> str:
    from qencode_nb.entries import PARAMS_DIR

    path = Path(target)
    if not path.is_file():
        path = PARAMS_DIR / f"{target}.yaml"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_name(target: str) -> str:
    """File stem of a target's executed notebook (the entry id or bundled name)."""
    return Path(target).stem


def inputs_of(target: str, parameters: dict) -> dict:
    """What decides a run's result, as stored in ``<name>.inputs.json``."""
    return {"parameters": parameters, "entry_sha256": _entry_digest(target)}


def is_complete(out_dir: Path, name: str, inputs: dict) -> bool:
    """True when ``name`` ran to ``done`` with exactly ``inputs`` before."""
    from qencode_nb.record import read_records

    nb, side = out_dir / f"{name}.ipynb", out_dir / f"{name}.inputs.json"
    if not (nb.is_file() and side.is_file()):
        return False
    try:
        if json.loads(side.read_text()) != inputs:
            return False
        return read_records(nb).get("done") is True
    except (ValueError, OSError):
        return False


def _run_one(target: str, out_dir: str, parameters: dict, timeout) -> tuple[str, str | None]:
    from qencode_nb.errors import RunFailed
    from qencode_nb.runner import NOTEBOOKS, run_notebook

    name = run_name(target)
    out = Path(out_dir)
    try:
        run_notebook(NOTEBOOKS / "audit.ipynb", out / f"{name}.ipynb", parameters,
                     timeout=timeout)
        failure = None
    except RunFailed as exc:
        failure = str(exc)
    (out / f"{name}.inputs.json").write_text(
        json.dumps(inputs_of(target, parameters), sort_keys=True))
    return name, failure


def sweep(targets, out_dir, *, mode: str = "full", workers: int = 1, blas_threads: int = 1,
          blas_coretype: str | None = None, db=None, timeout: int | None = None,
          progress: bool = True):
    """Audit every target; return the summary DataFrame (also ``summary.csv``).

    Args:
        targets: folders, entry files or bundled names (:func:`resolve_targets`).
        out_dir: folder for the executed notebooks, their inputs and summary.csv.
        mode: audit mode (full, replay, rerun).
        workers: local processes, each running one notebook (own kernel) at a time.
        blas_threads, blas_coretype, db: audit.ipynb parameters.
        timeout: per-cell execution timeout in seconds (None: none).
        progress: show a tqdm progress bar.

    Raises:
        EntryError: a target that does not exist.
        ParameterError: a bad parameter value (checked before any run).
    """
    from tqdm.auto import tqdm

    from qencode_nb.audit import check_mode
    from qencode_nb.collect import audit_table
    from qencode_nb.threads import pin_environment

    check_mode(mode)
    pin_environment(blas_threads, blas_coretype)   # validates both early
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    todo, names = [], []
    for target in resolve_targets(targets):
        params = {"entry": target, "blas_threads": blas_threads, "mode": mode}
        if blas_coretype:
            params["blas_coretype"] = blas_coretype
        if db is not None:
            params["db"] = str(Path(db).resolve())
        names.append(run_name(target))
        if not is_complete(out, run_name(target), inputs_of(target, params)):
            todo.append((target, params))
    bar = tqdm(total=len(names), initial=len(names) - len(todo), disable=not progress,
               desc="audits", unit="entry")
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(_run_one, t, str(out), p, timeout) for t, p in todo]
        for fut in as_completed(futures):
            fut.result()
            bar.update(1)
    bar.close()
    table = audit_table([out / f"{n}.ipynb" for n in names])
    table.to_csv(out / "summary.csv", index=False)
    return table
