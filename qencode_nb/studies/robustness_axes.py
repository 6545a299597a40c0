"""The robustness study's axes: BLAS threads x BLAS kernels x numpy's CPU dispatch x
Jupyter kernelspec, and what each perturbation passes to ``audit.ipynb``.

A :class:`Perturbation` is one point of the axes.  The ``numpy_dispatch`` axis (issue 37)
turns numpy's AVX-512 ufunc loops on or off (``NPY_DISABLE_CPU_FEATURES``,
:data:`qencode_nb.notebook.blas_profiles.NUMPY_AVX512_FEATURES`): numpy's float64 ``sin``,
``cos``, ``exp`` and ``log`` have AVX-512 loops that give other last bits than their AVX2
ones, which a re-run's COBYLA path can follow.  Not given, the kernel profile's own
setting holds (``reference``: on, ``portable``: off) and the perturbation's label and run
names are the ones studies had before the axis existed, so their folders resume.

Given, it is applied per entry by :func:`audit_coretype`: the perturbation's kernels are
resolved for the entry's release as the audit would resolve them
(:func:`qencode_nb.notebook.blas_profiles.resolve`), and the run gets
``blas_coretype`` = that profile's name where the profile already has the asked dispatch
(``reference`` with loops on, ``portable`` with them off: the very runs of the profile),
else a kernel per copy (:func:`~qencode_nb.notebook.blas_profiles.kernel_spec`:
``numpy=SkylakeX,scipy=SkylakeX,pyscf=Prescott,numpy_avx512=off``), what the explain search
runs.  On a CPU without AVX-512 numpy has no AVX-512 loops, so ``on`` and ``off`` run the
same arithmetic there.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from qencode_nb.errors import ParameterError

#: The word for "no ``blas_coretype`` given" (audit.ipynb's default, the ``reference``
#: profile or its fallback on this CPU) in labels, file names and the ``coretypes``
#: axis (case-insensitive; "none" is accepted too).
NO_CORETYPE = "default"

#: Values of the ``numpy_dispatch`` axis: numpy's AVX-512 loops on or off; ``default``
#: (or None) leaves them as the kernel profile has them.
NUMPY_DISPATCH = ("on", "off")


class Perturbation(NamedTuple):
    """One point of the study's axes: BLAS threads, ``blas_coretype`` (None: not
    given, audit.ipynb's default ``reference``), Jupyter kernelspec, and numpy's AVX-512
    loops (``"on"``, ``"off"``; None: as the kernel profile has them)."""

    threads: int
    coretype: str | None
    kernelspec: str
    numpy_dispatch: str | None = None

    @property
    def label(self) -> str:
        """``threads=2 coretype=Haswell kernelspec=python3`` (the summary's names);
        ``threads=1 coretype=portable numpy_dispatch=on kernelspec=python3`` when the
        dispatch axis is given."""
        dispatch = f"numpy_dispatch={self.numpy_dispatch} " if self.numpy_dispatch else ""
        return (f"threads={self.threads} coretype={self.coretype or NO_CORETYPE} "
                f"{dispatch}kernelspec={self.kernelspec}")

    @property
    def slug(self) -> str:
        """``t2__Haswell__python3``: the part of a run's file name after the entry stem
        (``t1__portable__npy-on__python3`` with the dispatch axis)."""
        dispatch = f"npy-{self.numpy_dispatch}__" if self.numpy_dispatch else ""
        return f"t{self.threads}__{self.coretype or NO_CORETYPE}__{dispatch}{self.kernelspec}"


#: The baseline perturbation (each axis's default): 1 thread, no coretype, ``python3``,
#: numpy's dispatch as the profile has it.
BASELINE = Perturbation(1, None, "python3")


def _items(value, default) -> list:
    """``value`` as a list: None -> ``[default]``; a str -> split on commas and
    spaces (as ``papermill -p`` passes a list); an int -> ``[value]``."""
    if value is None:
        return [default]
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value.strip()) if v]
    if isinstance(value, int):
        return [value]
    return list(value)


def _dispatch(value) -> str | None:
    """One ``numpy_dispatch`` value, canonical: "on", "off" or None.

    Raises:
        ParameterError: anything else (naming the value and the accepted ones).
    """
    if value is None or str(value).strip().lower() in (NO_CORETYPE, "none"):
        return None
    word = str(value).strip().lower()
    if word not in NUMPY_DISPATCH:
        raise ParameterError(f"{value!r} is not accepted; accepted: "
                             + ", ".join((*NUMPY_DISPATCH, NO_CORETYPE)),
                             parameter="numpy_dispatch")
    return word


def check_axes(threads=None, coretypes=None, kernelspecs=None,
               numpy_dispatch=None) -> list[Perturbation]:
    """Validate the four axes and return their Cartesian product, in order (threads,
    coretypes, numpy dispatch, kernelspecs; the last varies fastest).

    Args:
        threads: BLAS thread counts (ints >= 1); None: ``[1]``.
        coretypes: kernel profiles or OpenBLAS coretypes (case-insensitive) this CPU
            can run, or None / "default" / "none" for no ``blas_coretype``; None:
            ``[None]``.
        kernelspecs: Jupyter kernelspec names Jupyter finds; None: ``["python3"]``.
        numpy_dispatch: ``"on"`` / ``"off"`` (numpy's AVX-512 loops), or None /
            "default" for the profile's own; None: ``[None]``.
        A str is split on commas and spaces; repeats are dropped.

    Raises:
        ParameterError: a thread count that is not an int >= 1, an unknown coretype
            (lists the accepted names) or one this CPU cannot run (names the CPU
            flags it lacks) (:func:`qencode_nb.options.check_threads`,
            :func:`~qencode_nb.options.check_coretype`), an empty axis, a kernelspec Jupyter does not find
            (lists the ones it finds), a ``numpy_dispatch`` value not in on, off,
            default, or ``numpy_dispatch`` on/off with coretype ``host`` (the host's
            kernels are no kernel per copy to set the loops beside).
    """
    from qencode_nb.notebook.blas_profiles import HOST
    from qencode_nb.options import check_coretype, check_threads
    from qencode_nb.environment.store import available_kernelspecs

    t_axis = [check_threads(int(t) if isinstance(t, str) and t.isdigit() else t, "threads")
              for t in _items(threads, BASELINE.threads)]
    c_axis = [None if c is None or str(c).lower() in (NO_CORETYPE, "none")
              else check_coretype(c, "coretypes") for c in _items(coretypes, None)]
    n_axis = [_dispatch(n) for n in _items(numpy_dispatch, None)]
    k_axis = [str(k) for k in _items(kernelspecs, BASELINE.kernelspec)]
    for name, axis in (("threads", t_axis), ("coretypes", c_axis),
                       ("numpy_dispatch", n_axis), ("kernelspecs", k_axis)):
        if not axis:
            raise ParameterError("is empty; accepted: one or more values, or None for the "
                                 "baseline", parameter=name)
    if HOST in c_axis and any(n_axis):
        raise ParameterError(f"{', '.join(n for n in n_axis if n)} is not accepted with "
                             f"coretype {HOST!r} (the host's kernels name no kernel per "
                             "copy to run numpy's loops beside); accepted with it: "
                             f"{NO_CORETYPE}; with on/off: coretypes {NO_CORETYPE}, "
                             "reference, portable or an OpenBLAS coretype",
                             parameter="numpy_dispatch")
    found = available_kernelspecs()
    unknown = [k for k in dict.fromkeys(k_axis) if k not in found]
    if unknown:
        raise ParameterError(f"kernelspec(s) {', '.join(unknown)} not found; accepted: "
                             + ", ".join(sorted(found))
                             + " (create one with `qencode-nb stack create NAME`)")
    t_axis, c_axis, n_axis, k_axis = (list(dict.fromkeys(a))
                                      for a in (t_axis, c_axis, n_axis, k_axis))
    return [Perturbation(t, c, k, n)
            for t, c, n, k in itertools.product(t_axis, c_axis, n_axis, k_axis)]


def audit_coretype(p: Perturbation, release: str | None,
                   flags: set[str] | None = None) -> str | None:
    """The ``blas_coretype`` parameter of a run of ``p`` on an entry of ``release``
    (``"v3"``, ``"v4"``, None: :func:`qencode_nb.environment.choice.release_of_entry`) on a
    CPU with ``flags`` (/proc/cpuinfo's; default this CPU's,
    :func:`~qencode_nb.notebook.blas_profiles.cpu_flags`).

    Returns:
        ``p.coretype`` itself without the dispatch axis, or where the named profile it
        resolves to already runs numpy's loops as asked (``reference`` on, ``portable``
        off); else the resolved kernels with the loops as asked, as a kernel per copy
        (:func:`~qencode_nb.notebook.blas_profiles.kernel_spec`).

    Raises:
        PinError: the kernels cannot be resolved on this CPU (as the audit would raise).
        ParameterError: they resolve to the host's kernels (a CPU without AVX2 falls back
            so), which name no kernel per copy.
    """
    from qencode_nb.environment.releases import kernel_profile
    from qencode_nb.notebook.blas_profiles import PROFILES, kernel_spec, resolve

    if p.numpy_dispatch is None:
        return p.coretype
    resolution = resolve(p.coretype or "reference", flags, release=kernel_profile(release))
    loops_on = p.numpy_dispatch == "on"
    if resolution.requested in PROFILES and bool(resolution.numpy_disable) != loops_on:
        return p.coretype        # the profile itself (for the entry's release) runs so
    if not all(resolution.coretypes.values()):
        raise ParameterError(f"{p.numpy_dispatch!r} is not accepted with coretype "
                             f"{p.coretype or NO_CORETYPE!r} on this CPU: it resolves to the "
                             f"host's kernels ({resolution.fallback}); accepted: "
                             f"{NO_CORETYPE}", parameter="numpy_dispatch")
    return kernel_spec(resolution.coretypes, loops_on)
