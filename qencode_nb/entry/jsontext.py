"""An entry file's bytes -> one JSON value, refusing what a JSON parser lets through
but an entry must not hold, each by the field's full path:

- a key written twice in one object (a parser keeps one of the two, silently, and not
  every parser the same one: the file then means two things);
- nesting deeper than :data:`qencode_nb.rules.MAX_ENTRY_DEPTH` levels;
- an integer of more digits than Python reads (``sys.get_int_max_str_digits``).

NaN and the infinities (``NaN``, ``Infinity``, as Python's json writes them) are read:
the checks that use a number name a non-finite one (docs/explanations/tiers.md).
"""

from __future__ import annotations

import json
import sys

from qencode_nb.entry.fieldpath import join_field
from qencode_nb.errors import EntryError
from qencode_nb.rules import MAX_ENTRY_DEPTH


class _Twice(dict):
    """An object with keys written more than once (``twice``: ``{key: times}``)."""

    def __init__(self, pairs, twice):
        super().__init__(pairs)
        self.twice = twice


class _LongInt:
    """An integer literal of more digits than Python reads (``digits``: how many)."""

    def __init__(self, digits: int):
        self.digits = digits


def _object(pairs):
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    times = {}
    for key, _ in pairs:
        times[key] = times.get(key, 0) + 1
    return _Twice(pairs, {k: n for k, n in times.items() if n > 1})


def _integer(text: str):
    try:
        return int(text)
    except ValueError:      # more digits than sys.get_int_max_str_digits()
        return _LongInt(len(text.lstrip("-")))


def parse(data: bytes, accepted: str):
    """The JSON value of a file's bytes (UTF-8).

    Args:
        data: the file's bytes.
        accepted: what the file should be, for the messages (``"a QEncode JSON file
            (schema '1.0.0', ...)"``).

    Raises:
        EntryError: not UTF-8, not JSON, nested too deeply for the parser (no field); a
            key written twice, nesting deeper than MAX_ENTRY_DEPTH, an integer too long
            (the field's path).  The caller adds the file (``EntryError.with_path``).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); accepted: "
                         + accepted) from None
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise EntryError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: "
                         f"{exc.msg}); accepted: {accepted}") from None
    except RecursionError:
        raise EntryError(f"nested too deeply for Python's JSON parser; accepted: "
                         f"{accepted}, nested at most {MAX_ENTRY_DEPTH} levels") from None
    check_tree(value)
    return value


def check_tree(value) -> None:
    """Walk the parsed value (iteratively) for what :func:`parse` refuses by field.

    Raises:
        EntryError: the first key written twice, member nested deeper than
            :data:`~qencode_nb.rules.MAX_ENTRY_DEPTH`, or integer too long, by its path.
    """
    stack = [(value, 1, None)]          # (node, level, (parent trail, key))
    while stack:
        node, level, trail = stack.pop()
        if isinstance(node, _LongInt):
            raise EntryError(f"an integer of {node.digits} digits is not accepted; "
                             f"accepted: an integer of at most "
                             f"{sys.get_int_max_str_digits()} digits", field=_path(trail))
        if not isinstance(node, (dict, list)):
            continue
        if level > MAX_ENTRY_DEPTH:
            raise EntryError(f"nested {level} levels deep is not accepted; accepted: at "
                             f"most {MAX_ENTRY_DEPTH} levels (QEncode entries nest 8)",
                             field=_path(trail))
        if isinstance(node, _Twice):
            key, times = next(iter(node.twice.items()))
            raise EntryError(f"written {times} times in one object; accepted: each member "
                             "once (JSON parsers keep one of the copies, not all the same "
                             "one)", field=_path((trail, key)))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((child, level + 1, (trail, key)) for key, child in items)


def _path(trail) -> str:
    keys = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = join_field(path, key)
    return path or "<root>"
