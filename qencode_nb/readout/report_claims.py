"""The report's claims section: a ``claims.csv`` (``qencode-nb claims FOLDER --out DIR``,
:mod:`qencode_nb.claims`) as its own table on the report page (``qencode-nb report
RUNS --claims DIR/claims.csv``): the counts per kind and status, then one row per
claim (claim, where, status, evidence), flagged rows (stale, false) first.

The section is HTML (Jinja2, autoescaped, ``templates/report_claims.html.j2``) that
:func:`qencode_nb.readout.report.render_report` places after the figures; it uses the
page's badges and no script.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent / "templates" / "report_claims.html.j2"
#: A status word's badge class on the page (report.html.j2: b-ok, b-warn, b-bad, b-na).
BADGES = {"holds": "ok", "stale": "warn", "false": "bad", "unverifiable": "na"}


def claims_section(path, source: str | None = None) -> str:
    """The section's HTML (a :class:`markupsafe.Markup`) of the claims.csv at ``path``.

    Args:
        path: a ``claims.csv`` (:func:`qencode_nb.claims.table.write_csv`).
        source: how the page names the file (default: its name); no absolute path.

    Raises:
        ReportError: the file cannot be read or is not a claims table.
    """
    import jinja2
    import markupsafe

    from qencode_nb.claims.table import STATUSES, counts, flagged, read_csv, status_word
    from qencode_nb.errors import ReportError

    path = Path(path)
    try:
        rows = read_csv(path)
    except (OSError, ValueError) as exc:
        raise ReportError(f"--claims {path}: not a claims table ({exc}); accepted: the "
                          "claims.csv `qencode-nb claims FOLDER --out DIR` writes",
                          folder=path, looked_for="claims.csv") from None
    rows.sort(key=lambda r: (not flagged(r), STATUSES.index(status_word(r.status))))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    html = env.get_template(TEMPLATE.name).render(
        source=source or path.name, counts=counts(rows), badges=BADGES,
        rows=[dict(kind=r.kind, claim=r.claim, where=r.where, status=r.status,
                   evidence=r.evidence, word=status_word(r.status)) for r in rows])
    return markupsafe.Markup(html)
