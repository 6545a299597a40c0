"""Notebook room: running a notebook under the contract (docs/explanations/notebook-contract.md).

- :mod:`~qencode_nb.notebook.pins`: BLAS thread and BLAS-kernel pins before numpy loads,
  and the report of every BLAS pool;
- :mod:`~qencode_nb.notebook.parameters`: the values of ``mode`` and ``engine``;
- :mod:`~qencode_nb.notebook.stages`: a failed stage records why; strict mode;
- :mod:`~qencode_nb.notebook.record`: ``record()`` inside, ``read_records()`` outside;
- :mod:`~qencode_nb.notebook.papermill_engine`: the ``qencode-nb`` papermill engine
  (pins in the Jupyter kernel's launch environment);
- :mod:`~qencode_nb.notebook.runner`: papermill execution, parameter names checked;
- :mod:`~qencode_nb.notebook.provenance`: versions vs pins, git, platform, BLAS pools.
- :mod:`~qencode_nb.notebook.save_hook`: a Jupyter server extension: saving a notebook
  source from JupyterLab keeps its committed kernel metadata.
"""
