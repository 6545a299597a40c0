"""Notebook room: running a notebook under the contract (docs/explanations/notebook-contract.md).

- :mod:`~qencode_nb.notebook.pins`: BLAS thread and BLAS-kernel pins before numpy loads,
  and the report of every BLAS pool;
- :mod:`~qencode_nb.notebook.stages`: a failed stage records why; strict mode;
- :mod:`~qencode_nb.notebook.record`: ``record()`` inside, ``read_records()`` outside;
- :mod:`~qencode_nb.notebook.provenance`: versions vs pins, git, platform, BLAS pools.

What runs a notebook from outside its kernel (papermill, the kernel's launch
environment, a run's own process, the JupyterLab save hook) is
:mod:`qencode_nb.executor`'s.
"""
