"""All of ``qencode-nb claims`` over one folder: leaderboard rows, receipts, stated
claims, in that order (:func:`check_folder`)."""

from __future__ import annotations

from qencode_nb.claims.folder import open_folder, registry_ids


def check_folder(root, db=None, public_key=None) -> list:
    """Every :class:`~qencode_nb.claims.table.ClaimRow` of a folder: its leaderboard
    rows (:mod:`~qencode_nb.claims.leaderboards`), its receipts
    (:mod:`~qencode_nb.claims.receipts`) and its stated claims
    (:mod:`~qencode_nb.claims.stated`).

    Raises:
        ClaimsError: a bad folder or ``db`` (:func:`~qencode_nb.claims.folder.open_folder`).
        KeyFileError: ``public_key`` is not an Ed25519 public key file.
    """
    from qencode_nb.claims.leaderboards import check_leaderboards
    from qencode_nb.claims.receipts import check_receipts
    from qencode_nb.claims.stated import check_stated

    folder = open_folder(root, db)
    registry = registry_ids()
    return (check_leaderboards(folder, registry) + check_receipts(folder, public_key)
            + check_stated(folder, registry))
