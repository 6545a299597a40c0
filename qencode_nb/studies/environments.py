"""The environment study: one entry re-run in Jupyter kernelspecs with different package stacks.

:func:`environments_study` runs ``notebooks/audit.ipynb`` once per Jupyter
kernelspec (``python3``, this environment, or a stack made by
:mod:`qencode_nb.studies.stacks`), threads and OpenBLAS kernel pinned alike,
so what differs is the packages.  The versions compared are the ones each
kernel recorded in its own ``provenance`` record, never the ones asked for.
:func:`version_table` lists them per kernelspec, :func:`environment_differences`
sets each kernelspec against the first (packages, energy in Ha and ulps,
error in mHa) and :func:`environment_finding` states the result in one
sentence per kernelspec.  Files: ``environments.csv``,
``environments_versions.csv``, ``environments_differences.csv`` and the figure.
"""

from __future__ import annotations

from pathlib import Path

from qencode_nb.studies.runner import check_repeats, entry_stem, run_jobs, write_table

#: Columns of :func:`environments_study`'s table: ``kernelspec`` the Jupyter
#: kernelspec (one package stack each), then the versions the kernel itself
#: recorded (``provenance`` record) of :data:`STACK_PACKAGES`, ``python`` and
#: the BLAS pools; ``bit_identical`` is the run's tier-3 status.
ENVIRONMENTS_COLUMNS = ("kernelspec", "repeat", "python", "numpy", "scipy", "pennylane", "pyscf",
                        "openfermion", "blas", "measured_threads", "engine", "energy",
                        "energy_hex", "error_mha", "published_error_mha", "nfev", "seconds",
                        "bit_identical", "status", "failure", "notebook", "threshold_mha")

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


def default_kernelspecs() -> list[str]:
    """``python3`` (this environment) then every registered ``qencode-nb-*`` stack kernelspec."""
    from qencode_nb.studies.stacks import KERNELSPEC_PREFIX, available_kernelspecs

    return ["python3", *sorted(k for k in available_kernelspecs()
                                if k.startswith(KERNELSPEC_PREFIX))]


def environments_study(entry, kernelspecs=None, repeats: int = 1, out_dir="runs/environments", *,
                       mode: str = "rerun", db=None, blas_threads: int = 1,
                       coretype: str | None = None, workers: int = 1, progress: bool = True,
                       timeout: float | None = None, plot: bool = True,
                       engine: str | None = None):
    """Re-run one entry in two or more Jupyter kernels with different package stacks.

    Each run is audit.ipynb driven from this environment through the pinned
    papermill engine, its kernel the given kernelspec (a stack made by
    :func:`qencode_nb.studies.stacks.create_stack`, or ``python3``, this
    environment), with ``{"entry", "blas_threads", "mode"}`` (plus ``db``,
    ``blas_coretype``, ``engine``), named ``<entry-stem>__<kernel>__r{repeat}``.
    Threads and kernel are pinned alike in every stack, so what differs is the
    packages (QEncode's reports: once threads were pinned, H6 ADAPT agreed to 7
    decimals across two stacks).

    Args:
        entry: entry file or bundled name.
        kernelspecs: Jupyter kernelspec names, the first one the baseline
            (default :func:`default_kernelspecs`); two or more.
        repeats: runs per kernel (int >= 1).
        out_dir: folder for the notebooks, ``environments.csv``,
            ``environments_versions.csv`` (:func:`version_table`),
            ``environments_differences.csv`` (:func:`environment_differences`)
            and the figure ``environments.png`` / ``.svg``.
        blas_threads: BLAS threads of every run (default 1).
        mode, db, workers, progress, coretype, timeout, plot, engine: as
            :func:`qencode_nb.studies.blas.threads_study`.

    Returns:
        DataFrame with :data:`ENVIRONMENTS_COLUMNS`, one row per run ordered
        by kernel (as given) then repeat; the versions are the ones the
        kernel recorded, not the ones asked for.  ``table.attrs["versions"]``
        and ``table.attrs["differences"]`` hold the two other tables as
        lists of row dicts (``pd.DataFrame(...)`` restores them).

    Raises:
        ParameterError: fewer than two kernels, a kernel Jupyter does not
            find (lists the ones it finds), ``repeats`` < 1, ``mode``
            "replay", ``timeout`` <= 0.
        PinError: ``blas_threads`` not an int >= 1, an unknown or unrunnable
            coretype.
        EntryError: an entry that does not exist or is a folder.
    """
    import pandas as pd

    from qencode_nb.studies.stacks import check_kernelspecs
    from qencode_nb.notebook.pins import check_blas_coretype, check_thread_count

    kernelspecs = check_kernelspecs(default_kernelspecs() if kernelspecs is None
                                    else kernelspecs)
    repeats = check_repeats(repeats)
    extra = {"blas_threads": check_thread_count(blas_threads)}
    if coretype:
        extra["blas_coretype"] = check_blas_coretype(coretype)
    stem = entry_stem(entry)
    jobs = [(k, r, f"{stem}__{k}__r{r}", extra) for k in kernelspecs for r in range(repeats)]
    rows = run_jobs(entry, jobs, out_dir, mode=mode, db=db, workers=workers,
                      progress=progress, timeout=timeout, desc="environments study",
                      engine=engine, kernelspecs={name: k for k, _, name, _ in jobs})
    for (k, _, _, _), row in zip(jobs, rows):
        row["kernelspec"] = k
        for pkg in STACK_PACKAGES:
            row[pkg] = version_of(row["packages"], pkg)
    table = pd.DataFrame([{"repeat": r, **row} for (_, r, _, _), row in zip(jobs, rows)])
    versions = version_table(table)
    table = table[list(ENVIRONMENTS_COLUMNS)].copy()
    differences = environment_differences(table, versions)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    versions.to_csv(out / "environments_versions.csv", index=False)
    differences.to_csv(out / "environments_differences.csv", index=False)
    write_table(table, "environments", out, plot)
    table.attrs.update(versions=versions.to_dict("records"),
                       differences=differences.to_dict("records"))
    return table


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
        table: :func:`environments_study`'s table.
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

