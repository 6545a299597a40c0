"""The verdict card: what a reader of an audit sees first.

:class:`Card` renders an audit's records (:data:`qencode_nb.verdict.records.AUDIT_RECORDS`)
as one HTML block (Jinja2) with a plain-text twin for terminals and papermill
logs: the entry, mode and engine; regenerated and published error against the
threshold (mHa) and the margins; the three tiers with their reasons; replay;
integrity; alerts; the five "Works on my QPU" answers
(:mod:`qencode_nb.verdict.qpu_questions`); and, for a failed run, the failure
first.  It reads records only, so the same card is drawn in the kernel
(:func:`show_card` / :meth:`Card.update`, from
:func:`qencode_nb.notebook.record.recorded`) and from an executed notebook
(``Card(read_records(path))``).

In ``audit.ipynb`` the card is displayed right after the parameters with the
display id :data:`DISPLAY_ID` and updated in place when the verdict is in (or
a stage fails), so it is the first output of the notebook in JupyterLab and
in the executed file alike.  HTML hooks: the root ``<div class="qnb-card"
data-state="running|done|failed" data-entry-id=...>``; the tiers
``.qnb-tier[data-tier=...]``.
"""

from __future__ import annotations

import html

from qencode_nb.notebook.stages import failure_line
from qencode_nb.verdict.card_text import check_rows, fmt_margin, fmt_mha, headline

#: The IPython display id of the audit's card (one per notebook).
DISPLAY_ID = "qnb-verdict-card"

#: Tier record keys and their labels, in order (docs/explanations/tiers.md).
TIERS = (("procedure", "1 procedure"), ("certification", "2 certification"),
         ("bit_identical", "3 bit-identical"))

#: Badge colours by status (pass/yes green, partly/n/a/incomplete/unverified amber, fail/no
#: red, unknown grey).
COLOURS = {"pass": "#1a7f37", "yes": "#1a7f37", "fail": "#cf222e", "no": "#cf222e",
           "n/a": "#9a6700", "partly": "#9a6700", "warning": "#9a6700",
           "incomplete": "#9a6700", "unverified": "#9a6700", "running": "#57606a",
           "failed": "#cf222e", "done": "#1a7f37", "unknown": "#57606a"}

_TEMPLATE = r"""
<div class="qnb-card" data-state="{{ state }}" data-entry-id="{{ entry_id|e }}"
     style="font-family: system-ui, sans-serif; border: 2px solid {{ border }};
            border-radius: 8px; padding: 10px 14px; max-width: 980px; line-height: 1.35;">
  <div style="font-size: 1.15em; font-weight: 600;">{{ headline|e }}</div>
  <div style="color: #57606a; font-size: 0.9em;">{{ entry_id|e }} · mode {{ mode|e }} · engine {{ engine|e }}</div>
  {% if environment %}<div class="qnb-environment" style="color: #57606a; font-size: 0.9em;">{{ environment|e }}</div>{% endif %}
  {% if failure %}
  <div class="qnb-failure" style="margin: 8px 0; padding: 6px 8px; background: #ffebe9; border-left: 4px solid #cf222e;">
    <b>Failed:</b> {{ failure|e }}</div>
  {% endif %}
  {% if errors %}
  <table style="margin-top: 8px; border-collapse: collapse;">
    <tr><th style="text-align:left; padding-right: 14px;"></th><th style="text-align:right; padding-right: 14px;">error (mHa)</th><th style="text-align:right;">margin</th></tr>
    {% for label, err, mar in errors %}
    <tr><td style="padding-right: 14px;">{{ label }}</td><td style="text-align:right; padding-right: 14px; font-family: monospace;">{{ err }}</td><td style="text-align:right; font-family: monospace;">{{ mar }}</td></tr>
    {% endfor %}
  </table>
  {% endif %}
  {% if tiers %}
  <div style="margin-top: 8px;">
    {% for key, label, status, reasons in tiers %}
    <div class="qnb-tier" data-tier="{{ key }}" data-status="{{ status|e }}" style="margin: 3px 0;">
      {{ badge(status) }} <b>tier {{ label }}</b>
      <span style="color: #57606a; font-size: 0.9em;">{{ reasons|join("; ")|e }}</span></div>
    {% endfor %}
  </div>
  {% endif %}
  <div style="margin-top: 6px;">
    {% for label, status, text in checks %}
    <div class="qnb-check" data-check="{{ label }}" style="margin: 3px 0;">{{ badge(status) }} <b>{{ label }}</b>
      <span style="color: #57606a; font-size: 0.9em;">{{ text|e }}</span></div>
    {% endfor %}
  </div>
  {% if questions %}
  <div style="margin-top: 6px;"><b>Works on my QPU</b>
    {% for q in questions %}
    <div class="qnb-question" data-question="{{ q.question }}" style="margin: 2px 0 2px 10px;">{{ badge(q.answer) }} {{ q.question }}
      <span style="color: #57606a; font-size: 0.9em;">{{ q.reason|e }}</span></div>
    {% endfor %}
  </div>
  {% endif %}
</div>
"""


def _badge(status) -> str:
    text = html.escape(str(status))
    colour = COLOURS.get(str(status), "#57606a")
    return (f'<span class="qnb-badge" style="display:inline-block; min-width: 3.2em; '
            f'text-align:center; padding: 0 6px; border-radius: 10px; color: white; '
            f'font-size: 0.85em; background: {colour};">{text}</span>')


def hamiltonian_phrase(r: dict) -> str:
    """What the card's engine line adds when the re-run (or, without one, the replay)
    ran on the rebuilt qubit Hamiltonian (audit.ipynb ``hamiltonian = "rebuilt"``, or an
    entry that stores none: the ``rerun`` record's ``config.hamiltonian``, the
    ``replay`` record's ``hamiltonian``): ``", re-run on the rebuilt Hamiltonian
    (of_bridge, rebuilt here)"``; ``""`` on the stored one."""
    from qencode_nb.engines.selection import REBUILT_ORIGIN

    rerun, replay = r.get("rerun"), r.get("replay")
    if isinstance(rerun, dict) and isinstance(rerun.get("config"), dict):
        what, used = "re-run", rerun["config"].get("hamiltonian")
    elif isinstance(replay, dict):
        what, used = "replay", replay.get("hamiltonian")
    else:
        return ""
    if used != REBUILT_ORIGIN:
        return ""
    return f", {what} on the rebuilt Hamiltonian (of_bridge, rebuilt here)"


class Card:
    """The verdict card of one audit.

    Args:
        records: the audit's records ``{name: value}`` (errors in mHa, energies
            in Ha, margins as fractions), complete or partial.
        parameters: the notebook parameters (``entry``, ``mode``, ``engine``),
            used before the records name them.
        state: "running" (no ``done`` record yet), "done" or "failed"
            (an ``error`` record); default: from the records.
    """

    def __init__(self, records: dict, parameters: dict | None = None,
                 state: str | None = None):
        self.records = dict(records)
        self.parameters = dict(parameters or {})
        if state is None:
            state = ("failed" if isinstance(self.records.get("error"), dict)
                     else "done" if "tiers" in self.records else "running")
        self.state = state

    # -- the facts, shared by both renderings --------------------------------------
    def facts(self) -> dict:
        """What the card shows, as plain data (also its text twin's source)."""
        r, p = self.records, self.parameters
        entry_id = r.get("entry_id") or str(p.get("entry", "?"))
        engine = r.get("engine") or {}
        engine_text = (engine.get("used") or "recorded backend") if isinstance(engine, dict) \
            else str(engine)
        if isinstance(engine, dict) and engine.get("reason"):
            engine_text += f" ({engine['reason']})"
        if isinstance(engine, dict) and engine.get("faithful"):
            engine_text += " (faithful engine)"
        elif isinstance(engine, dict) and engine.get("faithful_reason"):
            engine_text += f" (plain QNode: {engine['faithful_reason']})"
        engine_text += hamiltonian_phrase(r)
        err = r.get("error")
        failure = failure_line(err) if isinstance(err, dict) else None
        threshold = r.get("threshold_mha")
        errors = []
        if "published_error_mha" in r:
            from qencode_nb.verdict.consistency import unquotable

            unq = unquotable(r)      # a number a failed check contradicts reads "not quoted"

            def shown(name, text):
                return "not quoted" if name in unq else text

            if r.get("error_mha") is not None:
                errors.append(("regenerated", shown("error_mha", fmt_mha(r.get("error_mha"))),
                               shown("margin_regenerated",
                                     fmt_margin(r.get("margin_regenerated")))))
            if r.get("published_error_mha") is None and "published_error_mha" not in unq:
                errors.append(("published", "n/a (none published)", "n/a"))   # own YAML
            else:
                errors.append(("published", shown("published_error_mha",
                                                  fmt_mha(r.get("published_error_mha"))),
                               shown("margin_published",
                                     fmt_margin(r.get("margin_published")))))
            errors.append(("threshold", shown("threshold_mha", f"{threshold:g}")
                           if isinstance(threshold, float) else "-", ""))
        tiers = []
        for key, label in TIERS:
            t = (r.get("tiers") or {}).get(key)
            if isinstance(t, dict):
                tiers.append((key, label, t.get("status"), list(t.get("reasons") or [])))
        return {"entry_id": entry_id, "mode": r.get("mode") or p.get("mode") or "?",
                "engine": engine_text, "environment": self._environment(),
                "state": self.state, "failure": failure,
                "headline": self._headline(failure), "errors": errors, "tiers": tiers,
                "checks": self._checks(), "questions": self._questions(),
                "border": self.border()}

    def _environment(self) -> str | None:
        """The environment line: the BLAS kernel profile used (and why it is not the
        one asked for), the kernel of each OpenBLAS copy, the numeric
        fingerprint's hash (:mod:`qencode_nb.notebook.fingerprint`) and the package
        stack (:func:`qencode_nb.environment.in_force.stack_text`)."""
        r = self.records
        profile = r.get("blas_profile")
        numeric = (r.get("provenance") or {}).get("numeric") or {}
        if not isinstance(profile, dict) and not numeric:
            return None
        parts = []
        if isinstance(profile, dict):
            kernels = profile.get("kernels") or {}
            triple = ", ".join(f"{c} {k}" for c, k in sorted(kernels.items()))
            used = profile.get("used")
            text = (f"BLAS kernels: {used} profile" if used not in (None, "host")
                    else "BLAS kernels: the host's") + (f" ({triple})" if triple else "")
            if profile.get("fallback"):
                text += f"; {profile['requested']} not used: {profile['fallback']}"
            parts.append(text)
            found = blas_found(kernels, (r.get("provenance") or {}).get("blas"),
                               r.get("blas_threads"))
            if found:
                parts.append(found)
        if numeric.get("hash"):
            parts.append(f"numeric fingerprint {numeric['hash']}")
        from qencode_nb.environment.in_force import stack_text

        if stack_text(r.get("stack")):
            parts.append("package " + stack_text(r.get("stack")))
        return " · ".join(parts)

    def _headline(self, failure) -> str:
        return headline(self.records, self.state, failure)

    def border(self) -> str:
        """The card's colour: red when failed or with alerts, amber with a warning
        (or while running: grey), green otherwise."""
        r = self.records
        if self.state == "failed" or r.get("alerts"):
            return COLOURS["fail"]
        if self.state == "running":
            return COLOURS["running"]
        boundary = (r.get("hamiltonian") or {}).get("active_space_boundary") \
            if isinstance(r.get("hamiltonian"), dict) else None
        if isinstance(boundary, dict) and boundary.get("warning"):
            return COLOURS["warning"]
        if isinstance(r.get("hamiltonian"), dict) and \
                r["hamiltonian"].get("status") == "unverified":
            return COLOURS["warning"]
        return COLOURS["pass"]

    def _checks(self) -> list:
        return check_rows(self.records)

    def _questions(self) -> list:
        if self.state == "running":
            return []
        items = self.records.get("works_on_my_qpu")
        if not isinstance(items, list):
            from qencode_nb.verdict.qpu_questions import answers

            items = answers(self.records)
        return items

    # -- renderings ----------------------------------------------------------------
    def html(self) -> str:
        """The card as one HTML ``<div class="qnb-card">`` (inline styles only)."""
        import jinja2

        env = jinja2.Environment(autoescape=False)
        env.globals.update(badge=_badge, colour=lambda s: COLOURS.get(s, "#57606a"))
        return env.from_string(_TEMPLATE).render(**self.facts()).strip()

    def text(self) -> str:
        """The card as plain text (a few lines, for terminals and logs)."""
        f = self.facts()
        lines = [f["headline"], f"{f['entry_id']} | mode {f['mode']} | engine {f['engine']}"]
        if f["environment"]:
            lines.append(f["environment"])
        if f["failure"]:
            lines.insert(0, f"FAILED {f['failure']}")
        for key, label, status, reasons in f["tiers"]:
            lines.append(f"tier {label}: {status}" + (f" ({'; '.join(reasons)})"
                                                      if reasons else ""))
        for label, status, text in f["checks"]:
            lines.append(f"{label}: {status} ({text})")
        if f["questions"]:
            lines.append("works on my QPU: " + ", ".join(
                f"{q['question']} {q['answer']}" for q in f["questions"]))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        return self.text()

    def bundle(self) -> dict:
        """The display bundle ``{"text/html", "text/plain"}``."""
        return {"text/html": self.html(), "text/plain": self.text()}


def show_card(**parameters) -> "LiveCard":
    """Display the card now (state "running") with :data:`DISPLAY_ID`; the
    returned :class:`LiveCard` updates it in place.

    Args:
        parameters: the notebook parameters (``entry``, ``mode``, ``engine``).
    """
    card = LiveCard(parameters)
    card.show()
    return card


#: The LiveCard whose failure hook is registered in this kernel (one at a time).
_ACTIVE: dict = {"card": None}


class LiveCard:
    """The card of the running audit, displayed once and updated in place
    (IPython ``display(..., display_id=...)`` / ``update_display``; papermill's
    nbclient and JupyterLab both honour the update).

    It draws the records of the kernel's current run only
    (:func:`qencode_nb.notebook.record.recorded`, emptied by the pin cell's
    :func:`~qencode_nb.notebook.record.start_run`), and a second card shown in the
    same kernel replaces the first one's failure hook: a card never shows a record
    or a parameter of an earlier run."""

    def __init__(self, parameters: dict):
        self.parameters = parameters

    def card(self, state: str | None = None) -> Card:
        from qencode_nb.notebook.record import recorded

        return Card(recorded(), self.parameters, state)

    def show(self) -> None:
        """Display the running card, and redraw it as failed after any cell
        that raises (IPython's ``post_run_cell`` event), so a failed run's
        reason is the first thing the notebook shows."""
        from IPython import get_ipython
        from IPython.display import display

        display(self.card("running").bundle(), raw=True, display_id=DISPLAY_ID)
        shell = get_ipython()
        if shell is not None:
            previous = _ACTIVE["card"]
            if previous is not None:
                try:
                    shell.events.unregister("post_run_cell", previous._after_cell)
                except ValueError:   # not registered in this shell
                    pass
            shell.events.register("post_run_cell", self._after_cell)
            _ACTIVE["card"] = self

    def _after_cell(self, result) -> None:
        exc = getattr(result, "error_in_exec", None)
        if exc is None:
            return
        from qencode_nb.notebook.record import recorded

        records = recorded()
        if not isinstance(records.get("error"), dict):  # raised outside a stage
            records["error"] = {"stage": "notebook", "type": type(exc).__name__,
                                "message": str(exc)}
        from IPython.display import update_display

        update_display(Card(records, self.parameters, "failed").bundle(), raw=True,
                       display_id=DISPLAY_ID)

    def update(self, state: str | None = None) -> Card:
        """Redraw from the records so far; returns the :class:`Card`."""
        from IPython.display import update_display

        card = self.card(state)
        update_display(card.bundle(), raw=True, display_id=DISPLAY_ID)
        return card


def redraw_card(path) -> bool:
    """Redraw the card of an executed audit notebook from its records, in the file.

    For a run whose kernel could not redraw it: a dead or killed kernel, a run
    timeout, a lost worker leave the card "running"; the runner then records the
    ``error`` (:func:`qencode_nb.executor.execute.mark_failed`) and this draws the
    failed card, with the stage and the reason, where the running one was (the
    first output whose HTML is a ``qnb-card``).

    Args:
        path: an executed ``audit.ipynb`` (str or Path).

    Returns:
        True when a card was redrawn; False when the file is not a readable
        notebook, holds no card, or its records hold no ``error``.
    """
    import nbformat

    from qencode_nb.notebook.record import iter_records

    try:
        nb = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError):
        return False
    records = dict(iter_records(nb))
    if not isinstance(records.get("error"), dict):
        return False
    parameters = (nb.metadata.get("papermill") or {}).get("parameters") or {}
    for cell in nb.cells:
        for output in cell.get("outputs") or []:
            if 'class="qnb-card"' in str((output.get("data") or {}).get("text/html", "")):
                output["data"] = Card(records, parameters, "failed").bundle()
                nbformat.write(nb, str(path))
                return True
    return False


def blas_found(kernels: dict, blas: dict | None, blas_threads) -> str | None:
    """The card's words for a host whose BLAS copies the profiles cannot all name (issue 51:
    a numpy on Apple's Accelerate, an aarch64 host): the BLAS libraries threadpoolctl found
    (``openblas 0.3.27 (scipy)``; ``none``), the copies of
    :data:`~qencode_nb.notebook.blas_profiles.COPIES` without an OpenBLAS kernel, and BLAS
    threads unmeasured where ``blas_threads`` is None.  None where every copy has a kernel.

    Args:
        kernels: ``{copy: kernel}`` the pin measured (``blas_profile.kernels``).
        blas: the provenance's ``blas`` record (:func:`qencode_nb.notebook.pins.blas_report`).
        blas_threads: the recorded ``blas_threads`` (None: not measured).
    """
    from qencode_nb.notebook.blas_profiles import COPIES
    from qencode_nb.notebook.pins import copy_of

    unnamed = [c for c in COPIES if not kernels.get(c)]
    if not unnamed and blas_threads is not None:
        return None
    libraries = [f"{p.get('library')} {p.get('version') or ''}".strip()
                 + f" ({copy_of(p.get('filepath')) or p.get('filepath')})"
                 for p in (blas or {}).get("pools") or [] if p.get("user_api") == "blas"]
    text = f"BLAS libraries found: {', '.join(libraries) or 'none'}"
    if unnamed:
        text += (f"; no OpenBLAS kernel named for {', '.join(unnamed)} (threadpoolctl finds "
                 "no OpenBLAS there)")
    if blas_threads is None:
        text += "; BLAS threads not measured"
    return text

