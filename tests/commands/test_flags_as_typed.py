"""Every CLI refusal names the flag as the user typed it (``--coretype``), while the
library and the notebook keep the parameter's name (``blas_coretype``)
(qencode_nb.commands.flags).  All refusals come before any kernel starts: nothing runs
and nothing is written."""

from __future__ import annotations

from dataclasses import fields

import pytest

from qencode_nb.options import RunOptions
from qencode_nb.cli import build_parser, main
from qencode_nb.commands.flags import CHECKED_EACH_AS, FLAGS_ATTRIBUTE, as_typed
from qencode_nb.errors import EntryError, ParameterError, PinError

BAD = [  # (arguments, what stderr says, the parameter's name it must not use)
    (["--coretype", "bogus"], "--coretype 'bogus' is not accepted; accepted: a profile",
     "blas_coretype"),
    (["--threads", "0"], "--threads 0 is not accepted; accepted: an integer >= 1",
     "blas_threads"),
    (["--mode", "bogus"], "--mode 'bogus' is not accepted; accepted: full, replay, rerun",
     "field mode"),
    (["--engine", "gpu"], "--engine 'gpu' is not accepted; accepted: None (the recorded "
     "backend)", "field engine"),
    (["--timeout", "-1"], "--timeout -1", "field timeout"),
]


@pytest.mark.parametrize("command", ["audit", "sweep"])
@pytest.mark.parametrize("args,said,not_said", BAD, ids=[b[0][0] for b in BAD])
def test_audit_and_sweep_name_the_flag_as_typed(command, args, said, not_said, capsys,
                                                tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([command, "h2", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"qencode-nb: {said}"), err
    assert not_said not in err, err
    if args[0] == "--timeout":
        assert "is not accepted; accepted: seconds > 0 or None" in err
    assert not any(tmp_path.iterdir()), "refused before anything is written"


@pytest.mark.parametrize("argv,said", [
    (["sweep", "h2", "--cell-timeout", "0"], "--cell-timeout 0 is not accepted"),
    (["sweep", "h2", "--workers", "0"], "--workers 0 is not accepted"),
    (["study", "threads", "h2", "--threads", "1", "0"], "--threads 0 is not accepted"),
    (["study", "kernels", "h2", "--coretypes", "bogus"], "--coretypes 'bogus' is not accepted"),
    (["study", "threads", "h2", "--repeats", "0"], "--repeats 0 is not accepted"),
    (["study", "optimizers", "h2", "--threads", "0"], "--threads 0 is not accepted"),
    (["robustness", "h2", "--coretypes", "bogus"], "--coretypes 'bogus' is not accepted"),
    (["robustness", "h2", "--timeout", "0"], "--timeout 0.0 is not accepted"),
    (["robustness", "h2", "--mode", "replay"], "--mode 'replay' does not re-run the optimiser"),
])
def test_the_studies_name_the_flag_as_typed(argv, said, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"qencode-nb: {said}")
    assert not (tmp_path / "out").exists()


def test_the_library_keeps_the_parameter_names():
    """The notebook and the Python API say what they were given: the parameter."""
    from qencode_nb.options import (check_coretype, check_engine, check_mode, check_threads,
                                    check_timeout)

    with pytest.raises(ParameterError, match=r"^blas_threads 0 is not accepted; accepted: an "):
        check_threads(0)
    with pytest.raises(ParameterError,
                       match=r"^blas_coretype 'bogus' is not accepted; accepted: a "):
        check_coretype("bogus")
    with pytest.raises(ParameterError, match=r"^mode 'bogus' is not accepted"):
        check_mode("bogus")
    with pytest.raises(ParameterError, match=r"^engine 'gpu' is not accepted"):
        check_engine("gpu")
    with pytest.raises(ParameterError, match=r"^timeout -1 is not accepted; accepted: seconds"):
        check_timeout(-1)
    with pytest.raises(ParameterError, match=r"^cell_timeout 0 is not accepted"):
        check_timeout(0, "cell_timeout")
    for fine in (None, 1, 0.5):
        assert check_timeout(fine) == fine


def test_the_flag_table_is_the_parsers_own():
    """Each run command's flags come from its argparse definitions: every RunOptions
    field the command takes is named by its flag, and a flag the library checks each
    value of (``--coretypes``) names the parameter's errors too."""
    parser = build_parser()
    sweep = parser.parse_args(["sweep", "h2"])
    flags = getattr(sweep, FLAGS_ATTRIBUTE)
    assert {f.name: flags.get(f.name) for f in fields(RunOptions) if f.name in flags} == {
        "mode": "--mode", "engine": "--engine", "blas_threads": "--threads",
        "blas_coretype": "--coretype", "db": "--db", "stack": "--stack",
        "workers": "--workers", "scheduler": "--scheduler", "timeout": "--timeout",
        "cell_timeout": "--cell-timeout", "proof_budget": "--proof-budget",
        "hamiltonian": "--hamiltonian"}
    kernels = parser.parse_args(["study", "kernels", "h2"])
    assert getattr(kernels, FLAGS_ATTRIBUTE)[CHECKED_EACH_AS["blas_coretype"]] == "--coretypes"
    err = PinError("'x' is not accepted", parameter="blas_coretype")
    assert as_typed(err, kernels) == "--coretypes 'x' is not accepted"
    assert as_typed(err, sweep) == "--coretype 'x' is not accepted"
    assert str(err) == "blas_coretype 'x' is not accepted"
    # an error naming no flag of the command, or read from a file, is left as it is
    assert as_typed(ParameterError("'x' is odd", parameter="colour"), sweep) \
        == "colour 'x' is odd"
    from_file = EntryError("'x' is not accepted", field="mode", path="entry.json")
    assert as_typed(from_file, sweep) == "entry.json: field mode: 'x' is not accepted"
    assert as_typed(ValueError("plain"), sweep) == "plain"
