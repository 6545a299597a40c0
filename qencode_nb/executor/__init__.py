"""Executor room: running a notebook from outside its kernel.

- :mod:`~qencode_nb.executor.papermill_engine`: the ``qencode-nb`` papermill engine
  (the pins in the Jupyter kernel's launch environment);
- :mod:`~qencode_nb.executor.execute`: papermill execution of the project's notebooks,
  parameter names checked, the executed notebook always kept, a failure explained;
- :mod:`~qencode_nb.executor.run_process`: one run in its own killable process (forked
  from a warm pool worker, or ``python -m qencode_nb.executor.execute``);
- :mod:`~qencode_nb.executor.kernel_fork`: a run's kernel forked from a template of the
  run's process instead of started as a new interpreter (the template's own side:
  :mod:`~qencode_nb.executor.kernel_template`);
- :mod:`~qencode_nb.executor.process_ties`: each process dies with its parent; a forked
  kernel's name;
- :mod:`~qencode_nb.executor.warm_imports`: what a pool worker imports once;
- :mod:`~qencode_nb.executor.save_hook`: a Jupyter server extension: saving a notebook
  source from JupyterLab keeps its committed kernel metadata.

What runs inside the kernel (the pins, the records, the stages, the contract) is
:mod:`qencode_nb.notebook`'s; many runs at once are :mod:`qencode_nb.batch`'s.
Importing this package imports no numpy.
"""
