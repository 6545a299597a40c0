"""An environment study read back: package versions per kernel, each kernel against
the first, and the sentence that states it.

:func:`version_table` lists the versions each kernel recorded in its own
``provenance`` record (never the ones asked for), :func:`environment_differences`
sets each kernelspec against the first (packages, energy in Ha and ulps, error in
mHa) and :func:`environment_finding` states the result in one sentence per
kernelspec (:mod:`qencode_nb.studies.environments` runs the study).  Pure pandas on
the study table: no run is started.
"""

from __future__ import annotations

#: The packages shown as columns of an environment table (QEncode v4's pins,
#: requirements-v4.txt); every other package that differs is in the versions table.
STACK_PACKAGES = ("numpy", "scipy", "pennylane", "pyscf", "openfermion")

#: The row of :func:`version_table` holding the BLAS pools each kernel loaded
#: (library, version and CPU kernel as threadpoolctl reports them).
VERSION_BLAS = "BLAS (threadpoolctl)"

#: Installer tools every venv carries in its own version; left out of the
#: version comparison (they do not compute anything an audit reports).
INSTALLER_PACKAGES = ("pip", "setuptools", "wheel")

#: Columns of :func:`environment_differences` (energies in Ha, errors in mHa).
DIFFERENCE_COLUMNS = ("kernelspec", "baseline", "n_packages_differing", "packages_differing",
                      "n_packages_one_side", "packages_one_side", "energy_baseline", "energy",
                      "delta_energy_ha", "ulps",
                      "error_baseline_mha", "error_mha", "delta_error_mha", "identical")



def version_of(packages: dict, name: str):
    """Version of distribution ``name`` in a ``{name: version}`` map (names compared
    the PEP 503 way: case, "-", "_" and "." alike), or None."""
    import re

    norm = re.compile(r"[-_.]+")
    want = norm.sub("-", name).lower()
    for key, version in (packages or {}).items():
        if norm.sub("-", str(key)).lower() == want:
            return version
    return None


def version_table(table):
    """Package versions per kernel, from the ``provenance`` each kernel recorded.

    Args:
        table: an environment table whose rows carry ``kernelspec``, ``status``
            and ``packages`` ({distribution: version} of the run).

    Returns:
        DataFrame with ``package``, one column per kernel (in order of first
        appearance; the first completed run of each kernel) and ``differs``
        (bool): every package whose version differs between the kernels, then
        those installed in some kernels only (:data:`INSTALLER_PACKAGES` left
        out), then the :data:`STACK_PACKAGES`
        that do not, plus a ``python`` row and a :data:`VERSION_BLAS` row (the
        BLAS pools threadpoolctl saw: library, version, kernel).  A package a
        kernel lacks is None there; a kernel whose run recorded no
        provenance (it failed first) has None everywhere and is left out of
        ``differs``.
    """
    import pandas as pd

    kernelspecs = list(dict.fromkeys(table["kernelspec"]))
    per, known = {}, []
    for k in kernelspecs:
        done = table[(table["kernelspec"] == k) & (table["status"] == "done")]
        rows = done if len(done) else table[table["kernelspec"] == k]
        first = rows.iloc[0]
        packages = first.get("packages") or {}
        per[k] = {"python": first.get("python"), VERSION_BLAS: first.get("blas"), **packages}
        if packages:
            known.append(k)
    names = sorted({n for k in known for n in per[k]
                    if n not in ("python", VERSION_BLAS)
                    and n.lower() not in INSTALLER_PACKAGES}, key=str.lower)
    lines = []
    for name in ["python", VERSION_BLAS, *names]:
        vals = {k: (per[k].get(name) if name in ("python", VERSION_BLAS)
                    else version_of(per[k], name)) if k in known else None
                for k in kernelspecs}
        differs = len({vals[k] for k in known}) > 1
        if differs or name in ("python", VERSION_BLAS) or name.lower() in STACK_PACKAGES:
            lines.append({"package": name, **vals, "differs": differs})
    # Versions that differ first, then packages installed in some kernels only.
    lines.sort(key=lambda d: (not d["differs"], any(d[k] is None for k in known),
                              d["package"].lower()))
    return pd.DataFrame(lines, columns=["package", *kernelspecs, "differs"])


def environment_differences(table, versions):
    """Each kernel against the first (the baseline): packages, energy and error.

    Args:
        table: :func:`qencode_nb.studies.environments.environments_study`'s table.
        versions: :func:`version_table` of the same runs.

    Returns:
        DataFrame with :data:`DIFFERENCE_COLUMNS`, one row per kernel after
        the first: ``packages_differing`` as "scipy 1.13.1 -> 1.16.3; ..."
        (baseline -> kernelspec; installed on both sides), ``packages_one_side``
        those installed on one side only ("jupyterlab 4.6.6 -> -"),
        ``delta_energy_ha`` = E(kernelspec) - E(baseline) in Ha with ``ulps``
        between them, ``delta_error_mha`` likewise in mHa,
        ``identical`` True when the energies are equal bit for bit.  The
        energy of a kernel is its first completed run; NaN/None when either
        side has none.
    """
    import pandas as pd

    from qencode_nb.rerun.compare import ulp_distance

    kernelspecs = list(dict.fromkeys(table["kernelspec"]))

    def first(k):
        done = table[(table["kernelspec"] == k) & (table["status"] == "done")
                     & table["energy"].notna()]
        return done.iloc[0] if len(done) else None

    base = kernelspecs[0]
    b = first(base)
    rows = []
    for k in kernelspecs[1:]:
        unknown = [x for x in (base, k) if versions[x].isna().all()]
        if unknown:
            o = first(k)
            rows.append({"kernelspec": k, "baseline": base, "n_packages_differing": None,
                         "packages_differing": "unknown: no provenance recorded in "
                                               + " and ".join(unknown) + " (the run failed)",
                         "n_packages_one_side": None, "packages_one_side": "",
                         "energy_baseline": b["energy"] if b is not None else None,
                         "energy": o["energy"] if o is not None else None,
                         "delta_energy_ha": None, "ulps": None,
                         "error_baseline_mha": b["error_mha"] if b is not None else None,
                         "error_mha": o["error_mha"] if o is not None else None,
                         "delta_error_mha": None, "identical": None})
            continue
        present = versions[base].notna() & versions[k].notna()
        diff = versions[present & (versions[base] != versions[k])]
        pkgs = [f"{r['package']} {r[base]} -> {r[k]}" for _, r in diff.iterrows()]
        lone = versions[versions[base].isna() != versions[k].isna()]
        lone = [f"{r['package']} {r[base] if pd.notna(r[base]) else '-'} -> "
                f"{r[k] if pd.notna(r[k]) else '-'}" for _, r in lone.iterrows()]
        o = first(k)
        both = b is not None and o is not None
        rows.append({
            "kernelspec": k, "baseline": base, "n_packages_differing": len(pkgs),
            "packages_differing": "; ".join(pkgs), "n_packages_one_side": len(lone),
            "packages_one_side": "; ".join(lone),
            "energy_baseline": b["energy"] if b is not None else None,
            "energy": o["energy"] if o is not None else None,
            "delta_energy_ha": o["energy"] - b["energy"] if both else None,
            "ulps": ulp_distance(o["energy"], b["energy"]) if both else None,
            "error_baseline_mha": b["error_mha"] if b is not None else None,
            "error_mha": o["error_mha"] if o is not None else None,
            "delta_error_mha": o["error_mha"] - b["error_mha"] if both else None,
            "identical": bool(o["energy_hex"] == b["energy_hex"]) if both else None,
        })
    return pd.DataFrame(rows, columns=list(DIFFERENCE_COLUMNS))


def environment_finding(differences) -> str:
    """One sentence per kernel against the baseline, from :func:`environment_differences`.

    E.g. "qencode-nb-scipy116 vs python3 (2 versions differ: BLAS (threadpoolctl)
    ... -> ...; scipy 1.13.1 -> 1.16.3): energy differs by -5.184e-03 Ha (error
    8.993703 -> 3.810156 mHa)", or "qencode-nb-reference vs python3 (no version
    differs): the same energy bit for bit (-7.97477927367 Ha, error 8.993703 mHa)".
    The ulp count is given when it is below 1e6 (beyond that it says nothing
    a difference in Ha does not)."""
    import pandas as pd

    parts = []
    for _, d in differences.iterrows():
        if pd.isna(d["n_packages_differing"]):
            parts.append(f"{d['kernelspec']} vs {d['baseline']}: versions "
                         f"{d['packages_differing']}")
            continue
        n = int(d["n_packages_differing"])
        pk = ("no version differs" if n == 0 else
              f"{n} version{'s' if n > 1 else ''} differ{'s' if n == 1 else ''}: "
              + d["packages_differing"])
        lone = int(d.get("n_packages_one_side") or 0)
        if lone:
            pk += f"; {lone} package{'s' if lone > 1 else ''} installed on one side only"
        head = f"{d['kernelspec']} vs {d['baseline']} ({pk})"
        if pd.isna(d["identical"]) or pd.isna(d["delta_energy_ha"]):
            parts.append(f"{head}: no energy to compare (a run failed)")
        elif d["identical"]:
            parts.append(f"{head}: the same energy bit for bit ({d['energy']:.12g} Ha, "
                         f"error {d['error_mha']:.7g} mHa)")
        else:
            ulps = f"{int(d['ulps'])} ulps; " if d["ulps"] < 1e6 else ""
            parts.append(f"{head}: energy differs by {d['delta_energy_ha']:+.3e} Ha "
                         f"({ulps}error {d['error_baseline_mha']:.7g} -> "
                         f"{d['error_mha']:.7g} mHa)")
    return "; ".join(parts) if parts else "only one kernel: nothing to compare"

