"""Errors in the words a user typed: the flag (``--coretype``), not the parameter the
library checked (``blas_coretype``).

The library's errors name the parameter they refuse
(:attr:`qencode_nb.errors.QencodeNbError.parameter`; the notebook's own errors keep
that name).  :class:`FlagParser`, the parser class of every ``qencode-nb`` parser,
records which flag fills which ``dest`` as the arguments are defined, and
:func:`as_typed` says an error with that flag: the one table from parameter to flag is
the parser's own definitions, plus :data:`CHECKED_EACH_AS` for the list arguments whose
every value the library checks as one parameter.
"""

from __future__ import annotations

import argparse

#: The ``dest`` of the list arguments whose every value is checked as one parameter:
#: ``study threads --threads 1 0`` and ``robustness --threads`` (``dest="threads"``)
#: are each checked as ``blas_threads``; ``study kernels --coretypes`` and
#: ``robustness --coretypes`` as ``blas_coretype``; ``study optimizers --optimizers``
#: as ``optimizer``.
CHECKED_EACH_AS = {"blas_threads": "threads", "blas_coretype": "coretypes",
                   "optimizer": "optimizers"}

#: The namespace attribute holding the parsed command's ``{dest: flag}`` table.
FLAGS_ATTRIBUTE = "typed_flags"


class FlagParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` that records the flag of each optional
    argument (``{dest: "--flag"}``, the first long spelling) and puts the table of the
    parser that parsed the command on the namespace (:data:`FLAGS_ATTRIBUTE`; a
    subcommand's parser is of this class too, and its defaults win over its parent's).
    """

    def __init__(self, *args, **kwargs):
        self.flags: dict[str, str] = {}   # before the parent adds --help
        super().__init__(*args, **kwargs)
        self.set_defaults(**{FLAGS_ATTRIBUTE: self.flags})

    def add_argument(self, *args, **kwargs):
        return self._record(super().add_argument(*args, **kwargs))

    def add_argument_group(self, *args, **kwargs):
        """An argument group whose arguments are recorded as the parser's own (a group's
        ``add_argument`` is argparse's, not this class's)."""
        group = super().add_argument_group(*args, **kwargs)
        add = group.add_argument
        group.add_argument = lambda *a, **k: self._record(add(*a, **k))
        return group

    def _record(self, action):
        spellings = action.option_strings
        if spellings:
            longs = [s for s in spellings if s.startswith("--")]
            self.flags[action.dest] = (longs or spellings)[0]
        return action


def flag_of(parameter: str | None, args) -> str | None:
    """The flag as typed for the library's ``parameter`` in the command ``args`` parsed
    (its own ``dest``, else the list argument of :data:`CHECKED_EACH_AS`); None when
    the command has no flag for it."""
    flags = getattr(args, FLAGS_ATTRIBUTE, None) or {}
    if parameter is None:
        return None
    return flags.get(parameter) or flags.get(CHECKED_EACH_AS.get(parameter, ""))


def as_typed(exc: BaseException, args) -> str:
    """``exc``'s message naming the flag the user typed where it refuses the value of
    one (``--coretype 'bogus' is not accepted; accepted: ...`` for ``blas_coretype
    'bogus' is not accepted; ...``); else the message as it is."""
    flag = flag_of(getattr(exc, "parameter", None), args)
    return exc.naming(flag) if flag else str(exc)
