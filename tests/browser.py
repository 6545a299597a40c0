"""A real headless Chromium for the browser tests, driven by playwright.

Chromium is Debian's package (``/usr/bin/chromium``, installed by ``.ci/run`` with
``apt-get install chromium``); playwright (PyPI, pinned in requirements.lock)
drives it, so no browser is downloaded.  The flags keep Chromium off the network
(this machine's network is closed: background services would only fail) and let it
run as root in a container.

Tests use the :func:`chromium` fixture of ``conftest.py`` (one browser per session)
and mark themselves ``browser``.  ``$QENCODE_NB_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The Chromium binary tests drive: ``$QENCODE_NB_CHROMIUM``, else Debian's.
CHROMIUM = os.environ.get("QENCODE_NB_CHROMIUM", "/usr/bin/chromium")

#: Launch flags: headless, no sandbox (root in a container), no GPU, no network of
#: its own (updates, sync, QUIC, first-run pages).
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage")


def chromium_binary() -> str:
    """The Chromium executable's path.

    Raises:
        RuntimeError: no such binary (says how to install it); a browser test fails
            rather than skips, so CI cannot pass without running it.
    """
    path = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).is_file() else None)
    if path is None:
        raise RuntimeError(f"no Chromium at {CHROMIUM!r}: install Debian's package "
                           "(apt-get install chromium; .ci/run does) or set "
                           "$QENCODE_NB_CHROMIUM to a Chromium binary")
    return path


def launch(playwright):
    """A headless Chromium browser from a playwright ``sync_playwright()`` handle."""
    return playwright.chromium.launch(executable_path=chromium_binary(), headless=True,
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
