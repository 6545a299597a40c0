"""Hamiltonian room (the notebook's stage "hamiltonian"): the tapered qubit Hamiltonian of an
entry, rebuilt and checked.

- ``chemistry``: PySCF RHF, CASSCF orbitals, CASCI reference, integrals.
- ``pauli``: QEncode ``pauli_terms`` <-> PennyLane operators (the string format is
  :mod:`qencode_nb.entry.pauli_strings`).
- ``of_bridge``: PySCF integrals -> OpenFermion -> mapping -> PennyLane.
- ``tapering``: Z2 tapering (``TaperResult``, sector search, imaginary strip).
- ``exact``: the one exact-diagonalisation function.
- ``rebuild``: the generator's steps 1-3 glued together (full and light); ``Rebuilt``.
- ``cache_key``, ``cache_payload``, ``cache``: the on-disk rebuild cache (a hit
  restores the tapered problem as Pauli terms; PennyLane operators on first read).
- ``hamcheck``: rebuilt vs stored Hamiltonian, fingerprint, proven source.
- ``hamrecord``: ``HamiltonianCheck``, the check's result and its ``hamiltonian`` record.
- ``check``: the audit's problem stage: :func:`rebuild` through the cache, then
  :func:`hamiltonian_check` against the entry.
- ``stored_only``: an entry that cannot be rebuilt (a Qiskit-era schema): ``NotRebuilt``
  and the stored terms' exact ground energy against the recorded one.

Importing this package imports no numpy.
"""
