"""The fuzz suite for bad input (issue 36, item 7): real entries of each QEncode schema
(1.0.0 to 4.0.0), mutated by Hypothesis (``tests/fuzzing.py``), fed to the reader the
audit uses (:func:`qencode_nb.entry.load`, then the recorded environment the notebook
reads next).  Every input ends in a read entry or an :class:`~qencode_nb.errors.EntryError`
naming the file, the field's full dotted path (or the file-level fault), the value and
what is accepted; any other exception fails the test, and Hypothesis shrinks it to a
smallest input.

A fixed seed (``derandomize``) and a fixed count per schema in CI
(:data:`fuzzing.CI_EXAMPLES`); ``QNB_FUZZ_EXAMPLES`` sets another (docs/howto/fuzz.md).
Example-based cases pin truncated files and the JSON-level refusals; four fixed
mutations go through ``qencode-nb audit --mode replay`` (the real notebook).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import LIH_PAR_HEA, ROOT
from fuzzing import SEEDS, fuzz_examples, mutated_entry
from qencode_nb.entry import load
from qencode_nb.environment.recorded import recorded_environment
from qencode_nb.errors import EntryError
from qencode_nb.rules import MAX_ENTRY_DEPTH

#: Errors about the file as a whole (no field to name).
FILE_LEVEL = ("not valid JSON", "not UTF-8 text", "cannot read", "nested too deeply",
              "a QEncode entry is a JSON object")
#: A field path: dotted names, list indices ``[3]`` and odd keys as ``['a.b']``.
FIELD_PATH = re.compile(r"^([A-Za-z_][\w-]*)?(\[(\d+|'[^\n]*'|\"[^\n]*\")\]"
                        r"|\.[A-Za-z_][\w-]*)*$")
#: How long a message may be after the file's path: values are shortened.
MAX_MESSAGE = 600
ACCEPTED = "a QEncode JSON object (schema '1.0.0', '2.0.0', '3.0.0', '4.0.0')"


def check_named(err: EntryError, path: Path) -> None:
    """``err`` names the file, the field (a full dotted path) or the file-level fault,
    and what is accepted, in a message whose values are shortened."""
    message = str(err)
    assert err.path == path, message
    assert message.startswith(f"{path}: "), message
    assert "accepted" in message, message
    text = message[len(f"{path}: "):]
    assert len(text) <= MAX_MESSAGE, f"{len(text)} characters: {text[:300]}..."
    if err.field is None:
        assert text.startswith(FILE_LEVEL), message
    else:
        assert FIELD_PATH.match(err.field), f"field {err.field!r}: {message}"
        assert text.startswith(f"field {err.field}: "), message


def read(path: Path) -> str:
    """What the audit's load stage does with ``path``: ``"read"`` or ``"refused"``
    (named); any other exception propagates."""
    try:
        entry = load(path)
    except EntryError as err:
        check_named(err, path)
        return "refused"
    recorded_environment(entry.tool_versions)     # the notebook's next line
    return "read"


@pytest.fixture(scope="module")
def fuzz_file(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "entry.json"


@pytest.mark.parametrize("schema", sorted(SEEDS))
def test_every_mutated_entry_is_read_or_refused_by_name(schema, fuzz_file):
    outcomes = {"read": 0, "refused": 0}
    start = time.perf_counter()

    @settings(max_examples=fuzz_examples(), derandomize=True, deadline=None,
              database=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(SEEDS[schema]).flatmap(mutated_entry))
    def one(case):
        data, _ = case
        fuzz_file.write_bytes(data)
        outcomes[read(fuzz_file)] += 1

    one()
    print(f"fuzz schema {schema}: {sum(outcomes.values())} inputs ({outcomes['read']} read, "
          f"{outcomes['refused']} refused by name) in {time.perf_counter() - start:.1f} s")
    assert outcomes["refused"] and outcomes["read"]


# --- example-based: truncated files and the JSON-level refusals -----------------------

def _cuts(data: bytes) -> dict:
    """Truncation points of a real entry: empty, one byte, half, and the last ``}`` cut."""
    return {"empty": 0, "one byte": 1, "half": len(data) // 2,
            "last brace": data.rstrip().rindex(b"}")}


@pytest.mark.parametrize("schema", sorted(SEEDS))
@pytest.mark.parametrize("cut", ["empty", "one byte", "half", "last brace"])
def test_a_truncated_file_is_refused_as_not_valid_json(tmp_path, schema, cut):
    data = SEEDS[schema][0].read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[:_cuts(data)[cut]])
    with pytest.raises(EntryError) as err:
        load(path)
    check_named(err.value, path)
    assert re.match(rf"{re.escape(str(path))}: not valid JSON \(line \d+, column \d+: .+\); "
                    rf"accepted: {re.escape(ACCEPTED)}$", str(err.value))


def test_a_file_cut_inside_a_character_is_refused_as_not_utf8(tmp_path):
    raw = json.loads(LIH_PAR_HEA.read_text())
    raw["problem"]["variant"] = "Å" * 10
    data = json.dumps(raw, ensure_ascii=False).encode()
    path = tmp_path / "cut.json"
    path.write_bytes(data[:data.index("Å".encode()) + 1])
    with pytest.raises(EntryError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: not UTF-8 text (unexpected end of data at "
                                     "byte ")
    check_named(err.value, path)


@pytest.mark.parametrize("old,new,said", [
    ('"problem": {', '"problem": {"name": "LiH2", ',
     "field problem.name: written 2 times in one object; accepted: each member once"),
    ('"nfev": 1000', '"nfev": ' + "9" * 5000,
     "field results.vqe.nfev: an integer of 5000 digits is not accepted; accepted: an "
     f"integer of at most {sys.get_int_max_str_digits()} digits"),
    ('"notes": null', '"notes": ' + "[" * 40 + "]" * 40,
     "field results.quality.notes" + "[0]" * (MAX_ENTRY_DEPTH - 3) + ": nested "
     f"{MAX_ENTRY_DEPTH + 1} levels deep is not accepted; accepted: at most "
     f"{MAX_ENTRY_DEPTH} levels"),
    ('"notes": null', '"notes": ' + "[" * 100_000 + "]" * 100_000,
     f"nested too deeply for Python's JSON parser; accepted: {ACCEPTED}, nested at most "
     f"{MAX_ENTRY_DEPTH} levels"),
])
def test_what_a_json_parser_lets_through_is_refused_by_field(tmp_path, old, new, said):
    """A key written twice (json keeps the last, silently), an integer longer than
    Python reads, a nesting deeper than any entry (the rule) or than the parser can."""
    text = LIH_PAR_HEA.read_text()
    assert text.count(old) == 1
    path = tmp_path / "bad.json"
    path.write_text(text.replace(old, new))
    with pytest.raises(EntryError) as err:
        load(path)
    assert str(err.value).startswith(f"{path}: {said}")
    check_named(err.value, path)


# --- the audit command on mutated entries (the real notebook) -------------------------

def _edit_json(source: Path, edit) -> bytes:
    raw = json.loads(source.read_text())
    edit(raw)
    return json.dumps(raw).encode("utf-8", "surrogatepass")


def _params3_is_text(raw):
    raw["results"]["vqe"]["optimal_params"][3] = "x"


def _energies_in_ev(raw):
    """A wrong unit: every energy the entry states, in eV instead of Ha."""
    ev = 27.211386245988
    ref = raw["results"]["reference"]
    for key in ("hf_energy_hartree", "casci_ground_energy_hartree",
                "exact_qubit_ground_energy_hartree", "casci_first_excited_hartree"):
        ref[key] *= ev
    raw["results"]["vqe"]["best_energy_hartree"] *= ev


def _odd_name(raw):
    raw["problem"]["name"] = "H\u2082 \u202eevil \ud800 \U0001f9ea"


V1_H2 = SEEDS["1.0.0"][0]
V3_LIH = SEEDS["3.0.0"][1]

#: ``(name, bytes of the mutated entry, what ends it)``: a refusal names the error and
#: keeps the executed notebook; a completed audit reaches its ``done`` record.
CLI_CASES = [
    ("v4-param-text", lambda: _edit_json(LIH_PAR_HEA, _params3_is_text),
     "field results.vqe.optimal_params[3]: 'x' has type str; accepted: number"),
    ("v3-truncated", lambda: V3_LIH.read_bytes()[:len(V3_LIH.read_bytes()) // 2],
     "not valid JSON (line "),
    ("v4-energies-in-ev", lambda: _edit_json(LIH_PAR_HEA, _energies_in_ev), None),
    ("v1-odd-unicode-name", lambda: _edit_json(V1_H2, _odd_name), None),
]


@pytest.mark.notebook
@pytest.mark.parametrize("name,make,refusal", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_the_audit_command_completes_or_fails_naming_the_error(tmp_path, name, make,
                                                               refusal):
    """``qencode-nb audit FILE --mode replay``: a refused entry fails the run (exit 1)
    naming the file and the field, and keeps the executed notebook with the error
    record; an entry that reads completes (exit 0, or 3 with alerts: its integrity and
    replay fail on the edit)."""
    from qencode_nb.notebook.record import read_records

    entry = tmp_path / f"{name}.json"
    entry.write_bytes(make())
    out = tmp_path / f"{name}.ipynb"
    proc = subprocess.run([sys.executable, "-m", "qencode_nb.cli", "audit", str(entry),
                           "--mode", "replay", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert out.is_file(), proc.stderr[-3000:]
    records = read_records(out)
    if refusal is None:
        assert proc.returncode in (0, 3), proc.stderr[-3000:]
        assert records.get("done") is True
        return
    assert proc.returncode == 1, proc.stdout[-2000:]
    said = f"{entry}: {refusal}"
    assert f"qencode-nb: audit failed: load: EntryError: {said}" in proc.stderr
    assert records["error"]["stage"] == "load" and records["error"]["type"] == "EntryError"
    assert records["error"]["message"].startswith(said)
    assert "done" not in records
