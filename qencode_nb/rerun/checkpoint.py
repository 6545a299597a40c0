"""Checkpoints of a long re-run: each finished VQE restart or ADAPT step on disk.

A re-run writes, as each restart (VQE) or outer step (ADAPT) finishes, what that
part produced to one JSON file (atomic replace, so a kill leaves the previous
complete file).  A run started again with ``resume=True`` (notebook parameter,
``qencode-nb audit --resume``; sweeps resume by default) takes the finished parts
from the file and runs only the rest.  Restarts are independent given their start
point (restart 0 from zeros, restart k from the k-th draw of
``default_rng(seed)``, drawn again in order on resume), and an ADAPT step depends
only on the operators and angles before it, which are stored exactly (JSON floats
round-trip), so a resumed run ends bit-identical to an uninterrupted one.

The file is ``checkpoints/<key>.json`` under the rebuild cache root
(:func:`qencode_nb.hamiltonian.cache.cache_root`), ``key`` the SHA-256 of everything
the run's arithmetic depends on (:func:`material`): entry hash, optimiser and
budgets, engine and backend, BLAS threads, the kernel each OpenBLAS copy runs
(measured, :func:`qencode_nb.notebook.fingerprint.measured_numerics`), package versions.  A
completed run deletes its checkpoint.

A checkpoint that cannot be used -- unreadable, truncated, not JSON, of another
format or of another run (:class:`CheckpointCorrupt` says which file and why) --
is **set aside and the run starts over**: resuming asks to save time, never to
change the result, so a corrupt file costs the finished parts, not the audit.
The file is moved to ``<key>.json.corrupt`` beside it (kept for inspection; the
next one replaces it), a :class:`CheckpointWarning` is issued (shown in the
notebook's re-run cell) and the reason, naming both files, is recorded as
``checkpoint_discarded`` in the ``rerun`` record, with ``resumed_parts`` 0.  A
sweep (which resumes every run) thus completes such a run instead of failing it
at every attempt.
"""

from __future__ import annotations

import json
from pathlib import Path

from qencode_nb.errors import CheckpointCorrupt, CheckpointWarning

#: Bump when what a checkpoint holds changes (2: keyed by the measured kernels of the
#: three OpenBLAS copies, issue 36).
FORMAT = 2

#: Subfolder of the cache root holding checkpoints.
SUBDIR = "checkpoints"


def material(entry, problem, optimizer_name: str, kind: str) -> dict:
    """What a re-run's arithmetic depends on (the checkpoint key's material).

    Args:
        entry: the Entry (its QEncode SHA-256, budgets, seed).
        problem: the rerun Problem (engine, Hamiltonian origin, parameters).
        optimizer_name: the optimiser that runs ("cobyla", "adapt", ...).
        kind: "vqe" or "adapt".
    """
    import os

    from qencode_nb.notebook.fingerprint import measured_numerics
    from qencode_nb.notebook.provenance import installed_version
    from qencode_nb.notebook.pins import THREAD_VARS

    backend = problem.engines.rerun.checkpoint_label
    return {"format": FORMAT, "kind": kind, "entry_sha256": entry.sha256,
            "entry_id": entry.entry_id, "optimizer": optimizer_name,
            "max_iterations": entry.max_iterations, "restarts": entry.restarts_requested,
            "seed": entry.seed, "early_stop": entry.early_stop, "backend": backend,
            "hamiltonian": problem.hamiltonian_origin, "num_params": problem.num_params,
            "threads": {v: os.environ.get(v) for v in THREAD_VARS},
            "numeric": measured_numerics(),
            # a stack's kernel imports qencode_nb through a .pth, without its metadata: None
            "versions": {p: installed_version(p)
                         for p in ("numpy", "scipy", "pennylane", "qencode-nb")}}


class Checkpoint:
    """The checkpoint of one re-run: finished parts read back, new ones written.

    Args:
        material: :func:`material` of the run.
        resume: take the finished parts from an existing file (else start over,
            replacing it).  A file that cannot be used (:class:`CheckpointCorrupt`)
            is set aside with a :class:`CheckpointWarning` and the run starts
            over; :attr:`discarded` says why.
        cache_dir: cache root (default :func:`qencode_nb.hamiltonian.cache.cache_root`).
    """

    def __init__(self, material: dict, resume: bool = False, cache_dir=None):
        from qencode_nb.hamiltonian.cache import cache_root
        from qencode_nb.hamiltonian.cache_key import sha256_json

        self.material = material
        self.key = sha256_json(material)
        self.path = cache_root(cache_dir) / SUBDIR / f"{self.key}.json"
        self.parts: list[dict] = []
        self.resumed = 0
        self.discarded: str | None = None
        if resume and self.path.exists():
            try:
                self.parts = self._read()
            except CheckpointCorrupt as exc:
                self.discarded = self._set_aside(exc)
            self.resumed = len(self.parts)

    def _set_aside(self, exc: CheckpointCorrupt) -> str:
        """Move the unusable file to ``<key>.json.corrupt``, warn, return the reason."""
        import warnings

        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            self.path.replace(aside)
            where = f"set aside as {aside}"
        except OSError as err:
            where = f"left in place ({err.strerror or err}; it is replaced as the run goes)"
        reason = f"{exc}: {where}; the re-run starts over"
        warnings.warn(reason, CheckpointWarning, stacklevel=3)
        return reason

    def _read(self) -> list[dict]:
        try:
            doc = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointCorrupt(f"checkpoint {self.path} is unreadable ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT \
                or not isinstance(doc.get("parts"), list):
            raise CheckpointCorrupt(f"checkpoint {self.path} is not a format-{FORMAT} "
                                    "checkpoint")
        if doc.get("material") != self.material:
            raise CheckpointCorrupt(f"checkpoint {self.path} belongs to another run "
                                    "(its material differs)")
        return doc["parts"]

    def part(self, index: int) -> dict | None:
        """The finished part ``index`` (restart or ADAPT step, 0-based), or None."""
        return self.parts[index] if index < len(self.parts) else None

    def restored_calls(self) -> int:
        """Energy evaluations of the parts taken from the file (``calls`` of each)."""
        return sum(int(p.get("calls", 0)) for p in self.parts[:self.resumed])

    def save(self, index: int, part: dict) -> None:
        """Record part ``index`` as finished (JSON-serialisable; floats exact)."""
        from qencode_nb.atomic import write_atomic

        if index < len(self.parts):
            return
        self.parts.append(part)
        doc = {"format": FORMAT, "material": self.material, "parts": self.parts}
        write_atomic(self.path, json.dumps(doc).encode())

    def done(self) -> None:
        """The run completed: its checkpoint is no longer needed, nor the temporary file a
        killed run may have left mid-save (:func:`qencode_nb.atomic.write_atomic`'s
        ``.tmp-<key>-*.json``: a SIGKILL lands between its creation and its rename)."""
        path = Path(self.path)
        for stale in (path, *path.parent.glob(f".tmp-{path.stem[:16]}-*.json")):
            try:
                stale.unlink()
            except OSError:
                pass

    def record(self) -> dict:
        """``{"path", "resumed_parts", "discarded"}`` for the ``rerun`` record."""
        return {"path": str(self.path), "resumed_parts": self.resumed,
                "discarded": self.discarded}
