"""QEncode's own generator for an entry: its tree at the recorded commit and its arguments.

The generator study (:mod:`qencode_nb.studies.generator`) runs QEncode's public
``scripts/generate_entry_v4.py`` at the commit an entry records
(``provenance.tool_versions.git_commit``) as the oracle of a miss (issue 59).  This module
decides, without running anything:

- **where the tree is** (:func:`generator_tree`): ``--generator DIR`` is a folder of
  ``<commit>/`` trees (as ``../shared/qencode-history/generator/``), one tree itself, or a
  git checkout of the public repository, from which the commit's files are exported with
  ``git archive`` into a cache folder (the checkout is never changed);
- **the command line** (:func:`generator_arguments`): every value from the entry, in the
  generator's own spelling (``hea`` is ``--ansatz-type hardware_efficient``, ``l-bfgs-b``
  is ``--optimizer bfgs``), and ``--dry-run`` (the generator then writes no file and skips
  its git and environment guard; the study keeps what it assembled).  A value the
  generator's command line cannot express is refused, naming the entry's field, before
  any run: the generator takes its geometry, charge and spin from its own molecule
  catalog (``molecules_v4.json`` of the tree), so an entry whose geometry is not the
  catalog's cannot be made by it.

QEncode schema 4.0.0 entries are made by ``generate_entry_v4.py``, schema 3.0.0 ones (v3,
v3.1) by ``generate_entry_v3.py``, which takes fewer arguments (:func:`_v3_arguments`);
the v1 and v2 (Qiskit-era) schemas are refused by name.
Importing this module imports no numpy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from qencode_nb.errors import EntryError, ParameterError

#: The generator script per QEncode schema version (the entries' ``schema_version``).
SCRIPTS = {"4.0.0": "scripts/generate_entry_v4.py", "3.0.0": "scripts/generate_entry_v3.py"}

#: The molecule catalog each generator reads (its ``load_molecule``).
CATALOGS = {"4.0.0": "molecules_v4.json", "3.0.0": "molecules_v3.json"}

#: What ``generate_entry_v3.py`` (commits 1b8677c, dff47f8) can be told: its mappings,
#: ansätze, and the values it fixes (COBYLA on ``default.qubit`` from HF orbitals, early
#: stop as its code has it); an entry recording anything else was not made by it.
V3_MAPPINGS = ("jordan_wigner", "bravyi_kitaev")
V3_FIXED = {"orbital_optimization": ("problem.orbital_optimization", "hf"),
            "backend": ("run_config.backend_type", "default.qubit")}

#: The generator's spelling of the ansatz (``--ansatz-type`` choices of
#: ``generate_entry_v4.py`` at e1f44cd and 82b94f8).
ANSATZ_FLAGS = {"hea": "hardware_efficient", "uccsd": "uccsd", "adapt": "adapt"}

#: The generator's spelling of the optimiser (``--optimizer`` choices: cobyla, adam, bfgs;
#: ``bfgs`` runs scipy's L-BFGS-B).
OPTIMIZER_FLAGS = {"cobyla": "cobyla", "l-bfgs-b": "bfgs", "adam": "adam"}

#: The environment variable naming the default ``--generator`` folder.
GENERATOR_ENV = "QENCODE_NB_GENERATOR"


@dataclass(frozen=True)
class GeneratorRun:
    """How the generator is run for one entry.

    Attributes:
        commit: the recorded commit (``provenance.tool_versions.git_commit``).
        tree: the generator tree at that commit (holds ``scripts/`` and the catalogs).
        script: the generator script in ``tree``.
        argv: its arguments (without the script), ``--dry-run`` included.
    """

    commit: str
    tree: Path
    script: Path
    argv: tuple

    def command_text(self) -> str:
        """The command as a user would type it in the tree."""
        import shlex

        return " ".join(shlex.quote(a) for a in
                        ["python", str(self.script.relative_to(self.tree)), *self.argv])


def default_generator_dir() -> Path | None:
    """The ``--generator`` default: ``$QENCODE_NB_GENERATOR``, else the shared history's
    ``generator/`` folder beside the checkout (``../shared/qencode-history/generator``)
    where it exists, else the trees ``data fetch --generator`` fetched
    (:func:`qencode_nb.studies.generator_fetch.cache_dir`) where that folder exists, else
    None."""
    import os

    from qencode_nb.paths import ROOT

    from qencode_nb.studies.generator_fetch import cache_dir

    given = os.environ.get(GENERATOR_ENV)
    if given:
        return Path(given)
    for folder in (ROOT.parent / "shared" / "qencode-history" / "generator", cache_dir()):
        if folder.is_dir():
            return folder
    return None


def generator_tree(commit: str, source=None, cache=None) -> Path:
    """The generator tree at ``commit``.

    Args:
        commit: the entry's ``provenance.tool_versions.git_commit`` (7 to 40 hex digits).
        source: a folder of ``<commit>/`` trees (a tree's folder name is a prefix of the
            commit or the commit a prefix of it), a tree itself (it has ``scripts/``), or a
            git checkout (the commit's files exported with ``git archive``); None:
            :func:`default_generator_dir`.
        cache: where exported trees are kept (default ``<stacks root>/../generator``).

    Raises:
        ParameterError: ``generator`` not given and no default, not a folder, no tree of
            the commit in it, or a checkout without the commit (the message names the
            commit and what the folder holds).
    """
    import re

    if not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise EntryError(f"{commit!r} is not a commit; accepted: 7 to 40 hex digits",
                         field="provenance.tool_versions.git_commit")
    root = Path(source) if source is not None else default_generator_dir()
    if root is None:
        raise ParameterError("not given and no default; accepted: --generator DIR "
                             f"(a folder of <commit>/ trees, one tree or a git checkout), or "
                             f"${GENERATOR_ENV}", parameter="generator")
    if not root.is_dir():
        raise ParameterError(f"{str(root)!r} is not a folder; accepted: a folder of "
                             "<commit>/ trees, one tree or a git checkout", parameter="generator")
    if (root / ".git").exists():
        return _exported(root, commit, cache)
    if (root / "scripts").is_dir():
        return root
    trees = sorted(p for p in root.iterdir() if p.is_dir())
    for tree in trees:
        if tree.name.startswith(commit) or commit.startswith(tree.name):
            return tree
    held = [t.name for t in trees if (t / "scripts").is_dir()]
    raise ParameterError(f"{str(root)!r} holds no tree of commit {commit}; its trees (folders "
                         "with scripts/): " + (", ".join(held[:8]) + (
                             f" and {len(held) - 8} more" if len(held) > 8 else "")
                             if held else "none"), parameter="generator")


def _exported(checkout: Path, commit: str, cache) -> Path:
    """``git archive`` of ``commit`` from ``checkout`` unpacked under ``cache`` (once)."""
    import io
    import subprocess
    import tarfile

    from qencode_nb.paths import stacks_root

    folder = Path(cache) if cache is not None else stacks_root().parent / "generator"
    done = subprocess.run(["git", "-C", str(checkout), "archive", "--format=tar", commit],
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise ParameterError(f"{str(checkout)!r}: git cannot export commit {commit}: "
                             f"{done.stderr.decode(errors='replace').strip()[:200]}",
                             parameter="generator")
    tree = folder / commit
    if not (tree / "scripts").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
            tar.extractall(tree, filter="data")
    return tree


def catalog_molecule(tree: Path, name: str, catalog_file: str = "molecules_v4.json") -> dict | None:
    """The generator's catalog record of molecule ``name`` (``catalog_file`` of the tree,
    :data:`CATALOGS`; the v4 generator falls back to ``molecules_v3.json`` where its own is
    missing, as its ``load_molecule`` does), matched case-insensitively, or None."""
    files = [catalog_file] + (["molecules_v3.json"] if catalog_file == "molecules_v4.json" else [])
    for file in files:
        path = tree / file
        if path.is_file():
            catalog = json.loads(path.read_text(encoding="utf-8"))
            for raw in catalog.get("entries", []):
                if str(raw.get("molecule", "")).upper() == str(name).upper():
                    return raw
            return None
    return None


def _same_geometry(a: str, b: str) -> bool:
    """Two ``"El x y z; ..."`` geometries (Angstrom) equal atom by atom, as numbers."""
    def atoms(text):
        return [tuple(part.split()) for part in str(text).split(";") if part.strip()]

    left, right = atoms(a), atoms(b)
    if len(left) != len(right):
        return False
    for x, y in zip(left, right):
        if len(x) != len(y) or x[0] != y[0]:
            return False
        try:
            if any(float(u) != float(v) for u, v in zip(x[1:], y[1:])):
                return False
        except ValueError:
            return False
    return True


def generator_arguments(entry, tree: Path) -> tuple:
    """The generator's arguments that re-make ``entry`` (module docstring).

    Args:
        entry: a :class:`~qencode_nb.entry.model.Entry` of QEncode schema 4.0.0.
        tree: the generator tree (:func:`generator_tree`).

    Raises:
        ParameterError: the entry's schema has no generator here (names
            ``schema_version`` and the accepted ones); its molecule is not in the tree's
            catalog (``problem.molecule``), its geometry, charge or spin are not the
            catalog's (the field, both values), or its ansatz or optimiser has no
            generator flag (the field, the value, the accepted ones).
    """
    if entry.schema_version not in SCRIPTS:
        raise EntryError(f"{entry.schema_version!r}: no generator run is derived for this "
                         "schema; accepted: " + ", ".join(SCRIPTS), field="schema_version",
                         path=entry.source)
    catalog = CATALOGS[entry.schema_version]
    mol = catalog_molecule(tree, entry.name, catalog)
    if mol is None:
        raise EntryError(f"{entry.name!r} is not in the generator's catalog "
                         f"({tree.name}/{catalog}): it cannot make this entry",
                         field="problem.molecule", path=entry.source)
    geometry = mol.get("geometry", mol.get("geometry_angstrom"))
    if not _same_geometry(geometry, entry.geometry):
        raise EntryError(f"{entry.geometry!r} is not the generator catalog's {geometry!r}: "
                         "the generator takes no geometry argument",
                         field="problem.geometry", path=entry.source)
    for field, ours, theirs in (("charge", entry.charge, mol.get("charge", 0)),
                                ("spin", entry.spin, mol.get("spin", 0))):
        if int(ours) != int(theirs):
            raise EntryError(f"{ours!r} is not the generator catalog's {theirs!r}: the "
                             "generator takes no such argument", field=f"problem.{field}",
                             path=entry.source)
    if entry.schema_version == "3.0.0":
        return _v3_arguments(entry, mol)
    if entry.ansatz not in ANSATZ_FLAGS:
        raise EntryError(f"{entry.ansatz!r} has no generator flag; accepted: "
                         + ", ".join(ANSATZ_FLAGS), field="encoding.ansatz", path=entry.source)
    opt = entry.optimizer.name if entry.ansatz != "adapt" else "cobyla"
    if opt not in OPTIMIZER_FLAGS:
        raise EntryError(f"{entry.optimizer.name!r} has no generator flag; accepted: "
                         + ", ".join(OPTIMIZER_FLAGS), field="run_config.optimizer",
                         path=entry.source)
    ne, no = entry.active_space
    argv = ["--molecule", str(mol["molecule"]), "--basis", entry.basis,
            "--mapping", entry.mapping, "--ansatz-type", ANSATZ_FLAGS[entry.ansatz],
            "--orbital-opt", entry.orbital_optimization, "--active-space", f"{ne},{no}",
            "--max-iter", str(entry.max_iterations),
            "--multistart", str(entry.restarts_requested), "--seed", str(entry.seed),
            "--backend", entry.backend, "--optimizer", OPTIMIZER_FLAGS[opt]]
    if entry.ansatz == "hea":
        argv += ["--reps", str(entry.reps)]
    if opt == "adam" and entry.optimizer.learning_rate is not None:
        argv += ["--learning-rate", repr(float(entry.optimizer.learning_rate))]
    if entry.ansatz == "adapt":
        argv += _adapt_arguments(entry)
    if entry.hamiltonian_source == "pennylane_native":
        argv.append("--use-pennylane-native")
    if not entry.tapering_sectors:
        argv.append("--no-taper")
    if not entry.early_stop:
        argv.append("--no-early-stop")
    return tuple(argv) + ("--dry-run", "--no-colour")


def _v3_arguments(entry, mol: dict) -> tuple:
    """``generate_entry_v3.py``'s arguments: it takes the molecule, basis, mapping (JW or
    BK), ansatz (UCCSD or HEA and its repetitions), active space, iterations, restarts,
    seed and ``--no-taper``; a value it fixes otherwise is refused naming the field."""
    for attr, (field, fixed) in V3_FIXED.items():
        if getattr(entry, attr) != fixed:
            raise EntryError(f"{getattr(entry, attr)!r}: the v3 generator runs {fixed!r} "
                             "only", field=field, path=entry.source)
    if entry.mapping not in V3_MAPPINGS:
        raise EntryError(f"{entry.mapping!r} has no v3 generator flag; accepted: "
                         + ", ".join(V3_MAPPINGS), field="encoding.mapping", path=entry.source)
    if entry.ansatz not in ("hea", "uccsd") or entry.optimizer.name != "cobyla":
        what = entry.ansatz if entry.ansatz not in ("hea", "uccsd") else entry.optimizer.name
        raise EntryError(f"{what!r}: the v3 generator runs UCCSD or HEA with COBYLA only",
                         field="encoding.ansatz" if what == entry.ansatz
                         else "run_config.optimizer", path=entry.source)
    ne, no = entry.active_space
    argv = ["--molecule", str(mol["molecule"]), "--basis", entry.basis,
            "--mapping", entry.mapping, "--ansatz-type", ANSATZ_FLAGS[entry.ansatz],
            "--active-space", f"{ne},{no}", "--max-iter", str(entry.max_iterations),
            "--multistart", str(entry.restarts_requested), "--seed", str(entry.seed)]
    if entry.ansatz == "hea":
        argv += ["--ansatz-reps", str(entry.reps)]
    if not entry.tapering_sectors:
        argv.append("--no-taper")
    return tuple(argv) + ("--dry-run", "--no-colour")


def _adapt_arguments(entry) -> list:
    """The ADAPT flags: threshold and operator cap as recorded, the recorded engine and
    inner optimiser (the generator's ``auto`` where the entry records no engine)."""
    adapt = entry.adapt or {}
    argv = []
    if adapt.get("gradient_threshold") is not None:
        argv += ["--adapt-threshold", repr(float(adapt["gradient_threshold"]))]
    if adapt.get("max_operators") is not None:
        argv += ["--adapt-max-ops", str(int(adapt["max_operators"]))]
    if entry.optimizer.engine in ("qnode", "statevector"):
        argv += ["--adapt-engine", entry.optimizer.engine]
    if entry.optimizer.inner in ("cobyla", "l-bfgs-b"):
        argv += ["--adapt-inner", "cobyla" if entry.optimizer.inner == "cobyla" else "bfgs"]
    return argv


def generator_run(entry, source=None, cache=None) -> GeneratorRun:
    """The tree, script and arguments of ``entry``'s generator run (raises as
    :func:`generator_tree` and :func:`generator_arguments` do; a tree without the script:
    ParameterError naming it)."""
    if entry.schema_version not in SCRIPTS:       # before the tree: a v1 records no commit
        raise EntryError(f"{entry.schema_version!r}: no generator run is derived for this "
                         "schema; accepted: " + ", ".join(SCRIPTS), field="schema_version",
                         path=entry.source)
    commit = (entry.tool_versions or {}).get("git_commit")
    tree = generator_tree(commit, source, cache)
    script = tree / SCRIPTS.get(entry.schema_version, SCRIPTS["4.0.0"])
    argv = generator_arguments(entry, tree)
    if not script.is_file():
        raise ParameterError(f"{str(tree)!r} has no {script.name}", parameter="generator")
    return GeneratorRun(commit=commit, tree=tree, script=script, argv=argv)
