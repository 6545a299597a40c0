"""One self-contained HTML page of a folder of executed audits (``qencode-nb report``).

:func:`write_report` reads the folder's audit notebooks
(:func:`qencode_nb.readout.report_tables.report_table`: one row per run, failed runs
included, never an executed figures or suite notebook), renders every executed
notebook to HTML with nbconvert beside the page (:func:`render_notebook_pages`,
``<stem>_notebooks/``, linked relatively) and writes the page
(:func:`render_report`: Jinja2, the template ``templates/report.html.j2``).  The page
loads nothing at view time: its CSS and JS are inline, the margin plot and the
robustness figure are inline SVG (:func:`report_figures`, :func:`inline_svg`), and the
notebook pages drop nbconvert's CDN scripts (require.js, MathJax, mermaid).

The page's hooks (tests, scripts): ``<table id="qnb-report">``, one
``<tr class="qnb-row" data-entry-id="...">`` per run, sortable headers
``<th data-sort="KEY">`` over cells ``<td data-key="KEY" data-value="...">`` (the
unrounded value; empty when there is none), the filter box ``#qnb-filter`` and the
summary line ``#qnb-summary``.  Units: errors in mHa, margins as fractions of the
threshold, times in s.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import NamedTuple

from qencode_nb.readout.report_tables import QPU_QUESTIONS

#: The page template (package data: pyproject ``[tool.setuptools.package-data]``).
TEMPLATE = Path(__file__).resolve().parent / "templates" / "report.html.j2"

#: The report page's script (sorting, filtering), rendered alone: its SHA-256 is the
#: only script the page's Content-Security-Policy allows (:func:`page_script`).
SCRIPT_TEMPLATE = "report_script.js.j2"

#: The Content-Security-Policy of a rendered notebook page: no script at all (an
#: untrusted notebook in JupyterLab runs none), styles and data: images inline only.
NOTEBOOK_PAGE_CSP = ("default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; "
                     "img-src data:; font-src data:; base-uri 'none'; form-action 'none'")

#: nbconvert's lab template without its CDN scripts and widget loader, its page headed
#: by :data:`NOTEBOOK_PAGE_CSP` (before anything from the notebook), a mermaid output
#: shown as escaped text: a notebook page loads and runs nothing.
OFFLINE_NOTEBOOK_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head -%}
<meta http-equiv="Content-Security-Policy" content="CSP">
{{ super() }}
{%- endblock html_head -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{% block data_mermaid scoped -%}
<div class="jp-RenderedText jp-OutputArea-output"><pre>{{ output.data['text/vnd.mermaid'] | escape_html }}</pre></div>
{%- endblock data_mermaid %}
""".replace("CSP", NOTEBOOK_PAGE_CSP)


def inline_svg(svg_text: str, prefix: str) -> str:
    """An SVG file's text fit to sit inside an HTML page: the XML declaration, DOCTYPE
    and comments dropped, every ``id`` (and each ``#id`` reference to it) prefixed with
    ``prefix`` so that two figures on one page cannot share an id, and the width and
    figure's natural size kept as its largest (it shrinks with a narrower page)."""
    text = svg_text[svg_text.index("<svg"):]
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    if ids:
        text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
        text = re.sub(r'(href="#|url\(#)([^")]+)',
                      lambda m: m.group(1) + (prefix + m.group(2) if m.group(2) in ids
                                              else m.group(2)), text)
    head, rest = text.split(">", 1)
    return head + ' style="max-width:100%;height:auto">' + rest


def report_figures(table, folder) -> list[dict]:
    """The page's figures as inline SVG (:func:`inline_svg`): the margin plot of the
    table (:func:`~qencode_nb.readout.plots.margin_plot`), and the robustness figure
    when the folder holds a robustness study (its ``robustness.svg``, else drawn from
    ``robustness.csv`` and ``robustness_summary.csv``).  Each ``{"id", "title", "svg"}``."""
    import tempfile

    import pandas as pd

    from qencode_nb.readout.plots import margin_plot

    folder = Path(folder)
    out = []
    with tempfile.TemporaryDirectory(prefix="qencode-nb-report-") as tmp:
        margin_plot(table, Path(tmp) / "margins")
        out.append({"id": "qnb-margin-plot", "title": "Margin plot: published and "
                    "regenerated error per entry against the threshold (mHa)",
                    "svg": inline_svg((Path(tmp) / "margins.svg").read_text(), "mp-")})
        svg = folder / "robustness.svg"
        csvs = [folder / "robustness.csv", folder / "robustness_summary.csv"]
        title = "Robustness: error range per entry over the perturbations (mHa)"
        if all(p.is_file() for p in csvs):
            # drawn here from the study's tables, never the folder's SVG inlined
            from qencode_nb.readout.robustness_plot import robustness_plot

            robustness_plot(pd.read_csv(csvs[0]), pd.read_csv(csvs[1]), Path(tmp) / "rb")
            out.append({"id": "qnb-robustness-plot", "title": title,
                        "svg": inline_svg((Path(tmp) / "rb.svg").read_text(), "rb-")})
        elif svg.is_file():
            # a figure file of the folder (anyone's): an image, in which no script runs
            import base64

            out.append({"id": "qnb-robustness-plot", "title": title, "svg": None,
                        "img": "data:image/svg+xml;base64,"
                               + base64.b64encode(svg.read_bytes()).decode()})
    return out


#: The table's columns: ``(key, header, group, kind, description)``; ``kind`` says how
#: a cell is drawn: "text", a number format ("4g", "3f", "1f", "d"), "badge" (a status
#: with its ``<key>_reason`` on hover), "flag" (True/False as a yes/no badge);
#: ``description`` is the header's hover text (units).
COLUMNS = (
    ("label", "run", "run", "run", "the entry's short name; links to the executed notebook"),
    ("status", "status", "run", "status", "done, or failed with the reason"),
    ("molecule", "molecule", "entry", "text", "problem.name"),
    ("mapping", "mapping", "entry", "text", "fermion-to-qubit mapping"),
    ("ansatz", "ansatz", "entry", "text", "hea, uccsd or adapt"),
    ("qubits", "qubits", "entry", "d", "qubits after Z2 tapering"),
    ("published_error_mha", "pub.", "error (mHa)", "4g", "published error |E - E_exact| (mHa)"),
    ("error_mha", "regen.", "error (mHa)", "4g", "regenerated error of the re-run (mHa)"),
    ("margin_published", "pub.", "margin", "3f", "published margin (threshold - error) / "
     "threshold"),
    ("margin_regenerated", "regen.", "margin", "3f", "regenerated margin (threshold - "
     "error) / threshold"),
    ("tier_procedure", "procedure", "tiers", "badge", "tier 1: every procedure field "
     "declared and used as declared"),
    ("tier_certification", "certification", "tiers", "badge", "tier 2: regenerated error "
     "below the threshold"),
    ("tier_bit_identical", "bit-identical", "tiers", "badge", "tier 3: re-run energy equal "
     "to the published one to the last bit"),
    ("certified", "certified", "certification", "flag", "regenerated error < threshold"),
    ("fragile", "fragile", "certification", "flag", "certified with regenerated margin < "
     "0.20 (inferred)"),
    ("fragile_measured", "measured", "certification", "flag", "fragile_measured: "
     "certification changed under some perturbation of a robustness study"),
    ("replay_status", "replay", "checks", "badge", "stored parameters on the stored "
     "Hamiltonian vs the published energy (1e-9 Ha)"),
    ("integrity", "integrity", "checks", "badge", "SHA-256 recomputed by QEncode's rule"),
    ("hamiltonian_status", "Hamiltonian", "checks", "badge", "the stored terms equal a "
     "rebuilt generator path (pass), none (fail), or CASSCF off the reference kernels "
     "(unverified)"),
    ("consistency", "consistency", "checks", "badge", "the published numbers finite and "
     "consistent with each other and with the rebuild"),
    ("alerts", "alerts", "checks", "badge", "integrity, Hamiltonian, replay or consistency "
     "failures (exit 3 from qencode-nb audit)"),
    ("active_space", "active space", "checks", "badge", "the active space's boundary: "
     "'warning' when it splits near-degenerate RHF orbitals (< 1e-4 Ha)"),
    ("seconds", "time (s)", "time", "1f", "wall time of the run (s)"),
) + tuple((f"qpu_{q}", q, "Works on my QPU", "badge", f"Works on my QPU: {q}")
          for q in QPU_QUESTIONS)

#: Badge colour of a value (CSS class ``b-<name>``); anything else is "na".
BADGE_CLASS = {"pass": "ok", "yes": "ok", "done": "ok", "fail": "bad", "no": "bad",
               "failed": "bad", "partly": "warn", "warning": "warn", "incomplete": "warn",
               "unverified": "warn", "ok": "ok"}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _hover(row, key: str, kind: str):
    """The hover text of a cell (the ``title`` attribute)."""
    if kind == "badge":
        reason = row.get(f"{key}_reason")
        return None if _missing(reason) else str(reason)
    if kind == "run":
        return f"{row.get('entry_id') or '(no entry id recorded)'}; notebook {row['notebook']}"
    if kind == "status":
        return row.get("failure") if row.get("status") != "done" else "the run recorded done"
    not_quoted = row.get("not_quoted") or {}
    if isinstance(not_quoted, dict) and key in not_quoted:
        return f"not quoted: {not_quoted[key]}"
    if key == "certified" and not _missing(row.get("error_mha")):
        return (f"regenerated error {row['error_mha']:.6g} mHa against the threshold "
                f"{row.get('threshold_mha')} mHa")
    if key == "fragile_measured":
        return "a robustness study's certification differs from the published one under " \
               "some perturbation (robustness_summary.csv)"
    if kind == "flag" and _missing(row.get(key)):
        return "no re-run" if row.get("status") == "done" else row.get("failure")
    return None


def _cell(row, key: str, kind: str) -> dict:
    """``{"key", "text", "value", "title", "badge"}`` of one table cell; ``value`` is
    what the column sorts by (the unrounded number, or the text; "" when missing)."""
    value = row.get(key)
    cell = {"key": key, "title": _hover(row, key, kind), "badge": None}
    if _missing(value) and cell["title"] and cell["title"].startswith("not quoted: "):
        return {**cell, "text": "not quoted", "value": "", "badge": None}
    if _missing(value):
        return {**cell, "text": "—", "value": "", "badge": "na" if kind in (
            "badge", "flag", "status") else None}
    if kind == "flag":
        flag = value if isinstance(value, bool) else str(value).lower() == "true"
        text = "yes" if flag else "no"
        return {**cell, "text": text, "value": str(flag).lower(),
                "badge": ("warn" if flag else "ok") if key.startswith("fragile")
                else BADGE_CLASS[text]}
    if kind in ("badge", "status"):
        return {**cell, "text": str(value), "value": str(value),
                "badge": BADGE_CLASS.get(str(value), "na")}
    if kind in ("text", "run"):
        return {**cell, "text": str(value), "value": str(value)}
    number = float(value)
    text = str(int(number)) if kind == "d" else format(number, "." + kind)
    return {**cell, "text": text, "value": repr(number)}


def summary_counts(table) -> dict:
    """The page's summary line as numbers: ``runs``, ``done``, ``failed``, ``tiers``
    (:func:`~qencode_nb.readout.counts.tier_counts`), ``replay``
    (:func:`~qencode_nb.readout.counts.replay_counts`), ``certified`` and ``rerun``
    (completed audits certified by their re-run, and those that re-ran), and
    ``published_certified`` (completed audits whose entry is published certified)."""
    from qencode_nb.readout.counts import replay_counts, tier_counts

    done = table[table["status"] == "done"]
    return {"runs": len(table), "done": len(done), "failed": len(table) - len(done),
            "tiers": tier_counts(table), "replay": replay_counts(table),
            "certified": int(sum(v is True for v in done["certified"])),
            "rerun": int(sum(isinstance(v, bool) for v in done["certified"])),
            "published_certified": int(sum(v is True for v in done["published_certified"]))}


def page_script(env) -> tuple[str, str]:
    """``(script, Content-Security-Policy)`` of the report page: its one script
    (:data:`SCRIPT_TEMPLATE`) and a policy that allows only that script, by its SHA-256
    (CSP Level 2 hash source), no other script, plugin, form target or base URL, styles
    inline and images as data: URLs.  The page itself escapes every value it shows."""
    import base64
    import hashlib

    script = env.get_template(SCRIPT_TEMPLATE).render()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    return script, csp


def render_report(table, *, title: str, figures=(), pages=None, generated=None) -> str:
    """The page (HTML text) of a :func:`~qencode_nb.readout.report_tables.report_table`.

    Args:
        table: the report table (one row per run).
        title: the page's heading (e.g. the runs folder).
        figures: :func:`report_figures` (inline SVG), drawn below the table.
        pages: ``{run: relative href}`` of the rendered notebooks (a run's label links
            there); None: no links.
        generated: the time stamp shown (default: now, UTC).

    The fragile (measured) column is shown only when some row has a value (a
    robustness study's summary was in the folder).
    """
    import datetime
    from importlib.metadata import version

    import jinja2
    import markupsafe

    rows = table.astype(object).where(table.notna(), None).to_dict("records")
    shown = [c for c in COLUMNS if c[0] != "fragile_measured"
             or any(not _missing(r.get("fragile_measured")) for r in rows)]
    groups = []
    for _, _, group, _, _ in shown:
        if groups and groups[-1][0] == group:
            groups[-1][1] += 1
        else:
            groups.append([group, 1])
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    stamp = generated or datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    script, csp = page_script(env)
    return env.get_template(TEMPLATE.name).render(
        script=markupsafe.Markup(script), csp=csp,
        title=title, generated=stamp, version=version("qencode-nb"),
        environments=environments(table),
        columns=shown, groups=groups, summary=summary_counts(table),
        rows=[{"entry_id": r.get("entry_id") or r["run"], "run": r["run"],
               "status": r["status"], "failure": r.get("failure"),
               "href": (pages or {}).get(r["run"]),
               "cells": [_cell(r, key, kind) for key, _, _, kind, _ in shown]} for r in rows],
        figures=list(figures))


def environments(table) -> list[str]:
    """The header's environment line: each numeric fingerprint of the folder's runs
    with its kernel profile and the number of runs (``647bb3867ac3 (portable, 7 runs)``),
    most frequent first (:mod:`qencode_nb.notebook.fingerprint`)."""
    if "numeric_fingerprint" not in table:
        return []
    pairs = table[["numeric_fingerprint", "blas_profile"]].astype(object).fillna("unknown")
    counts = pairs.value_counts()
    return [f"{fp} ({profile}, {n} run{'s' if n != 1 else ''})"
            for (fp, profile), n in counts.items()]


def render_notebook_pages(paths, folder) -> dict:
    """Each executed notebook as an HTML page ``<folder>/<stem>.html`` (nbconvert's
    HTMLExporter, lab template, images embedded, no CDN script:
    :data:`OFFLINE_NOTEBOOK_TEMPLATE`); returns ``{stem: path}``.  Math in markdown
    cells shows as its TeX source (MathJax would load from a CDN).

    A runs folder may hold notebooks someone else produced, so each page is rendered
    the way JupyterLab shows an untrusted notebook: ``sanitize_html=True`` (nbconvert's
    bleach-based ``clean_html`` over every ``text/html`` and markdown output and the
    markdown cells; ``application/javascript`` outputs are not rendered), and the page's
    :data:`NOTEBOOK_PAGE_CSP` lets no script run whatever got through."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="lab", template_file="qnb_offline.html.j2",
                            extra_loaders=[DictLoader({"qnb_offline.html.j2":
                                                       OFFLINE_NOTEBOOK_TEMPLATE})],
                            embed_images=True, sanitize_html=True)
    out = {}
    for path in map(Path, paths):
        body, _ = exporter.from_filename(str(path))
        out[path.stem] = folder / f"{path.stem}.html"
        out[path.stem].write_text(body, encoding="utf-8")
    return out


class Report(NamedTuple):
    """What :func:`write_report` wrote: the page, its table
    (:func:`~qencode_nb.readout.report_tables.report_table`) and the folder of notebook
    pages (None when none were rendered)."""

    path: Path
    table: object
    pages_dir: Path | None


def write_report(folder, out=None, *, notebooks: bool = True) -> Report:
    """Write the report of a runs folder.

    Args:
        folder: a sweep's or a robustness study's output folder (its audit notebooks;
            other notebooks in it are not counted).
        out: the page (default ``<folder>/report.html``); the notebook pages go to
            ``<out's folder>/<out's stem>_notebooks/`` (e.g. ``report_notebooks/``).
        notebooks: render the notebook pages (False: the labels link nowhere).

    Returns:
        :class:`Report` (the page's path, the table, the notebook pages' folder).

    Raises:
        ReportError: ``folder`` is not a folder, or holds no audit notebook.
    """
    from urllib.parse import quote

    from qencode_nb.readout.report_tables import report_table

    folder = Path(folder)
    table = report_table(folder)
    out = Path(out) if out is not None else folder / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    pages, pages_dir = {}, None
    if notebooks:
        pages_dir = out.parent / f"{out.stem}_notebooks"
        written = render_notebook_pages(table["notebook"], pages_dir)
        pages = {run: f"{quote(pages_dir.name)}/{quote(p.name)}" for run, p in written.items()}
    html = render_report(table, title=str(folder.resolve()), pages=pages,
                         figures=report_figures(table, folder))
    out.write_text(html, encoding="utf-8")
    return Report(out, table, pages_dir)
