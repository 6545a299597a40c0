"""One self-contained HTML page of a folder of executed audits (``qencode-nb report``).

:func:`write_report` reads the folder's audit notebooks
(:func:`qencode_nb.readout.report_tables.report_table`: one row per run, failed runs
included, never an executed figures or suite notebook), renders every executed
notebook to HTML with nbconvert beside the page (:func:`render_notebook_pages`,
``<stem>_notebooks/``, linked relatively, each linking back to its row), writes the
table as CSV (``<stem>.csv``, also a download link on the page: :func:`table_csv`) and
writes the page (:func:`render_report`: Jinja2, the template
``templates/report.html.j2``).  The page loads nothing at view time: its CSS and JS
are inline, the margin plot and the robustness figure are inline SVG
(:func:`report_figures`, :func:`inline_svg`), the CSV a data: URL, and the notebook
pages drop nbconvert's CDN scripts (require.js, MathJax, mermaid).  Nothing it writes
holds an absolute path of the machine (:mod:`qencode_nb.paths`: :func:`~qencode_nb.paths.scrub`); its
header names the dataset, environments and toolkit
(:mod:`qencode_nb.readout.report_header`).

The page's hooks (tests, scripts): ``<table id="qnb-report">`` in the scroll box
``#qnb-table-box`` (header row and first column fixed), one ``<tr class="qnb-row"
id="run-RUN" data-entry-id="..." data-run="RUN">`` per run, sortable headers
``<th data-sort="KEY">`` over cells ``<td data-key="KEY" data-value="...">`` (the
unrounded value; empty when there is none); columns outside the compact set carry the
class ``qnb-extra`` (shown by the button ``#qnb-columns``), those that read the same on
every row also ``qnb-constant`` (named in ``#qnb-constants``); the filter box
``#qnb-filter``, the summary line ``#qnb-summary``, the CSV link ``#qnb-csv``, the
colour legend ``#qnb-legend``; in the margin plot, each point and label is a link
``<a href="#run-RUN">`` that the filter hides with its row.  Units: errors and
movement in mHa, margins in % of the threshold on the page (fractions in the CSV),
times in s.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from qencode_nb.readout.report_columns import (BADGE_MEANING, COLUMNS, cell,
                                               constant_columns, groups, missing)

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
{%- block body_header -%}
{{ super() }}
{%- if resources.qnb_back %}
<nav class="qnb-back" style="font: 14px/1.4 system-ui, sans-serif; padding: .5em 1em; border-bottom: 1px solid #d0d7de; background: #f6f8fa;"><a href="{{ resources.qnb_back | escape_html }}">&larr; back to the report</a> <span style="color: #6e7781;">(this run's row in {{ resources.qnb_report | escape_html }})</span></nav>
{%- endif %}
{%- endblock body_header -%}
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


def margin_svg(table, folder) -> str:
    """The margin plot of ``table`` (:func:`~qencode_nb.readout.plots.margin_plot`) as
    SVG text whose points, annotations and entry labels are each a link to their row
    of the page (``<a href="#run-RUN">``, matplotlib's per-artist ``url``), so the
    page's filter can hide the points of the rows it hides.  The entry of a point is
    read from the plot itself: the axis whose tick labels are the table's ``label``
    gives each point's row by its position on that axis."""
    import io
    from urllib.parse import quote

    from matplotlib.collections import PathCollection

    from qencode_nb.readout.plots import margin_plot

    fig = margin_plot(table, Path(folder) / "margins")
    ax = fig.axes[0]
    runs = dict(zip(table["label"], table["run"]))
    for axis, coord in ((ax.xaxis, 0), (ax.yaxis, 1)):
        ticks = {round(float(loc)): t for loc, t in
                 zip(axis.get_majorticklocs(), axis.get_majorticklabels())}
        if ticks and all(t.get_text() in runs for t in ticks.values()):
            break
    else:   # no axis of entries: the plot is shown as drawn
        ticks, coord = {}, 0

    def href(position):
        tick = ticks.get(round(float(position)))
        return f"#run-{quote(runs[tick.get_text()])}" if tick is not None else None

    for t in ticks.values():
        t.set_url(href(t.get_position()[coord]))
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            coll.set_urls([href(p[coord]) for p in coll.get_offsets()])
    for text in ax.texts:
        if hasattr(text, "xy"):
            text.set_url(href(text.xy[coord]))
    import matplotlib

    from qencode_nb.figstyle import STYLE

    out = io.StringIO()
    with matplotlib.rc_context(STYLE):     # saved again in the figures' style: SVG text kept
        fig.savefig(out, format="svg")
    return out.getvalue()


def report_figures(table, folder) -> list[dict]:
    """The page's figures as inline SVG (:func:`inline_svg`): the margin plot of the
    table (:func:`margin_svg`), and the robustness figure when the folder holds a
    robustness study (its ``robustness.svg``, else drawn from ``robustness.csv`` and
    ``robustness_summary.csv``).  Each ``{"id", "title", "svg"}``."""
    import tempfile

    import pandas as pd

    folder = Path(folder)
    out = []
    with tempfile.TemporaryDirectory(prefix="qencode-nb-report-") as tmp:
        out.append({"id": "qnb-margin-plot", "title": "Margin plot: published and "
                    "regenerated error per entry against the threshold (mHa); the points "
                    "of the rows the filter hides are hidden",
                    "svg": inline_svg(margin_svg(table, tmp), "mp-")})
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


def render_report(table, *, title: str, figures=(), pages=None, generated=None,
                  csv_name: str | None = None, claims=None, stale: str | None = None) -> str:
    """The page (HTML text) of a :func:`~qencode_nb.readout.report_tables.report_table`
    (whose paths :func:`write_report` has scrubbed: the page shows them as they are).

    Args:
        table: the report table (one row per run).
        title: the page's heading (the runs folder's name).
        figures: :func:`report_figures` (inline SVG), drawn below the table.
        pages: ``{run: relative href}`` of the rendered notebooks (a run's label links
            there); None: no links.
        generated: the time stamp shown (default: now, UTC).
        csv_name: the file name the CSV link downloads (:func:`table_csv` of ``table``
            as a data: URL); None: no link.
        claims: the claims section's HTML
            (:func:`qencode_nb.readout.report_claims.claims_section`), after the figures;
            None: no section.
        stale: the sentence naming the folder's stale notebooks, not in the table
            (:func:`qencode_nb.readout.manifest.stale_text`); None: none.

    The header names the dataset, the environments and the toolkit
    (:mod:`qencode_nb.readout.report_header`) and the columns that read the same on
    every row (:func:`~qencode_nb.readout.report_columns.constant_columns`); the
    fragile (measured) column is shown only when some row has a value (a robustness
    study's summary was in the folder).
    """
    import datetime
    from urllib.parse import quote

    import jinja2
    import markupsafe

    from qencode_nb.notebook.provenance import git_state, installed_version
    from qencode_nb.readout import report_header

    records = table.astype(object).where(table.notna(), None).to_dict("records")
    shown = [c for c in COLUMNS if c.key != "fragile_measured"
             or any(not missing(r.get("fragile_measured")) for r in records)]
    rows = [{"entry_id": r.get("entry_id") or r["run"], "run": r["run"],
             "status": r["status"], "href": (pages or {}).get(r["run"]),
             "cells": [cell(r, c) for c in shown]} for r in records]
    constant = set(constant_columns(rows, shown))
    compact = [c.compact and c.key not in constant for c in shown]
    spans, i = [], 0
    for group, span in groups(shown):
        spans.append({"name": group, "all": span, "compact": sum(compact[i:i + span])})
        i += span
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    stamp = generated or datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    script, csp = page_script(env)
    git = git_state()
    commit = (git["commit"] + ("+dirty" if git.get("dirty") else "")) if git["commit"] else None
    return env.get_template(TEMPLATE.name).render(
        script=markupsafe.Markup(script), csp=csp, title=title, generated=stamp,
        dataset=report_header.dataset(table),
        environments=report_header.environments(table),
        toolkit=report_header.toolkit(   # the version as the runs record it
            table, written_by=(installed_version("qencode-nb"), commit)),
        columns=[{"column": c, "compact": k, "constant": c.key in constant}
                 for c, k in zip(shown, compact)],
        constants=groups([c for c in shown if c.key in constant], cells={
            c.key: _shared(rows, i) for i, c in enumerate(shown) if c.key in constant}),
        groups=spans, summary=summary_counts(table), legend=BADGE_MEANING, rows=rows,
        csv_name=csv_name, csv_href=("data:text/csv;charset=utf-8," + quote(table_csv(table))
                                     if csv_name else None),
        figures=list(figures), claims=claims, stale=stale)


def _shared(rows: list[dict], i: int) -> dict:
    """The cell that column ``i`` shows on every row, its hover text the one all rows
    share, else a pointer to the rows (the reasons differ)."""
    titles = {r["cells"][i]["title"] for r in rows}
    return {**rows[0]["cells"][i], "title": titles.pop() if len(titles) == 1 else
            "the same on every row, for reasons that differ: hover the cells under all columns"}


def table_csv(table) -> str:
    """The report table as CSV text: every column, one row per run in the page's first
    order; numbers unrounded (errors in mHa, margins as fractions of the threshold,
    times in s), a dict or list cell as JSON."""
    import json

    def plain(value):
        return json.dumps(value, sort_keys=True, default=str) \
            if isinstance(value, (dict, list, tuple)) else value

    return table.astype(object).map(plain).to_csv(index=False)


def render_notebook_pages(paths, folder, *, back: dict | None = None,
                          folders: dict | None = None) -> dict:
    """Each executed notebook as an HTML page ``<folder>/<stem>.html`` (nbconvert's
    HTMLExporter, lab template, images embedded, no CDN script:
    :data:`OFFLINE_NOTEBOOK_TEMPLATE`); returns ``{stem: path}``.  Math in markdown
    cells shows as its TeX source (MathJax would load from a CDN).

    A runs folder may hold notebooks someone else produced, so each page is rendered
    the way JupyterLab shows an untrusted notebook: ``sanitize_html=True`` (nbconvert's
    bleach-based ``clean_html`` over every ``text/html`` and markdown output and the
    markdown cells; ``application/javascript`` outputs are not rendered), and the page's
    :data:`NOTEBOOK_PAGE_CSP` lets no script run whatever got through.

    Args:
        back: ``{stem: (href, report name)}``: a link back to the report at the top of
            that notebook's page.
        folders: :func:`~qencode_nb.paths.known_folders`: each page's
            absolute paths shortened (:func:`~qencode_nb.paths.scrub`).
    """
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    from qencode_nb.paths import scrub

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="lab", template_file="qnb_offline.html.j2",
                            extra_loaders=[DictLoader({"qnb_offline.html.j2":
                                                       OFFLINE_NOTEBOOK_TEMPLATE})],
                            embed_images=True, sanitize_html=True)
    out = {}
    for path in map(Path, paths):
        href, name = (back or {}).get(path.stem, (None, None))
        body, _ = exporter.from_filename(str(path), resources={"qnb_back": href,
                                                               "qnb_report": name})
        out[path.stem] = folder / f"{path.stem}.html"
        out[path.stem].write_text(scrub(body, folders) if folders else body,
                                  encoding="utf-8")
    return out


class Report(NamedTuple):
    """What :func:`write_report` wrote: the page, its table
    (:func:`~qencode_nb.readout.report_tables.report_table`, paths as the runs recorded
    them), the folder of notebook pages (None when none were rendered) and the CSV."""

    path: Path
    table: object
    pages_dir: Path | None
    csv: Path | None = None


def write_report(folder, out=None, *, notebooks: bool = True, claims=None) -> Report:
    """Write the report of a runs folder: the page, its table as CSV beside it
    (``<out's stem>.csv``, :func:`table_csv`) and the notebook pages.  No absolute path
    of the machine is written: every path in the table and the pages is shortened
    (:func:`qencode_nb.paths.scrub`), the page's title is the folder's name.

    Args:
        folder: a sweep's or a robustness study's output folder (the audit notebooks of
            its last run, :func:`qencode_nb.readout.manifest.audit_notebooks`; other
            notebooks in it are not counted, stale audits are named on the page).
        out: the page (default ``<folder>/report.html``); the notebook pages go to
            ``<out's folder>/<out's stem>_notebooks/`` (e.g. ``report_notebooks/``).
        notebooks: render the notebook pages (False: the labels link nowhere).
        claims: a ``claims.csv`` (``qencode-nb claims --out``) shown as the page's claims
            section (:mod:`qencode_nb.readout.report_claims`); None: no section.

    Returns:
        :class:`Report` (the page's path, the table, the notebook pages' folder, the CSV).

    Raises:
        ReportError: ``folder`` is not a folder, or holds no audit notebook, or
            ``claims`` is not a claims table.
    """
    from urllib.parse import quote

    from qencode_nb.paths import known_folders, scrub_value
    from qencode_nb.readout.report_tables import report_table

    folder = Path(folder)
    table = report_table(folder)
    folders = known_folders(folder, table["entry_source"])
    shown = table.astype(object).map(lambda v: scrub_value(v, folders))
    out = Path(out) if out is not None else folder / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    pages, pages_dir = {}, None
    if notebooks:
        pages_dir = out.parent / f"{out.stem}_notebooks"
        back = {run: (f"../{quote(out.name)}#run-{quote(run)}", out.name)
                for run in table["run"]}
        written = render_notebook_pages(table["notebook"], pages_dir, back=back,
                                        folders=folders)
        pages = {run: f"{quote(pages_dir.name)}/{quote(p.name)}" for run, p in written.items()}
    csv = out.with_suffix(".csv")
    csv.write_text(table_csv(shown), encoding="utf-8")
    section = None
    if claims is not None:
        from qencode_nb.readout.report_claims import claims_section

        section = claims_section(claims)
    from qencode_nb.readout.manifest import stale_text

    html = render_report(shown, title=folder.resolve().name, pages=pages,
                         figures=report_figures(table, folder), csv_name=csv.name,
                         claims=section, stale=stale_text(folder))
    out.write_text(html, encoding="utf-8")
    return Report(out, table, pages_dir, csv)
