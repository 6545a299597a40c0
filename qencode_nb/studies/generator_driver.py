"""QEncode's generator run in a child process pinned as an audit's kernel is, its every
objective evaluation logged, none of its files edited.

Run as ``python -m qencode_nb.studies.generator_driver ARGS`` (``ARGS``: a JSON object of
``script``, ``argv``, ``threads``, ``coretype``, ``release``, ``log``, ``entry_out``) by
:func:`qencode_nb.studies.generator.run_generator`, in the entry's stack's Python with the
launch environment of the audit's kernel
(:func:`qencode_nb.executor.papermill_engine.kernel_environment`).  In order:

1. pins BLAS threads and each OpenBLAS copy's kernel before numpy is imported, as the
   audit's frame cell does (:func:`qencode_nb.notebook.pins.pin`), and keeps what
   threadpoolctl measured;
2. wraps ``scipy.optimize.minimize`` (the generator imports it inside its VQE functions,
   so it gets the wrapper) so that each objective call is written to ``log``
   (:class:`qencode_nb.rerun.evaluation_log.EvaluationLog`: x and the energy returned to
   the optimiser as ``float.hex``; one ``minimize`` call is one restart, an ADAPT step's
   inner optimisation one too; the value passed back is the generator's own, unchanged);
   Adam (PennyLane's optimiser, no ``minimize``) writes none;
3. loads the script as a module from its tree (its module code runs as in ``python
   script.py``: its own thread pins included), wraps its ``assemble_entry`` to keep the
   entry it assembles, and calls its ``main()`` with ``argv`` (``--dry-run``: it writes
   no file and skips its git guard);
4. writes the assembled entry to ``entry_out`` as the generator would have written it
   (``json.dumps(entry, indent=2, ensure_ascii=True)``) and prints one JSON object, its
   last line: ``exit_code`` (the generator's ``sys.exit`` status), ``blas_threads``,
   ``kernels`` ({copy: kernel}), ``numpy_before_pin``, ``evaluations``, ``seconds``.

Importing this module imports no numpy.
"""

from __future__ import annotations

import json
import sys
import time


def _logged_minimize(minimize, log):
    """``scipy.optimize.minimize`` with its objective's calls written to ``log``."""
    state = {"restart": -1, "count": 0}

    def wrapped(fun, x0, *args, **kwargs):
        state["restart"] += 1
        restart = state["restart"]

        def objective(x, *more):
            value = fun(x, *more)
            energy = value[0] if isinstance(value, tuple) else value
            log.write(restart, x, float(energy))
            state["count"] += 1
            return value

        return minimize(objective, x0, *args, **kwargs)

    wrapped.state = state
    return wrapped


def _load_script(script: str):
    """The generator script as a module named after its file."""
    import importlib.util
    from pathlib import Path

    path = Path(script)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    """Run the generator as the JSON ``argv[0]`` says (module docstring)."""
    started = time.perf_counter()
    args = json.loads((argv if argv is not None else sys.argv[1:])[0])
    numpy_before = "numpy" in sys.modules
    from qencode_nb.environment.releases import kernel_profile
    from qencode_nb.notebook.pins import pin

    pinned = pin(args["threads"], args["coretype"], release=kernel_profile(args["release"]))
    import scipy.optimize

    from qencode_nb.rerun.evaluation_log import EvaluationLog

    kept = {}
    with EvaluationLog(args["log"]) as log:
        logged = _logged_minimize(scipy.optimize.minimize, log)
        scipy.optimize.minimize = logged
        module = _load_script(args["script"])
        assemble = module.assemble_entry

        def keep(*a, **k):
            out = assemble(*a, **k)
            kept["entry"] = out[0]
            return out

        module.assemble_entry = keep
        sys.argv = [args["script"], *args["argv"]]
        code = 0
        try:
            module.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        evaluations = logged.state["count"]
    if "entry" in kept:
        with open(args["entry_out"], "w", encoding="utf-8") as fh:
            fh.write(json.dumps(kept["entry"], indent=2, ensure_ascii=True))
    sys.stdout.flush()
    print(json.dumps({"exit_code": code, "blas_threads": pinned["blas_threads"],
                      "kernels": pinned["profile"].get("kernels"),
                      "numpy_before_pin": numpy_before, "evaluations": evaluations,
                      "entry_written": "entry" in kept,
                      "seconds": time.perf_counter() - started}))
    return 0 if code == 0 and "entry" in kept else 1


if __name__ == "__main__":
    sys.exit(main())
