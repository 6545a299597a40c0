"""A real headless Chromium for the browser tests, driven by playwright.

Chromium is Debian's package ``chromium`` (on ``PATH`` as ``chromium``, installed by
``.ci/run`` with ``apt-get install chromium``); playwright (PyPI, pinned in
requirements.lock) drives it, so no browser is downloaded.  The flags keep Chromium off
the network (this machine's network is closed: background services would only fail) and
let it run as root in a container.

Tests use the :func:`chromium` fixture of ``conftest.py`` (one browser per session)
and mark themselves ``browser``.  ``$QENCODE_NB_CHROMIUM`` names another binary.  On a
machine without Chromium every ``browser`` test skips, its reason naming the Debian
package and the command that installs it (:func:`require_chromium`, called by
``conftest.py`` before the test's fixtures: no documentation build, no JupyterLab is
started for nothing); where the environment variable ``CI`` is set (non-empty) they fail
instead, so CI cannot pass without running them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The Debian package that installs Chromium, also the binary's name on ``PATH``.
DEBIAN_PACKAGE = "chromium"
#: The command that installs it (README, CONTRIBUTING.md; ``.ci/run`` runs it).
INSTALL_COMMAND = f"sudo apt-get install {DEBIAN_PACKAGE}"
#: The environment variable naming another Chromium binary.
CHROMIUM_VAR = "QENCODE_NB_CHROMIUM"
#: The environment variable that, set and non-empty, turns a missing Chromium from a
#: skip into a failure (CI systems set ``CI=true``; so does ``.ci/run``).
CI_VAR = "CI"

#: Launch flags: headless, no sandbox (root in a container), no GPU, no network of
#: its own (updates, sync, QUIC, first-run pages).
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage")


def find_chromium(environ=None) -> str | None:
    """The Chromium executable's path, or None: ``$QENCODE_NB_CHROMIUM`` (a path, or a
    name looked up on ``PATH``) where it is set, else ``chromium`` on ``PATH``.
    ``environ`` defaults to ``os.environ``."""
    environ = os.environ if environ is None else environ
    search = environ.get("PATH", "")
    named = environ.get(CHROMIUM_VAR)
    if named:
        return shutil.which(named, path=search) or (named if Path(named).is_file() else None)
    return shutil.which(DEBIAN_PACKAGE, path=search)


def missing_reason(environ=None) -> str:
    """Why the browser tests cannot run here: the binary looked for, the Debian package
    and the command that installs it."""
    environ = os.environ if environ is None else environ
    named = environ.get(CHROMIUM_VAR)
    looked = (f"no Chromium at ${CHROMIUM_VAR}={named!r}" if named
              else f"no {DEBIAN_PACKAGE!r} on PATH")
    return (f"{looked}: install Debian's package {DEBIAN_PACKAGE!r} ({INSTALL_COMMAND}; "
            f".ci/run does) or set ${CHROMIUM_VAR} to a Chromium binary")


def require_chromium(environ=None) -> str:
    """The Chromium executable's path (:func:`find_chromium`); where there is none, skip
    the test with :func:`missing_reason`, or fail it where ``$CI`` is set and non-empty.

    Raises:
        pytest.skip.Exception: no Chromium and ``CI`` unset or empty.
        pytest.fail.Exception: no Chromium and ``CI`` set (non-empty).
    """
    import pytest

    environ = os.environ if environ is None else environ
    path = find_chromium(environ)
    if path is not None:
        return path
    reason = missing_reason(environ)
    if environ.get(CI_VAR):
        pytest.fail(f"{reason} (${CI_VAR}={environ[CI_VAR]!r}: a browser test fails "
                    "instead of skipping)", pytrace=False)
    pytest.skip(reason)


def launch(playwright):
    """A headless Chromium browser from a playwright ``sync_playwright()`` handle."""
    return playwright.chromium.launch(executable_path=require_chromium(), headless=True,
                                      args=list(CHROMIUM_ARGS))


def is_blank(png: bytes) -> bool:
    """True when a PNG screenshot is a single colour (nothing was drawn).

    Uses Pillow (matplotlib's dependency) to read the pixels.
    """
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    lo, hi = zip(*image.getextrema())
    return lo == hi
