"""Notebook stages: a failed stage records why before it re-raises, and the
strict mode's refusal (for writing entries, never needed to audit)."""

from __future__ import annotations

import contextlib

from qencode_nb.errors import StrictRefused
from qencode_nb.notebook.record import record


@contextlib.contextmanager
def stage(name: str):
    """Run one notebook stage; on failure record ``error`` (stage, type, message), re-raise.

    A failed run thus keeps its executed notebook *and* a record of why it
    failed, readable with :func:`qencode_nb.read_records`.
    """
    try:
        yield
    except BaseException as exc:
        message = str(exc)
        if isinstance(exc, KeyboardInterrupt) and not message:
            message = "interrupted (a cell timeout or a user interrupt)"
        record("error", {"stage": name, "type": type(exc).__name__, "message": message})
        raise


def check_strict(provenance: dict, blas_threads: int) -> None:
    """``strict=True``: refuse drift, a dirty tree or more than one BLAS thread.

    Audits never need this (drift never blocks an audit); it is for writing
    entries, where the generator refused the same three things (its
    ``--allow-env-drift`` and ``--allow-dirty`` flags).

    Args:
        provenance: :func:`qencode_nb.notebook.provenance.collect` output.
        blas_threads: the measured BLAS thread count.

    Raises:
        StrictRefused: listing every reason (drifted packages as have/want).
    """
    reasons = [f"{k} {v['have'] or 'not installed'} (want {v['want']})"
               for k, v in provenance["versions"].items() if not v["match"]]
    if reasons:
        reasons = ["environment drift: " + ", ".join(reasons)]
    git = provenance.get("git") or {}
    if git.get("dirty") is not False:
        reasons.append("git tree dirty" if git.get("dirty") else
                       "git state unknown (not a git checkout)")
    if blas_threads != 1:
        reasons.append(f"{blas_threads} BLAS threads measured (strict needs 1)")
    if reasons:
        raise StrictRefused("strict=True refuses to run: " + "; ".join(reasons))
