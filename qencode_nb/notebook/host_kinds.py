"""The host kinds this project runs on, and a test-only emulation of one on another.

A result's last bits follow the OpenBLAS kernel of each BLAS copy (numpy's, scipy's,
PySCF's) and numpy's CPU dispatch, not the CPU vendor (docs/explanations/
threads-and-kernels.md).  Three kinds of host run this project and its CI (README, "Run
the tests"): :data:`HOST_KINDS`.  A test written on one kind has failed on another three
times (issue 51), so one host must be able to run the suite *as* another kind would:

- the profile resolution (:func:`qencode_nb.notebook.blas_profiles.cpu_flags`) sees that
  kind's CPU flags (:meth:`HostKind.flags`: Zen 3's are this CPU's without ``avx512*``);
- a copy the pin leaves on the host's kernels (``host``, with no ``OPENBLAS_CORETYPE``
  inherited) loads under the kernel OpenBLAS picks by itself on that kind
  (:attr:`HostKind.kernels`, measured there), and numpy's dispatch loses the features
  that kind lacks (:attr:`HostKind.numpy_disable`);
- the copies that kind has no OpenBLAS for (a numpy on Apple's Accelerate) are not seen by
  threadpoolctl's report (:func:`qencode_nb.notebook.pins.blas_pools`);
- the environment that kind presets (``OPENBLAS_CORETYPE=Haswell``,
  ``OPENBLAS_L2_SIZE=512``) is set, and nothing else is (:meth:`HostKind.environment`).

The emulation is asked for with :data:`EMULATE_VAR` (``QENCODE_NB_EMULATE_HOST=amd-zen3``),
which every child process inherits; ``tests/as_host_kind.py`` sets it and the kind's
environment, then runs a command (CONTRIBUTING.md, "The three host kinds").  It is for
tests: it makes this CPU *say* less than it can, never more.  A kind whose kernels need
instructions this CPU lacks cannot be emulated (:func:`can_emulate` names the flags):
OpenBLAS's AVX-512 kernels on a CPU without AVX-512 stop on an illegal instruction.  The
emulation is recorded in every audit's provenance (the fingerprint's variables in force).

Importing this module imports nothing heavy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

#: The environment variable naming the host kind to emulate (a key of :data:`HOST_KINDS`);
#: unset or empty: this host as it is.
EMULATE_VAR = "QENCODE_NB_EMULATE_HOST"

#: The OpenBLAS preset variables a host kind may set (and an emulation sets or removes).
PRESET_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

#: numpy's AVX-512 dispatch targets (numpy 2.2: ``__cpu_dispatch__``): what a numpy on a
#: CPU without AVX-512 never dispatches to (``NPY_DISABLE_CPU_FEATURES``).
NUMPY_AVX512_FEATURES = ("AVX512F", "AVX512CD", "AVX512_KNL", "AVX512_KNM", "AVX512_SKX",
                         "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR")

#: CPU flags every AVX-512 OpenBLAS kernel needs: the SkylakeX row of
#: :data:`qencode_nb.notebook.blas_profiles.CORETYPE_CPU_FLAGS`, which builds its AVX-512
#: rows from it (source there: OpenBLAS ``driver/others/dynamic.c``).
AVX512_FLAGS = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")


@dataclass(frozen=True)
class HostKind:
    """One kind of host, as the emulation reproduces it.

    Attributes:
        name: the key of :data:`HOST_KINDS` (``amd-zen3``).
        description: in words, as README's host-kind table says it.
        preset: the OpenBLAS variables the host presets (``{}``: none; the emulation
            removes any :data:`PRESET_VARS` the real host sets).
        kernels: ``{copy: OPENBLAS_CORETYPE}``: the kernel each OpenBLAS copy picks by
            itself there (threadpoolctl's ``architecture``, measured on that kind), used
            for a copy the pin leaves on the host's kernels; None: this host's own.
        drop_flags: prefixes of /proc/cpuinfo flags that kind lacks (``avx512``).
        no_flags: the kind shows no x86 flags at all (aarch64, macOS).
        numpy_disable: numpy CPU features that kind lacks (``NPY_DISABLE_CPU_FEATURES``).
        hidden_copies: copies without an OpenBLAS there (numpy on Apple's Accelerate):
            threadpoolctl's report leaves them out.
        needs: CPU flags the emulating CPU must have (the kind's kernels use them).
        env: other variables that kind implies (numba's target CPU).
        source: where ``kernels`` were measured.
    """

    name: str
    description: str
    preset: dict = field(default_factory=dict)
    kernels: dict | None = None
    drop_flags: tuple = ()
    no_flags: bool = False
    numpy_disable: tuple = ()
    hidden_copies: tuple = ()
    needs: tuple = ()
    env: dict = field(default_factory=dict)
    source: str = ""

    def flags(self, real: set) -> set:
        """The CPU flags this kind shows, from this CPU's ``real`` ones."""
        if self.no_flags:
            return set()
        return {f for f in real if not f.startswith(self.drop_flags)}

    def environment(self, base: dict) -> dict:
        """``base`` (an environment) as this kind would give it to a process: its
        :data:`PRESET_VARS` as the kind presets them (others removed), :attr:`env`,
        ``NPY_DISABLE_CPU_FEATURES`` naming the numpy features it lacks (so that a numpy
        loaded without the pin lacks them too), and :data:`EMULATE_VAR` naming the kind."""
        out = {k: v for k, v in base.items() if k not in PRESET_VARS}
        out.update(self.preset)
        out.update(self.env)
        if self.numpy_disable:
            out["NPY_DISABLE_CPU_FEATURES"] = " ".join(self.numpy_disable)
        out[EMULATE_VAR] = self.name
        return out


#: The host kinds (README, "Run the tests"; CONTRIBUTING.md).  ``kernels``: OpenBLAS's own
#: choice per copy there, measured with this repository's pinned stack (numpy 2.2.6's
#: OpenBLAS 0.3.29, scipy 1.13.1's 0.3.27, PySCF 2.6.2's bundled 0.3.3, which knows neither
#: AVX-512 nor Zen 3: Prescott on the Xeon, Barcelona on Zen 3); tests/conftest.py's
#: ``LIH_PAR_HEA_ERROR_MHA`` rows were measured under the same triples.
HOST_KINDS = {k.name: k for k in (
    HostKind("intel-avx512", "an Intel Xeon with AVX-512 and no OpenBLAS preset",
             kernels={"numpy": "SkylakeX", "scipy": "SkylakeX", "pyscf": "Prescott"},
             needs=AVX512_FLAGS,
             source="an Intel Xeon with avx512_bf16 (2 cores), issue 22"),
    HostKind("amd-avx512-haswell", "an AMD EPYC with AVX-512 presetting "
             "OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE=512",
             preset={"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"},
             kernels={"numpy": "Haswell", "scipy": "Haswell", "pyscf": "Haswell"},
             needs=AVX512_FLAGS,
             source="an AMD EPYC (Zen 4) under the preset, issue 22"),
    HostKind("amd-zen3", "an AMD EPYC (Zen 3) without AVX-512 and no preset",
             kernels={"numpy": "Haswell", "scipy": "Zen", "pyscf": "Barcelona"},
             drop_flags=("avx512", "amx", "gfni", "avx_vnni"),
             numpy_disable=NUMPY_AVX512_FEATURES, needs=("avx2", "fma"),
             env={"NUMBA_CPU_NAME": "znver3"},
             source="an AMD EPYC family 25 model 1 (Zen 3), 2 cores, issue 51"),
    HostKind("unknown", "a host the kernel profiles do not know: no x86 CPU flags "
             "(aarch64, or no /proc/cpuinfo as on macOS) and a numpy without an OpenBLAS "
             "copy (Apple's Accelerate)",
             no_flags=True, hidden_copies=("numpy",),
             source="issue 51, item 4: emulated only"),
)}


def emulated() -> HostKind | None:
    """The host kind this process emulates (:data:`EMULATE_VAR`), or None.

    Raises:
        ValueError: the variable names no kind of :data:`HOST_KINDS` (the message lists
            them).
    """
    name = os.environ.get(EMULATE_VAR, "").strip()
    if not name:
        return None
    kind = HOST_KINDS.get(name)
    if kind is None:
        raise ValueError(f"{EMULATE_VAR}={name!r} is not a host kind; accepted: "
                         + ", ".join(HOST_KINDS) + " (or unset: this host as it is)")
    return kind


def can_emulate(kind: HostKind, real: set) -> str | None:
    """Why this CPU (its ``real`` /proc/cpuinfo flags) cannot emulate ``kind``, or None:
    the kind's kernels need instructions this CPU lacks, and an emulation can only hide
    instructions, never add them."""
    lack = [f for f in kind.needs if f not in real]
    return (f"{kind.name} ({kind.description}) needs the CPU flag"
            f"{'s' if len(lack) > 1 else ''} {', '.join(lack)}, which this CPU lacks: its "
            "kernels would stop on an illegal instruction" if lack else None)


def kind_of(real: set, env: dict) -> str | None:
    """The host kind (a key of :data:`HOST_KINDS`) a CPU with ``real`` /proc/cpuinfo flags
    and an environment ``env`` is, by what decides the bits (its AVX-512 and its preset,
    not its vendor): ``amd-avx512-haswell`` with AVX-512 and an OpenBLAS preset,
    ``intel-avx512`` with AVX-512 and none, ``amd-zen3`` with AVX2 and FMA but no
    AVX-512; else None (no kind this project's tests know: ``unknown``)."""
    if all(f in real for f in AVX512_FLAGS):
        preset = any(env.get(v) for v in PRESET_VARS)
        return "amd-avx512-haswell" if preset else "intel-avx512"
    if all(f in real for f in HOST_KINDS["amd-zen3"].needs):
        return "amd-zen3"
    return None


def cpu_flags() -> set[str]:
    """CPU feature flags of this machine from ``/proc/cpuinfo`` (Linux), as the host kind
    this process emulates shows them (:func:`emulated`, test-only: Zen 3's are
    these without ``avx512*``).

    Returns an empty set where the file does not exist (macOS, Windows) or has no x86
    ``flags`` line (aarch64 names its features ``Features``).

    Raises:
        ValueError: ``QENCODE_NB_EMULATE_HOST`` names no host kind.
    """
    kind = emulated()
    real = real_cpu_flags()
    return real if kind is None else kind.flags(real)


#: ``platform.machine()`` of the processes whose /proc/cpuinfo ``flags`` are their own: an
#: x86-64 process.  Under qemu-user (7.2) an aarch64 process reads the x86 host's
#: /proc/cpuinfo, AVX-512 flags included; trusting them, an audit asked aarch64 OpenBLAS for
#: SkylakeX, which it silently turned into generic armv8 (issue 51, measured).
X86_MACHINES = ("x86_64", "amd64", "AMD64")


def real_cpu_flags() -> set[str]:
    """This CPU's flags from ``/proc/cpuinfo``, whatever host kind is emulated: what an
    emulation may hide flags of (:func:`can_emulate`).  An empty set where there are none
    (macOS, an aarch64 ``Features`` line) or where this process is not x86-64
    (:data:`X86_MACHINES`): an emulated aarch64 process may read its x86 host's file."""
    import platform

    if platform.machine() not in X86_MACHINES:
        return set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def host_kernel(copy: str) -> str | None:
    """The kernel OpenBLAS picks by itself for ``copy`` on the emulated kind, where this
    process emulates one that names it; else None (this host's own choice)."""
    kind = emulated()
    return (kind.kernels or {}).get(copy) if kind else None


def numpy_disable(features: tuple | list = ()) -> tuple:
    """``features`` (numpy CPU features a profile turns off) plus those the emulated kind
    lacks, in order, each once."""
    kind = emulated()
    return tuple(dict.fromkeys([*features, *(kind.numpy_disable if kind else ())]))


def hidden_copies() -> tuple:
    """The copies whose OpenBLAS the emulated kind does not have (threadpoolctl's report
    leaves them out)."""
    kind = emulated()
    return kind.hidden_copies if kind else ()


__all__ = ["AVX512_FLAGS", "EMULATE_VAR", "HOST_KINDS", "HostKind", "NUMPY_AVX512_FEATURES",
           "PRESET_VARS", "X86_MACHINES", "can_emulate", "emulated", "hidden_copies", "host_kernel",
           "cpu_flags", "kind_of", "numpy_disable", "real_cpu_flags"]
