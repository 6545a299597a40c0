"""Tiers 2 and 3, the margin and the verdict (docs/explanations/tiers.md).

- error = |E - E_ref| with E_ref the exact ground energy of the qubit
  Hamiltonian (QEncode schema 4.0.0, results.quality.gap_reference
  "exact_qubit_hamiltonian"; for a YAML entry of one's own that publishes none, the
  rebuilt Hamiltonian's, ``Entry.reference_energy``); certified when error < threshold
  (results.quality.gap_threshold, 0.01 Ha in QEncode v4).
- margin = (threshold - error) / threshold; a certified entry with margin
  below :data:`qencode_nb.rules.FRAGILE_MARGIN` is fragile.
- bit-identical: the re-run energy equals the published one to the last bit
  (compared as floats and as ``float.hex``); claimed only on the reference
  environment, ``n/a`` with the reasons elsewhere.

Every tier that reads a number fails when that number is not finite or is
contradicted by another (:mod:`qencode_nb.verdict.consistency`), naming the field:
tier 2 on the exact ground energy, threshold, tapering constant or re-run energy;
tier 3 on the published or re-run energy.  The summary line (the ``verdict`` record)
is the card's headline (:func:`qencode_nb.verdict.card_text.headline`) with the entry
id, the bits, the replay and the tiers: it never quotes a number a failed check
contradicts (:func:`qencode_nb.verdict.consistency.unquotable`); it says why instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.rules import FRAGILE_MARGIN
from qencode_nb.rerun.compare import compare
from qencode_nb.entry.numbers import field_name
from qencode_nb.verdict.consistency import consistency, failed_reasons, is_number
from qencode_nb.verdict.records import VERDICT_RECORDS

#: Why tiers 2 and 3 read n/a without a re-run.
NO_RERUN = "no re-run (mode=replay)"


@dataclass
class Verdict:
    """The verdict of one audit: every field is an audit record of that name
    (:data:`qencode_nb.verdict.records.VERDICT_RECORDS`) except ``summary``,
    recorded as ``verdict``.  Errors and thresholds in mHa, energies in Ha.

    ``bit_identical`` is the measured fact (re-run energy equal to the
    published one to the last bit, whatever tier 3 says); ``difference`` is
    :func:`qencode_nb.rerun.compare.compare`; ``movement_mha`` is signed
    (regenerated - published error).
    """

    threshold_mha: float
    published_error_mha: float | None     # None: the entry publishes no energy
    published_certified: bool | None
    margin_published: float | None
    reference_energy: float
    consistency: dict
    alerts: list
    error_mha: float | None
    movement_mha: float | None
    margin_regenerated: float | None
    certified: bool | None
    fragile: bool | None
    certification_change: str | None
    bit_identical: bool | None
    difference: dict | None
    tiers: dict
    summary: str

    def to_record(self) -> dict:
        """``{record name: value}`` for :data:`VERDICT_RECORDS` plus ``verdict``."""
        out = {name: getattr(self, name) for name in VERDICT_RECORDS}
        out["verdict"] = self.summary
        return out


def margin(error: float, threshold: float) -> float:
    """(threshold - error) / threshold; both in Ha, or both in mHa (a fraction; floats or
    numpy arrays alike; docs/explanations/margin.md)."""
    return (threshold - error) / threshold


def is_fragile(certified, margin_fraction):
    """The fragile rule: certified with a margin below :data:`qencode_nb.rules.FRAGILE_MARGIN`
    (a bool for one entry, elementwise for numpy arrays of flags and margins).  Every
    reader (the margin plot's caption, the robustness summary) asks this function."""
    return certified & (margin_fraction < FRAGILE_MARGIN)


def verdict(entry, *, rerun, provenance: dict, blas_threads: int,
            blas_coretype: str | None = None, integrity=None, replay=None,
            procedure=None, hamiltonian=None, stack=None, mode: str | None = None) -> Verdict:
    """The three tiers, margins and the one-line summary (docs/explanations/tiers.md).

    Args:
        entry: the :class:`~qencode_nb.entry.model.Entry`.
        rerun: the :class:`~qencode_nb.rerun.rerun.Rerun`, or None (no
            re-run: tiers 2 and 3 read n/a, "no re-run (mode=replay)").
        provenance: :func:`qencode_nb.notebook.provenance.collect` output.
        blas_threads: the BLAS thread count threadpoolctl measured.
        blas_coretype: the OPENBLAS_CORETYPE in force, if any.
        integrity: the :class:`~qencode_nb.trust.integrity.Integrity`;
            a failure is named in the summary line.
        replay: the :class:`~qencode_nb.rerun.replay.Replay`; a failure is
            named in the summary line.
        procedure: the :class:`~qencode_nb.verdict.procedure.Procedure`
            (tier 1); None: tier 1 n/a.
        hamiltonian: the :class:`~qencode_nb.hamiltonian.hamrecord.HamiltonianCheck`
            (:func:`qencode_nb.hamiltonian.check.hamiltonian_check`), or None; its ``status``
            "fail" (the stored terms equal no generator path) is an alert.
        stack: the ``stack`` record
            (:func:`qencode_nb.environment.in_force.stack_in_force`), or None; a stack asked
            for that did not run (``not_used``) makes tier 3 ``n/a`` with that reason.

    Returns:
        a :class:`Verdict`; certified when the regenerated error is below the
        entry's threshold (QEncode schema 4.0.0, results.quality.gap_threshold),
        fragile when certified with margin below
        :data:`qencode_nb.rules.FRAGILE_MARGIN`.
    """
    rerun_energy = None if rerun is None else rerun.energy
    integrity = None if integrity is None else integrity.to_record()
    replay = None if replay is None else replay.to_record()
    procedure = None if procedure is None else procedure.to_record()
    thr = entry.threshold
    pub_err = entry.published_error
    na = entry.no_published_reason      # a YAML of one's own: no published comparisons
    cons = consistency(entry, rerun_energy, hamiltonian)
    alerts = []
    if integrity and integrity.get("status") == "fail":
        why = "; ".join(map(str, integrity.get("reasons") or []))
        alerts.append("INTEGRITY FAIL" + (f": {why}" if why else ""))
    if replay and replay.get("status") == "fail":
        alerts.append(f"REPLAY FAIL ({_replay_why(replay)})")
    if hamiltonian is not None and hamiltonian.status == "fail":
        alerts.append("HAMILTONIAN FAIL: " + str(hamiltonian.reason))
    if cons["status"] == "fail":
        alerts.append("INCONSISTENT: " + "; ".join(cons["reasons"]))
    alert_text = "".join(f"; {a}" for a in alerts)
    cannot = getattr(entry, "not_checkable", {}).get("rerun")
    no_rerun = NO_RERUN if cannot is None else f"no re-run: {cannot}"
    out = {"threshold_mha": _mha(thr), "published_error_mha": _mha(pub_err),
           "published_certified": entry.published_certified,
           "margin_published": _margin(pub_err, thr),
           "reference_energy": entry.reference_energy, "consistency": cons,
           "alerts": alerts}
    tiers = {"procedure": (procedure or {}).get("tier") or
             {"status": "n/a", "reasons": ["tier 1 was not evaluated"]},
             "certification": {"status": "n/a", "reasons": [no_rerun]},
             "bit_identical": {"status": "n/a", "reasons": [no_rerun]}}
    if rerun_energy is None:
        out.update({"error_mha": None, "movement_mha": None, "margin_regenerated": None,
                    "certified": None, "fragile": None, "certification_change": None,
                    "bit_identical": None, "difference": None, "tiers": tiers})
        out["summary"] = _summary(entry, out, replay, mode,
                                  f"published error n/a ({na})" if na else None, alert_text)
        return Verdict(**out)
    exact = entry.reference_energy
    err = abs(rerun_energy - exact)
    m = _margin(err, thr)
    broken = failed_reasons(cons, "certified")
    if broken:      # the error or the threshold it is compared with is not a number
        cert = fragile = change = None
        tiers["certification"] = {
            "status": "fail",
            "reasons": broken + [f"regenerated error {_num_text(_mha(err), '.6f')} mHa "
                                 f"against threshold {_num_text(_mha(thr), '.3f')} mHa: "
                                 "no certification can be decided"]}
    else:
        cert = err < thr
        fragile = bool(is_fragile(cert, m))
        change = None
        if entry.published_certified is not None and cert != entry.published_certified \
                and "published_certified" not in cons["contradicts"]:
            change = "gained certification" if cert else "lost certification"
        tiers["certification"] = {
            "status": "pass" if cert else "fail",
            "reasons": [f"regenerated error {err * 1e3:.6f} mHa "
                        f"{'<' if cert else '>='} threshold {thr * 1e3:.3f} mHa"]}
    if entry.reference_source == "rebuilt":
        tiers["certification"]["reasons"].append(
            f"error against the rebuilt Hamiltonian's exact ground energy {exact:.12f} Ha "
            "(the entry publishes none)")
    if entry.is_own and entry.threshold_source != "results.quality.gap_threshold":
        tiers["certification"]["reasons"].append(f"threshold from {entry.threshold_source}")
    if na:
        tiers["bit_identical"] = {"status": "n/a", "reasons": [na]}
        out.update({"error_mha": err * 1e3, "movement_mha": None, "margin_regenerated": m,
                    "certified": cert, "fragile": fragile, "certification_change": None,
                    "bit_identical": None, "difference": None, "tiers": tiers})
        out["summary"] = _summary(entry, out, replay, mode, f"published error n/a ({na})",
                                  alert_text)
        return Verdict(**out)
    diff = compare(rerun_energy, entry.published_energy)
    tiers["bit_identical"] = _tier3(entry, rerun_energy, diff, provenance, blas_threads,
                                    blas_coretype, procedure, stack)
    if diff["identical"]:
        bits = "bit-identical to the published energy"
    elif not is_number(diff["delta_ha"]):      # never quote nan as a difference
        bits = "not compared with the published energy (not a finite number)"
    else:
        bits = (f"differs from the published energy by {diff['delta_ha']:+.3e} Ha"
                + (f" ({diff['ulps']} ulps)" if diff["ulps"] is not None else ""))
    bits += f" (tier 3 {tiers['bit_identical']['status']})"
    out.update({
        "error_mha": err * 1e3, "movement_mha": (err - pub_err) * 1e3, "margin_regenerated": m,
        "certified": cert, "fragile": fragile, "certification_change": change,
        "bit_identical": diff["identical"], "difference": diff, "tiers": tiers})
    out["summary"] = _summary(entry, out, replay, mode, bits, alert_text)
    return Verdict(**out)


def _summary(entry, out: dict, replay, mode, detail: str | None, alert_text: str) -> str:
    """The ``verdict`` record: ``<entry id>: <headline>[; detail]; <replay>; tiers:
    <tiers><alerts>``; the headline is the card's own
    (:func:`qencode_nb.verdict.card_text.headline`, the one sentence of the decision)."""
    from qencode_nb.verdict.card_text import headline, replay_phrase, tier_line

    head = headline({**out, "replay": replay, "mode": mode}, "done", None)
    return (f"{entry.entry_id}: {head}" + (f"; {detail}" if detail else "")
            + f"; {replay_phrase(replay)}; tiers: {tier_line(out['tiers'])}{alert_text}")


def _mha(value):
    """Ha -> mHa; None stays None."""
    return None if value is None else value * 1e3


def _margin(error, threshold):
    return None if error is None or threshold is None else margin(error, threshold)


def _num_text(value, spec: str) -> str:
    return format(value, spec) if is_number(value) else repr(value)


def _replay_why(replay: dict) -> str:
    """A failed replay in one phrase: its reason, or |ΔE| in Ha."""
    if replay.get("reason"):
        return replay["reason"]
    delta = replay.get("abs_delta_ha")
    return f"{delta:.3e} Ha" if is_number(delta) else f"|ΔE| {delta!r}"


def _tier3(entry, rerun_energy: float, diff: dict, provenance: dict, blas_threads: int,
           blas_coretype, procedure, stack=None) -> dict:
    """Tier 3 (bit-identical): fails on a published or re-run energy that is not a
    number (naming the field), is n/a off the reference environment (the reasons),
    else pass or fail by the bits."""
    measured = (f"measured: re-run {diff['energy_hex']} vs published {diff['published_hex']}"
                + (f", ΔE {diff['delta_ha']:+.3e} Ha" if is_number(diff["delta_ha"]) else "")
                + (f", {diff['ulps']} ulps" if diff["ulps"] is not None else ""))
    from qencode_nb.environment.recorded import of_entry

    recorded = of_entry(entry)
    kernel_note, off_reference = kernel_reason(provenance, blas_coretype, recorded)
    bad = []
    if not is_number(entry.published_energy):
        path = field_name(entry, "published_energy")
        bad.append(f"{path} is {entry.published_energy!r}: no energy can equal it bit for "
                   "bit (a finite number is accepted)")
    if not is_number(rerun_energy):
        bad.append(f"the re-run energy is {rerun_energy!r}")
    if bad:
        return {"status": "fail", "reasons": bad + [kernel_note, measured]}
    reasons = []
    if (stack or {}).get("not_used"):
        reasons.append(f"the {stack['asked']} stack was asked for and did not run: "
                       f"{stack['not_used']}")
    drift = [f"{k} {v['have'] or 'not installed'} (want {v['want']})"
             for k, v in provenance["versions"].items() if not v["match"]]
    if not provenance["versions"]:
        reasons.append("the entry records no package pins (provenance.tool_versions), so "
                       "no environment can be called its reference")
    if drift:
        where = (f" ({recorded.release}, {recorded.requirements_file})"
                 if recorded.release else "")
        reasons.append(f"not the entry's recorded stack{where}: " + ", ".join(drift))
    if blas_threads is None:      # the pin found no BLAS library to measure (pins.pin)
        reasons.append("BLAS threads not measured: threadpoolctl finds no BLAS library in "
                       "this process (reference: 1, measured)")
    elif blas_threads != 1:
        reasons.append(f"{blas_threads} BLAS threads measured (reference: 1)")
    for row in (procedure or {}).get("fields") or []:
        if row.get("field") == "backend" and row.get("status") == "differs":
            reasons.append(f"re-run on {row['used']}, not the recorded {row['declared']}: "
                           "other arithmetic, bit identity is not expected")
    if off_reference:
        reasons.append(off_reference)
    if reasons:
        return {"status": "n/a", "reasons": reasons + [kernel_note, measured]}
    return {"status": "pass" if diff["identical"] else "fail",
            "reasons": [kernel_note, measured]}


def kernel_reason(provenance: dict, blas_coretype=None,
                  recorded=None) -> tuple[str, str | None]:
    """Tier 3's kernel reasons: ``(note, reason it is not the release's triple)``.

    ``note`` names the OpenBLAS kernel triple this run used (numpy's, scipy's,
    PySCF's copy, from the provenance's numeric fingerprint) and the triple of the
    entry's release (:data:`qencode_nb.environment.releases.RELEASES`: v4's is
    the reference triple, v3's AVX2 Haswell); the second item is None when the two
    are the same, else the sentence that makes tier 3 ``n/a`` (docs/explanations/tiers.md:
    tier 3 is claimed only in the entry's recorded environment, its release's kernels
    included).

    Args:
        provenance: the ``provenance`` record (``numeric.openblas`` or ``blas.pools``).
        blas_coretype: ``OPENBLAS_CORETYPE`` at numpy's load, or None.
        recorded: the entry's :class:`~qencode_nb.environment.recorded.RecordedEnvironment`;
            None, or one without recorded pins, compares with the reference triple.
    """
    from qencode_nb.notebook.blas_profiles import COPIES, REFERENCE, release_clause, triple_text
    from qencode_nb.notebook.pins import copy_of

    copies = (provenance.get("numeric") or {}).get("openblas")
    if copies is None:      # a provenance recorded before the fingerprint existed
        copies = [{"copy": copy_of(p.get("filepath")), "kernel": p.get("architecture")}
                  for p in (provenance.get("blas") or {}).get("pools") or []
                  if p.get("library") == "openblas"]
    used = {c.get("copy"): c.get("kernel") for c in copies}
    head = (f"OpenBLAS kernels: {triple_text(used)}"
            + (f" (OPENBLAS_CORETYPE={blas_coretype} at numpy load)" if blas_coretype else ""))
    pinned = recorded is not None and recorded.pins
    clause, reason = release_clause(used, recorded.kernels if pinned else REFERENCE.coretypes,
                                    recorded.release if pinned else None,
                                    recorded.unknown if pinned else ())
    unnamed = [c for c in COPIES if not used.get(c)]
    if unnamed and reason:      # a host the profiles do not know (issue 51): say which
        owners = " and ".join(f"{c}'s" for c in unnamed)
        reason = (f"the kernel of {owners} "
                  "BLAS cannot be named (threadpoolctl finds no OpenBLAS for "
                  f"{'them' if len(unnamed) > 1 else 'it'}: another BLAS, e.g. Apple's "
                  "Accelerate, or none), so no run here can be called the release's "
                  f"environment; {reason}")
    return head + clause, reason
