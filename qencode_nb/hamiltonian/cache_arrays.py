"""Array results kept beside the rebuild cache: ``<prefix>-<key>.npz`` files.

The numpy counterpart of :func:`qencode_nb.hamiltonian.cache.side_file` (small JSON
results), for results that are large integer arrays (the sector engine's pool
generators, :mod:`qencode_nb.engines.sector.pool_store`).  Same folder, same key (the
SHA-256 of the material's canonical JSON), same atomic write
(:func:`qencode_nb.atomic.write_atomic`), same rule for a bad file: never served, a
:class:`~qencode_nb.errors.CacheWarning` names it and why, :data:`cache.STATS`
``corrupt`` counts it, and it is rebuilt.

A file is served when it opens as an ``.npz`` (the zip members' CRC-32 are checked on
read: a truncated or altered file fails), holds the key's material exactly (the
canonical JSON, stored as the member ``material``), and its arrays pass the caller's
``restore``, which checks what they mean and raises on anything else.  A built result
goes through the same ``restore`` as a served one, so a hit and a build give the same
objects.
"""

from __future__ import annotations

import io
import zipfile

from qencode_nb.atomic import write_atomic
from qencode_nb.hamiltonian import cache
from qencode_nb.hamiltonian.cache_key import canonical_json, sha256_json

MATERIAL = "material"
"""The member holding the material's canonical JSON (uint8)."""


def array_file(prefix: str, material: dict, compute, restore, *, enabled: bool = True,
               cache_dir_=None) -> tuple[object, str]:
    """A kept array result: ``(restore(arrays), status)``.

    Args:
        prefix: the file name's prefix (``sector-pool``).
        material: JSON-serialisable dict the result depends on (and only that).
        compute: ``() -> dict[str, numpy.ndarray]``, the arrays (no member named
            ``material``; no object arrays).
        restore: ``(arrays: dict) -> value``; raises ``ValueError`` (or a subclass),
            ``KeyError`` or :class:`~qencode_nb.errors.QencodeNbError` when the arrays
            do not make a valid result.
        enabled: read and write the file (False: compute only, status ``"not cached"``).
        cache_dir_: cache root (:func:`qencode_nb.hamiltonian.cache.cache_root`).

    Returns:
        the value and ``"hit"``, ``"built"``, ``"rebuilt: <why>"``, ``"not cached"`` or
        ``"not cached: the file could not be written"``.

    Raises:
        whatever ``compute`` or, on computed arrays, ``restore`` raises.
    """
    from qencode_nb.errors import QencodeNbError

    key = sha256_json(material)
    path = cache.path_for(key, cache_dir_).with_name(f"{prefix}-{key}.npz")
    status = "built"
    if enabled:
        arrays, why = _read(path, material)
        if why is None:
            try:
                return restore(arrays), "hit"
            except (ValueError, KeyError, QencodeNbError) as exc:
                why = f"its arrays are not a valid result: {type(exc).__name__}: {exc}"
        if why != "absent":
            cache.report_corrupt(path, why)
            status = f"rebuilt: {why}"
    arrays = compute()
    value = restore(arrays)
    if not enabled:
        return value, "not cached"
    if not cache.write_or_warn(lambda: write_atomic(path, _npz(arrays, material)), path):
        return value, "not cached: the file could not be written"
    cache.STATS["writes"] += 1
    return value, status


def _npz(arrays: dict, material: dict) -> bytes:
    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays,
             **{MATERIAL: np.frombuffer(canonical_json(material), dtype=np.uint8)})
    return buffer.getvalue()


def _read(path, material: dict) -> tuple[dict | None, str | None]:
    """``(arrays, None)`` when ``path`` opens and holds ``material``, else ``(None, why)``:
    ``"absent"``, unreadable (not a zip, a CRC mismatch, an object array) or another
    result's material."""
    import numpy as np

    if not path.is_file():
        return None, "absent"
    try:
        with np.load(path, allow_pickle=False) as doc:
            arrays = {name: doc[name] for name in doc.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    stored = arrays.pop(MATERIAL, None)
    if stored is None or stored.tobytes() != canonical_json(material):
        return None, "it holds another result's material"
    return arrays, None
