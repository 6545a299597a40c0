"""The notebooks in JupyterLab, driven through its UI in a real headless Chromium.

Each test copies the checkout's tracked files into a temporary git repository
(tests/checkout.py) and starts JupyterLab there the way Binder does (``binder/start
jupyter lab``: thread pins, and ``jupyter-config/`` on the config path, whose server
extension keeps a notebook source's committed kernel metadata on save).  So a failing
test leaves nothing behind in the checkout, and ``git diff`` / ``git status`` of the
copy say exactly what JupyterLab wrote.  The kernel imports ``qencode_nb`` from this
environment (installed editable from the checkout).

What is not checked from the browser's console, and why (:data:`IGNORED_CONSOLE`):
messages below ``error`` (JupyterLab logs its start, workspace and WebSocket at
``debug``/``info``; ``warning`` is for deprecations of its own extensions).  Every
``pageerror`` (an uncaught exception in JupyterLab's code) and every console ``error``
fails the test, except those matched by :data:`IGNORED_CONSOLE`.
"""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from checkout import copy_checkout, git
from qencode_nb.executor.save_hook import REFERENCE_PYTHON

pytestmark = [pytest.mark.browser, pytest.mark.notebook]

#: Console errors JupyterLab logs that say nothing about the notebook or the toolkit:
#: (pattern, why).  Empty today: no console error is expected.
IGNORED_CONSOLE: tuple[tuple[str, str], ...] = ()

LAB = Path(sys.executable).with_name("jupyter-lab")
NOTEBOOK = "notebooks/audit.ipynb"

#: JupyterLab settings of the test's own (empty) settings folder: no question about
#: fetching Jupyter news and no update check (both would reach the internet).
SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab server on a copy of the checkout."""

    def __init__(self, repo: Path, port: int, token: str, log: Path, proc):
        self.repo, self.port, self.token, self.log, self.proc = repo, port, token, log, proc

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{path}?token={self.token}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def lab_server(repo: Path, tmp: Path, timeout: float = 90):
    """JupyterLab on ``repo`` started by ``repo/binder/start``, its user config, settings,
    workspaces and runtime files in ``tmp`` (nothing of the user's ~/.jupyter); stopped
    (SIGTERM, then SIGKILL) on exit."""
    for rel, value in SETTINGS.items():
        path = tmp / "settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), IPYTHONDIR=str(tmp / "ipython"))
    env.pop("JUPYTER_CONFIG_PATH", None)
    port, token = _free_port(), secrets.token_hex(16)
    cmd = ["bash", str(repo / "binder" / "start"), str(LAB), "--no-browser",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={repo}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")   # containers run as root; JupyterLab refuses without it
    log = tmp / "jupyterlab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    lab = Lab(repo, port, token, log, proc)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{lab.log_text()}")
            try:
                req = urllib.request.Request(f"{lab.base}/api/status",
                                             headers={"Authorization": f"token {token}"})
                urllib.request.urlopen(req, timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer in {timeout} s:\n{lab.log_text()}")
                time.sleep(0.3)
        yield lab
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


@pytest.fixture
def lab(tmp_path):
    repo = copy_checkout(tmp_path / "repo")
    with lab_server(repo, tmp_path / "jupyter") as server:
        yield server


class Console:
    """Page errors and console errors of one page, minus :data:`IGNORED_CONSOLE`."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("console", self._console)

    def _console(self, msg) -> None:
        if msg.type != "error":
            return
        if any(re.search(pattern, msg.text) for pattern, _ in IGNORED_CONSOLE):
            return
        self.errors.append(f"console.error: {msg.text}")


def _open(chromium, lab: Lab, path: str = NOTEBOOK):
    """A page with ``path`` open in JupyterLab and its kernel connected and idle."""
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    console = Console(page)
    page.goto(lab.url(path))
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=90_000)
    # The status bar's kernel item reads "<kernelspec> | Idle" once the kernel runs.
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text('(ipykernel) | Idle')",
                           timeout=90_000)
    return page, console


def _tab(page, name: str):
    return page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name)


def _save(page, lab: Lab, path: str = NOTEBOOK) -> None:
    """Ctrl+S in the notebook (command mode, first cell selected); waits until the tab
    is clean and the file on disk was written again."""
    file = lab.repo / path
    before = file.stat().st_mtime_ns
    page.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while file.stat().st_mtime_ns == before:
        assert time.monotonic() < deadline, f"Ctrl+S did not save {path}:\n{lab.log_text()}"
        time.sleep(0.2)
    page.wait_for_function(
        "name => ![...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab')]"
        ".some(t => t.textContent.includes(name) && t.classList.contains('jp-mod-dirty'))",
        arg=Path(path).name, timeout=30_000)
    assert "Saving file at /" + path in lab.log_text()


def _without_outputs(nb: dict) -> dict:
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return nb


def test_opening_and_saving_audit_ipynb_leaves_git_diff_empty(lab, chromium):
    """Open audit.ipynb, let its kernel start (JupyterLab then writes the kernel's
    kernelspec and language_info into the notebook), save with Ctrl+S: the file is
    byte for byte the committed one and git status stays clean (.ipynb_checkpoints/,
    which the save writes, is ignored).  Where the kernel's Python is not the reference
    3.11.15, the save hook is what keeps language_info.version: its log line says so."""
    assert "qencode_nb.executor.save_hook | extension was successfully loaded" in lab.log_text()
    page, console = _open(chromium, lab)
    try:
        # JupyterLab marks the notebook modified when it has written the kernel's
        # metadata (the kernel runs Python 3.11.x); give it the time to.
        try:
            page.wait_for_selector(".lm-TabBar-tab.jp-mod-dirty", timeout=10_000)
        except Exception:
            pass
        _save(page, lab)
    finally:
        page.close()
    diff = git(lab.repo, "diff", "--exit-code", "--", NOTEBOOK, check=False)
    assert diff.returncode == 0, f"saving changed {NOTEBOOK}:\n{diff.stdout}"
    assert (lab.repo / "notebooks" / ".ipynb_checkpoints").is_dir(), "no checkpoint written"
    assert git(lab.repo, "status", "--porcelain").stdout == ""
    if platform.python_version() != REFERENCE_PYTHON:
        assert f"kept the committed kernel metadata of {NOTEBOOK}" in lab.log_text()
    assert console.errors == []


@pytest.mark.slow
def test_run_all_cells_in_jupyterlab_draws_the_verdict_card(lab, chromium):
    """Run > Run All Cells on audit.ipynb (bundled lih, full mode): the verdict card's
    state becomes done with its three tiers; every code cell ran, none raised (the
    saved outputs hold no error); no page or console error.  Saved afterwards, the notebook differs from the committed one only in
    outputs and execution counts, and git sees nothing else (no checkpoints, no
    virtual documents)."""
    page, console = _open(chromium, lab)
    try:
        page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
        card = page.wait_for_selector(
            ".qnb-card[data-state='done'], .qnb-card[data-state='failed']", timeout=600_000)
        state = card.get_attribute("data-state")
        assert state == "done", f"the card says the audit failed: {card.inner_text()}"
        tiers = page.locator(".qnb-card .qnb-tier")
        assert [tiers.nth(i).get_attribute("data-tier") for i in range(tiers.count())] == \
            ["procedure", "certification", "bit_identical"]
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text('(ipykernel) | Idle')",
                               timeout=60_000)
        # the frame cell's source is collapsed (its prompt hidden with it): the card sits
        # right under the parameters; every other prompt shows its execution count
        prompts = [p.strip() for p in
                   page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()]
        assert prompts.count("") == 1, prompts
        assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts if p), prompts
        _save(page, lab)
    finally:
        page.close()
    saved = json.loads((lab.repo / NOTEBOOK).read_text())
    errors = [o for c in saved["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == [], errors
    code = [c for c in saved["cells"] if c["cell_type"] == "code"]
    assert all(isinstance(c["execution_count"], int) for c in code)   # every code cell ran
    assert saved["cells"][0]["cell_type"] == "markdown"                # the title first
    committed = json.loads(git(lab.repo, "show", f"HEAD:{NOTEBOOK}").stdout)
    assert _without_outputs(saved) == _without_outputs(committed)
    assert git(lab.repo, "status", "--porcelain").stdout == f" M {NOTEBOOK}\n"
    assert console.errors == []
