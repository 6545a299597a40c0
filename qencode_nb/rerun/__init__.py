"""The re-run room: ansätze, optimisers and the ADAPT-VQE engines.

- ``problem``: the re-run's :class:`Problem` (Hamiltonian, ansatz or ADAPT pool,
  the sector engine's problem), built from the rebuilt and stored Hamiltonians.
- ``rerun``: the re-run of an entry as a typed :class:`~qencode_nb.rerun.rerun.Rerun`.
- ``vqe``, ``backends``, ``ansatz``: HEA / UCCSD as the generator runs them
  (PennyLane QNode energy, COBYLA / L-BFGS-B / Adam).
- ``adapt`` (entry points), ``adapt_loop`` (the one outer loop),
  ``adapt_backends`` (QNode, statevector and CI-space engines), ``statevector``.
- ``ci_space``, ``ci_space_generators``, ``ci_space_kernels``, ``ci_space_map``:
  the sector engine in the (N_alpha, N_beta) determinant space.
"""
