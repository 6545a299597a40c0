"""The exception hierarchy of qencode-nb (modelled on papermill's).

Every error raised on bad input names the field, the value and what is
accepted, so that a user can fix the entry without reading the code.
"""

from __future__ import annotations


class QencodeNbError(Exception):
    """Base class of every error raised by qencode-nb."""


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
        prefix = ": ".join(str(p) for p in (path, f"field {field}" if field else None)
                           if p is not None)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def with_path(self, path) -> "EntryError":
        """Return the same error, now also naming the entry file."""
        return EntryError(self.message, field=self.field, path=path)


class PinError(QencodeNbError, RuntimeError):
    """BLAS threads or the BLAS kernel could not be pinned as requested."""


class ParameterError(QencodeNbError, ValueError):
    """A notebook parameter is unknown or has a value that is not accepted."""


class CapabilityMissing(QencodeNbError, NotImplementedError):
    """The entry needs a capability this version of qencode-nb does not have yet."""


class RunFailed(QencodeNbError, RuntimeError):
    """An executed notebook did not reach its final ``done`` record."""


class StrictRefused(QencodeNbError, RuntimeError):
    """``strict=True`` refused to run: environment drift, a dirty git tree or
    more than one BLAS thread (strict mode is for writing entries)."""
