"""The report of a record sweep: one page grouped by release, the claims, the curves.

A record sweep's folder (:mod:`qencode_nb.studies.history_sweep`: ``record.json``,
``summary.csv``, ``releases.csv``, ``claims.csv``, one sub-folder per release group)
gets one self-contained page, ``report.html``:

1. the per-release counts (:func:`qencode_nb.readout.history_counts.release_counts`),
   each release linking to its own section; after a ``--stack recorded`` sweep, the
   bit-identical and certification counts in the recorded and the current environment
   side by side (:func:`environments_section`);
2. one section per release: each run's entry, status (done, refused with the reason,
   failed with the reason), replay, published error, whether the certification held,
   tier 1 and its undeclared fields; each entry links to its row in the release's full
   report (``<release>/report.html``, :func:`qencode_nb.readout.report.write_report`,
   written beside it); then the release folders that hold no entry, with the reason;
3. the claims table (claim, where, status, evidence; :mod:`qencode_nb.claims`);
4. the curves: each audited curve's figure and the points whose certification changed,
   or why it was not audited.

No absolute path of the machine is written (:func:`qencode_nb.paths.scrub`).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from urllib.parse import quote

#: The per-run columns of a release's section: ``(summary column, heading)``.
RUN_COLUMNS = (("status", "status"), ("replay_status", "replay"),
               ("replay_abs_delta_ha", "replay |ΔE| (Ha)"),
               ("published_error_mha", "published error (mHa)"),
               ("held", "certification held"), ("tier_procedure", "tier 1"),
               ("undeclared", "undeclared fields"))

PAGE_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;
padding:.2em .5em;text-align:left;vertical-align:top;font-size:.9em}
th{background:#f2f2f2;position:sticky;top:0}td.num{text-align:right}
.pass,.holds,.done{background:#e6f4e6}.fail,.false,.failed{background:#fbe3e3}
.stale,.refused,.incomplete{background:#fff4d6}.na{color:#666}
"""


def _cell(value, cls: str = "") -> str:
    if value is None or (isinstance(value, float) and value != value):
        return '<td class="na">–</td>'
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:.6g}"
        return f'<td class="num {cls}">{text}</td>'
    return f'<td class="{cls}">{html.escape(str(value))}</td>'


def _table(headings, rows) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headings)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _run_rows(part, folder: str, folders: dict) -> list[str]:
    from qencode_nb.readout.history_counts import certification_held, refusal
    from qencode_nb.paths import scrub

    rows = []
    for r in part.to_dict("records"):
        stem = Path(r["notebook"]).stem
        held = certification_held(r)
        r["held"] = None if held is None else ("yes" if held else "no")
        why = refusal(r.get("failure"))
        if r["status"] != "done":
            r["status"] = f"refused: {why}" if why else f"failed: {r.get('failure')}"
        link = f'{quote(folder)}/report.html#run-{quote(stem)}'
        cells = [f'<td><a href="{link}">{html.escape(r.get("entry_id") or stem)}</a></td>']
        for column, _ in RUN_COLUMNS:
            value = r.get(column)
            value = scrub(value, folders) if isinstance(value, str) else value
            cls = ("refused" if str(value).startswith("refused") else
                   str(value).split(":")[0].replace("/", "") if column in
                   ("status", "replay_status", "tier_procedure") else "")
            cells.append(_cell(value, cls))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def claims_section(path: Path, folders: dict) -> str:
    """The claims table (``claims.csv``: claim, where, status, evidence) as HTML."""
    import pandas as pd

    from qencode_nb.paths import scrub

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = [c for c in ("kind", "claim", "where", "status", "evidence") if c in table]
    rows = ["<tr>" + "".join(_cell(scrub(r[c], folders) or None,
                                   r["status"].split(":")[0] if c == "status" else "")
                             for c in columns) + "</tr>" for r in table.to_dict("records")]
    counts = table["status"].str.split(":").str[0].value_counts()
    said = ", ".join(f"{k} {v}" for k, v in counts.items())
    return (f'<h2 id="claims">Claims</h2><p>{len(table)} claims checked ({said}); '
            f'<a href="claims.csv">claims.csv</a>.</p>' + _table(columns, rows))


def curves_section(folder: Path, curves: list) -> str:
    """Each curve's status, its figure and its changed points, or why it was not audited."""
    parts = ['<h2 id="curves">Dissociation curves</h2>']
    for c in curves:
        name = html.escape(c["curve"])
        if "summary" not in c:   # not audited (replay), or the command failed
            parts.append(f"<p><b>{name}</b>: {html.escape(c['status'])}"
                         f" ({html.escape(str(c.get('reason')))})</p>")
            continue
        sub = c.get("folder", f"curves/{c['curve']}")
        figs = sorted((folder / sub).glob("*.png"))
        img = "".join(f'<img src="{quote(sub)}/{quote(p.name)}" style="max-width:48em" '
                      f'alt="{name}">' for p in figs[:1])
        changed = c.get("changed") or []
        why = f" ({c['reason']})" if c.get("reason") else ""
        parts.append(f"<h3>{name}</h3><p>{html.escape(c['status'] + ': ' + c['summary'] + why)}</p>"
                     f"<p>points whose certification changes: "
                     f"{html.escape(', '.join(map(str, changed)) or 'none')}; "
                     f'<a href="{quote(sub)}/curve.csv">curve.csv</a></p>{img}')
    return "".join(parts)


def environments_section(folder: Path, environments: dict | None) -> list[str]:
    """The per-release rates in the recorded and the current environment side by side
    (``environments.csv`` of a ``--stack recorded`` record sweep,
    :func:`qencode_nb.readout.history_counts.environment_rates`); nothing without it."""
    import pandas as pd

    path = folder / (environments or {}).get("file", "")
    if not environments or not path.is_file():
        return []
    rates = pd.read_csv(path, keep_default_na=False, na_values=[""])
    rates = rates.astype(object).where(rates.notna(), None)
    rows = ["<tr>" + "".join(_cell(v) for v in r.values()) + "</tr>"
            for r in rates.to_dict("records")]
    return ['<h2 id="environments">Recorded and current environment</h2>'
            "<p>Each release audited in its recorded package stack and its release's "
            "kernel triple (<code>--stack recorded</code>), and again in the current stack "
            f"(<code>{html.escape(environments.get('current_folder', ''))}/</code>) where "
            f'they differ; <a href="{quote(path.name)}">{html.escape(path.name)}</a></p>',
            _table(list(rates.columns), rows)]


def write_history_report(folder, out=None, *, notebooks: bool = True) -> Path:
    """Write a record sweep's page (and each release's full report beside it).

    Args:
        folder: a record sweep's output folder (holds ``record.json``).
        out: the page (default ``<folder>/report.html``).
        notebooks: render each release's notebook pages (:func:`~qencode_nb.readout.report.write_report`).

    Returns:
        The page's path.

    Raises:
        ReportError: ``folder`` holds no ``record.json`` or ``summary.csv``.
    """
    from qencode_nb.errors import ReportError
    from qencode_nb.readout.history_counts import RELEASE_COLUMN, release_counts
    from qencode_nb.readout.report import write_report
    from qencode_nb.paths import known_folders, scrub
    from qencode_nb.readout.summary_csv import read_summary

    folder = Path(folder)
    try:
        manifest = json.loads((folder / "record.json").read_text(encoding="utf-8"))
        # "n/a" is a value here (a replay or tier that did not apply), not a missing one
        table = read_summary(folder / "summary.csv")
    except (OSError, ValueError) as exc:
        raise ReportError(f"{str(folder)!r} is not a record sweep's folder "
                          f"({type(exc).__name__}: {exc}); looked for record.json and "
                          "summary.csv (qencode-nb sweep RECORD_FOLDER --out ...)",
                          folder=folder, looked_for="record.json, summary.csv") from None
    table = table.astype(object).where(table.notna(), None)
    labels = [g["label"] for g in manifest["groups"]]
    for g in manifest["groups"]:
        if any((folder / g["folder"]).glob("*.ipynb")):
            write_report(folder / g["folder"], notebooks=notebooks)
    folders = known_folders(folder, [s for s in table.get("notebook", []) if s])
    counts = release_counts(table, labels)
    anchors = {g["label"]: f"release-{g['folder']}" for g in manifest["groups"]}
    count_rows = ["<tr>" + "".join(
        (f'<td><a href="#{anchors[v]}">{html.escape(v)}</a></td>' if c == "release"
         and v in anchors else _cell(v)) for c, v in r.items()) + "</tr>"
        for r in counts.to_dict("records")]
    body = [f"<h1>Record audit: {html.escape(', '.join(Path(p).name for p in manifest['record_roots']) or folder.name)}</h1>",
            f"<p>mode {html.escape(str(manifest['mode']))}, engine "
            f"{html.escape(str(manifest['engine'] or 'as recorded'))}; "
            f'<a href="summary.csv">summary.csv</a>, <a href="releases.csv">releases.csv</a>'
            "</p>", '<h2 id="releases">Per release</h2>',
            _table(list(counts.columns), count_rows)]
    body += environments_section(folder, manifest.get("environments"))
    for g in manifest["groups"]:
        part = table[table[RELEASE_COLUMN] == g["label"]]
        body.append(f'<h2 id="{anchors[g["label"]]}">{html.escape(g["label"])}</h2>'
                    f"<p>{len(part)} entries from {html.escape(str(g['source']))}"
                    + (f" (not entries, not audited: {html.escape(', '.join(g['not_entries']))})"
                       if g.get("not_entries") else "")
                    + f'; <a href="{quote(g["folder"])}/report.html">full report</a></p>')
        body.append(_table(["entry"] + [h for _, h in RUN_COLUMNS],
                           _run_rows(part, g["folder"], folders)))
    if manifest.get("empty_releases"):
        body.append('<h2 id="empty-releases">Release folders without entries</h2>'
                    + _table(["release", "why not swept"], [
                        f"<tr>{_cell(e['release'])}{_cell(scrub(e['reason'], folders))}</tr>"
                        for e in manifest["empty_releases"]]))
    claims = manifest.get("claims")
    if claims and claims.get("file") and (folder / claims["file"]).is_file():
        body.append(claims_section(folder / claims["file"], folders))
    elif claims:
        body.append(f'<h2 id="claims">Claims</h2><p class="failed">the claims audit of '
                    f"{html.escape(claims['folder'])} failed: "
                    f"{html.escape(scrub(claims.get('error') or '', folders))}</p>")
    if claims and claims.get("not_checked"):
        body.append("<p>claims not checked (one claims table per sweep): "
                    f"{html.escape(', '.join(claims['not_checked']))}</p>")
    if manifest.get("curves"):
        body.append(curves_section(folder, [
            {**c, "reason": scrub(c["reason"], folders) if c.get("reason") else None}
            for c in manifest["curves"]]))
    out = Path(out) if out is not None else folder / "report.html"
    out.write_text(f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
                   f"Record audit</title><style>{PAGE_CSS}</style></head><body>"
                   + "".join(body) + "</body></html>", encoding="utf-8")
    return out
