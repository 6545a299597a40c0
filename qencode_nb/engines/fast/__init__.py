"""The compiled statevector engine (engine ``"fast"``): Hamiltonian, circuits and
energies (``compiled``), numba loops (``kernels``), an entry on it (``problem``), its
ADAPT backend and the binding."""
