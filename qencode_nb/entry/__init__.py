"""Entry room: the benchmark entry as recorded.

- :mod:`~qencode_nb.entry.model`: the :class:`Entry` and its value checks;
- :mod:`~qencode_nb.entry.readers`: the reader of each QEncode ``schema_version``
  (:data:`~qencode_nb.entry.readers.READERS`) and ``params/*.yaml`` files;
- :mod:`~qencode_nb.entry.v4`, :mod:`~qencode_nb.entry.v3`, :mod:`~qencode_nb.entry.v1v2`:
  QEncode schemas 4.0.0, 3.0.0, 1.0.0 / 2.0.0;
- :mod:`~qencode_nb.entry.lookup`: bundled names, paths, a db folder (:func:`load`);
- :mod:`~qencode_nb.entry.schema`: the structure of both file kinds;
  :mod:`~qencode_nb.entry.legacy_schema`: of schemas 1.0.0 to 3.0.0 as their readers read them;
- :mod:`~qencode_nb.entry.jsontext`: an entry file's bytes -> JSON (a key written twice,
  nesting too deep, an integer too long refused by field);
- :mod:`~qencode_nb.entry.fieldpath`: how an error names a field and shows a value;
- :mod:`~qencode_nb.entry.vocabulary`: the one table of aliases (mapping, ansatz, ...);
- :mod:`~qencode_nb.entry.fields`: the tier-1 field table;
- :mod:`~qencode_nb.entry.pauli_strings`: QEncode's Pauli-string format (stored Hamiltonians);
- :mod:`~qencode_nb.entry.hashing`: QEncode's hash rule per schema (``HASH_RULES``);
- :mod:`~qencode_nb.entry.labels`: an entry's short label in tables and figures.
"""

from qencode_nb.entry.lookup import bundled_names, find_in_db, load
from qencode_nb.entry.model import Entry

__all__ = ["Entry", "bundled_names", "find_in_db", "load"]
