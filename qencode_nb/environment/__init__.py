"""The environment room: everything about the package stack and kernel triple an audit
runs in, asked for by the rest of the toolkit and decided here only.

- :mod:`~qencode_nb.environment.releases`: the one table of QEncode's release
  environments, each with its requirements file and its kernel triple, and their sources;
- :mod:`~qencode_nb.environment.recorded`: an entry's recorded environment (its pins, its
  release, its date);
- :mod:`~qencode_nb.environment.lock`: dated resolution, the entry's stack locked as PyPI
  served it at the entry's ``created_utc`` (uv ``pip compile --exclude-newer``);
- :mod:`~qencode_nb.environment.store`: the stack store, the only reader and writer of
  stack records (``stack.json``) and of their Jupyter kernelspecs;
- :mod:`~qencode_nb.environment.build`: stacks built by uv (``uv venv`` plus a sync of
  the lock), once, under a lock;
- :mod:`~qencode_nb.environment.choice`: which stack, kernelspec and kernel triple a run
  gets, decided once, outside the kernel (the ``stack`` words are defined there);
- :mod:`~qencode_nb.environment.in_force`: what was in force, measured in the kernel and
  compared with what was asked.

Importing the package imports nothing heavy.
"""
