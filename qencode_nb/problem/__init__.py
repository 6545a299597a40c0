"""Stage "problem": the tapered qubit problem of an entry, rebuilt and checked.

- ``chemistry``: PySCF RHF, CASSCF orbitals, CASCI reference, integrals.
- ``pauli``: QEncode ``pauli_terms`` <-> PennyLane operators.
- ``of_bridge``: PySCF integrals -> OpenFermion -> mapping -> PennyLane.
- ``tapering``: Z2 tapering (``TaperResult``, sector search, imaginary strip).
- ``exact``: the one exact-diagonalisation function.
- ``rebuild``: the generator's steps 1-3 glued together (full and light).
- ``cache_key``, ``cache_payload``, ``cache``: the on-disk rebuild cache.
- ``hamcheck``: rebuilt vs stored Hamiltonian, fingerprint, inferred source.
- ``problem``: the audit's Problem (Hamiltonian and ansatz of an entry).

Importing this package imports no numpy.
"""
