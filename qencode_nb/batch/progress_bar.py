"""The progress bar of a sweep, a study or a robustness run: one bar over its runs.

tqdm's plain text bar on ``sys.stderr`` as it is when the bar starts (in a Jupyter
kernel, the kernel's stderr stream), the same kind of bar as a re-run's
(:mod:`qencode_nb.rerun.progress`).  Not ``tqdm.auto``: this environment has no
ipywidgets, and there tqdm.auto writes a "TqdmWarning: IProgress not found" into the
notebook and falls back to this bar anyway; with ipywidgets it would draw a widget
that papermill's executed notebook and its ``--log-output`` cannot show.

The text bar works in all three places: JupyterLab merges its stream outputs and
redraws it in place (carriage returns), papermill keeps each redraw as one short
stream output of the executed notebook (and prints it with ``--log-output``), a
terminal shows the usual bar.  It moves once per finished run and redraws at most
every :data:`~qencode_nb.rerun.progress.MIN_INTERVAL_S` seconds, so N runs leave at
most N + 2 redraws.  ``$QENCODE_NB_PROGRESS=0`` turns it off, as it does the re-run
bars.
"""

from __future__ import annotations

import os
import sys

from qencode_nb.rerun.progress import MIN_INTERVAL_S, PROGRESS_ENV

#: Width of the bar where stderr is not a terminal (a kernel, a log file).
NCOLS = 100


def progress_bar(total: int, desc: str, unit: str, *, initial: int = 0,
                 enabled: bool = True):
    """A tqdm text bar on stderr over ``total`` runs (``initial`` already done).

    Args:
        total: runs in all (resumed ones included).
        desc: the bar's title ("audits", "threads study", "robustness").
        unit: what one step is ("entry", "run").
        initial: runs already complete (a resumed sweep).
        enabled: False gives a disabled bar (it draws nothing); so does
            ``$QENCODE_NB_PROGRESS=0``.

    Returns:
        a ``tqdm.tqdm``; move it with :func:`advance`, end it with ``close()``.
    """
    from tqdm import tqdm

    enabled = enabled and os.environ.get(PROGRESS_ENV, "1") != "0"
    stream = sys.stderr
    tty = bool(getattr(stream, "isatty", lambda: False)())
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream,
                mininterval=MIN_INTERVAL_S, ncols=None if tty else NCOLS,
                dynamic_ncols=tty, leave=True, disable=not enabled)


def advance(bar, postfix: str) -> None:
    """One more run finished: ``postfix`` (its name and status), then one step; a
    single redraw at most (none within the bar's ``mininterval``)."""
    bar.set_postfix_str(postfix, refresh=False)
    bar.update(1)
