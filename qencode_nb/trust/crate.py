"""The provenance crate of a folder of executed audits: ``ro-crate-metadata.json``
following Process Run Crate 0.6 (:data:`PROFILE`), written with the ``rocrate`` library.

The folder is the crate (RO-Crate 1.1, the version the profile extends, with the
workflow-run context for ``environment`` and ``sha256``).  For every audit notebook
``NAME.ipynb`` one ``CreateAction`` ``#audit-NAME``:

- ``object``: the entry file the audit read (``entry_source``), copied into the crate as
  ``entries/<file name>`` (``alternateName``: where it was read from, shown from a folder
  the reader can place, ``…/db/<file name>``) with its ``sha256``,
  only when its SHA-256 is the one the audit recorded (:func:`entry_file_check`: the
  ``integrity`` record's ``file_sha256``, or for an older audit of a QEncode JSON the
  hash by QEncode's rule it recomputed).  A notebook from elsewhere cannot make the crate
  publish another file: one that does not match is left out, described as a
  ``CreativeWork`` saying why, and a :class:`CrateWarning` names it (``qencode-nb crate``
  prints it);
- ``result``: the executed notebook (``sha256``) and the verdict line and the three
  tiers as ``PropertyValue`` entities;
- ``instrument``: the toolkit (``SoftwareApplication`` qencode-nb with its
  ``softwareVersion`` and, as ``softwareRequirements``, a ``SoftwareApplication`` per
  package version of the ``provenance`` record's ``installed``), the audit notebook
  (copied as ``instruments/audit.ipynb``: the toolkit's ``notebooks/audit.ipynb`` when
  the crate is written, with its ``sha256``), the CPU (``provenance.cpu``, with the
  platform and the OpenBLAS kernels it can run) and every BLAS pool threadpoolctl
  reported (``SoftwareApplication``: library as ``name``, ``softwareVersion``, and as
  ``additionalProperty`` its ``architecture`` (the BLAS kernel), ``threads``,
  ``filepath``, ``threading_layer``, ``user_api``);
- ``environment``: the pins as ``PropertyValue`` entities, the thread variables of
  ``provenance.blas.env`` and ``OPENBLAS_CORETYPE`` when one was set;
- ``startTime`` / ``endTime`` (papermill's), ``actionStatus`` (completed when the run
  recorded ``done``, else failed with ``error``).

With a sweep's ``summary.csv`` one more ``CreateAction`` ``#summary``: the audit
notebooks as ``object``, ``summary.csv`` (and ``margins.png`` / ``.pdf`` / ``.svg`` when
there) as ``result``.  Attestations beside a notebook (:mod:`qencode_nb.trust.attestation`) are
listed as parts ``about`` their notebook.

No absolute path of the machine is written (a crate is published as it is): every path
the notebooks recorded (the entry file, papermill's parameters, a BLAS library's
``filepath``, an error) is shortened by :func:`qencode_nb.paths.scrub` from the folders
:func:`qencode_nb.paths.known_folders` knows (the crate's folder, the entries' folders,
the checkout, the Python environment, the home folder).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from qencode_nb.errors import CrateError, CrateWarning
from qencode_nb.notebook.stages import failure_line

#: The profile the crate conforms to.
PROFILE = "https://w3id.org/ro/wfrun/process/0.6"
#: The RO-Crate version Process Run Crate 0.6 extends.
RO_CRATE_VERSION = "1.1"
#: The JSON-LD context of ``environment`` and ``sha256`` (workflow-run ro-terms).
WFRUN_CONTEXT = "https://w3id.org/ro/terms/workflow-run/context"
#: The crate's metadata file, in the folder it describes.
METADATA = "ro-crate-metadata.json"
#: The audit record names a crate reads.
READ_RECORDS = ("entry_id", "entry_source", "integrity", "mode", "verdict", "tiers",
                "provenance", "done", "error")
COMPLETED = "http://schema.org/CompletedActionStatus"
FAILED = "http://schema.org/FailedActionStatus"
#: Per-pool facts of ``provenance.blas.pools`` written as ``additionalProperty``.
POOL_PROPERTIES = ("architecture", "threads", "filepath", "threading_layer", "user_api")


def entry_file_check(source: Path, integrity) -> str | None:
    """Whether the entry file an audit names may be copied into its crate: None when
    it is the file the audit read, else why not.

    The audit's ``integrity`` record holds ``file_sha256``, the SHA-256 of the entry
    file's bytes as read; the file must hash to it.  An audit written before that field
    existed is matched, for a QEncode JSON file, by the SHA-256 under QEncode's rule it
    recomputed (``integrity.recomputed``).  Anything else is left out: the records of a
    notebook are its author's word, and a crate must not publish a file of the user's
    that a crafted ``entry_source`` names.
    """
    integrity = integrity if isinstance(integrity, dict) else {}
    want = integrity.get("file_sha256")
    if isinstance(want, str) and want:
        have = _sha256(source)
        if have == want:
            return None
        return (f"its SHA-256 {have} is not the {want} the audit recorded for its entry "
                "file (integrity.file_sha256)")
    recomputed = integrity.get("recomputed")
    if isinstance(recomputed, str) and recomputed and source.suffix.lower() == ".json":
        import json

        from qencode_nb.entry.hashing import qencode_sha256

        try:
            have = qencode_sha256(json.loads(source.read_text(encoding="utf-8")))
        except (ValueError, TypeError, AttributeError, KeyError, UnicodeDecodeError):
            have = None
        if have == recomputed:
            return None
        return (f"it is not the QEncode entry whose SHA-256 (QEncode's rule) the audit "
                f"recomputed, {recomputed}")
    return ("the audit recorded no SHA-256 of its entry file (integrity.file_sha256), so "
            "the file cannot be shown to be the one it read")


def _sha256(path: Path) -> str:
    from qencode_nb.trust.attestation import sha256_file

    return sha256_file(path)


def _utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)


def described_notebooks(folder) -> tuple[list[Path], bool]:
    """The audit notebooks an existing crate of ``folder`` describes (those still
    there) and whether it has the sweep's ``#summary`` action; ``([], False)`` without
    a crate."""
    folder = Path(folder)
    if not (folder / METADATA).is_file():
        return [], False
    from rocrate.rocrate import ROCrate

    crate = ROCrate(folder)
    found, summary = [], False
    for action in crate.get_by_type("CreateAction"):
        summary = summary or action.id == "#summary"
        if not action.id.startswith("#audit-"):
            continue
        results = action.get("result") or []
        for res in results if isinstance(results, list) else [results]:
            rid = getattr(res, "id", None) or (res.get("@id") if isinstance(res, dict) else None)
            if rid and rid.endswith(".ipynb") and (folder / rid).is_file():
                found.append(folder / rid)
    return found, summary


def write_crate(folder, notebooks, summary=None) -> Path:
    """Write ``folder/ro-crate-metadata.json`` describing ``notebooks`` (module docstring).

    Args:
        folder: the crate's root; every notebook must be inside it.
        notebooks: executed audit notebooks (paths).
        summary: a sweep's ``summary.csv`` inside ``folder``, or None.

    Returns:
        the metadata file written.

    Raises:
        CrateError: no notebook, or one outside ``folder``.
    """
    from rocrate.rocrate import ROCrate

    folder = Path(folder).resolve()
    notebooks = sorted(dict.fromkeys(Path(p).resolve() for p in notebooks))
    if not notebooks:
        raise CrateError(f"{folder}: no audit notebook to describe")
    outside = [str(p) for p in notebooks if p.parent != folder]
    if outside:
        raise CrateError(f"notebooks outside the crate's folder {folder}: {', '.join(outside)}")
    crate = ROCrate(version=RO_CRATE_VERSION)
    crate.metadata.extra_contexts.append(WFRUN_CONTEXT)
    builder = _Builder(crate, folder, _entry_sources(notebooks))
    actions = [builder.audit(nb) for nb in notebooks]
    if summary is not None and Path(summary).is_file():
        actions.append(builder.summary(Path(summary).resolve(), notebooks))
    root = crate.root_dataset
    root["name"] = f"qencode-nb audits in {folder.name}"
    root["description"] = (f"{len(notebooks)} executed qencode-nb audit notebook(s) of "
                           "QEncode benchmark entries, the entries they read, the toolkit, "
                           "the pins and the BLAS pools they ran with")
    root["datePublished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    root["conformsTo"] = builder.entity(PROFILE, "CreativeWork", name="Process Run Crate",
                                        version="0.6")
    root["mentions"] = actions
    crate.write(folder)
    return folder / METADATA


def _entry_sources(notebooks) -> list[str]:
    """The ``entry_source`` records of ``notebooks`` (their folders are known folders of
    the crate: :func:`qencode_nb.paths.known_folders`)."""
    import json

    from qencode_nb.notebook.record import iter_records

    out = []
    for nb in notebooks:
        try:
            source = dict(iter_records(json.loads(Path(nb).read_text(encoding="utf-8")))
                          ).get("entry_source")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if isinstance(source, str):
            out.append(source)
    return out


class _Builder:
    """Adds the entities of one crate; shared ones (toolkit, packages, CPU, entry
    files, the notebook instrument) once.  Every text taken from a notebook goes through
    :meth:`shown` (no absolute path of the machine)."""

    def __init__(self, crate, folder: Path, entry_sources=()):
        from qencode_nb.paths import known_folders

        self.crate, self.folder = crate, folder
        self.folders = known_folders(folder, entry_sources)
        self.entries: dict[str, object] = {}
        #: ``{crate path: source file}`` of the entry files copied in.
        self.copied: dict[str, Path] = {}
        #: One line per entry file left out (file, notebook, why).
        self.left_out: list[str] = []

    def shown(self, value):
        """``value`` (a text, or texts in a list or dict) with every absolute path
        shortened (:func:`qencode_nb.paths.scrub_value`)."""
        from qencode_nb.paths import scrub_value

        return scrub_value(value, self.folders)

    def entity(self, identifier: str, type_, **properties):
        from rocrate.model.contextentity import ContextEntity

        found = self.crate.get(identifier)
        if found is not None:
            return found
        props = {"@type": type_, **{k: v for k, v in properties.items() if v is not None}}
        return self.crate.add(ContextEntity(self.crate, identifier, properties=props))

    def file(self, source: Path, dest: str, **properties):
        found = self.crate.get(dest)
        if found is not None:
            return found
        props = {k: v for k, v in properties.items() if v is not None}
        return self.crate.add_file(source, dest_path=dest, properties=props)

    def value(self, identifier: str, name: str, value):
        return self.entity(identifier, "PropertyValue", name=name, value=self.shown(value))

    def toolkit(self, installed: dict | None, version: str | None):
        """The qencode-nb SoftwareApplication of one package stack."""
        installed = {k: v for k, v in (installed or {}).items() if v}
        key = hashlib.sha256(repr((version, sorted(installed.items()))).encode()).hexdigest()
        tool = self.crate.get(f"#qencode-nb-{key[:12]}")
        if tool is not None:
            return tool
        requirements = [self.entity(f"https://pypi.org/project/{name}/{ver}/",
                                    "SoftwareApplication", name=name, softwareVersion=ver)
                        for name, ver in sorted(installed.items())]
        return self.entity(f"#qencode-nb-{key[:12]}", "SoftwareApplication", name="qencode-nb",
                           softwareVersion=version,
                           description="audits QEncode VQE benchmark entries by re-running "
                                       "them in papermill-executed notebooks",
                           softwareRequirements=requirements or None)

    def instrument_notebook(self):
        from qencode_nb.paths import NOTEBOOKS

        source = NOTEBOOKS / "audit.ipynb"
        return self.file(source, "instruments/audit.ipynb", **{
            "@type": ["File", "SoftwareSourceCode"], "name": "audit.ipynb",
            "programmingLanguage": "Python", "encodingFormat": "application/x-ipynb+json",
            "sha256": _sha256(source),
            "description": "the audit notebook papermill executes (notebooks/audit.ipynb of "
                           "the toolkit, as it was when the crate was written)"})

    def entry(self, source: Path, entry_id: str | None, integrity=None,
              notebook: Path | None = None):
        why = None if not source.is_file() else entry_file_check(source, integrity)
        key = f"{source}\0{why}"
        if key in self.entries:
            return self.entries[key]
        fmt = "application/json" if source.suffix == ".json" else "application/yaml"
        where = self.shown(str(source))
        if not source.is_file():
            ent = self.entity(f"#entry-{_slug(source.name)}", "CreativeWork", name=entry_id,
                              alternateName=where,
                              description="the entry file the audit read; "
                              "not found when the crate was written")
        elif why is not None:
            import warnings

            text = (f"{source}: left out of the crate, named by "   # said here, not written
                    f"{notebook.name if notebook else 'an audit'}: {why}")
            self.left_out.append(text)
            warnings.warn(text, CrateWarning, stacklevel=2)
            ent = self.entity(f"#entry-left-out-{_slug(source.name)}-{len(self.left_out)}",
                              "CreativeWork", name=entry_id, alternateName=where,
                              description="the entry file the audit names, not copied: "
                                          + self.shown(why))
        else:
            from qencode_nb.trust.attestation import CRATE_ENTRIES, crate_entry_names

            plain, named = crate_entry_names(source.name, _sha256(source))
            dest = f"{CRATE_ENTRIES}/{plain}"
            if self.copied.get(dest, source) != source:   # another file of that name
                dest = f"{CRATE_ENTRIES}/{named}"
            self.copied[dest] = source
            ent = self.file(source, dest, name=entry_id or source.name,
                            alternateName=where,
                            encodingFormat=fmt, sha256=_sha256(source),
                            description="the QEncode entry the audit read, copied from "
                                        "alternateName")
        self.entries[key] = ent
        return ent

    def cpu(self, provenance: dict):
        model = provenance.get("cpu") or "unknown CPU"
        facts = {"platform": provenance.get("platform"),
                 "runnable OpenBLAS coretypes":
                     " ".join(provenance.get("runnable_coretypes") or []) or None}
        cid = "#cpu-" + hashlib.sha256(repr((model, sorted(facts.items()))).encode()).hexdigest()[:12]
        props = [self.value(f"{cid}-{_slug(name)}", name, value)
                 for name, value in facts.items() if value is not None]
        return self.entity(cid, "Product", name=model, category="CPU",
                           description="the CPU the audit ran on (/proc/cpuinfo model name)",
                           additionalProperty=props or None)

    def pools(self, action_id: str, blas: dict) -> list:
        out = []
        for i, pool in enumerate(blas.get("pools") or []):
            pid = f"{action_id}-blas-{i}"
            props = [self.value(f"{pid}-{name}", name, pool.get(name))
                     for name in POOL_PROPERTIES if pool.get(name) is not None]
            out.append(self.entity(pid, "SoftwareApplication", name=pool.get("library"),
                                   softwareVersion=pool.get("version"),
                                   applicationCategory="BLAS library (a threadpoolctl pool)",
                                   description=f"{pool.get('library')} {pool.get('version')} "
                                               f"running kernel {pool.get('architecture')} on "
                                               f"{pool.get('threads')} thread(s)",
                                   additionalProperty=props or None))
        return out

    def environment(self, action_id: str, blas: dict) -> list:
        from qencode_nb.notebook.pins import BLAS_KERNEL_VARS

        env = dict(sorted((blas.get("env") or {}).items()))
        for var in BLAS_KERNEL_VARS:      # OPENBLAS_CORETYPE, NPY_..., the profile, as set
            if blas.get(var):
                env[var] = blas[var]
        return [self.value(f"{action_id}-env-{name}", name, str(value))
                for name, value in env.items() if value is not None]

    def audit(self, notebook: Path):
        import json

        from qencode_nb.notebook.record import iter_records

        nb = json.loads(notebook.read_text(encoding="utf-8"))   # nbformat's import: seconds
        r = {k: v for k, v in iter_records(nb) if k in READ_RECORDS}
        pm = (nb.get("metadata") or {}).get("papermill") or {}
        stem = notebook.name[:-len(".ipynb")]
        aid = f"#audit-{_slug(stem)}"
        prov = r.get("provenance") or {}
        blas = prov.get("blas") or {}
        version = (prov.get("packages") or {}).get("qencode-nb")
        instruments = [self.toolkit(prov.get("installed"), version), self.instrument_notebook()]
        if prov:
            instruments += [self.cpu(prov), *self.pools(aid, blas)]
        result = [self.file(notebook, notebook.name, name=notebook.name,
                            encodingFormat="application/x-ipynb+json",
                            sha256=_sha256(notebook), description="the executed audit notebook")]
        if r.get("verdict") is not None:
            result.append(self.value(f"{aid}-verdict", "verdict", r["verdict"]))
        numeric = prov.get("numeric") or {}
        if numeric.get("hash"):
            from qencode_nb.notebook.fingerprint import kernel_triple

            result.append(self.value(f"{aid}-numeric-fingerprint", "numeric fingerprint",
                                     f"{numeric['hash']} ({kernel_triple(numeric)})"))
        from qencode_nb.environment.in_force import stack_text

        if stack_text(r.get("stack")):
            result.append(self.value(f"{aid}-stack", "package stack", stack_text(r["stack"])))
        for tier, value in (r.get("tiers") or {}).items():
            result.append(self.value(f"{aid}-tier-{tier}", f"tier {tier}",
                                     (value or {}).get("status")))
        self._attestations(notebook, result[0])
        done = r.get("done") is True
        error = r.get("error")
        props = {"name": f"audit of {r.get('entry_id') or stem}",
                 "description": "papermill notebooks/audit.ipynb with parameters "
                                + self.shown(", ".join(f"{k}={v!r}" for k, v in
                                             sorted((pm.get("parameters") or {}).items()))),
                 "startTime": pm.get("start_time"), "endTime": pm.get("end_time"),
                 "actionStatus": {"@id": COMPLETED if done else FAILED}}
        if not done:
            props["error"] = self.shown(failure_line(error) if isinstance(error, dict)
                                        else "the notebook has no done record")
        action = self.crate.add_action(instruments, identifier=aid,
                                       properties={k: v for k, v in props.items() if v},
                                       result=result)
        if r.get("entry_source"):
            action["object"] = [self.entry(Path(str(r["entry_source"])), r.get("entry_id"),
                                           r.get("integrity"), notebook)]
        env = self.environment(aid, blas)
        if env:
            action["environment"] = env
        return action

    def _attestations(self, notebook: Path, notebook_entity) -> None:
        from qencode_nb.trust.attestation import paths_for

        for path in paths_for(notebook):
            if path.is_file():
                self.file(path, path.name, name=path.name, about=notebook_entity,
                          encodingFormat="application/json" if path.suffix == ".json"
                          else "text/plain", description="signed attestation of the notebook "
                          "(qencode-nb sign; check with qencode-nb verify)")

    def summary(self, summary: Path, notebooks: list[Path]):
        from qencode_nb.trust.attestation import toolkit_version

        result = [self.file(summary, summary.name, name=summary.name, encodingFormat="text/csv",
                            sha256=_sha256(summary),
                            description="one row per audit (qencode_nb.readout.collect.audit_table)")]
        for suffix, fmt in ((".png", "image/png"), (".pdf", "application/pdf"),
                            (".svg", "image/svg+xml")):
            plot = summary.with_name("margins" + suffix)
            if plot.is_file():
                result.append(self.file(plot, plot.name, name=plot.name, encodingFormat=fmt,
                                        description="the margin plot"))
        tool = self.entity("#qencode-nb", "SoftwareApplication", name="qencode-nb",
                           softwareVersion=toolkit_version())
        objects = [self.crate.get(nb.name) for nb in notebooks]
        action = self.crate.add_action(tool, identifier="#summary", object=objects,
                                       result=result, properties={
                                           "name": f"summary of {len(notebooks)} audit(s)",
                                           "endTime": _utc(summary.stat().st_mtime),
                                           "actionStatus": {"@id": COMPLETED}})
        return action
