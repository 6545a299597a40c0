"""The five questions of "Works on my QPU" for one audited entry.

The five questions (code, environment, documentation, hardware,
executability) are those of the "Works on my QPU" view of reproducibility;
how each is read here is below.  They
judge the *entry*, what it lets someone else re-run, and use the
audit's records (:data:`qencode_nb.verdict.records.AUDIT_RECORDS`), so an
executed notebook read back later gives the same answers:

- **code**: the entry records the commit of the code that produced it
  (``provenance.tool_versions.git_commit``).
- **environment**: machine-readable pins (``provenance.tool_versions``), and
  whether the BLAS threads (``provenance.environment.blas_threads``,
  ``threads_pinned``) and the BLAS kernel are recorded.
- **documentation**: the procedure is fully declared (tier 1: no undeclared
  procedure field; deviations of this audit's own run are not the entry's).
- **hardware**: the CPU and the BLAS kernel of the run are described.
- **executability**: this audit re-ran it (the recorded optimiser, to the
  ``done`` record) rather than only replaying its stored parameters.

Each answer is "yes", "partly" or "no", with the reason; "unknown" when the
audit never read the entry (a name or a path that does not exist, a run that
failed before its ``load`` stage): no answer then says anything about the entry.
"""

from __future__ import annotations

from qencode_nb.notebook.stages import failure_line

#: The questions, in order.
QUESTIONS = ("code", "environment", "documentation", "hardware", "executability")

#: The answers, best first; "unknown": the entry was never read.
ANSWERS = ("yes", "partly", "no", "unknown")

#: ``provenance.tool_versions`` keys that pin the stack of a QEncode v4 entry
#: (the packages of QEncode's requirements-v4.txt plus Python).
STACK_PINS = ("python", "numpy", "scipy", "pyscf", "pennylane", "openfermion")


def _answer(question: str, answer: str, reason: str) -> dict:
    assert answer in ANSWERS, answer
    return {"question": question, "answer": answer, "reason": reason}


def _code(ep: dict) -> dict:
    commit = (ep.get("tool_versions") or {}).get("git_commit")
    if commit:
        return _answer("code", "yes", f"generator commit {commit} recorded "
                       "(provenance.tool_versions.git_commit)")
    return _answer("code", "no", "no commit of the generating code is recorded "
                   "(provenance.tool_versions.git_commit absent)")


def _environment(ep: dict) -> dict:
    versions = ep.get("tool_versions") or {}
    pinned = [k for k in STACK_PINS if versions.get(k)]
    env = ep.get("environment") or {}
    threads = env.get("blas_threads")
    kernel = env.get("blas_kernel") or env.get("openblas_coretype")
    have = []
    missing = []
    if pinned:
        have.append(f"versions of {', '.join(pinned)}")
    missing += [k for k in STACK_PINS if k not in pinned]
    if threads is not None:
        have.append(f"BLAS threads ({threads}"
                    + (", pinned" if env.get("threads_pinned") else "") + ")")
    else:
        missing.append("BLAS threads")
    if kernel:
        have.append(f"BLAS kernel ({kernel})")
    else:
        missing.append("BLAS kernel")
    if not have:
        return _answer("environment", "no", "no machine-readable pins, BLAS threads or "
                       "BLAS kernel recorded")
    answer = "yes" if not missing else "partly"
    reason = "recorded: " + "; ".join(have)
    if missing:
        reason += "; not recorded: " + ", ".join(missing)
    return _answer("environment", answer, reason)


def _documentation(records: dict) -> dict:
    fields = records.get("fields")
    if not fields:
        return _answer("documentation", "no", "not established: the audit stopped before "
                       "tier 1 was evaluated" + _failure(records))
    undeclared = [f["field"] for f in fields if f.get("status") == "undeclared"]
    if undeclared:
        return _answer("documentation", "partly",
                       f"{len(fields) - len(undeclared)} of {len(fields)} procedure fields "
                       f"declared; undeclared: {', '.join(undeclared)} (tier 1)")
    return _answer("documentation", "yes",
                   f"all {len(fields)} procedure fields declared (tier 1)")


def _hardware(ep: dict) -> dict:
    env = ep.get("environment") or {}
    cpu = env.get("cpu") or env.get("cpu_model")
    kernel = env.get("blas_kernel") or env.get("openblas_coretype")
    platform = env.get("platform")
    if cpu and kernel:
        return _answer("hardware", "yes", f"CPU {cpu}, BLAS kernel {kernel}")
    described = [f"platform {platform!r}"] if platform else []
    described += [f"CPU {cpu}"] if cpu else []
    described += [f"BLAS kernel {kernel}"] if kernel else []
    absent = (["CPU model"] if not cpu else []) + (["BLAS kernel"] if not kernel else [])
    if described:
        return _answer("hardware", "partly", "recorded: " + ", ".join(described)
                       + "; not recorded: " + ", ".join(absent)
                       + " (this audit records its own CPU and BLAS kernel)")
    return _answer("hardware", "no", "neither CPU nor BLAS kernel recorded "
                   "(this audit records its own CPU and BLAS kernel)")


def _failure(records: dict) -> str:
    err = records.get("error")
    if isinstance(err, dict):
        return f" ({failure_line(err)})"
    return ""


def _executability(records: dict) -> dict:
    # The verdict's records (tiers) mark a completed audit before ``done`` is written.
    done = records.get("done") is True or ("tiers" in records
                                            and not isinstance(records.get("error"), dict))
    rerun = records.get("rerun")
    if done and isinstance(rerun, dict):
        error = records.get("error_mha")
        tail = f": regenerated error {error:.6f} mHa" if isinstance(error, float) else ""
        certified = records.get("certified")
        if certified is not None:
            tail += ", certified" if certified else ", not certified"
        return _answer("executability", "yes", "the audit re-ran the recorded optimiser "
                       f"with the recorded budgets{tail}")
    replay = records.get("replay") or {}
    if done and replay.get("status") in ("pass", "fail"):
        return _answer("executability", "partly",
                       f"replayed the stored parameters (replay {replay['status']}) but did "
                       f"not re-run the optimiser (mode={records.get('mode')})")
    if done:
        return _answer("executability", "no", "the audit ran neither a re-run nor a replay "
                       f"(mode={records.get('mode')}, replay {replay.get('status', 'n/a')})")
    return _answer("executability", "no", "the audit did not complete" + _failure(records))


def answers(records: dict) -> list[dict]:
    """The five answers for one audit, in :data:`QUESTIONS` order.

    Args:
        records: an audit's records, ``{name: value}`` (in the kernel, or
            :func:`qencode_nb.notebook.record.read_records` of an executed
            audit); uses ``entry_provenance``, ``fields``, ``rerun``, ``replay``,
            ``mode``, ``error_mha``, ``certified``, ``error`` and ``done``.

    Returns:
        ``[{"question", "answer", "reason"}, ...]``: question in
        :data:`QUESTIONS`, answer in :data:`ANSWERS`.  Without an
        ``entry_provenance`` record (the entry was never read: a typo run by
        papermill directly, a run that failed before its load stage, or an audit
        written before the record existed) all five are "unknown" with that
        reason, never "no": nothing was learnt about the entry.
    """
    ep = records.get("entry_provenance")
    if not isinstance(ep, dict):
        why = ("unknown: the entry was never read (no entry_provenance record)"
               + _failure(records))
        return [_answer(q, "unknown", why) for q in QUESTIONS]
    return [_code(ep), _environment(ep), _documentation(records), _hardware(ep),
            _executability(records)]


def summary(items: list[dict]) -> str:
    """One line: ``code yes, environment partly, ...``."""
    return ", ".join(f"{a['question']} {a['answer']}" for a in items)
