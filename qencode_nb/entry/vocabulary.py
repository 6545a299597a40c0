"""The one vocabulary table: every name QEncode (or a user) may write for a value.

QEncode's own re-run script could not run 29 of 54 entries because entries
store ``ansatz_type: "hea"`` while its command line took only
``hardware_efficient`` (the glossary, docs/glossary.md).  Every alias lives
here, in one place; matching is case-insensitive; an unknown value raises an
:class:`~qencode_nb.errors.EntryError` naming the field, the value and the
accepted values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qencode_nb.entry.fieldpath import shown
from qencode_nb.errors import EntryError

#: canonical -> aliases (QEncode schema 4.0.0 ``encoding.mapping`` values and
#: the generator's ``--mapping`` choices / entry-id short names).
MAPPINGS = {
    "jordan_wigner": ("jordan_wigner", "jw", "jordan-wigner"),
    "parity": ("parity", "par", "p"),
    "bravyi_kitaev": ("bravyi_kitaev", "bk", "bravyi-kitaev"),
}

#: canonical -> aliases for ``encoding.ansatz_type``.  ``uccsd_tapered`` is
#: what entries store for ``--ansatz-type uccsd``; ``hardware_efficient`` is
#: the generator's command-line name for what entries store as ``hea``.
ANSATZE = {
    "hea": ("hea", "hardware_efficient", "hardware-efficient"),
    "uccsd": ("uccsd", "uccsd_tapered"),
    "adapt": ("adapt", "adapt-vqe", "adapt_vqe"),
}

#: canonical -> aliases for ``problem.orbital_optimization``.
ORBITALS = {"hf": ("hf", "canonical"), "casscf": ("casscf",)}

#: canonical -> aliases for ``run_config.backend_type``.
BACKENDS = {
    "default.qubit": ("default.qubit",),
    "lightning.qubit": ("lightning.qubit",),
}

#: QEncode optimiser strings (``run_config.optimizer`` / ``results.vqe.optimizer``)
#: -> (optimiser, ADAPT inner optimiser, ADAPT engine).
OPTIMIZER_STRINGS = {
    "cobyla": ("cobyla", None, None),
    "l-bfgs-b": ("l-bfgs-b", None, None),
    "bfgs": ("l-bfgs-b", None, None),
    "adam": ("adam", None, None),
    "adapt-vqe (cobyla inner)": ("adapt", "cobyla", "qnode"),
    "adapt-vqe (l-bfgs-b inner, statevector engine)": ("adapt", "l-bfgs-b", "statevector"),
    "adapt-vqe (cobyla inner, statevector engine)": ("adapt", "cobyla", "statevector"),
}
_ADAM = re.compile(r"^adam(\(lr=(?P<lr>[0-9.eE+-]+)\))?$")


def _lookup(table: dict, value, field: str) -> str:
    if isinstance(value, str):
        low = value.strip().lower()
        for canonical, aliases in table.items():
            if low in aliases:
                return canonical
    accepted = sorted({a for aliases in table.values() for a in aliases})
    raise EntryError(f"{shown(value)} is not accepted; accepted (case-insensitive): "
                     + ", ".join(accepted), field=field)


def mapping(value, field: str = "encoding.mapping") -> str:
    """Canonical fermion-to-qubit mapping name (jordan_wigner/parity/bravyi_kitaev)."""
    return _lookup(MAPPINGS, value, field)


def ansatz(value, field: str = "encoding.ansatz_type") -> str:
    """Canonical ansatz name (hea/uccsd/adapt)."""
    return _lookup(ANSATZE, value, field)


def orbitals(value, field: str = "problem.orbital_optimization") -> str:
    """Canonical orbital choice (hf/casscf)."""
    return _lookup(ORBITALS, value, field)


def backend(value, field: str = "run_config.backend_type") -> str:
    """Canonical PennyLane backend name."""
    return _lookup(BACKENDS, value, field)


@dataclass(frozen=True)
class Optimizer:
    """A parsed QEncode optimiser string.

    Attributes:
        name: "cobyla", "l-bfgs-b", "adam" or "adapt".
        inner: ADAPT's inner optimiser ("cobyla"/"l-bfgs-b"), else None.
        engine: ADAPT's engine ("qnode"/"statevector"), else None.
        learning_rate: Adam's step size, else None.
    """

    name: str
    inner: str | None = None
    engine: str | None = None
    learning_rate: float | None = None


def optimizer(value, field: str = "run_config.optimizer") -> Optimizer:
    """Parse a QEncode optimiser string such as ``"ADAPT-VQE (COBYLA inner)"``."""
    if isinstance(value, str):
        low = " ".join(value.strip().lower().split())
        if low in OPTIMIZER_STRINGS:
            return Optimizer(*OPTIMIZER_STRINGS[low])
        m = _ADAM.match(low.replace(" ", ""))
        if m:
            lr = m.group("lr")
            return Optimizer("adam", learning_rate=float(lr) if lr else None)
    raise EntryError(f"{shown(value)} is not accepted; accepted (case-insensitive): "
                     + ", ".join(sorted(OPTIMIZER_STRINGS)) + ", Adam(lr=<float>)",
                     field=field)
