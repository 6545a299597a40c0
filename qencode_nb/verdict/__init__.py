"""Verdict room: what still holds, as typed results with ``to_record()``.

- :mod:`~qencode_nb.verdict.procedure`: tier 1, field by field (:class:`Procedure`);
- :mod:`~qencode_nb.verdict.consistency`: the published numbers, finite and consistent;
- :mod:`~qencode_nb.verdict.tiers`: tiers 2 and 3, margins, fragile, the summary (:class:`Verdict`);
- :mod:`~qencode_nb.verdict.records`: the audit's record names, the one list;
- :mod:`~qencode_nb.verdict.figure`: the audit notebook's figure, the re-run's error as it ran;
- :mod:`~qencode_nb.verdict.card` and :mod:`~qencode_nb.verdict.card_text`: the card.
"""
