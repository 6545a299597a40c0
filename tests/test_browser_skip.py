"""The browser tests on a machine without Chromium: a skip whose reason names the
Debian package and the command that installs it, a failure where ``CI`` is set
(tests/browser.py, the ``pytest_runtest_setup`` hook of conftest.py).  The lookup is
pointed at a ``PATH`` without Chromium; nothing is uninstalled."""

from __future__ import annotations

import pytest

import browser
from conftest import pytest_runtest_setup

REASON = "install Debian's package 'chromium' (sudo apt-get install chromium; .ci/run does)"


@pytest.fixture
def no_chromium(tmp_path, monkeypatch):
    """This process's environment with an empty folder as PATH and no override."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(browser.CHROMIUM_VAR, raising=False)
    monkeypatch.delenv(browser.CI_VAR, raising=False)
    return empty


class _Item:
    """A collected test as the hook sees it: its markers."""

    def __init__(self, *markers):
        self.markers = markers

    def get_closest_marker(self, name):
        return object() if name in self.markers else None


@pytest.mark.parametrize("ci", [None, ""])
def test_without_chromium_a_browser_test_skips_naming_the_package(no_chromium, monkeypatch,
                                                                  ci):
    if ci is not None:
        monkeypatch.setenv(browser.CI_VAR, ci)            # set but empty: not CI
    with pytest.raises(pytest.skip.Exception) as skipped:
        browser.require_chromium()
    assert str(skipped.value) == f"no 'chromium' on PATH: {REASON} or set " \
                                 f"${browser.CHROMIUM_VAR} to a Chromium binary"
    with pytest.raises(pytest.skip.Exception, match="sudo apt-get install chromium"):
        pytest_runtest_setup(_Item("browser", "notebook"))
    pytest_runtest_setup(_Item("notebook"))               # other tests: nothing happens


def test_under_ci_a_missing_chromium_fails(no_chromium, monkeypatch):
    monkeypatch.setenv(browser.CI_VAR, "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        pytest_runtest_setup(_Item("browser"))
    assert REASON in str(failed.value)
    assert "$CI='true': a browser test fails instead of skipping" in str(failed.value)


def test_a_chromium_on_path_or_named_is_used(no_chromium, monkeypatch, tmp_path):
    fake = no_chromium / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv(browser.CI_VAR, "true")
    assert browser.require_chromium() == str(fake)
    pytest_runtest_setup(_Item("browser"))                # found: the test runs
    other = tmp_path / "my-chromium"
    other.write_text("#!/bin/sh\n")
    monkeypatch.setenv(browser.CHROMIUM_VAR, str(other))
    assert browser.find_chromium() == str(other)
    monkeypatch.setenv(browser.CHROMIUM_VAR, str(tmp_path / "gone"))
    monkeypatch.delenv(browser.CI_VAR)
    with pytest.raises(pytest.skip.Exception, match=r"no Chromium at \$QENCODE_NB_CHROMIUM="):
        browser.require_chromium()


def test_the_lookup_reads_the_environment_it_is_given(tmp_path):
    """A pure function of the environment: an empty one has no Chromium."""
    assert browser.find_chromium({}) is None
    assert browser.find_chromium({"PATH": str(tmp_path)}) is None
    assert "sudo apt-get install chromium" in browser.missing_reason({})
