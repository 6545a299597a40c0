"""Part "adapt" of ``benchmarks/engines.py``: ADAPT-VQE to below 10 mHa at 1 thread,
each run in its own process (peak memory is that process's ``VmHWM``).

- H8 and H10: the generator's procedure and pool on the sector engine (a re-run
  of the entry); H8 also on the generator's statevector engine (engine
  ``"statevector"`` bound to the entry, :func:`qencode_nb.rerun.adapt.run_adapt`),
  for the ratio;
- H6: the sector engine with every spin-orbital excitation as the pool (the
  entry's own pool is Pauli words, which do not map; see
  :mod:`qencode_nb.engines.sector.mapping`), same rules and early stop.

The sector runs are the ADAPT loop (:func:`qencode_nb.rerun.adapt_loop.run_loop`) on
:class:`qencode_nb.engines.sector.adapt.CISpaceBackend`, inner L-BFGS-B.  Peak
memory includes the rebuild when the disk cache is cold (run twice).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import harness
import problems

#: ADAPT engines of part "adapt".
ENGINES = ("sector", "statevector")


@contextmanager
def counted_hop():
    """Count the sector engine's H·ψ calls and seconds (``CISpace.hop`` wrapped while
    the body runs); yields the ``{"calls", "seconds"}`` dict it fills."""
    from qencode_nb.engines.sector.space import CISpace

    counts = {"calls": 0, "seconds": 0.0}
    plain = CISpace.hop

    def hop(self, c):
        t = time.perf_counter()
        try:
            return plain(self, c)
        finally:
            counts["calls"] += 1
            counts["seconds"] += time.perf_counter() - t

    CISpace.hop = hop
    try:
        yield counts
    finally:
        CISpace.hop = plain


def adapt_budget(entry):
    """The entry's ADAPT budget with inner L-BFGS-B and the early stop at its CASCI
    energy (:class:`qencode_nb.rerun.adapt.AdaptBudget`)."""
    from qencode_nb.rerun.adapt import AdaptBudget

    return AdaptBudget(gradient_threshold=entry.adapt["gradient_threshold"],
                       max_operators=entry.adapt["max_operators"],
                       max_iterations=entry.max_iterations, seed=entry.seed,
                       e_target=entry.casci_energy, early_stop=True, inner="l-bfgs-b")


def _sector(system, entry, rebuilt, budget):
    from qencode_nb.engines.sector.adapt import CISpaceBackend
    from qencode_nb.rerun.adapt_loop import new_result, run_loop

    sp = problems.sector_problem(system, entry, rebuilt)
    backend = CISpaceBackend(sp.ci_space, sp.generators)
    result = new_result("sector", budget.inner, backend.n_pool, budget.gradient_threshold,
                        budget.max_operators, budget.max_iterations, budget.seed,
                        budget.e_target)
    return lambda: run_loop(backend, result, early_stop=budget.early_stop, callback=None,
                            start=time.perf_counter())


def _statevector(system, entry, rebuilt, budget):
    from qencode_nb.rerun.adapt import run_adapt

    bound = problems.bind("statevector", entry, rebuilt)
    return lambda: run_adapt(bound, budget)


def run(system: str, engine: str, coretype: str | None = None) -> dict:
    """One ADAPT run in this process (call before numpy loads: it pins 1 BLAS thread
    and ``coretype``); the row of part "adapt" (seconds, operators, error in mHa,
    the selection against the recorded one, H·ψ counts, peak MiB)."""
    from qencode_nb.notebook.pins import pin

    pinned = pin(1, coretype or None)
    entry = problems.adapt_entry(system)
    t0 = time.perf_counter()
    rebuilt = problems.rebuild(entry)
    runner = {"sector": _sector, "statevector": _statevector}[engine](
        system, entry, rebuilt, adapt_budget(entry))
    build = time.perf_counter() - t0
    with counted_hop() as hop:
        res = runner()
    recorded = problems.selection(entry)
    return {"system": system, "engine": engine, "build_s": build, "adapt_s": res.wall_s,
            "ops": len(res.selected_indices),
            "error_mha": (res.best_energy - entry.casci_energy) * 1e3,
            "selection_as_recorded": (None if system == "H6"
                                      else res.selected_indices == recorded),
            "energy": res.best_energy, "published": entry.published_energy,
            "nfev": res.nfev,
            "first_difference": next((i for i, (a, b) in enumerate(
                zip(res.selected_indices, recorded)) if a != b), None),
            "hop_calls": hop["calls"], "hop_s": hop["seconds"],
            "threads": pinned["blas_threads"], "coretype": pinned["blas_coretype"],
            "peak_mib": harness.peak_mib()}


def adapt_run(system: str, engine: str, timeout: float, coretype: str | None = None) -> dict:
    """:func:`run` in its own process; a row with ``reason`` when it failed or ran
    past ``timeout`` seconds."""
    row = harness.run_function("engines_adapt", "run", [system, engine, coretype or ""],
                               timeout)
    return {"system": system, "engine": engine, **row}


def part_adapt(systems, timeout: float, coretype: str | None = None) -> list[dict]:
    """Part "adapt": the sector engine on each system, and H8 on the statevector
    engine too (each its own process, ``timeout`` seconds each)."""
    cases = [(s, "sector") for s in systems]
    if "H8" in systems:
        cases.append(("H8", "statevector"))
    rows = []
    for system, engine in cases:
        rows.append(adapt_run(system, engine, timeout, coretype))
        harness.print_row(rows[-1])
    return rows


def print_adapt(rows) -> None:
    """The table of part "adapt" and the H8 statevector/sector ratio."""
    print("\nADAPT-VQE to < 10 mHa at 1 thread (own process each):")
    for r in rows:
        if "reason" in r:
            print(f"{r['system']:4} {r['engine']:11} not run: {r['reason']}")
            continue
        print(f"{r['system']:4} {r['engine']:11} adapt {r['adapt_s']:8.2f} s  build "
              f"{r['build_s']:6.2f} s  ops {r['ops']:4d}  error {r['error_mha']:.4f} mHa  "
              f"selection as recorded: {r['selection_as_recorded']}"
              + (f" (first difference at operator {r['first_difference']})"
                 if r["selection_as_recorded"] is False else "")
              + f"  H·psi {r['hop_calls']} calls {r['hop_s']:.1f} s  peak "
              f"{r['peak_mib']:.0f} MiB  threads {r['threads']} {r['coretype'] or ''}")
    by = {(r["system"], r["engine"]): r for r in rows if "reason" not in r}
    if ("H8", "sector") in by and ("H8", "statevector") in by:
        print(f"H8 ADAPT statevector / sector: "
              f"{by['H8', 'statevector']['adapt_s'] / by['H8', 'sector']['adapt_s']:.1f}x")

