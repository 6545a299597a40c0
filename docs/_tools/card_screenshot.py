"""Screenshot the verdict card of an executed audit as a PNG (docs/_static/card-lih.png).

    .venv/bin/papermill notebooks/audit.ipynb out.ipynb -p entry lih
    .venv/bin/python docs/_tools/card_screenshot.py out.ipynb docs/_static/card-lih.png

Draws ``Card(read_records(NOTEBOOK)).html()`` on a blank page in Debian's headless
Chromium, driven by playwright (the helpers of ``tests/browser.py``), and screenshots the
card's element only.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def screenshot(notebook, png) -> None:
    from playwright.sync_api import sync_playwright

    from browser import launch
    from qencode_nb import read_records
    from qencode_nb.verdict.card import Card

    card = Card(read_records(notebook)).html()
    page_html = ("<!doctype html><html><head><meta charset='utf-8'></head>"
                 f"<body style='margin: 12px; background: white;'>{card}</body></html>")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1024, "height": 800},
                                device_scale_factor=1)
        page.set_content(page_html)
        page.locator(".qnb-card").screenshot(path=str(png))
        browser.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: card_screenshot.py EXECUTED_AUDIT.ipynb OUT.png")
    screenshot(sys.argv[1], sys.argv[2])
