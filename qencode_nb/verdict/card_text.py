"""The verdict card's words: its headline and its check rows, from an audit's records.

Split from :mod:`qencode_nb.verdict.card` (which draws them): errors in mHa to the
entries' own precision, margins in per cent; imports no numpy.
"""

from __future__ import annotations

from qencode_nb.hamiltonian.sources import agreement


def fmt_mha(value) -> str:
    """mHa to 6 decimals (the entries' own precision), or 4 significant digits below 1 µHa."""
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:.6f}" if value == 0 or abs(value) >= 1e-3 else f"{value:.3e}"


def fmt_margin(value) -> str:
    """A margin (fraction) in per cent to one decimal, or "-"."""
    return "-" if not isinstance(value, (int, float)) else f"{100 * value:.1f}%"


def headline(r: dict, state: str, failure) -> str:
    """The card's one-line headline from an audit's records ``r`` (``state``: running,
    done or failed; ``failure``: the failure record or None): the one sentence of the
    decision, also the core of the ``verdict`` record
    (:func:`qencode_nb.verdict.tiers.verdict` adds the entry id, bits, replay, tiers).
    Errors in mHa; a number a failed check contradicts is never quoted
    (:func:`qencode_nb.verdict.consistency.unquotable`): the line says why instead."""
    if state == "running":
        done = [s for s in ("integrity", "hamiltonian", "replay", "rerun") if s in r]
        return "Audit running" + (f": {', '.join(done)} done" if done else "")
    if failure:
        return "Audit failed"
    alerts = r.get("alerts") or []
    head = f"ALERTS ({len(alerts)}: see below); " if alerts else ""
    from qencode_nb.verdict.consistency import unquotable

    unq = unquotable(r)      # numbers a failed check contradicts: never quoted
    threshold = r.get("threshold_mha")
    thr_text = (f"threshold {threshold:g}" if isinstance(threshold, (int, float))
                and "threshold_mha" not in unq else "threshold not quoted")

    def said(name: str, text: str) -> str | None:
        return None if name in unq else text

    why = list(dict.fromkeys(unq.values()))
    because = f"; not quoted: {'; '.join(why)}" if why else ""
    certified = r.get("certified")
    published = ("no published energy" if r.get("published_error_mha") is None
                 and "published_error_mha" in r and "published_error_mha" not in unq
                 else None)          # a YAML entry of one's own
    if r.get("error_mha") is None and certified is None and published:
        return f"{head}{published}, {_no_rerun(r)}: {thr_text} mHa{because}"
    if r.get("error_mha") is None and certified is None:     # no re-run
        flag = said("published_certified", "published certified"
                    if r.get("published_certified") else "published not certified")
        pub = said("published_error_mha",
                   f"published error {fmt_mha(r.get('published_error_mha'))} mHa "
                   f"({thr_text}), published margin "
                   f"{fmt_margin(r.get('margin_published'))}")
        return (f"{head}{flag + ', ' if flag else ''}{_no_rerun(r)}"
                f"{': ' + pub if pub else ''}{because}")
    cert = ("certified" if certified else "not certified" if certified is not None
            else "certification not decided")
    change = r.get("certification_change")
    if change:
        cert += f" ({change})"
    if r.get("fragile"):
        cert += ", fragile"
    regen = said("error_mha", f"regenerated error {fmt_mha(r.get('error_mha'))} mHa")
    pub = (published if published else
           said("published_error_mha", f"published {fmt_mha(r.get('published_error_mha'))}"))
    if published and regen:
        regen += " against the rebuilt exact ground energy"
    margin = said("margin_regenerated",
                  f"margin {fmt_margin(r.get('margin_regenerated'))}")
    parts = ", ".join(p for p in (pub, thr_text) if p)
    return (f"{head}{cert}"
            + (f"; {regen} ({parts})" if regen else f" ({parts})")
            + (f", {margin}" if margin else "") + because)


def _no_rerun(r: dict) -> str:
    """``no re-run (mode=replay)``; ``no re-run`` where the records name no mode."""
    return f"no re-run (mode={r['mode']})" if r.get("mode") else "no re-run"


def replay_phrase(replay: dict | None) -> str:
    """The replay in the summary line, from its record: ``replay pass (|ΔE| 1.2e-14 Ha,
    bit-identical)``, ``replay fail (...)`` or ``replay n/a (<reason>)``; ``replay not
    run`` without one."""
    if not replay:
        return "replay not run"
    status = replay.get("status")
    if status == "n/a":
        return f"replay n/a ({replay.get('reason') or 'no reason recorded'})"
    if status == "fail" and replay.get("reason"):
        return f"replay fail ({replay['reason']})"
    delta = replay.get("abs_delta_ha")
    text = "" if delta is None else f"|ΔE| {delta:.1e} Ha"
    if replay.get("identical"):
        text += ", bit-identical"
    return f"replay {status}" + (f" ({text})" if text else "")


def tier_line(tiers: dict) -> str:
    """``procedure fail, certification pass, bit-identical n/a`` from a tiers dict."""
    return ", ".join(f"{name.replace('_', '-')} {tiers[name]['status']}"
                     for name in ("procedure", "certification", "bit_identical"))


def check_rows(r: dict) -> list:
    """The card's check rows ``[(name, status, text)]`` from an audit's records ``r``:
    replay, integrity, the Hamiltonian check (pass / fail / unverified with its reason),
    the active-space warning and the alerts."""
    out = []
    rep = r.get("replay")
    if isinstance(rep, dict):

        phrase = replay_phrase(rep).removeprefix(f"replay {rep.get('status')}").strip()
        if phrase.startswith("(") and phrase.endswith(")"):
            phrase = phrase[1:-1]
        out.append(("replay", rep.get("status"), phrase or "-"))
    integ = r.get("integrity")
    if isinstance(integ, dict):
        if integ.get("recomputed") is None:
            text = "; ".join(integ.get("reasons") or []) or "SHA-256 not recomputed"
        elif integ.get("recomputed") == integ.get("recorded") and integ.get("id_matches_hash"):
            text = "SHA-256 recomputed, equal to the recorded one and the id"
        elif (integ.get("recomputed") == integ.get("recorded")
              and integ.get("id_matches_hash") is None):
            text = ("SHA-256 recomputed, equal to the recorded one (the id's suffix is not "
                    "this schema's hash)")
        else:
            text = "; ".join(integ.get("reasons") or []) or "SHA-256 differs"
        text += f"; signature {integ.get('signature')}"
        out.append(("integrity", integ.get("status"), text))
    h = r.get("hamiltonian")
    if isinstance(h, dict) and "terms_match" in h:
        ok = h.get("terms_match")
        status = h.get("status") or ("pass" if ok else ("n/a" if ok is None else "fail"))
        size = (f"{h.get('n_terms')} terms, {h.get('num_qubits')} "
                f"qubit{'' if h.get('num_qubits') == 1 else 's'}")
        source = h.get("hamiltonian_source")
        if status == "pass" and source:
            text = f"{size}, {agreement(source, (h.get('paths') or {}).get(source, {}))}"
        else:
            text = f"{size}: {h.get('reason') or 'not compared'}"
        out.append(("hamiltonian", status, text))
    boundary = (h or {}).get("active_space_boundary") if isinstance(h, dict) else None
    if isinstance(boundary, dict) and boundary.get("warning"):
        out.append(("active space", "warning", boundary["warning"]))
    alerts = r.get("alerts")
    if alerts is not None:
        out.append(("alerts", "fail" if alerts else "pass",
                    "; ".join(map(str, alerts)) if alerts else "none"))
    return out
