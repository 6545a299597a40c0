"""The H10 ADAPT re-run on the sector engine: the previous engine against the new one,
side by side in one run (issue 37, part 2).

Usage::

    python benchmarks/engines_h10.py                    # H6 (with the slow twin), H10
    python benchmarks/engines_h10.py --systems H8 H10 --json out.json
    python benchmarks/engines_h10.py --coretype reference

Engines (each run in its own process at 1 BLAS thread, one after the other):

- ``previous``: the sector engine before issue 37 -- H·ψ by PySCF's
  ``direct_spin1.contract_2e`` and :class:`~qencode_nb.engines.sector.adapt.PerGeneratorBackend`
  (one compiled call per generator, one H·ψ per evaluation);
- ``new``: H·ψ split by spin (:mod:`qencode_nb.engines.sector.sigma`; forced on H6,
  whose 400 determinants the size rule gives to CSR) and
  :class:`~qencode_nb.engines.sector.adapt.CISpaceBackend` (packed pool, each state's
  H·ψ computed once);
- ``slow`` (H6 only, a few operators): the dense slow twin
  (:mod:`qencode_nb.engines.sector.slow`: ``expm`` of each generator, the dense
  CI-space matrix).

H8 and H10: the entry's pool and budget, inner L-BFGS-B, early stop at 10 mHa (the
re-run of ``benchmarks/engines_adapt.py``); H6: every spin-orbital excitation as
the pool, capped at ``--h6-operators``.  Printed: seconds of the ADAPT loop, H·ψ
calls and seconds, H·ψ reused, the previous/new ratio, and the largest |ΔE| over
the steps' energies (Ha) against the previous engine.  Wall-clock seconds on a
shared machine: compare the ratio, not absolutes, across machines.
"""

from __future__ import annotations

import harness  # noqa: I001  (first: pins the BLAS threads before numpy loads)

import argparse
import time

import engines_adapt
import problems

SYSTEMS = ("H6", "H8", "H10")
ENGINES = ("previous", "new", "slow")
#: Operators of the H6 comparison (the slow twin's expm makes more impractical).
H6_OPERATORS = 6


class SlowTwinBackend:
    """The ADAPT backend on the slow twins (:mod:`qencode_nb.engines.sector.slow`):
    dense ``expm`` per generator and the dense CI-space matrix (PySCF's pspace).
    Small CI spaces only (``dim**2`` per matrix)."""

    def __init__(self, ci_space, gens):
        from qencode_nb.engines.sector import slow

        self.slow, self.gens, self.n_pool = slow, gens, len(gens)
        self.h = ci_space.csr().toarray()
        self.ecore = ci_space.ecore
        self.hf = ci_space.hf().reshape(-1)

    def pool_gradient(self, selected, params):
        psi = self.slow.state(self.hf, self.gens, selected, params)
        hpsi = self.h @ psi
        return lambda k: self.slow.expval(hpsi, psi, self.gens[k].a, self.gens[k].b,
                                          self.gens[k].v)

    def energy(self, selected):
        raise NotImplementedError("the benchmark runs L-BFGS-B only")

    def energy_and_grad(self, selected):
        return lambda p: self.slow.energy_and_grad(self.h, self.ecore, self.hf, self.gens,
                                                   selected, p)


def _backend(engine: str, ci_space, gens, system: str):
    from qencode_nb.engines.sector import space as S
    from qencode_nb.engines.sector.adapt import CISpaceBackend, PerGeneratorBackend

    def space(method):
        return S.from_integrals(ci_space.h1, ci_space.h2, ci_space.ecore, ci_space.norb,
                                ci_space.nelec, hop_method=method)

    if engine == "previous":
        return PerGeneratorBackend(space("contract_2e"), gens)
    if engine == "new":
        return CISpaceBackend(space("split") if system == "H6" else ci_space, gens)
    if engine == "slow":
        return SlowTwinBackend(ci_space, gens)
    raise ValueError(f"engine {engine!r} is not accepted; accepted: {', '.join(ENGINES)}")


def run(system: str, engine: str, coretype: str = "", h6_operators: str = "") -> dict:
    """One ADAPT run in this process (call before numpy loads: it pins 1 BLAS thread
    and ``coretype``); a row with the steps' energies (Ha)."""
    from qencode_nb.notebook.pins import pin
    from qencode_nb.rerun.adapt_loop import new_result, run_loop

    pinned = pin(1, coretype or None)
    entry = problems.adapt_entry(system)
    sp = problems.sector_problem(system, entry, problems.rebuild(entry))
    budget = engines_adapt.adapt_budget(entry)
    cap = int(h6_operators or H6_OPERATORS) if system == "H6" else budget.max_operators
    backend = _backend(engine, sp.ci_space, sp.generators, system)
    result = new_result("sector", budget.inner, backend.n_pool, budget.gradient_threshold,
                        cap, budget.max_iterations, budget.seed, budget.e_target)
    with engines_adapt.counted_hop() as hop:
        res = run_loop(backend, result, early_stop=budget.early_stop, callback=None,
                       start=time.perf_counter())
    last = getattr(backend, "last", None)
    return {"system": system, "engine": engine, "adapt_s": res.wall_s,
            "ops": len(res.selected_indices), "selected": res.selected_indices,
            "energies": res.energies, "dim": sp.ci_space.dim,
            "hop_method": getattr(getattr(backend, "ci_space", None), "hop_method", "dense"),
            "hop_calls": hop["calls"], "hop_s": hop["seconds"],
            "reused": last.hits if last is not None else 0,
            "threads": pinned["blas_threads"], "kernels": pinned["profile"].get("kernels")}


def compare(rows: list[dict]) -> list[dict]:
    """Per system, each engine against ``previous``: the time ratio, the largest and
    the median |ΔE| over the common steps (Ha, with its 1-based step) and whether the
    selections agree."""
    import statistics

    out = []
    by = {(r["system"], r["engine"]): r for r in rows if "reason" not in r}
    for (system, engine), r in by.items():
        ref = by.get((system, "previous"))
        if engine == "previous" or ref is None:
            continue
        d = [abs(a - b) for a, b in zip(r["energies"], ref["energies"])]
        worst = max(range(len(d)), key=d.__getitem__) if d else None
        out.append({"system": system, "engine": engine,
                    "ratio": ref["adapt_s"] / r["adapt_s"],
                    "max_de": d[worst] if d else float("nan"),
                    "max_de_step": worst + 1 if d else None,
                    "median_de": statistics.median(d) if d else float("nan"),
                    "steps_over_1e-12": sum(x > 1e-12 for x in d),
                    "same_selection": r["selected"] == ref["selected"]})
    return out


def print_table(rows: list[dict], comparisons: list[dict]) -> None:
    """The rows and the comparisons of :func:`compare`."""
    print("\nADAPT re-run on the sector engine at 1 BLAS thread (each its own process):")
    print(f"{'system':6} {'engine':9} {'H·psi by':12} {'adapt s':>9} {'ops':>4} "
          f"{'H·psi calls':>11} {'H·psi s':>8} {'reused':>6}")
    for r in rows:
        if "reason" in r:
            print(f"{r['system']:6} {r['engine']:9} not run: {r['reason']}")
            continue
        print(f"{r['system']:6} {r['engine']:9} {r['hop_method']:12} {r['adapt_s']:9.2f} "
              f"{r['ops']:4d} {r['hop_calls']:11d} {r['hop_s']:8.2f} {r['reused']:6d}")
    for c in comparisons:
        print(f"{c['system']} previous / {c['engine']}: {c['ratio']:.2f}x; max |dE| per step "
              f"{c['max_de']:.2e} Ha (step {c['max_de_step']}), median {c['median_de']:.1e} "
              f"Ha, steps over 1e-12 Ha: {c['steps_over_1e-12']}, same selection: "
              f"{c['same_selection']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=["H6", "H10"])
    ap.add_argument("--coretype", default="", help="kernel profile or OpenBLAS coretype "
                    "for every run (default: the host's kernels)")
    ap.add_argument("--h6-operators", type=int, default=H6_OPERATORS)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    ap.add_argument("--json", help="write the rows and comparisons here")
    args = ap.parse_args(argv)
    rows = []
    for system in args.systems:
        for engine in ENGINES if system == "H6" else ENGINES[:2]:
            row = harness.run_function("engines_h10", "run", [
                system, engine, args.coretype, str(args.h6_operators)], args.timeout)
            rows.append({"system": system, "engine": engine, **row})
            harness.print_row({k: v for k, v in rows[-1].items()
                               if k not in ("energies", "selected")})
    comparisons = compare(rows)
    print_table(rows, comparisons)
    harness.write_json(args.json, {"rows": rows, "comparisons": comparisons})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
