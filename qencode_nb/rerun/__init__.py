"""The re-run room: the recorded procedure, on the engines the problem chose.

- ``problem``: the re-run's :class:`Problem` (the Hamiltonian's origin, budgets'
  targets, the engines chosen by :func:`qencode_nb.engines.selection.choose`).
- ``replay``: the stored parameters' energy vs the published one (:class:`Replay`);
  ``compare``: energies compared to the last bit (ulps, ``float.hex``).
- ``rerun``: the re-run of an entry as a typed :class:`~qencode_nb.rerun.rerun.Rerun`.
- ``vqe``: COBYLA / L-BFGS-B / Adam with restarts and early stop, as the generator.
- ``adapt`` (the budget and the entry point), ``adapt_loop`` (the one outer loop).
- ``checkpoint`` (finished restarts / ADAPT steps on disk), ``progress`` (the bar and
  the energy trace; every evaluation passes it), ``evaluation_log`` (every objective
  evaluation as JSON lines of ``float.hex``: :class:`EvaluationLog`, ``read_log``).
"""
