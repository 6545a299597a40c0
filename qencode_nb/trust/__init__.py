"""Trust room: what lets someone else check an audit later.

- :mod:`~qencode_nb.trust.integrity`: the entry's SHA-256 by QEncode's rule and its
  own signature (:class:`Integrity`), the audit's first question;
- :mod:`~qencode_nb.trust.keys`: Ed25519 keys (``qencode-nb keygen``), loading a key
  file with an error that names the file and what is accepted, the key id;
- :mod:`~qencode_nb.trust.attestation`: a signed, detached attestation of an executed
  audit notebook (``<name>.attestation.json`` and ``.attestation.sig``) and its
  verification (the signature, then the notebook and the entry re-hashed);
- :mod:`~qencode_nb.trust.crate`: the provenance crate of a folder of audits,
  ``ro-crate-metadata.json`` following Process Run Crate 0.6 (written with ``rocrate``).

It reads executed notebooks through :mod:`qencode_nb.notebook.record` only; the
integrity check uses its keys to verify an entry's own ``trust.signature_b64``.  Importing it loads neither numpy nor
``cryptography`` nor ``rocrate`` (they load when a key or a crate is used).
"""
