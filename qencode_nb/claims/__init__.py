"""Claims room: what a QEncode-like repository states about its results, checked
against its database (``qencode-nb claims FOLDER``).

- :mod:`~qencode_nb.claims.table`: the one row kind (:class:`~qencode_nb.claims.table.ClaimRow`:
  claim, where, status, evidence), the statuses (holds / stale / false / unverifiable),
  claims.csv written and read, the printed table, the exit status;
- :mod:`~qencode_nb.claims.folder`: where a folder's files are (leaderboards, receipts,
  the v4 database, older releases) and the v4.4 registry's entry ids;
- :mod:`~qencode_nb.claims.leaderboards`: every leaderboard row resolved to its entry
  (hash recomputed, gap, energies and trust level compared);
- :mod:`~qencode_nb.claims.receipts`: every certification receipt's entry hash and
  Ed25519 signature;
- :mod:`~qencode_nb.claims.stated`: the declarative table of claims quoted from the
  folder's README, CITATION.cff, CHANGELOG and docs (id, quote, file, check);
- :mod:`~qencode_nb.claims.facts`: the named checks that compute each stated claim's
  true value from the database;
- :mod:`~qencode_nb.claims.check`: all of it over one folder
  (:func:`~qencode_nb.claims.check.check_folder`).

It reads entries (:mod:`qencode_nb.entry`) and keys (:mod:`qencode_nb.trust`); the
report (:mod:`qencode_nb.readout.report_claims`) shows its table.  Importing it loads
no numpy.
"""
