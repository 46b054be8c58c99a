"""CLI fuzz (issue 22, item 5): every bad command line of every verb exits with status 2
and one line on stderr, never a traceback, never a hang.

The cases come from :mod:`benchmarks._cli_fuzz` (hypothesis over argv: unknown flags,
values of the wrong type, malformed values, broken input files, missing required
arguments) and run in this process through :func:`rlscale.cli.main` under a 10 s
deadline each.  ``python -m benchmarks reliability`` draws more of them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks._cli_fuzz import Workspace, cli_cases, run_case
from rlscale.cli import main

# One workspace per module: hypothesis calls the test body many times.
_WS: list[Workspace] = []


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    ws = Workspace.create(tmp_path_factory.mktemp("cli-fuzz"))
    _WS.append(ws)
    return ws


def test_every_bad_command_line_is_one_line_and_exit_2(workspace: Workspace) -> None:
    @settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
              deadline=None)
    @given(argv=cli_cases(workspace))
    def check(argv: list[str]) -> None:
        outcome = run_case(argv)
        assert outcome.kind == "ok", (outcome.kind, argv, outcome.code, outcome.stderr[-2000:])

    check()


@pytest.mark.parametrize(("argv", "message"), [
    (["allocate", "SPEC", "--budjet", "100"], "unrecognized argument --budjet; did you mean "
                                              "--budget?"),
    (["fit", "x.csv", "--axis", "E"], "unrecognized argument --axis; did you mean --axes?"),
    (["verify", "reward-law", "--quik"], "rlscale verify reward-law: error: unrecognized "
                                         "argument --quik; did you mean --quick?"),
    (["--degub", "prove"], "rlscale: error: unrecognized argument --degub; did you mean "
                           "--debug?"),
    (["alocate"], "did you mean 'allocate'?"),
    (["fit", "x.csv", "--axes", "E", "--law", "additiv"], "did you mean 'additive'?"),
    (["sweep", "s.toml", "--zzz=3"], "unrecognized argument --zzz; rlscale sweep takes "
                                     "--dry-run, --help, --jobs"),
])
def test_a_mistyped_flag_is_named_with_the_closest_valid_one(argv, message, capsys) -> None:
    # argparse checks required arguments first: --budjet was reported as "--budget required".
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("argv", [
    ["fit", "x.csv", "--axes", "E", "--bud", "1"],          # not a flag of fit: unknown
    ["infer-plan", "--q", "0.5", "--budget", "-1", "--x"],  # -1 is a value, --x the flag
])
def test_values_that_look_like_flags_are_not_called_flags(argv, capsys) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err
    assert "unrecognized argument --" in err and "-1" not in err.split("argument")[1], err


def test_abbreviations_and_negative_numbers_stay_valid(capsys) -> None:
    # --targ is argparse's abbreviation of --target; -1 a value: the error is about it.
    assert main(["plan-labels", "--law", "1,0,1", "--price-m", "-1", "--price-k", "1",
                 "--targ", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized" not in err and "price_m must be > 0" in err, err
