"""The parameters contract of the toolkit's notebooks (docs/explanations/notebook-contract.md).

A notebook of ``notebooks/`` declares its parameters in one cell tagged
``parameters`` that holds literal assignments only (``name = literal``); papermill
injects its values in a cell right after it.  Four rules, each enforced here once:

- :func:`literal_assignments`: the parameters cell holds nothing but literal
  assignments (the ``qencode-nb`` engine refuses any other statement, naming it).
- :func:`tagged_source`: a notebook without the ``parameters`` tag is refused by the
  engine saying so (papermill would put its values at the top, where the notebook's
  own assignments overwrite them).
- :func:`capture`, run by the pin cell under any engine (stock papermill too): it
  reads the kernel's input history, refuses an injected name the notebook does not
  declare (listing the accepted ones) and injected values that the notebook's own
  cell overwrote (an untagged cell), and returns the values in force, which the
  audit records (``parameters_in_force``).
- :func:`check_unchanged`: a later cell that reassigned a parameter is refused
  before the run uses it (load stage) and before ``done``.  Outside the kernel,
  :func:`qencode_nb.readout.collect.collect` marks a run whose recorded values differ
  from ``metadata.papermill.parameters`` as inconsistent.
"""

from __future__ import annotations

import ast

from qencode_nb.errors import ParameterError

#: The first line papermill writes in its injected cell (papermill's translators:
#: ``comment("Parameters")``).
INJECTED_HEADER = "# Parameters"

#: What a parameters cell may hold.
ACCEPTED = ("NAME = literal (str, int, float, bool, None, or a list/tuple/dict of "
            "literals), one per line")


def literal_assignments(source: str, where: str = "parameters cell") -> dict:
    """``{name: value}`` of a cell that holds literal assignments only.

    Raises:
        ParameterError: a statement that is not ``NAME = literal`` (names the line
            and the statement, and what is accepted), or a syntax error.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{where}: line {exc.lineno}: {exc.msg}; accepted: "
                             f"{ACCEPTED}") from None
    values = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        text = ast.get_source_segment(source, node) or ast.dump(node)
        if not isinstance(target, ast.Name):
            raise ParameterError(f"{where}: line {node.lineno}: {text!r} is not a literal "
                                 f"assignment; accepted: {ACCEPTED}")
        try:
            values[target.id] = ast.literal_eval(value)
        except ValueError:
            raise ParameterError(f"{where}: line {node.lineno}: {text!r} does not assign a "
                                 f"literal; accepted: {ACCEPTED}") from None
    return values


def tagged_source(nb) -> str:
    """The source of the notebook's cell tagged ``parameters``.

    Raises:
        ParameterError: no cell carries the tag (says so, and what papermill then does).
    """
    for cell in nb.cells:
        if "parameters" in (cell.get("metadata", {}).get("tags") or []):
            return cell.source
    raise ParameterError("the notebook has no cell tagged 'parameters': papermill would "
                         "inject its values at the top, where the notebook's own "
                         "assignments overwrite them; tag the cell of literal assignments "
                         "'parameters' (cell metadata tags)")


def _names(source: str) -> list[str]:
    """Names a cell assigns at its top level (any value)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        out += [t.id for t in targets if isinstance(t, ast.Name)]
    return out


def _is_injected(source: str) -> bool:
    return source.split("\n", 1)[0].strip() == INJECTED_HEADER


def _parameters_cell(before: list[str]) -> tuple[int | None, list[int]]:
    """``(index of the notebook's parameters cell or None, indices of this run's injected
    cells)`` in ``before`` (the cells run before the pin cell, in order).

    Papermill puts its injected cell right after the cell tagged ``parameters``, or at
    the top of a notebook without the tag.  So when the last injected cell follows a
    cell of literal assignments, that cell is the parameters cell; otherwise (the
    injected cell came first: no tag) it is the first cell of the notebook's own after
    the injected one.  Without an injected cell (JupyterLab, nbclient) it is the last
    cell of the notebook's own.  Earlier runs in the same kernel are not this run's.
    """
    injected = [i for i, h in enumerate(before) if _is_injected(h)]
    if not injected:
        own = [i for i, h in enumerate(before) if not _is_injected(h)]
        return (own[-1] if own else None), []
    last = injected[-1]
    if last > 0 and not _is_injected(before[last - 1]):
        try:
            literal_assignments(before[last - 1])
            return last - 1, [last]
        except ParameterError:
            pass
    after = [i for i in range(last + 1, len(before)) if not _is_injected(before[i])]
    return (after[0] if after else None), [last]


def capture(namespace: dict | None = None, history: list | None = None) -> dict:
    """The parameter values in force when the pin cell runs, checked.

    Args:
        namespace: the kernel's globals (default: IPython's ``user_ns``).
        history: the cells run so far, in order, the current one last (default:
            IPython's ``In``).  Papermill's injected cells start with
            :data:`INJECTED_HEADER`; the notebook's parameters cell is found from
            where papermill put its cell (:func:`_parameters_cell`).

    Returns:
        ``{name: value}`` for every declared parameter (the ``parameters_in_force``
        record).

    Raises:
        ParameterError: an injected name the notebook does not declare (lists the
            accepted names); a cell between the parameters cell and the pin cell that
            reassigned a parameter (names it, the value set and the value in force);
            injected values that the notebook's own cell overwrote (the parameters
            cell lacks its tag: papermill put its values at the top).
    """
    if namespace is None or history is None:
        from IPython import get_ipython

        shell = get_ipython()
        namespace = shell.user_ns if namespace is None else namespace
        history = list(namespace.get("In", [])) if history is None else history
    before = [h for h in history[:-1] if h and h.strip()]
    declared_at, injected_at = _parameters_cell(before)
    if declared_at is None:
        return {}
    declared = _names(before[declared_at])
    in_force = {n: namespace.get(n) for n in declared}
    for i in injected_at:
        unknown = sorted(set(_names(before[i])) - set(declared))
        if unknown:
            raise ParameterError(f"unknown parameter(s) {', '.join(unknown)}; accepted: "
                                 + ", ".join(declared))
        values = literal_assignments(before[i], "injected parameters")
        if i < declared_at:
            lost = {n: v for n, v in values.items() if in_force.get(n) != v}
            if lost:
                raise ParameterError(
                    "the injected parameters ran before the notebook's parameters cell, "
                    "which overwrote them (" + "; ".join(
                        f"{n}: injected {v!r}, in force {in_force.get(n)!r}"
                        for n, v in lost.items())
                    + "): the cell of literal assignments is not tagged 'parameters'")
            continue
        try:   # what the parameters cell and papermill set, in that order
            expected = {**literal_assignments(before[declared_at]), **values}
        except ParameterError:
            expected = values
        origin = {n: "injected" if n in values else "parameters cell" for n in expected}
        changed = {n: v for n, v in expected.items() if n in in_force and in_force[n] != v}
        if changed:
            between = [h for h in before[i + 1:] if set(_names(h)) & set(changed)]
            where = ("a cell between the parameters and the pin cell reassigned "
                     if between else "a parameter changed before the pin cell: ")
            raise ParameterError(
                where + "; ".join(f"{n} ({origin[n]} {v!r}, in force {in_force[n]!r})"
                                  for n, v in changed.items())
                + "; accepted: parameters are set only in the parameters cell or by papermill")
    return in_force


def check_unchanged(in_force: dict, namespace: dict | None = None) -> None:
    """Refuse a parameter that a cell after the pin cell reassigned.

    Args:
        in_force: :func:`capture`'s values.
        namespace: the kernel's globals (default IPython's ``user_ns``).

    Raises:
        ParameterError: names the parameter, its value at the pin cell and now.
    """
    if namespace is None:
        from IPython import get_ipython

        namespace = get_ipython().user_ns
    changed = {n: (v, namespace.get(n)) for n, v in in_force.items()
               if namespace.get(n) != v}
    if changed:
        raise ParameterError(
            "a cell after the parameters reassigned " + "; ".join(
                f"{n} (was {a!r} at the pin cell, now {b!r})" for n, (a, b) in changed.items())
            + "; accepted: parameters are set only in the parameters cell or by papermill")
