"""Regenerate the example runs in this folder: the defaults of ``notebooks/figures.ipynb``.

From the repository root, with the README's virtual environment::

    .venv/bin/python data/example-runs/regenerate.py

It runs the ``qencode-nb`` commands of :data:`COMMANDS` for real (about 4 minutes on two
cores), each into its own folder under a temporary directory, from the repository root:
a sweep of the bundled entries (``data/qencode-v4``: LiH, H2, H4, H6) re-run on the fast
engine, and the threads, kernels, optimizers and environments studies of the cheapest
bundled entry (``h2``: H2 JW/UCCSD, one parameter, 20 COBYLA evaluations).  The
environments study's second package stack is made first (:data:`STACK_COMMAND`: an
overlay of this environment with SciPy 1.16.3, whose COBYLA is the PRIMA rewrite) in a
private stacks folder and Jupyter path that are deleted afterwards; pip fetches that
one wheel from the package index (about 35 MB).

Then it keeps only what ``figures.ipynb`` reads (:data:`KEPT`): the sweep's executed
audit notebooks with their record outputs only (the displays, the card's HTML and the
figures are dropped) and every absolute path of this machine shortened by
:func:`qencode_nb.paths.scrub` (``…/qencode-nb/data/…``), their ``<name>.outcome.json``
(the wall time), the run manifest and ``summary.csv``; of each study its CSV tables (the
figures read no more; their ``notebook`` column names notebooks that are not kept).
It replaces the run folders here with them and writes ``manifest.json`` (the commands,
the host, :func:`content_key` and every kept file's SHA-256) and ``README.md``.

``tests/readout/test_example_runs.py`` recomputes :func:`content_key` and the files'
SHA-256 and fails, naming this command, when the examples are stale.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest.json"
README = HERE / "README.md"
#: The command that regenerates the examples (from the repository root).
COMMAND = ".venv/bin/python data/example-runs/regenerate.py"
#: Bump when the manifest's layout changes.
FORMAT = 1

#: The bundled entry the studies re-run: the cheapest (H2 JW/UCCSD, ~5-10 s a run).
STUDY_ENTRY = "h2"
#: The environments study's second stack: (name, the one requirement overlaid).
OTHER_STACK = ("scipy116", "scipy==1.16.3")

#: What runs, in order: ``(folder, qencode-nb arguments)``; ``{out}`` is the folder.
COMMANDS = (
    ("sweep", ("sweep", "data/qencode-v4", "--mode", "rerun", "--engine", "fast",
               "--out", "{out}")),
    ("threads", ("study", "threads", STUDY_ENTRY, "--threads", "1", "2", "--repeats", "2",
                 "--out", "{out}")),
    ("kernels", ("study", "kernels", STUDY_ENTRY, "--coretypes", "Prescott", "Haswell",
                 "--out", "{out}")),
    ("optimizers", ("study", "optimizers", STUDY_ENTRY, "--out", "{out}")),
    ("environments", ("study", "environments", STUDY_ENTRY, "--kernelspecs", "python3",
                      f"qencode-nb-{OTHER_STACK[0]}", "--out", "{out}")),
)
#: The stack made before the environments study; ``{prefix}`` is the private Jupyter prefix.
STACK_COMMAND = ("stack", "create", OTHER_STACK[0], "--overlay", "--requirements",
                 OTHER_STACK[1], "--jupyter-prefix", "{prefix}")

#: The files kept of each folder (glob patterns): what notebooks/figures.ipynb reads
#: (the sweep's audit notebooks through qencode_nb.readout.collect.audit_table, which also
#: reads <name>.outcome.json and the run manifest qencode-nb-runs.json; each study's CSV),
#: plus the tables the same command wrote beside them.
KEPT = {
    "sweep": ("*.ipynb", "*.outcome.json", "qencode-nb-runs.json", "summary.csv"),
    "threads": ("threads.csv",),
    "kernels": ("kernels.csv",),
    "optimizers": ("optimizers.csv",),
    "environments": ("environments.csv", "environments_versions.csv",
                     "environments_differences.csv"),
}

#: The input files the commands read, relative to the repository root: the sweep's
#: entries (every QEncode JSON of data/qencode-v4, which also completes ``h2``) and the
#: studies' params file.
INPUT_GLOBS = ("data/qencode-v4/*.json", f"params/{STUDY_ENTRY}.yaml")


def sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def project_version() -> str:
    """The version ``pyproject.toml`` states."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def content_key() -> dict:
    """What decides the examples' content and shape, as JSON-ready values.

    ``version``: the project's version; ``commands``: what this script runs
    (:data:`COMMANDS`, :data:`STACK_COMMAND`) and keeps (:data:`KEPT`); ``inputs``:
    the SHA-256 of every input file (:data:`INPUT_GLOBS`); ``collector``: the record
    names and columns the readers of figures.ipynb use
    (:data:`qencode_nb.readout.collect.READ_RECORDS`, ``COPIED_RECORDS``,
    ``AUDIT_COLUMNS``; the study rows' :data:`qencode_nb.readout.run_rows.READ_RECORDS`);
    ``study_columns``: each study table's columns (the CSV header)."""
    from qencode_nb.readout import collect, run_rows
    from qencode_nb.studies.blas import KERNELS_COLUMNS, THREADS_COLUMNS
    from qencode_nb.studies.environments import ENVIRONMENTS_COLUMNS
    from qencode_nb.studies.optimizers import OPTIMIZERS_COLUMNS

    inputs = sorted({p for pattern in INPUT_GLOBS for p in ROOT.glob(pattern)})
    return {
        "version": project_version(),
        "commands": {"runs": [[folder, *args] for folder, args in COMMANDS],
                     "stack": list(STACK_COMMAND),
                     "kept": {k: list(v) for k, v in KEPT.items()}},
        "inputs": {p.relative_to(ROOT).as_posix(): sha256(p) for p in inputs},
        "collector": {"audit_read_records": list(collect.READ_RECORDS),
                      "audit_copied_records": list(collect.COPIED_RECORDS),
                      "audit_columns": list(collect.AUDIT_COLUMNS),
                      "study_read_records": list(run_rows.READ_RECORDS)},
        "study_columns": {"threads": list(THREADS_COLUMNS), "kernels": list(KERNELS_COLUMNS),
                          "optimizers": list(OPTIMIZERS_COLUMNS),
                          "environments": list(ENVIRONMENTS_COLUMNS)},
    }


def kept_files(folder: Path = HERE) -> dict[str, str]:
    """``{path relative to folder: SHA-256}`` of every file in the run folders (:data:`KEPT`'s
    keys), whatever its name: the listing ``manifest.json`` holds."""
    return {p.relative_to(folder).as_posix(): sha256(p)
            for name in KEPT for p in sorted((folder / name).rglob("*")) if p.is_file()}


def stale_reasons(doc: dict, key: dict, files: dict[str, str]) -> list[str]:
    """Why the examples that ``doc`` (``manifest.json``) describes are stale against the
    current ``key`` (:func:`content_key`) and ``files`` (:func:`kept_files`): one line per
    part of the key that changed (naming the entries that differ) and per file added,
    removed or edited since the script wrote them; empty when they are current."""
    reasons = []
    if doc.get("format") != FORMAT:
        reasons.append(f"manifest format {doc.get('format')!r}, this script writes {FORMAT}")
    old = doc.get("key") or {}
    for part in sorted(set(old) | set(key)):
        before, now = old.get(part), key.get(part)
        if before == now:
            continue
        if isinstance(before, dict) and isinstance(now, dict):
            changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
            reasons.append(f"{part} changed: {', '.join(changed)}")
        else:
            reasons.append(f"{part} changed: {before!r} -> {now!r}")
    listed = doc.get("files") or {}
    for name in sorted(set(listed) | set(files)):
        if name not in files:
            reasons.append(f"{name}: listed in manifest.json, missing")
        elif name not in listed:
            reasons.append(f"{name}: not written by the script (not in manifest.json)")
        elif listed[name] != files[name]:
            reasons.append(f"{name}: edited after the script wrote it (SHA-256 differs)")
    return reasons


def _qencode_nb(args, cwd: Path, env: dict) -> None:
    """Run ``qencode-nb ARGS`` (this Python's) and stop, with its output's tail, on failure."""
    cmd = [sys.executable, "-m", "qencode_nb.cli", *args]
    print("$ qencode-nb " + " ".join(args), flush=True)
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"qencode-nb {' '.join(args)}: exit status {proc.returncode}\n"
                 f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def run_all(work: Path) -> dict[str, Path]:
    """Run the stack and every command into ``work``; return ``{folder: its path}``."""
    env = dict(os.environ)
    prefix = work / "jupyter"
    env["QENCODE_NB_STACKS"] = str(work / "stacks")
    env["JUPYTER_PATH"] = os.pathsep.join(
        [str(prefix / "share" / "jupyter"), *filter(None, [env.get("JUPYTER_PATH")])])
    _qencode_nb([a.format(prefix=prefix) for a in STACK_COMMAND], ROOT, env)
    folders = {}
    for folder, args in COMMANDS:
        folders[folder] = work / folder
        _qencode_nb([a.format(out=work / folder) for a in args], ROOT, env)
    return folders


def slim_notebook(path: Path, ran_in: Path) -> None:
    """Keep an executed audit notebook's record outputs only (its displays dropped), shorten
    every absolute path in it (records, cell sources, papermill's metadata) by
    :func:`qencode_nb.paths.scrub` (the folder it ran in, ``ran_in``, as ``…/<its name>``,
    this checkout as ``…/qencode-nb``), and write it as compact JSON."""
    from qencode_nb.notebook.record import RECORD_MIMETYPE
    from qencode_nb.paths import known_folders, scrub, scrub_value

    folders = known_folders(ran_in)
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        source = cell.get("source", "")
        cell["source"] = scrub("".join(source) if isinstance(source, list) else source,
                               folders)
        if cell.get("cell_type") == "code":
            cell["outputs"] = [
                {"output_type": "display_data", "metadata": {},
                 "data": {RECORD_MIMETYPE: scrub_value(o["data"][RECORD_MIMETYPE], folders)}}
                for o in cell.get("outputs", []) if RECORD_MIMETYPE in o.get("data", {})]
    nb["metadata"]["papermill"] = scrub_value(nb["metadata"].get("papermill", {}), folders)
    path.write_text(json.dumps(nb, ensure_ascii=False, separators=(",", ":")) + "\n",
                    encoding="utf-8")


def keep(folders: dict[str, Path], stage: Path) -> None:
    """Copy :data:`KEPT` of each run folder to ``stage/<folder>``, slimming the notebooks."""
    for name, src in folders.items():
        (stage / name).mkdir(parents=True)
        for pattern in KEPT[name]:
            for path in sorted(src.glob(pattern)):
                shutil.copy2(path, stage / name / path.name)
                if path.suffix == ".ipynb":
                    slim_notebook(stage / name / path.name, src)


def host() -> dict:
    """The host the examples ran on: CPU model, AVX-512 or not, cores, system, and the
    kernel profile the sweep's audits recorded (``blas_profile``)."""
    from qencode_nb.notebook.record import read_records

    model, flags = "unknown", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    profiles = sorted({str((read_records(p).get("blas_profile") or {}).get("used"))
                       for p in (HERE / "sweep").glob("*.ipynb")})
    return {"cpu": model, "avx512f": "avx512f" in flags, "cores": os.cpu_count(),
            "system": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "kernel_profiles": profiles}


def git_commit() -> str:
    """The checkout's commit, ``+dirty`` when its files (this folder's apart) differ from it."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    changed = git("status", "--porcelain", "--", ".", f":!{HERE.relative_to(ROOT)}")
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if changed else "")


def runs_of(folder: str) -> dict:
    """``{"runs": N, "done": M}`` of one kept folder (its notebooks, or its CSV's rows)."""
    import csv

    if folder == "sweep":
        rows = [json.loads(p.read_text()) for p in (HERE / folder).glob("*.outcome.json")]
    else:
        with open(HERE / folder / f"{folder}.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    return {"runs": len(rows), "done": sum(r.get("status") == "done" for r in rows)}


def write_manifest(started: str, seconds: float) -> dict:
    """Write ``manifest.json`` (returned) for the folders now here."""
    doc = {"format": FORMAT, "made_by": COMMAND, "made_utc": started,
           "seconds": round(seconds, 1), "commit": git_commit(), "host": host(),
           "runs": {name: runs_of(name) for name in KEPT},
           "kept": "sweep: audit notebooks with their record outputs only, absolute "
                   "paths shortened (qencode_nb.paths.scrub); studies: their CSV tables",
           "key": content_key(), "files": kept_files()}
    MANIFEST.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc


def write_readme(doc: dict) -> None:
    """Write ``README.md``: what these are, what made them, where and when."""
    h = doc["host"]
    rows = "\n".join(
        f"| `{name}/` | `qencode-nb {' '.join(a.format(out=f'<tmp>/{name}') for a in args)}` "
        f"| {doc['runs'][name]['done']} of {doc['runs'][name]['runs']} done | "
        f"{', '.join(f'`{k}`' for k in KEPT[name])} |" for name, args in COMMANDS)
    size = sum((HERE / p).stat().st_size for p in doc["files"])
    README.write_text(f"""# Example runs: examples, not results

Small runs of the bundled entries, so that `notebooks/figures.ipynb` draws every figure
with its defaults in a clone alone (on Binder, for instance). They show what each figure
looks like; they are **not results**: one host, the cheapest bundled entry for the
studies (H2 JW/UCCSD: one parameter, so threads and kernels give the same bits), and the
sweep re-run on the fast engine (other bits than the recorded engine; tier 1 reads
`fail` for that backend deviation). Point the notebook at your own runs instead
(`-p sweep_dir runs/db -p threads_dir runs/threads ...`, README task 4).

Made by this command, from the repository root; it runs every command below for real
and keeps what the figures read:

    {COMMAND}

- date: {doc['made_utc']} ({doc['seconds']:.0f} s)
- code: qencode-nb {doc['key']['version']}, commit {doc['commit']}
- host: {h['cpu']}, {'with' if h['avx512f'] else 'without'} AVX-512, {h['cores']} cores
- system: {h['system']}, Python {h['python']}
- kernel profile of the audits: {', '.join(h['kernel_profiles'])}
- first, in a private stacks folder deleted afterwards:
  `qencode-nb {' '.join(STACK_COMMAND).format(prefix='<tmp>/jupyter')}`

| folder | command | runs | kept |
|---|---|---|---|
{rows}

The sweep's audit notebooks keep their record outputs only (the card, tables and figure
displays are dropped) and every absolute path of the host is shortened
(`qencode_nb.paths.scrub`); `qencode-nb show data/example-runs/sweep` reads them. Of
each study only its CSV tables are kept: their `notebook` column names notebooks that
are not here. {len(doc['files'])} files, {size / 1024:.0f} KiB.

`manifest.json` lists the commands, the host, what decides the examples' content (the
project's version, the commands, the bundled inputs' SHA-256, the record names and
columns the collectors read) and every file's SHA-256.
`tests/readout/test_example_runs.py` fails when any of it no longer matches, or when
the current collectors cannot draw them; run the command above to regenerate them.

The entries are QEncode's (MIT): `data/qencode-v4/LICENSE` and `NOTICE`.
""", encoding="utf-8")


def main() -> None:
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    t0 = _dt.datetime.now().timestamp()
    with tempfile.TemporaryDirectory(prefix="qnb-examples-") as tmp:
        work = Path(tmp)
        folders = run_all(work / "runs")
        keep(folders, work / "kept")
        for name in KEPT:
            shutil.rmtree(HERE / name, ignore_errors=True)
            shutil.move(str(work / "kept" / name), HERE / name)
    doc = write_manifest(started, _dt.datetime.now().timestamp() - t0)
    write_readme(doc)
    size = sum((HERE / p).stat().st_size for p in doc["files"])
    print(f"{HERE.relative_to(ROOT)}: {len(doc['files'])} files, {size / 1024:.0f} KiB; "
          f"runs {json.dumps(doc['runs'])}")


if __name__ == "__main__":
    main()
