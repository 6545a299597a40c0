"""The published numbers checked before anything is quoted.

An entry edited and re-sealed (its SHA-256 recomputed after the edit) passes
integrity, so the numbers themselves are checked: every number the audit reads
(:data:`qencode_nb.entry.numbers.NUMBERS`: published energy, stated gap, the reference energies HF, CASCI
and exact qubit ground, the threshold, the tapering constant) must be finite,
and they must agree with each other:

- ``gap``: the stated ``abs_vqe_exact_gap`` equals |E_published - E_exact|
  (relative :data:`qencode_nb.rules.GAP_CONSISTENCY_REL`);
- ``variational``: neither the published nor the re-run energy lies more than
  :data:`qencode_nb.rules.VARIATIONAL_TOL_HA` below the exact ground energy;
- ``references``: the exact qubit ground energy and the CASCI energy do not lie
  above the Hartree-Fock energy (the HF state is in both spaces; same tolerance);
- ``certification``: the published certification flag (``trusted``) says what
  the stated gap against the threshold says (QEncode: trusted = gap < threshold);
- ``early stop``: a published ``early_stopped`` False with fewer restarts run than
  requested (the generator's restart loop ends early only by early stop);
- ``rebuilt``: the recorded exact qubit ground, CASCI and Hartree-Fock energies equal
  what the Hamiltonian check recomputed (:data:`qencode_nb.rules.REFERENCE_MATCH_HA`);
- ``rerun``: the re-run energy is finite.

Nothing here refuses an entry: the audit runs and the check fails, naming the
field and its value (a refusal at load time would leave no card saying what is
wrong).  :func:`consistency` returns the ``consistency`` record; its
``contradicts`` names the verdict records (``published_error_mha``, ``error_mha``,
...) that a failed check contradicts, with the reason, and :func:`unquotable`
adds a failed replay, so the card's headline and the verdict line say why instead
of quoting them.  Energies in Ha.  Imports no numpy.
"""

from __future__ import annotations

import math

from qencode_nb.entry.numbers import NUMBERS, field_name
from qencode_nb.rules import GAP_CONSISTENCY_REL, REFERENCE_MATCH_HA, VARIATIONAL_TOL_HA

#: The record names a bad value of each number contradicts (the numbers:
#: :data:`qencode_nb.entry.numbers.NUMBERS`).
CONTRADICTS = {
    "published_energy": ("published_error_mha", "margin_published", "published_certified"),
    "published_error": ("published_error_mha", "margin_published", "published_certified",
                        "movement_mha"),
    "exact_ground_energy": ("reference_energy", "published_error_mha", "margin_published",
                            "error_mha", "margin_regenerated", "certified", "movement_mha"),
    "casci_energy": ("error_mha", "margin_regenerated", "certified"),
    "hf_energy": (),
    "threshold": ("threshold_mha", "margin_published", "published_certified",
                  "margin_regenerated", "certified"),
    "bk_constant_correction_ha": ("error_mha", "margin_regenerated", "certified",
                                  "movement_mha"),
}

#: What a bad value of each number breaks, for the reason text.
CONSEQUENCE = {
    "published_energy": "the published gap cannot be recomputed and no energy can equal it "
                        "(replay, tier 3)",
    "published_error": "the published error and margin are not numbers",
    "exact_ground_energy": "no error (published or regenerated) can be computed against it",
    "casci_energy": "the re-run's early-stop target (the CASCI energy) is not a number",
    "hf_energy": "the reference energies cannot be checked against it",
    "threshold": "no certification can be decided against it",
    "bk_constant_correction_ha": "every energy of the tapered problem includes it",
}


def is_number(value) -> bool:
    """A finite int or float (not a bool)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _fmt(value) -> str:
    return repr(value) if not isinstance(value, float) or not math.isfinite(value) \
        else f"{value:.12g}"


def consistency(entry, rerun_energy: float | None = None,
                hamiltonian=None) -> dict:
    """Internal consistency of the published numbers and of the re-run (Ha).

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.  A number it does not
            state (None) is not checked.
        rerun_energy: the re-run energy (Ha), or None without a re-run.
        hamiltonian: the :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`
            (:func:`qencode_nb.hamiltonian.check.hamiltonian_check`), or None: its recomputed energies check the recorded
            references (``rebuilt``: exact qubit ground energy against the stored
            terms' own, CASCI and Hartree-Fock against the rebuild's, within
            :data:`~qencode_nb.rules.REFERENCE_MATCH_HA`).

    Returns:
        the ``consistency`` record: ``{"status": "pass"|"fail"|"n/a", "reasons": [...],
        "published_gap_recomputed": |E_published - E_exact| (NaN when either is not
        a number, None when one is not stated), "published_gap_stated",
        ...}``; "n/a" (with the reason) for an entry that publishes no energy (a YAML
        of one's own) unless a check on what it does state fails; ``{...
        "checks": [{"check", "status", "fields", "reason", "contradicts"}],
        "contradicts": {record name: the first reason contradicting it}}``.  Each failing reason names the field (its path in
        the entry file) and the value.
    """
    checks, contradicts = [], {}

    def fail(check: str, fields: list, reason: str, names=()) -> None:
        checks.append({"check": check, "status": "fail", "fields": fields, "reason": reason,
                       "contradicts": list(names)})
        for name in names:
            contradicts.setdefault(name, reason)

    def ok(check: str, fields: list) -> None:
        checks.append({"check": check, "status": "pass", "fields": fields, "reason": None,
                       "contradicts": []})

    bad = set()
    for attr, _, _ in NUMBERS:
        names = CONTRADICTS[attr]
        value = getattr(entry, attr, None)
        if value is None:
            continue
        path = field_name(entry, attr)
        if is_number(value):
            ok("finite", [path])
            continue
        bad.add(attr)
        fail("finite", [path], f"{path} is {_fmt(value)} (accepted: a finite number, "
             f"{'Ha' if attr != 'threshold' else 'Ha, > 0'}); {CONSEQUENCE[attr]}", names)

    e_pub, e_exact = entry.published_energy, entry.exact_ground_energy
    stated = entry.published_error
    gap = None
    if e_pub is not None and e_exact is not None:
        gap = (abs(e_pub - e_exact) if is_number(e_pub) and is_number(e_exact)
               else float("nan"))
    gap_fields = [field_name(entry, a) for a in
                  ("published_error", "published_energy", "exact_ground_energy")]
    if gap is not None and stated is not None and not bad & {"published_energy",
                                                              "published_error",
                                                              "exact_ground_energy"}:
        if abs(gap - stated) > GAP_CONSISTENCY_REL * max(gap, 1e-12) + 1e-15:
            fail("gap", gap_fields,
                 f"stated published error {field_name(entry, 'published_error')} = "
                 f"{stated:.9e} Ha but |E_published - E_exact| = {gap:.9e} Ha",
                 ("published_error_mha", "margin_published", "published_certified",
                  "movement_mha"))
        else:
            ok("gap", gap_fields)

    if e_exact is None and is_number(entry.reference_energy):
        e_exact = entry.reference_energy   # a YAML of one's own: the rebuilt exact ground
    if is_number(e_exact):
        for label, attr, energy, names in (
                ("published", "published_energy", e_pub,
                 ("published_error_mha", "margin_published", "published_certified")),
                ("re-run", None, rerun_energy, ("error_mha", "margin_regenerated",
                                                 "certified", "movement_mha"))):
            if not is_number(energy):
                continue
            where = field_name(entry, attr) if attr else "the re-run energy"
            if energy < e_exact - VARIATIONAL_TOL_HA:
                fail("variational", [where, field_name(entry, "exact_ground_energy")],
                     f"{label} energy {energy:.12f} Ha lies {e_exact - energy:.3e} Ha "
                     f"below the exact ground energy "
                     f"({field_name(entry, 'exact_ground_energy')}; variational bound "
                     "broken)", names)
            else:
                ok("variational", [where])

    e_hf = entry.hf_energy
    if is_number(e_hf):
        for attr in ("exact_ground_energy", "casci_energy"):
            value = getattr(entry, attr, None)
            if not is_number(value):
                continue
            path = field_name(entry, attr)
            if value > e_hf + VARIATIONAL_TOL_HA:
                fail("references", [path, field_name(entry, "hf_energy")],
                     f"{path} = {value:.12f} Ha lies {value - e_hf:.3e} Ha above the "
                     f"Hartree-Fock energy {field_name(entry, 'hf_energy')} = "
                     f"{e_hf:.12f} Ha (the HF state is in the space it is the ground "
                     "energy of)", ("reference_energy", "error_mha", "certified"))
            else:
                ok("references", [path])

    flag, thr = entry.published_certified, entry.threshold
    if isinstance(flag, bool) and is_number(stated) and is_number(thr) \
            and "published_error" not in bad:
        below = stated < thr
        flag_path = ("published.certified" if getattr(entry, "kind", None) == "params-yaml"
                     else "results.quality.trusted")
        if flag != below:
            fail("certification", [flag_path, field_name(entry, "published_error")],
                 f"{flag_path} is {flag} but the stated published error "
                 f"{stated * 1e3:.6f} mHa is {'below' if below else 'not below'} the "
                 f"threshold {thr * 1e3:g} mHa", ("published_certified",))
        else:
            ok("certification", [flag_path])

    for attr, key, what in (
            ("exact_ground_energy", "ground_energy_stored_terms",
             "the stored Hamiltonian's exact ground energy"),
            ("casci_energy", "e_casci_rebuilt", "the rebuilt CASCI energy"),
            ("hf_energy", "e_hf_rebuilt", "the rebuilt Hartree-Fock energy")):
        recorded = getattr(entry, attr, None)
        computed = getattr(hamiltonian, key, None)
        if attr == "exact_ground_energy" and not is_number(computed):
            computed = getattr(hamiltonian, "ground_energy", None)
        if not (is_number(recorded) and is_number(computed)) or attr in bad:
            continue
        path = field_name(entry, attr)
        if abs(recorded - computed) > REFERENCE_MATCH_HA:
            names = CONTRADICTS[attr]
            fail("rebuilt", [path], f"{path} = {recorded:.12f} Ha but {what} is "
                 f"{computed:.12f} Ha ({recorded - computed:+.3e} Ha; accepted: within "
                 f"{REFERENCE_MATCH_HA:.0e} Ha)",
                 tuple(names) + (("reference_energy",) if attr == "exact_ground_energy"
                                 else ()))
        else:
            ok("rebuilt", [path])

    ran, asked = entry.published_restarts_run, entry.restarts_requested
    if entry.published_early_stopped is False and entry.ansatz != "adapt" and \
            isinstance(ran, int) and isinstance(asked, int) and ran < asked:
        flag = ("published.early_stopped" if getattr(entry, "kind", None) == "params-yaml"
                else "run_config.early_stopped")
        fail("early stop", [flag], f"{flag} is False but {ran} of {asked} restarts ran "
             "(the generator's restart loop ends early only by early stop)")

    if rerun_energy is not None:
        if is_number(rerun_energy):
            ok("rerun", ["the re-run energy"])
        else:
            fail("rerun", ["the re-run energy"],
                 f"the re-run energy is {_fmt(rerun_energy)}: no regenerated error",
                 ("error_mha", "margin_regenerated", "certified", "movement_mha"))

    reasons = [c["reason"] for c in checks if c["status"] == "fail"]
    status = "fail" if reasons else "pass"
    if not reasons and entry.no_published_reason:     # nothing published to be consistent
        status, reasons = "n/a", [entry.no_published_reason]
    return {"status": status, "reasons": reasons,
            "published_gap_recomputed": gap, "published_gap_stated": stated,
            "checks": checks, "contradicts": contradicts}


def unquotable(records: dict) -> dict:
    """``{record name: reason}``: the verdict numbers a failed check contradicts, so
    a headline or summary must not quote them: the ``consistency`` record's
    ``contradicts``, and a failed replay (the stored parameters do not give the
    published energy) for the published error and margin."""
    out = dict(((records.get("consistency") or {}).get("contradicts") or {}))
    rep = records.get("replay")
    if isinstance(rep, dict) and rep.get("status") == "fail":
        delta = rep.get("abs_delta_ha")
        why = rep.get("reason") or (f"|ΔE| {delta:.3e} Ha" if is_number(delta)
                                    else f"|ΔE| {delta!r}")
        reason = (f"the replay fails ({why}): the stored parameters do not give the "
                  "published energy")
        for name in ("published_error_mha", "margin_published"):
            out.setdefault(name, reason)
    return out


def failed_reasons(record: dict, name: str) -> list[str]:
    """The reasons of the failed checks of a ``consistency`` record that contradict
    the verdict record ``name`` (e.g. ``"certified"``), in check order."""
    return [c["reason"] for c in (record or {}).get("checks") or []
            if c.get("status") == "fail" and name in (c.get("contradicts") or [])]
