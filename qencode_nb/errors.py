"""The exception hierarchy of qencode-nb (modelled on papermill's).

Every error raised on bad input names the field, the value and what is
accepted, so that a user can fix the entry without reading the code.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.paths import ROOT


class QencodeNbError(Exception):
    """Base class of every error raised by qencode-nb.

    An error that refuses the value of one parameter names it: :attr:`parameter` (the
    name the library and ``audit.ipynb`` use, e.g. ``blas_coretype``) and
    :attr:`detail` (the message after the name); :meth:`naming` says the same under
    another name, the flag a user typed (``--coretype``: the CLI's
    :func:`qencode_nb.commands.flags.as_typed`).

    In a notebook its message comes first: IPython asks an exception for
    ``_render_traceback_()`` before it formats one, and ipykernel sends those
    lines as the cell's error output (papermill prints them when the run
    fails).  They are the message and one line saying where it was raised; the
    library frames below the cell are left out (the message names the field,
    the value and what is accepted).  ``%xmode Verbose`` brings IPython's full
    traceback back, below the message.
    """

    #: The parameter whose value is refused (None: the error names none).
    parameter: str | None = None
    #: The message after the parameter's name (None: the error names no parameter).
    detail: str | None = None

    def _render_traceback_(self) -> list[str]:
        return render_traceback(self)

    def naming(self, name: str) -> str:
        """The message with the parameter called ``name`` (e.g. the flag ``--coretype``
        for ``blas_coretype``); the message as it is where no parameter is named."""
        return f"{name} {self.detail}" if self.parameter else str(self)


class NamedParameterError(QencodeNbError):
    """Base of the errors that may name the parameter whose value they refuse: the
    message reads ``<parameter> <detail>`` (``blas_threads 0 is not accepted; accepted:
    an integer >= 1``) where ``parameter`` is given, else ``detail`` alone."""

    def __init__(self, detail: str, *, parameter: str | None = None):
        self.parameter = parameter
        self.detail = detail
        super().__init__(f"{parameter} {detail}" if parameter else detail)


class EntryError(QencodeNbError, ValueError):
    """A benchmark entry is malformed or names an unknown value.

    Attributes:
        path: the entry file, when known.
        field: dotted path of the offending field (e.g. ``encoding.mapping``).
    """

    def __init__(self, message: str, *, field: str | None = None, path=None):
        self.message = message
        self.field = field
        self.path = path
        # a value given as a parameter (not read from a file) names it like the others
        self.parameter = field if path is None else None
        self.detail = message
        prefix = ": ".join(str(p) for p in (path, f"field {field}" if field else None)
                           if p is not None)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def with_path(self, path) -> "EntryError":
        """Return the same error, now also naming the entry file."""
        return EntryError(self.message, field=self.field, path=path)


class PinError(NamedParameterError, RuntimeError):
    """BLAS threads or the BLAS kernel could not be pinned as requested."""


class ParameterError(NamedParameterError, ValueError):
    """A notebook parameter is unknown or has a value that is not accepted."""


class RebuildMismatch(QencodeNbError, ValueError):
    """The rebuilt problem's structure (Z2 symmetry count, tapered qubits) is not the
    entry's, so its stored parameters and pool cannot be used on it: the cause is
    named (stored vs rebuilt, the BLAS kernels in force, the profile to try)."""


class ProofSkipped(QencodeNbError, RuntimeError):
    """A Hamiltonian path was not built because its estimated cold build exceeds the
    proof budget (``--proof-budget``, notebook parameter ``proof_budget``).

    Attributes:
        estimated_s: the estimate (seconds).
        budget_s: the budget in force (seconds).
    """

    def __init__(self, estimated_s: float, budget_s: float):
        self.estimated_s = float(estimated_s)
        self.budget_s = float(budget_s)
        super().__init__(f"native build skipped (estimated {self.estimated_s:.0f} s; "
                         f"--proof-budget to allow it)")


class CapabilityMissing(QencodeNbError, NotImplementedError):
    """The entry needs a capability this version of qencode-nb does not have yet."""


class RunFailed(QencodeNbError, RuntimeError):
    """An executed notebook did not reach its final ``done`` record."""


class StrictRefused(QencodeNbError, RuntimeError):
    """``strict=True`` refused to run: environment drift, a dirty git tree or
    more than one BLAS thread (strict mode is for writing entries)."""


# Errors of the rooms: the entry's database, the problem's rebuild and its cache,
# the trust files.


class DataFetchError(QencodeNbError, RuntimeError):
    """A database file could not be downloaded, or its SHA-256 is not the registry's."""


class HamiltonianMismatch(QencodeNbError, ValueError):
    """A rebuilt qubit Hamiltonian fails its exact-diagonalisation check."""


class CacheCorrupt(QencodeNbError, ValueError):
    """A cache file failed a check (raised by
    :func:`qencode_nb.hamiltonian.cache_payload.check_payload`,
    :func:`qencode_nb.hamiltonian.cache_payload.restore` and
    :func:`qencode_nb.hamiltonian.cache.load`, reported as a :class:`CacheWarning`)."""


class AttestationError(QencodeNbError, ValueError):
    """A notebook that cannot be attested (not a completed audit, its entry file gone),
    or a file given to verify that is not an attestation."""


class KeyFileError(QencodeNbError, ValueError):
    """A key file is missing, is not PEM, or holds another kind of key than the one
    expected; the message names the file, what it holds and what is accepted.

    Attributes:
        path: the key file.
    """

    def __init__(self, path, problem: str, accepted: str):
        self.path = Path(path)
        super().__init__(f"key file {path}: {problem}; accepted: {accepted}")


class CrateError(QencodeNbError, ValueError):
    """A crate cannot be written: a notebook outside the folder, no audit notebook."""


# Warnings: the run goes on, the message says what was left out or redone.


class CacheWarning(RuntimeWarning):
    """A cache file was unreadable or inconsistent and is being rebuilt."""


class CrateWarning(UserWarning):
    """An entry file an audit names was left out of the crate (the message names the
    file, the notebook and why)."""


def render_traceback(exc: BaseException) -> list[str]:
    """The lines IPython shows for ``exc`` (:meth:`QencodeNbError._render_traceback_`).

    ``["<Type>: <message>", "  at Cell In[5], line 14 (qencode_nb/entry/lookup.py:72,
    in load)"]``, the type in red as IPython draws it; in ``%xmode Verbose`` the
    message and then IPython's own traceback.
    """
    import traceback

    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    head = f"\x1b[1;31m{type(exc).__name__}\x1b[0m: {exc}"
    tb = getattr(shell, "InteractiveTB", None)
    if tb is not None and getattr(tb, "mode", None) == "Verbose":
        return [head, ""] + tb.structured_traceback(type(exc), exc, exc.__traceback__)
    frames = traceback.extract_tb(exc.__traceback__)
    compiler = getattr(shell, "compile", None)
    cells = [compiler.format_code_name(f.filename) if compiler is not None else None
             for f in frames]     # ("Cell", "In[5]") for a notebook cell's frame
    cell = next((f"{' '.join(label)}, line {f.lineno}"
                 for f, label in zip(reversed(frames), reversed(cells)) if label), None)
    if not frames or cells[-1]:   # raised by the cell's own code
        return [head] + ([f"  at {cell}"] if cell else [])
    last = frames[-1]
    path = Path(last.filename)
    try:
        path = path.resolve().relative_to(ROOT)   # frames under the checkout: relative
    except ValueError:
        pass
    where = f"{path}:{last.lineno}, in {last.name}"
    return [head, f"  at {cell} ({where})" if cell else f"  at {where}"]


class NotRunnable(QencodeNbError, ValueError):
    """An engine cannot run an entry (or an operator of it); ``reason`` says why, in
    words the ``engine`` record and the card quote (the next engine of the choice runs
    instead: :func:`qencode_nb.engines.selection.choose`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class NotAnExcitation(QencodeNbError, ValueError):
    """A generator that is not a particle-conserving excitation on the sector
    engine's determinant space (:func:`qencode_nb.engines.sector.generators.generator`)."""


class AdaptEmpty(QencodeNbError, RuntimeError):
    """ADAPT selected no operator (the generator raises and writes no entry)."""


class CheckpointCorrupt(QencodeNbError, ValueError):
    """A checkpoint file that cannot be used (unreadable, truncated, another run's)."""


class CheckpointWarning(RuntimeWarning):
    """A checkpoint could not be used: it was set aside and the run starts over."""


class RunTimedOut(QencodeNbError, TimeoutError):
    """A run in its own process passed its wall-clock limit (seconds) and its process
    tree was killed (:func:`qencode_nb.executor.run_process.run_isolated`; a sweep
    records it as ``RunTimeout`` in the run's notebook and row)."""


class OutputFolderError(QencodeNbError, OSError):
    """A sweep's or study's output folder cannot be created or written (names the
    folder and why; :func:`qencode_nb.batch.run_folder.writable_folder`)."""


class ReportError(QencodeNbError, FileNotFoundError):
    """No report can be made of a folder: it is not a folder, or it holds no audit
    notebook (:func:`qencode_nb.readout.report_tables.report_notebooks`).

    Attributes:
        folder: the folder given.
        looked_for: what was looked for in it.
    """

    def __init__(self, message: str, *, folder, looked_for: str):
        self.folder = folder
        self.looked_for = looked_for
        super().__init__(message)


class ClaimsError(QencodeNbError, ValueError):
    """A folder whose claims cannot be checked: not a folder, no leaderboard, receipt or
    claim file in it, no database folder, or a file that cannot be read (the message
    names it and what is accepted; :mod:`qencode_nb.claims`)."""


class StackError(QencodeNbError, RuntimeError):
    """A package stack could not be created, found or removed: venv, pip or
    ipykernel failed (the log is kept), or no such stack (the message says why;
    :mod:`qencode_nb.environment.store`)."""
