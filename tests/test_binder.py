"""What Binder builds from the repository, read from repo2docker without Docker.

``repo2docker --no-build --debug`` on a clean copy of the checkout (tests/checkout.py)
prints the Dockerfile Binder would build and logs which buildpack and Python it picked;
it needs no Docker daemon (``DOCKER_HOST`` points nowhere here to prove it).  The image
must come from ``binder/`` alone: the conda environment of ``binder/environment.yml``
(not the top-level ``environment.yml``), then ``binder/postBuild`` on the copied
repository, and ``binder/start`` as the entrypoint that wraps the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkout import copy_checkout

REPO2DOCKER = Path(sys.executable).with_name("repo2docker")


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """(Dockerfile, log) of ``repo2docker --no-build --debug`` on a copy of the checkout."""
    repo = copy_checkout(tmp_path_factory.mktemp("binder") / "repo")
    env = dict(os.environ, DOCKER_HOST="unix:///nonexistent/docker.sock")
    proc = subprocess.run([str(REPO2DOCKER), "--no-build", "--debug", str(repo)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_repo2docker_needs_no_docker_daemon(dry_run):
    dockerfile, log = dry_run
    assert "Using local repo" in log
    assert dockerfile.lstrip().startswith("FROM ")


def test_the_conda_environment_is_binder_environment_yml(dry_run):
    dockerfile, log = dry_run
    # repo2docker reads the Python from binder/environment.yml (python=3.11.15).
    assert "Building conda environment for python=3.11" in log
    lines = _lines(dockerfile)
    assert "COPY --chown=0:0 src/binder/environment.yml ${REPO_DIR}/binder/environment.yml" in lines
    assert any("env update -p ${NB_PYTHON_PREFIX} --file \"binder/environment.yml\"" in line
               for line in lines)
    # binder/ hides the top-level files: neither environment.yml nor a pip install of them.
    assert "src/environment.yml" not in dockerfile
    assert "requirements.txt" not in dockerfile and "requirements.lock" not in dockerfile


def test_postbuild_runs_on_the_copied_repository_and_start_is_the_entrypoint(dry_run):
    dockerfile, _ = dry_run
    lines = _lines(dockerfile)
    copy = lines.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    postbuild = lines.index("RUN ./binder/postBuild")
    assert copy < postbuild, "postBuild (pip install -e .) needs the repository copied first"
    assert 'ENV R2D_ENTRYPOINT="${REPO_DIR}/binder/start"' in lines
    assert lines.index('RUN chmod +x "${REPO_DIR}/binder/start"') > postbuild
