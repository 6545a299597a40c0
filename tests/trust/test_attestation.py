"""Signed attestations (issue 16 item 1): sign -> verify on a real executed audit, every
tampering found with its reason, bad key files refused clearly, and an entry's own
``trust.signature_b64`` verified the way QEncode signs.  Real Ed25519 (``cryptography``),
no mocks; the audit is papermill's ``-p entry h2 -p mode replay``, run once."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AUDIT_NB, H2_JW_UCCSD, ROOT, SHARED_DB, pinned_env
from qencode_nb.cli import main
from qencode_nb.errors import KeyFileError
from qencode_nb.trust import attestation, keys

PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar"]


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    """``papermill notebooks/audit.ipynb OUT -p entry h2 -p mode replay``, the bundled
    name completed from a copy of the database (``-p db``) so that a test may change a
    byte of the entry file it read without touching the repository."""
    base = tmp_path_factory.mktemp("attest")
    db = base / "db"
    db.mkdir()
    shutil.copy(H2_JW_UCCSD, db / H2_JW_UCCSD.name)
    out = base / "runs" / "h2.ipynb"
    out.parent.mkdir()
    proc = subprocess.run(PAPERMILL + [str(AUDIT_NB), str(out), "-p", "entry", "h2",
                                       "-p", "mode", "replay", "-p", "db", str(db)],
                          cwd=ROOT, env=pinned_env(1), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def key_pair(tmp_path_factory) -> tuple[Path, Path]:
    private, public, _ = keys.generate(tmp_path_factory.mktemp("keys") / "audit-key")
    return private, public


@pytest.fixture
def signed(audit, key_pair, tmp_path, capsys) -> Path:
    """A copy of the executed audit in its own folder, signed with ``qencode-nb sign``;
    returns its attestation."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(audit, folder / "h2.ipynb")
    assert main(["sign", str(folder), "--key", str(key_pair[0])]) == 0
    assert "1/1 audit(s) signed" in capsys.readouterr().out
    return folder / "h2.attestation.json"


def _verify(att: Path, public: Path, capsys, *extra) -> tuple[int, str]:
    rc = main(["verify", str(att), "--public-key", str(public), *extra])
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


def _change_byte(path: Path, at: int | None = None) -> None:
    """Change one byte of ``path`` (a letter or digit, to another of its kind)."""
    data = bytearray(path.read_bytes())
    at = len(data) // 2 if at is None else at
    while not chr(data[at]).isalnum():
        at += 1
    data[at] = ord("0" if chr(data[at]) != "0" else "1") if chr(data[at]).isdigit() else \
        ord("a" if chr(data[at]) != "a" else "b")
    path.write_bytes(bytes(data))


@pytest.mark.notebook
def test_sign_then_verify_a_real_audit(signed, key_pair, capsys):
    from qencode_nb.notebook.record import encode, read_records

    notebook = signed.with_name("h2.ipynb")
    records = read_records(notebook)
    data = signed.read_bytes()
    body = json.loads(data)
    assert data == json.dumps(body, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False).encode("utf-8")       # canonical
    kid = keys.key_id(keys.load_public_key(key_pair[1]))
    assert len(kid) == 16 and body["key_id"] == kid
    entry_file = Path(records["entry_source"])
    assert entry_file.parent.name == "db" and entry_file.name == H2_JW_UCCSD.name
    assert body["entry"] == {   # the file by its name: it lies outside the attestation's folder
        "id": "H2_ccpvdz_JW_UCCSD_v4_tapered__sha256_93a0f8a8604d9aed",
        "file": entry_file.name, "sha256": hashlib.sha256(entry_file.read_bytes()).hexdigest(),
        "qencode_sha256": "93a0f8a8604d9aed42d897a6982b4814a535d05728d82234119f2ebfbb00fce7",
        "integrity": "pass", "signature": "absent"}
    assert body["notebook"] == {"file": "h2.ipynb",
                                "sha256": hashlib.sha256(notebook.read_bytes()).hexdigest()}
    assert body["verdict"] == records["verdict"] and body["tiers"] == records["tiers"]
    assert body["mode"] == "replay" and body["format"] == attestation.FORMAT
    assert body["provenance_sha256"] == hashlib.sha256(json.dumps(
        encode(records["provenance"]), sort_keys=True, separators=(",", ":"),
        ensure_ascii=False).encode()).hexdigest()
    # the numeric fingerprint and the kernel profile travel with the attestation
    assert body["numeric_fingerprint"] == records["provenance"]["numeric"]["hash"]
    assert body["blas_profile"] == encode(records["blas_profile"])
    from importlib.metadata import version

    assert body["toolkit"] == {"name": "qencode-nb", "version": version("qencode-nb")}
    assert body["signed_utc"].endswith("Z")
    assert len(base64.b64decode(signed.with_name("h2.attestation.sig").read_bytes().strip(),
                                validate=True)) == 64
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 0, out
    assert out.startswith(f"verified: {signed}")
    assert f"Ed25519 signature by key {kid}" in out
    assert f"notebook {notebook} sha256 {body['notebook']['sha256']}" in out
    assert f"entry {entry_file} sha256 {body['entry']['sha256']}" in out   # the one it read
    assert str(entry_file.parent) not in data.decode()      # no absolute path of the machine
    # The audit itself says the entry's own signature is absent (real v4 entries: null).
    assert records["integrity"]["signature"] == "absent"


@pytest.mark.notebook
def test_one_changed_byte_in_the_notebook_fails(signed, key_pair, capsys):
    notebook = signed.with_name("h2.ipynb")
    before = hashlib.sha256(notebook.read_bytes()).hexdigest()
    _change_byte(notebook)
    after = hashlib.sha256(notebook.read_bytes()).hexdigest()
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 1 and out.startswith("NOT verified")
    assert f"notebook changed: sha256 {after} != {before} (attested)" in out
    assert "ok: Ed25519 signature" in out          # the attestation itself is intact


@pytest.mark.notebook
def test_one_changed_byte_in_the_attestation_fails(signed, key_pair, capsys):
    kid = keys.key_id(keys.load_public_key(key_pair[1]))
    text = signed.read_text()
    at = text.index('"notebook":{"file":"h2.ipynb","sha256":"') + 45   # inside the hash
    _change_byte(signed, at)
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 1
    assert f"FAILED: signature does not match key {kid}" in out
    assert "notebook changed: sha256" in out      # and the changed hash no longer matches
    # A byte added that keeps the JSON but not its canonical form.
    signed.write_text(text.replace(",", ", ", 1))
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 1 and "attestation is not canonical JSON (sorted keys, no spaces" in out
    signed.write_text(text[:-1])
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 1 and "attestation is not canonical JSON: it does not parse" in out


@pytest.mark.notebook
def test_one_changed_byte_in_the_signature_fails(signed, key_pair, capsys):
    kid = keys.key_id(keys.load_public_key(key_pair[1]))
    _change_byte(signed.with_name("h2.attestation.sig"), 0)
    rc, out = _verify(signed, key_pair[1], capsys)
    assert rc == 1 and f"FAILED: signature does not match key {kid}" in out


@pytest.mark.notebook
def test_one_changed_byte_in_the_entry_file_fails(signed, key_pair, capsys):
    from qencode_nb.notebook.record import read_records

    entry_file = Path(read_records(signed.with_name("h2.ipynb"))["entry_source"])
    original = entry_file.read_bytes()
    try:
        _change_byte(entry_file)
        now = hashlib.sha256(entry_file.read_bytes()).hexdigest()
        rc, out = _verify(signed, key_pair[1], capsys)
    finally:
        entry_file.write_bytes(original)
    assert rc == 1
    assert (f"entry changed: sha256 {now} != {hashlib.sha256(original).hexdigest()} "
            "(attested)") in out
    # The shared database's copy is byte-identical: --entry checks it instead.
    rc, out = _verify(signed, key_pair[1], capsys, "--entry", str(SHARED_DB /
                                                                  H2_JW_UCCSD.name))
    assert rc == 0, out


@pytest.mark.notebook
def test_a_wrong_key_fails(signed, tmp_path, capsys):
    _, other, other_id = keys.generate(tmp_path / "other")
    rc, out = _verify(signed, other, capsys)
    stated = json.loads(signed.read_bytes())["key_id"]
    assert rc == 1
    assert f"signature does not match key {other_id} (the attestation names key {stated})" in out


def _rsa_pem(path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path


def test_bad_key_files_get_a_clear_error(tmp_path, capsys):
    private, public, _ = keys.generate(tmp_path / "k")
    text = tmp_path / "notes.txt"
    text.write_text("not a key\n")
    rsa_key = _rsa_pem(tmp_path / "rsa.pem")
    folder = tmp_path / "runs"
    folder.mkdir()
    cases = [(["sign", str(folder), "--key", str(tmp_path / "missing")], "missing",
              "no such file"),
             (["sign", str(folder), "--key", str(text)], "notes.txt",
              "is not a PEM file"),
             (["sign", str(folder), "--key", str(rsa_key)], "rsa.pem",
              "holds an RSA private key"),
             (["sign", str(folder), "--key", str(public)], "k.pub",
              "holds an Ed25519 public key; signing needs the private key"),
             (["verify", str(tmp_path / "x.attestation.json"), "--public-key", str(private)],
              "k", "holds a private key; verifying needs only the public key"),
             (["verify", str(tmp_path / "x.attestation.json"), "--public-key", str(rsa_key)],
              "rsa.pem", "holds a private key")]
    for argv, name, problem in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"key file {tmp_path / name}: {problem}" in err, err
        assert "accepted: " in err and "Ed25519" in err, err
    with pytest.raises(KeyFileError, match="holds an RSA private key"):
        keys.load_private_key(rsa_key)
    from cryptography.hazmat.primitives import serialization

    rsa_pub = tmp_path / "rsa.pub"
    rsa_pub.write_bytes(serialization.load_pem_private_key(rsa_key.read_bytes(), None)
                        .public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo))
    with pytest.raises(KeyFileError, match=r"rsa\.pub: holds an RSA public key; accepted"):
        keys.load_public_key(rsa_pub)


def test_keygen_writes_a_0600_pair_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "signing"
    assert main(["keygen", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    kid = keys.key_id(keys.load_private_key(out))
    assert f"key id: {kid}" in printed
    assert (out.stat().st_mode & 0o777) == 0o600
    assert keys.key_id(keys.load_public_key(tmp_path / "signing.pub")) == kid
    assert b"BEGIN PRIVATE KEY" in out.read_bytes()          # PKCS8
    before = out.read_bytes(), (tmp_path / "signing.pub").read_bytes()
    assert main(["keygen", "--out", str(out)]) == 2
    assert f"key file {out}: exists; keygen never overwrites a key" in capsys.readouterr().err
    (tmp_path / "signing.pub").unlink()                      # the .pub alone missing
    assert main(["keygen", "--out", str(out)]) == 2
    assert out.read_bytes() == before[0]
    deep = tmp_path / "new" / "folder" / "key"                 # a missing folder: 0700
    assert main(["keygen", "--out", str(deep)]) == 0
    assert (deep.parent.stat().st_mode & 0o777) == 0o700 and (deep.stat().st_mode & 0o777) == 0o600


# --- an entry's own trust.signature_b64, as QEncode signs it ---------------------------


def _qencode_signed(tmp_path: Path, private) -> Path:
    """A copy of a real v4 entry signed as QEncode's generator does
    (scripts/generate_entry_v4.py try_sign_hash: key.sign(entry_hash.encode()))."""
    from qencode_nb.entry.hashing import qencode_sha256

    raw = json.loads(H2_JW_UCCSD.read_text())
    raw["trust"]["signature_b64"] = base64.b64encode(
        private.sign(qencode_sha256(raw).encode())).decode()
    raw["trust"]["signing_key_id"] = "signing_key"
    path = tmp_path / H2_JW_UCCSD.name
    path.write_text(json.dumps(raw, indent=2))
    return path


def test_entry_signature_absent_verified_invalid(tmp_path):
    from qencode_nb.entry.readers import read_qencode_json
    from qencode_nb.trust.integrity import integrity

    private, public, kid = keys.generate(tmp_path / "qencode")
    _, other, other_id = keys.generate(tmp_path / "other")
    real = read_qencode_json(H2_JW_UCCSD)
    for given in (None, public):                 # real v4 entries: signature_b64 null
        rec = integrity(real, given).to_record()
        assert rec["status"] == "pass" and rec["signature"] == "absent"
    shared = sorted(SHARED_DB.glob("*.json"))
    assert len(shared) == 40
    assert {integrity(read_qencode_json(p), public).signature for p in shared} == {"absent"}
    assert integrity(real, public).signature_key == {"path": str(public), "key_id": kid}
    assert integrity(real).signature_key is None
    signed = read_qencode_json(_qencode_signed(tmp_path, keys.load_private_key(private)))
    assert integrity(signed).signature == "present, not verified (no key given)"
    good = integrity(signed, public)
    assert good.status == "pass" and good.signature == f"verified (key {kid})"
    assert good.signing_key_id == "signing_key"
    wrong = integrity(signed, other)
    assert wrong.status == "fail" and wrong.signature == f"invalid (key {other_id})"
    assert any("does not verify with key " + other_id in r for r in wrong.reasons)
    raw = json.loads((tmp_path / H2_JW_UCCSD.name).read_text())
    raw["results"]["vqe"]["best_energy_hartree"] += 1e-9     # the published energy edited
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(raw))
    bad = integrity(read_qencode_json(tampered), public)
    assert bad.status == "fail" and bad.signature == f"invalid (key {kid})"
    assert any("the entry changed after signing" in r for r in bad.reasons)
    with pytest.raises(KeyFileError, match="holds a private key"):
        integrity(signed, private)


@pytest.mark.notebook
def test_the_audit_says_which_key_and_absent_for_a_real_v4_entry(key_pair, tmp_path):
    """``qencode-nb audit h2 --public-key PUB`` (the notebook's ``public_key``): the
    integrity record names the key and reads "absent" (every public v4 entry carries
    ``trust.signature_b64: null``); a bad key file fails the integrity stage, naming it."""
    import json as _json

    exe = ROOT / ".venv" / "bin" / "qencode-nb"
    out = tmp_path / "h2.ipynb"
    proc = subprocess.run([str(exe), "audit", "h2", "--mode", "replay", "--public-key",
                           str(key_pair[1]), "--out", str(out), "--json"],
                          capture_output=True, text=True, env=pinned_env(1), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    integ = _json.loads(proc.stdout)["integrity"]
    assert integ["signature"] == "absent" and integ["status"] == "pass"
    assert integ["signature_key"]["path"] == str(key_pair[1])
    assert integ["signature_key"]["key_id"] == keys.key_id(keys.load_public_key(key_pair[1]))
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key")
    proc = subprocess.run([str(exe), "audit", "h2", "--mode", "replay", "--public-key",
                           str(bad), "--out", str(tmp_path / "bad.ipynb")],
                          capture_output=True, text=True, env=pinned_env(1), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("qencode-nb: audit failed: integrity: KeyFileError: ")
    assert str(bad) in proc.stderr.splitlines()[0]
