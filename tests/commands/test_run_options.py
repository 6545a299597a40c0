"""Every command that runs audits offers the same run options, from one argument group
built from the run specification (qencode_nb.commands.run_args.add_run_options,
qencode_nb.batch.run_spec.RUN_SPEC; issue 52, item 4): each flag with one meaning
everywhere, less the option a study's own axis replaces."""

from __future__ import annotations

import pytest

from qencode_nb.batch.run_spec import RUN_SPEC
from qencode_nb.cli import build_parser
from qencode_nb.commands.run_args import RUN_OPTIONS_TITLE

EVERY = {o.flag for o in RUN_SPEC}
DISPATCH = {"--workers", "--scheduler"}

#: (command, the run options it offers): audit runs one audit (no dispatch); a study's
#: axis replaces the option it varies.
OFFERED = [
    (["audit"], EVERY - DISPATCH),
    (["sweep"], EVERY),
    (["robustness"], EVERY - {"--threads", "--coretype"}),   # its --threads, --coretypes axes
    (["study", "threads"], EVERY - {"--threads"}),           # its --threads list
    (["study", "kernels"], EVERY - {"--coretype"}),          # its --coretypes
    (["study", "optimizers"], EVERY - {"--engine"}),         # the recorded backend only
    (["study", "environments"], EVERY - {"--stack"}),        # its --kernelspecs
]


def _parser(path):
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[name]
    return parser


def _group(parser):
    (group,) = [g for g in parser._action_groups if g.title == RUN_OPTIONS_TITLE]
    return {a.option_strings[0]: a for a in group._group_actions}


@pytest.mark.parametrize("path,offered", OFFERED, ids=[" ".join(p) for p, _ in OFFERED])
def test_every_run_command_offers_the_run_options(path, offered):
    group = _group(_parser(path))
    assert set(group) == offered
    spec = {o.flag: o for o in RUN_SPEC}
    for flag, action in group.items():   # one dest, type and meaning everywhere
        assert action.dest == spec[flag].field
        assert action.type == spec[flag].type
    assert "whole run" in group["--timeout"].help and "cell" in group["--cell-timeout"].help


def test_one_meaning_of_each_flag_in_every_command():
    helps = {}
    for path, _ in OFFERED:
        for flag, action in _group(_parser(path)).items():
            if flag != "--mode":     # a study's --mode lists the modes that re-run
                helps.setdefault(flag, set()).add(action.help)
    assert all(len(texts) == 1 for texts in helps.values()), helps


@pytest.mark.parametrize("argv", [
    ["study", "environments", "h2", "--explain", "--threads", "2"],
    ["study", "environments", "h2", "--explain", "--coretype", "portable"],
])
def test_explain_refuses_the_options_its_grid_varies(argv, capsys, tmp_path):
    from qencode_nb.cli import main

    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "--explain searches the BLAS threads and kernels itself" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv,said", [
    (["audit", "h2", "--cell-timeout", "0"], "--cell-timeout 0 is not accepted"),
    (["audit", "h2", "--timeout", "0"], "--timeout 0.0 is not accepted"),
    (["study", "threads", "h2", "--proof-budget", "-1"], "--proof-budget -1.0 is not accepted"),
    (["robustness", "h2", "--cell-timeout", "0"], "--cell-timeout 0 is not accepted"),
    (["study", "environments", "h2", "--coretype", "bogus"], "--coretype 'bogus' is not accepted"),
    (["study", "kernels", "h2", "--threads", "0"], "--threads 0 is not accepted"),
])
def test_the_new_options_are_refused_by_their_flag(argv, said, capsys, tmp_path):
    from qencode_nb.cli import main

    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"qencode-nb: {said}")
    assert not (tmp_path / "out").exists()
