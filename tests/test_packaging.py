"""The pinned environment files agree, binder pins threads, the engine is registered."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml

from conftest import ROOT
from qencode_nb.notebook.pins import THREAD_VARS, pin_environment


def _pip_pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)$", line)
        if m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def _env_pins(path) -> dict[str, str]:
    env = yaml.safe_load(path.read_text())
    pip_list = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pins = _pip_pins(pip_list)
    for d in conda:
        if "=" in d:
            name, version = d.split("=", 1)
            pins[name.lower()] = version.lstrip("=")
    return pins


def test_environment_yml_and_lock_agree():
    env = _env_pins(ROOT / "environment.yml")
    lock = _pip_pins((ROOT / "requirements.lock").read_text().splitlines())
    shared = set(env) & set(lock)
    assert len(shared) >= 15, f"too few packages named by both: {sorted(shared)}"
    disagree = {n: (env[n], lock[n]) for n in shared if env[n] != lock[n]}
    assert not disagree
    # Every pip package of environment.yml is in the lock.
    assert set(env) - {"python"} <= set(lock)


def test_qencode_v4_pins_are_the_reference():
    want = _pip_pins((ROOT.parent / "shared" / "qencode-v4" / "requirements-v4.txt")
                     .read_text().splitlines())
    env = _env_pins(ROOT / "environment.yml")
    assert want == {"pennylane": "0.45.0", "numpy": "2.2.6", "pyscf": "2.6.2",
                    "scipy": "1.13.1", "openfermion": "1.6.1"}
    assert all(env[name] == version for name, version in want.items())
    assert env["python"] == "3.11.15"   # what every v4.4 entry records


def test_binder_environment_agrees():
    assert _env_pins(ROOT / "binder" / "environment.yml") == _env_pins(ROOT / "environment.yml")


def test_binder_start_exports_six_thread_variables_then_execs():
    out = subprocess.run(["bash", str(ROOT / "binder" / "start"), "env"],
                         capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    pins = pin_environment(1)
    assert {var: env.get(var) for var in THREAD_VARS} == {var: pins[var] for var in THREAD_VARS}


def test_papermill_engine_is_registered_under_the_entry_point_group():
    from importlib.metadata import entry_points

    eps = entry_points(group="papermill.engine")
    assert "qencode-nb" in [ep.name for ep in eps]
    from papermill.engines import papermill_engines

    from qencode_nb.executor.papermill_engine import PinnedEngine

    assert papermill_engines.get_engine("qencode-nb") is PinnedEngine


def test_importing_the_package_does_not_import_numpy():
    code = ("import sys, qencode_nb, qencode_nb.notebook.pins, qencode_nb.entry.model, "
            "qencode_nb.verdict.tiers, qencode_nb.verdict.procedure, qencode_nb.hamiltonian.check, qencode_nb.rerun.problem, "
            "qencode_nb.rerun.rerun, qencode_nb.entry.vocabulary, qencode_nb.cli;"
            "print(sorted(m for m in ('numpy','scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_console_script_is_installed():
    import shutil

    exe = shutil.which("qencode-nb", path=str(ROOT / ".venv" / "bin")) or \
        shutil.which("qencode-nb")
    assert exe, "qencode-nb console script not found"
    out = subprocess.run([exe, "audit", "--help"], capture_output=True, text=True, check=True)
    assert "--threads" in out.stdout and "--json" in out.stdout


def _readme_commands(section: str) -> list[str]:
    readme = (ROOT / "README.md").read_text()
    assert f"## {section}\n" in readme, f"README has no section {section!r}"
    text = readme.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", text, re.S)


def test_ci_runs_the_readme_test_command():
    """.ci/run runs README's test command verbatim (every tier but heavy), then README's
    host-kind pass (the hostkind tests as another host kind) as each kind this host can
    emulate (issue 51), naming each pass."""
    full, as_kind, quick = _readme_commands("Run the tests")[:3]
    assert full == '.venv/bin/python -m pytest -ra -m "not heavy" -n 2 --dist loadfile'
    assert as_kind == ('.venv/bin/python tests/as_host_kind.py amd-zen3 -- .venv/bin/python -m '
                       'pytest -ra -m "hostkind and not heavy" -n 2 --dist loadfile')
    assert quick == '.venv/bin/python -m pytest -ra -m "not slow and not notebook"'
    ci = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in ci.splitlines()]
    assert full in lines
    each = as_kind.replace("amd-zen3", '"$kind"').replace("hostkind and not heavy",
                                                           "$SELECTION")
    assert each in lines
    assert "KINDS=$(.venv/bin/python tests/as_host_kind.py --others)" in lines
    assert 'SELECTION=$(.venv/bin/python tests/as_host_kind.py --selection "$kind")' in lines
    assert 'echo "host-kind pass: the tests marked hostkind ($SELECTION) as $kind ' \
           '(emulated: tests/as_host_kind.py)"' in lines
    assert lines.index(full) < lines.index(each)
    assert "set -euo pipefail" in ci, "a failing pytest must fail CI"


def test_test_tiers_are_registered_markers_and_strict():
    import tomllib

    opts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    names = {m.split(":", 1)[0] for m in opts["markers"]}
    assert names == {"notebook", "slow", "heavy", "network", "browser", "bitlevel",
                     "hostkind"}
    assert "--strict-markers" in opts["addopts"]
    assert opts["addopts"][-2:] == ["-m", "not heavy"], "heavy stays out unless asked for"


def test_readme_is_a_front_page_whose_links_resolve():
    """Issue 25 item 2: the README is a front page (about 150 lines) whose every link into
    the repository resolves, whose commands run from ``.venv/bin/``, and whose Binder text
    holds no placeholder that leads nowhere; the five tasks are found from its top."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 170
    links = re.findall(r"\]\(([^)#\s]+)\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 15
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to missing paths: {missing}"
    for task in ("Audit one entry", "Audit a database", "Study threading and BLAS kernels",
                 "Make figures for a paper", "Audit your own result"):
        assert re.search(rf"\*\*\d\. {task}\.\*\*", readme), task
    commands = [line for block in re.findall(r"```bash\n(.*?)\n```", readme, re.S)
                for line in block.splitlines()]
    bare = [c for c in commands if c.split()[0] in ("qencode-nb", "papermill", "pytest",
                                                     "python", "jupyter")]
    assert not bare, f"commands not run from .venv/bin/: {bare}"
    assert "OWNER" not in readme and "../shared/DESIGN.md" not in readme


def test_the_repository_does_not_point_outside_itself():
    """Issue 25: a clone or Binder has no ../shared/DESIGN.md or ENGINE.md; the definitions
    live in docs/explanations/, and no tracked file sends a reader to those two files."""
    out = subprocess.run(["git", "grep", "-n", "-e", "DESIGN.md", "-e", "ENGINE.md", "--",
                          ":!tests/test_packaging.py"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 1 and out.stdout == "", out.stdout
