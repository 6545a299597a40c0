"""BLAS kernel profiles: which OpenBLAS kernel each BLAS copy of an audit loads.

An audit process loads three OpenBLAS copies: numpy's, scipy's and PySCF's
bundled one (:data:`COPIES`, in the order the pin loads them).  Each copy reads
``OPENBLAS_CORETYPE`` once, when it loads, so one variable cannot give every
kernel triple (docs/explanations/threads-and-kernels.md: the Intel default triple
(SkylakeX, SkylakeX, Prescott) cannot be set with one variable on an AMD EPYC).
A *profile* names a kernel per copy; :func:`qencode_nb.notebook.pins.pin`
applies it by setting the variable before each copy loads, then checks every
copy with threadpoolctl.  A profile may also turn numpy's AVX-512 ufunc loops
off (``NPY_DISABLE_CPU_FEATURES``), since numpy's float64 ``sin``, ``cos``,
``exp`` and ``log`` have AVX-512 loops that give other last bits than their
AVX2 ones (``numpy.lib.introspect.opt_func_info``).

The value of the notebook parameter ``blas_coretype`` (``--coretype``) is one of

- a profile name of :data:`PROFILES` (``reference``, ``portable``);
- ``host`` (or None): the host's kernels, whatever its environment presets;
- one OpenBLAS coretype (``Haswell``, ...): that variable for every copy, as
  before profiles existed;
- a kernel per copy, :func:`kernel_spec` (``numpy=Haswell,scipy=SkylakeX,pyscf=Prescott``,
  ``numpy_avx512=off`` and ``l2=512``, ``OPENBLAS_L2_SIZE`` in KiB, optional): what the
  explain search varies.

``reference`` falls back to ``portable`` on a CPU without AVX-512 (and to the host's
kernels on one without AVX2; :func:`resolve`), and the fallback is recorded with its
reason.  Importing this
module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass

from qencode_nb.errors import PinError
from qencode_nb.notebook import host_kinds

#: CPU flags (as in /proc/cpuinfo) each OpenBLAS coretype needs to run.
#: Source: OpenBLAS ``driver/others/dynamic.c`` (the checks behind
#: ``support_avx2``/``support_avx512``/``support_avx512_bf16`` and the
#: Sapphire Rapids AMX test); names as OpenBLAS spells them in
#: ``OPENBLAS_CORETYPE`` and threadpoolctl's ``architecture``.
CORETYPE_CPU_FLAGS: dict[str, tuple[str, ...]] = {
    "Prescott": ("pni",),          # Linux names SSE3 "pni" in /proc/cpuinfo
    "Core2": ("ssse3",),
    "Nehalem": ("sse4_2",),
    "Barcelona": ("sse4a",),
    "Sandybridge": ("avx",),
    "Haswell": ("avx2", "fma"),
    "Zen": ("avx2", "fma"),
    "SkylakeX": host_kinds.AVX512_FLAGS,
    "Cooperlake": (*host_kinds.AVX512_FLAGS, "avx512_bf16"),
    "SapphireRapids": (*host_kinds.AVX512_FLAGS, "avx512_bf16", "amx_bf16", "amx_tile"),
}


#: This CPU's flags as the host kind this process emulates shows them (one reader:
#: :func:`host_kinds.cpu_flags`; re-exported here, where callers have always found it).
cpu_flags = host_kinds.cpu_flags


#: Why a CPU shows no flags (:func:`cpu_flags` empty), as messages say it.
NO_FLAGS = ("/proc/cpuinfo has no x86 flags line, or there is no /proc/cpuinfo: not x86-64 "
            "Linux, e.g. aarch64 or macOS")


def runnable_coretypes(flags: set[str] | None = None) -> list[str]:
    """The OpenBLAS coretypes this CPU can run, in :data:`CORETYPE_CPU_FLAGS` order."""
    flags = cpu_flags() if flags is None else flags
    return [name for name, need in CORETYPE_CPU_FLAGS.items()
            if all(f in flags for f in need)]


def check_coretype(coretype: str, flags: set[str] | None = None) -> str:
    """Validate an ``OPENBLAS_CORETYPE`` value for this CPU.

    Matching is case-insensitive; the canonical spelling is returned.

    Raises:
        PinError: unknown name (the error lists the accepted names), or a
            kernel whose instructions this CPU lacks (the error names the
            missing flags and the kernels this CPU can run).
    """
    by_lower = {name.lower(): name for name in CORETYPE_CPU_FLAGS}
    name = by_lower.get(str(coretype).lower())
    if name is None:
        raise PinError(f"{coretype!r} is not an OpenBLAS coretype; accepted: "
                       + ", ".join(CORETYPE_CPU_FLAGS), parameter="blas_coretype")
    flags = cpu_flags() if flags is None else flags
    missing = [f for f in CORETYPE_CPU_FLAGS[name] if f not in flags]
    if missing and not flags:
        raise PinError(f"{name!r} cannot be checked on this CPU: it shows no x86 CPU flags "
                       f"({NO_FLAGS}); accepted here: {HOST!r} (the host's kernels)",
                       parameter="blas_coretype")
    if missing:
        raise PinError(
            f"{name!r} needs CPU flags {', '.join(missing)}, which this CPU lacks; this "
            f"CPU can run: {', '.join(runnable_coretypes(flags)) or 'none known'}",
            parameter="blas_coretype")
    return name

#: The OpenBLAS copies an audit loads, in the order the pin loads them; each name
#: is the package whose import loads the copy (``pyscf.lib`` for PySCF's).
COPIES = ("numpy", "scipy", "pyscf")

#: The module imported to load each copy.
COPY_MODULES = {"numpy": "numpy", "scipy": "scipy.linalg", "pyscf": "pyscf.lib"}

#: ``blas_coretype`` values that keep the host's kernels.
HOST = "host"

#: numpy's AVX-512 dispatch targets, turned off by the ``portable`` profile so an AVX-512
#: host runs the AVX2 loops every host has (one list: :mod:`host_kinds`, where a CPU
#: without AVX-512 lacks them).
NUMPY_AVX512_FEATURES = host_kinds.NUMPY_AVX512_FEATURES


@dataclass(frozen=True)
class KernelProfile:
    """A named kernel per OpenBLAS copy.

    Attributes:
        name: the profile's name (a ``blas_coretype`` value).
        coretypes: ``{copy: OPENBLAS_CORETYPE}`` set while that copy loads
            (:data:`COPIES`).
        numpy_disable: numpy CPU features turned off (``NPY_DISABLE_CPU_FEATURES``).
        source: where the triple comes from (a measurement or a rule).
    """

    name: str
    coretypes: dict
    numpy_disable: tuple = ()
    source: str = ""



#: The kernel triple under which the QEncode v4 entries reproduce: numpy's and
#: scipy's OpenBLAS on SkylakeX, PySCF's bundled OpenBLAS 0.3.3 on Prescott (it
#: knows no AVX-512 kernel).  Source: measured on an Intel Xeon with avx512_bf16
#: (2 cores), this repository's pinned stack, 1 BLAS thread: its default kernels
#: are this triple, and there the LiH PAR/HEA re-run gives the published
#: 5.181378851608187 mHa on both the stored and the rebuilt Hamiltonian, the H2CO
#: and H4 ADAPT re-runs and the H4 JW/UCCSD re-run reproduce their published
#: energies bit for bit.
#: The triple (SkylakeX, Cooperlake, Prescott) gives the same LiH numbers.
REFERENCE = KernelProfile(
    "reference", {"numpy": "SkylakeX", "scipy": "SkylakeX", "pyscf": "Prescott"},
    source="the QEncode v4 entries' kernels, measured on an Intel Xeon (issue 22)")

#: The reference triple with AVX2 in place of AVX-512: numpy's and scipy's OpenBLAS
#: on Haswell, PySCF's on Prescott as in the reference (so PySCF's integrals, CASSCF
#: orbitals and Z2 symmetries are the reference's), numpy without its AVX-512
#: loops.  The same arithmetic on every x86-64 CPU with AVX2 and FMA, Intel or AMD,
#: whatever it presets; what ``reference`` falls back to where the CPU lacks AVX-512.
#: The test suite's bit-level expectations are measured under it.
PORTABLE = KernelProfile(
    "portable", {"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Prescott"},
    numpy_disable=NUMPY_AVX512_FEATURES,
    source="qencode-nb: the reference triple on the AVX2 kernels every host of this "
           "project runs")

PROFILES = {p.name: p for p in (REFERENCE, PORTABLE)}

@dataclass(frozen=True)
class Resolution:
    """What a ``blas_coretype`` value means on this CPU.

    Attributes:
        requested: the value asked for, canonical (``"reference"``, ``"host"``,
            ``"Haswell"``).
        used: what the pin applies: a profile name, ``"host"`` or a coretype.
        coretypes: ``{copy: OPENBLAS_CORETYPE or None}``; None keeps whatever
            the environment has when that copy loads.
        numpy_disable: numpy CPU features to turn off.
        fallback: why ``used`` differs from ``requested`` (the CPU features it
            lacks), else None.
        l2: ``OPENBLAS_L2_SIZE`` a kernel spec sets (:data:`L2`), else None.
    """

    requested: str
    used: str
    coretypes: dict
    numpy_disable: tuple = ()
    fallback: str | None = None
    l2: int | None = None

    def to_record(self) -> dict:
        return {"requested": self.requested, "used": self.used,
                "coretypes": dict(self.coretypes),
                "numpy_disable": list(self.numpy_disable), "fallback": self.fallback,
                **({L2: self.l2} if self.l2 else {})}


#: The key of a kernel spec (:func:`kernel_spec`) that turns numpy's AVX-512 loops off
#: (``numpy_avx512=off``: :data:`NUMPY_AVX512_FEATURES` in ``NPY_DISABLE_CPU_FEATURES``).
NUMPY_AVX512 = "numpy_avx512"

#: The key of a kernel spec that sets ``OPENBLAS_L2_SIZE`` for every copy (``l2=512``): the
#: L2 cache size in KiB each OpenBLAS copy reads once, when it loads, in place of the one
#: the CPU reports (cpuid 0x80000006; OpenBLAS ``driver/others/parameter.c``,
#: ``get_l2_size``), and sizes its GEMM blocking by.  Without it an inherited value is
#: left as it is (the AMD preset host kind sets 512).
L2 = "l2"


def kernel_spec(kernels: dict, numpy_avx512: bool = True, l2: int | None = None) -> str:
    """A ``blas_coretype`` value naming a kernel per copy:
    ``numpy=Haswell,scipy=SkylakeX,pyscf=Prescott`` (``{copy: coretype}`` for every
    copy, in :data:`COPIES` order), then
    ``,numpy_avx512=off`` when numpy's AVX-512 loops are to be off and ``,l2=512`` to set
    ``OPENBLAS_L2_SIZE`` (KiB, :data:`L2`).  What the explain
    search (:mod:`qencode_nb.studies.explain`) varies one copy at a time."""
    parts = [f"{c}={kernels[c]}" for c in COPIES if kernels.get(c)]
    return ",".join(parts + ([] if numpy_avx512 else [f"{NUMPY_AVX512}=off"])
                    + ([f"{L2}={int(l2)}"] if l2 else []))


def _parse_spec(value: str, flags: set) -> Resolution:
    """The :class:`Resolution` of a :func:`kernel_spec` value.

    Raises:
        PinError: a key that is not a copy or ``numpy_avx512``, a value that is not
            ``on``/``off`` for it, a coretype this CPU cannot run or that is unknown, a
            copy without a kernel (each one reads ``OPENBLAS_CORETYPE`` as the pin
            leaves it, so a copy left out would take the previous copy's).
    """
    coretypes, disable, l2 = {c: None for c in COPIES}, (), None
    for item in (i.strip() for i in value.split(",") if i.strip()):
        key, _, val = (s.strip() for s in item.partition("="))
        if key.lower() == L2:
            if not (val.isdigit() and 0 < int(val) <= 1 << 20):
                raise PinError(f"{value!r}: {L2}={val!r} is not accepted; accepted: the L2 "
                               "size in KiB, an integer from 1 to 1048576 (e.g. l2=512)",
                               parameter="blas_coretype")
            l2 = int(val)
        elif key.lower() == NUMPY_AVX512:
            if val.lower() not in ("on", "off"):
                raise PinError(f"{value!r}: {NUMPY_AVX512}={val!r} is not accepted; "
                               "accepted: on, off", parameter="blas_coretype")
            disable = NUMPY_AVX512_FEATURES if val.lower() == "off" else ()
        elif key.lower() in COPIES:
            coretypes[key.lower()] = check_coretype(val, flags)
        else:
            raise PinError(f"{value!r}: {key!r} is not accepted in a kernel spec; "
                           f"accepted: {', '.join(COPIES)}, {NUMPY_AVX512}, {L2} "
                           "(e.g. numpy=Haswell,scipy=SkylakeX,pyscf=Prescott)",
                           parameter="blas_coretype")
    unnamed = [c for c in COPIES if coretypes[c] is None]
    if unnamed:
        raise PinError(f"{value!r}: no kernel for {', '.join(unnamed)}; a kernel spec "
                       f"names one for every copy ({', '.join(COPIES)})",
                       parameter="blas_coretype")
    spec = kernel_spec(coretypes, not disable, l2)
    return Resolution(spec, spec, coretypes, disable, l2=l2)


def accepted_values() -> list[str]:
    """Every accepted ``blas_coretype`` value (for error messages)."""
    return [*PROFILES, HOST, *CORETYPE_CPU_FLAGS]


def missing_flags(profile: KernelProfile, flags: set[str]) -> dict:
    """``{copy: (coretype, [missing CPU flags])}`` for each copy whose kernel this
    CPU cannot run (empty when it runs the whole profile)."""
    out = {}
    for copy in COPIES:
        kernel = profile.coretypes[copy]
        lack = [f for f in CORETYPE_CPU_FLAGS[kernel] if f not in flags]
        if lack:
            out[copy] = (kernel, lack)
    return out


def describe_missing(missing: dict) -> str:
    """``numpy's and scipy's SkylakeX need avx512f, ...`` for :func:`missing_flags`."""
    groups: dict = {}
    for copy, (kernel, lack) in missing.items():
        groups.setdefault((kernel, tuple(lack)), []).append(f"{copy}'s")
    return "; ".join(f"{', '.join(copies[:-1]) + ' and ' if len(copies) > 1 else ''}"
                     f"{copies[-1]} {kernel} "
                     f"{'need' if len(copies) > 1 else 'needs'} {', '.join(lack)}"
                     for (kernel, lack), copies in groups.items())


def resolve(blas_coretype, flags: set[str] | None = None, *, strict: bool = False,
            release: KernelProfile | None = None) -> Resolution:
    """What ``blas_coretype`` pins on this CPU.

    Args:
        blas_coretype: a profile name, ``"host"``/None, or an OpenBLAS coretype
            (case-insensitive).
        flags: CPU flags (default: this CPU's, :func:`pins.cpu_flags`).
        strict: refuse a profile this CPU cannot run instead of falling back to
            the host's kernels (``portable`` is always strict: it exists to give
            the same bits everywhere).
        release: the audited entry's release triple, a :class:`KernelProfile` named
            after its release (:func:`qencode_nb.environment.releases.kernel_profile`,
            e.g. ``v3``'s; issue 35), chosen outside this module
            (:mod:`qencode_nb.environment.choice`): ``reference`` then means that
            triple, the reason in ``fallback``.  None, or :data:`REFERENCE` itself, keeps
            the v4 reference triple.

    Returns:
        a :class:`Resolution`.  ``reference`` on a CPU that cannot run one of its
        kernels (no AVX-512) resolves to ``portable`` (PySCF's copy on the
        reference's Prescott, so rebuilds match the reference's), and to ``host``
        on a CPU without AVX2, with ``fallback`` naming the copy, the kernel and
        the CPU flags it lacks.

    Raises:
        PinError: an unknown value (the error lists the accepted ones), or a
            coretype / strict profile this CPU cannot run (naming the copy, the
            kernel and the missing CPU flags).
    """
    flags = cpu_flags() if flags is None else flags
    if blas_coretype is None or str(blas_coretype).strip().lower() in (HOST, "none", ""):
        return Resolution(HOST, HOST, {c: None for c in COPIES})
    name = str(blas_coretype).strip().lower()
    if "=" in name:
        return _parse_spec(str(blas_coretype), flags)
    profile = PROFILES.get(name)
    if profile is None:
        try:
            kernel = check_coretype(blas_coretype, flags)
        except PinError as exc:
            if "is not an OpenBLAS coretype" in str(exc):
                raise PinError(f"{blas_coretype!r} is not accepted; accepted: "
                               f"a profile ({', '.join(PROFILES)}), {HOST!r} (the host's "
                               "kernels), an OpenBLAS coretype ("
                               + ", ".join(accepted_values()[len(PROFILES) + 1:]) + ") or a "
                               "kernel per copy (numpy=Haswell,scipy=SkylakeX,pyscf=Prescott"
                               f"[,{NUMPY_AVX512}=off][,{L2}=512])",
                               parameter="blas_coretype") from None
            raise
        return Resolution(kernel, kernel, {c: kernel for c in COPIES})
    own = release if profile is REFERENCE else None
    if own is not None and own.coretypes != REFERENCE.coretypes:
        return _release_triple(own, flags, strict)
    missing = missing_flags(profile, flags)
    if not missing:
        return Resolution(profile.name, profile.name, dict(profile.coretypes),
                          profile.numpy_disable)
    reason = (f"this CPU cannot run the {profile.name} profile: {describe_missing(missing)}"
              if flags else f"this CPU shows no x86 CPU flags ({NO_FLAGS}), so no kernel "
                            f"of the {profile.name} profile can be checked")
    if strict or profile is not REFERENCE or missing_flags(PORTABLE, flags):
        if profile is REFERENCE and not strict:     # not even AVX2: the host's kernels
            return Resolution(profile.name, HOST, {c: None for c in COPIES},
                              fallback=reason + "; the host's kernels are used")
        raise PinError(f"{profile.name!r}: {reason}", parameter="blas_coretype")
    return Resolution(profile.name, PORTABLE.name, dict(PORTABLE.coretypes),
                      PORTABLE.numpy_disable,
                      fallback=reason + f"; the portable profile is used "
                                        f"({triple_text(PORTABLE.coretypes)})")


def _release_triple(own: KernelProfile, flags: set, strict: bool) -> Resolution:
    """``reference`` for an entry of the release whose triple ``own`` is not v4's."""
    why = (f"the entry is of the {own.name} release, made under {triple_text(own.coretypes)} "
           "(qencode_nb.environment.releases)")
    missing = missing_flags(own, flags)
    if not missing:
        return Resolution(REFERENCE.name, own.name, dict(own.coretypes), own.numpy_disable,
                          fallback=why)
    reason = f"this CPU cannot run it: {describe_missing(missing)}"
    if strict:
        raise PinError(f"'reference': {why}; {reason}", parameter="blas_coretype")
    return Resolution(REFERENCE.name, HOST, {c: None for c in COPIES},
                      fallback=f"{why}; {reason}; the host's kernels are used")


def is_named(resolution) -> bool:
    """Whether a :class:`Resolution` applies a named triple (a profile, a release's
    triple) or a kernel spec, rather than ``host`` or one coretype for every copy."""
    used = resolution.used
    return used != HOST and (used.lower() not in {c.lower() for c in CORETYPE_CPU_FLAGS}
                             or "=" in used)


def triple_text(kernels: dict) -> str:
    """``numpy SkylakeX, scipy SkylakeX, pyscf Prescott`` for ``{copy: kernel}``, in
    :data:`COPIES` order (``no OpenBLAS found`` for a copy without a kernel: not loaded,
    or loaded on another BLAS that threadpoolctl cannot name a kernel of)."""
    return ", ".join(f"{c} {kernels.get(c) or 'no OpenBLAS found'}" for c in COPIES)


def reference_clause(kernels: dict) -> str:
    """The kernels in force, said against the reference triple: ``numpy SkylakeX, scipy
    SkylakeX, pyscf Prescott (the reference triple)`` when ``{copy: kernel}`` is
    :data:`REFERENCE`'s, else the triple in force followed by ``; the QEncode v4 entries
    were generated under the reference triple ... (-p blas_coretype reference, on a CPU
    with AVX-512)``.  The one sentence every message about a kernel-dependent rebuild
    uses (:mod:`qencode_nb.hamiltonian.check`, :mod:`qencode_nb.hamiltonian.sources`); tests
    build their expected text with it, so it holds under every profile."""
    triple = triple_text(kernels)
    if is_reference(kernels):
        return f"{triple} (the reference triple)"
    return (f"{triple}; the QEncode v4 entries were generated under the reference triple "
            f"{triple_text(REFERENCE.coretypes)} (-p blas_coretype reference, on a CPU "
            "with AVX-512)")


def release_clause(used: dict, want: dict | None, release: str | None = None,
                   unknown=()) -> tuple[str, str | None]:
    """The kernels in force (``used``, ``{copy: kernel}``) said against the triple of the
    audited entry's release (``want``; qencode_nb.environment.releases: v4's is the reference
    triple): ``("; reference triple: numpy SkylakeX, ... (-p blas_coretype reference)",
    None)`` when they are the same, else with the reason ``not the reference kernel
    triple (numpy Haswell, ...)`` (``release`` names a non-reference release's triple).
    ``want`` None (a release without a known triple): the clause says so and the reason
    is ``unknown`` joined.  Tier 3's one sentence about kernels
    (:func:`qencode_nb.verdict.tiers.kernel_reason`), beside :func:`reference_clause`."""
    if want is None:        # pins, but no release triple known: say so, never guess
        return "; the entry's release has no known kernel triple", "; ".join(unknown)
    triple = triple_text(used)
    same = all(str(used.get(c) or "").lower() == str(k).lower() for c, k in want.items())
    if want == REFERENCE.coretypes:
        return (f"; reference triple: {triple_text(want)} (-p blas_coretype reference)",
                None if same else f"not the reference kernel triple ({triple})")
    return (f"; the {release} release's triple: {triple_text(want)} "
            "(-p blas_coretype reference)",
            None if same else f"not the {release} release's kernel triple ({triple})")


def is_reference(kernels: dict) -> bool:
    """Whether ``{copy: kernel}`` (threadpoolctl's architectures) is the
    :data:`REFERENCE` triple (case-insensitive)."""
    return all(str(kernels.get(c) or "").lower() == REFERENCE.coretypes[c].lower()
               for c in COPIES)


def default() -> str:
    """The ``blas_coretype`` an audit uses when none is given: ``reference``
    (docs/explanations/threads-and-kernels.md: an auditor reproduces the reference)."""
    return REFERENCE.name
