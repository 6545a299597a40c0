"""A release split into shards: ``qencode-nb sweep TARGETS --shard K/N`` runs shard K of N.

Each shard is a sweep of its own (:func:`sweep_shard`; on another machine, another day,
another Dask cluster) into the same ``--out`` folder; the folder's ``summary.csv`` covers
the whole target set whichever shard wrote it last, the entries no shard has run yet as
``waiting`` rows (:mod:`qencode_nb.batch.folder_rows`).

The assignment is **stable**: it depends on the entry set only, never on the host, the
order the targets were given in or measured times (which differ by host).  The entries
are sorted by :func:`~qencode_nb.batch.pool.expected_cost` (largest first; it is read from
the entry file: published evaluations and parameter count), then run name, then the
entry file's SHA-256; each in turn goes to the shard with the least expected cost so far
(fewest entries on a tie, then the lowest index): a deterministic greedy balance
("longest processing time first").  The same set always gives every entry the same
shard; adding or removing an entry may move others (the balance is over the set).
Every entry is in exactly one shard; shards may be empty when N exceeds the entries.
The cost is a rough one (:func:`~qencode_nb.batch.pool.expected_cost`: COBYLA's steps
times the parameters squared), so shards balance entry counts and long runs, not
measured wall time (``--plan`` predicts that).  Importing this module imports no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based: ``1 <= index <= count``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(value, parameter: str = "shard") -> Shard | None:
    """``value`` (``"K/N"``, a :class:`Shard`, or None: no sharding) as a :class:`Shard`.

    Raises:
        ParameterError: anything but two whole numbers ``K/N`` with ``1 <= K <= N``
            (``0/3``, ``4/3``, ``x``, ``1/0``; :func:`qencode_nb.options.check_shard`); the
            message names ``parameter``, the value and what is accepted (the CLI says
            ``--shard``).
    """
    from qencode_nb.options import check_shard

    if isinstance(value, Shard):
        value = str(value)
    checked = check_shard(value, parameter)
    return None if checked is None else Shard(*checked)


def assign(targets, count: int) -> dict:
    """``{target: shard index (1-based)}`` of every target over ``count`` shards: the
    stable greedy balance of the module docstring (sorted by expected cost, largest
    first, then run name, then the entry file's SHA-256; nothing of the host)."""
    from qencode_nb.batch.pool import expected_cost
    from qencode_nb.batch.sweep import inputs_of, run_name

    unique = list(dict.fromkeys(targets))
    cost = {t: expected_cost(t) for t in unique}
    key = {t: (-cost[t], run_name(t), inputs_of(t, {})["entry_sha256"] or "") for t in unique}
    loads, out = [(0.0, 0)] * count, {}
    for target in sorted(unique, key=key.__getitem__):
        best = min(range(count), key=lambda i: (loads[i], i))
        out[target] = best + 1
        loads[best] = (loads[best][0] + cost[target], loads[best][1] + 1)
    return out


def shard_targets(targets, shard: Shard | None) -> list:
    """The targets of ``shard`` (all of them for None), in their given order."""
    if shard is None:
        return list(targets)
    chosen = assign(targets, shard.count)
    return [t for t in targets if chosen[t] == shard.index]


def sweep_shard(targets, out_dir, options=None, *, subset: str | None = None, shard=None,
                **changes):
    """:func:`qencode_nb.batch.sweep.sweep` of shard ``shard`` (``"K/N"``) of the targets:
    only that shard's entries run, and ``summary.csv`` (and the manifest and crate) cover
    the whole target set: the runs the folder holds of it, from any shard, and a
    ``waiting`` row for each entry not run yet (its predicted seconds where the folder
    holds a ``plan.csv``).  ``shard`` None: the whole set, as :func:`~qencode_nb.batch.sweep.sweep`.

    Returns:
        the summary table; ``attrs["ran"]``: this shard's run names; ``attrs["shard"]``.

    Raises:
        ParameterError: a bad ``shard`` (:func:`parse_shard`), before anything is
            written; as :func:`~qencode_nb.batch.sweep.sweep` otherwise (EntryError,
            OutputFolderError, TypeError).
    """
    from qencode_nb.batch.sweep import (
        finish_folder,
        plan_folder,
        resolve_targets,
        run_plans,
        select_subset,
    )
    from qencode_nb.options import with_changes

    shard = parse_shard(shard)
    opts = with_changes(options, changes)
    whole = select_subset(resolve_targets(targets), subset)
    plan = plan_folder(shard_targets(whole, shard), out_dir, opts, whole=whole)
    run_plans([plan], opts)
    table = finish_folder(plan)
    table.attrs["shard"] = None if shard is None else str(shard)
    return table
