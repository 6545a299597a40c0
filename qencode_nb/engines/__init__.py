"""The engines that compute an entry's energies, each registered under its name.

- :mod:`~qencode_nb.engines.base`: the protocol every engine implements (bind an
  entry; energy, energy and gradient, the ADAPT loop's arithmetic, replay).
- :mod:`~qencode_nb.engines.registry`: ``register(name, engine)``, ``get(name)``; the
  four built-in engines are registered there.
- :mod:`~qencode_nb.engines.selection`: ``choose()``, the one place that decides which
  engine re-runs and which replays an entry, and why another did not;
  ``on_hamiltonian()``, the one place that decides which qubit Hamiltonian (stored or
  rebuilt: audit.ipynb ``hamiltonian``) they bind.
- :mod:`~qencode_nb.engines.ansatz`: HEA, tapered UCCSD and the ADAPT pool as QEncode
  builds them (PennyLane operators).
- Families, one subpackage each: ``qnode`` (PennyLane devices, the generator's
  QNodes), ``statevector`` (the generator's sparse ADAPT engine), ``sector`` (the
  (N_alpha, N_beta) determinant-space ADAPT engine) and ``fast`` (the compiled
  statevector engine).

Importing this package imports nothing heavy (numpy, scipy, PennyLane, PySCF and
numba load inside the functions that need them).
"""
