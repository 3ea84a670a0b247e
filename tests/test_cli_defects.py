"""The command-line defects found trying ratelab as a newcomer, each held by a test.

Each test runs the command line that misbehaved and checks what it must do now: a result, or
one line on stderr naming the flag as typed, with exit 2 for a user mistake and 1 for an
environment failure, and never a traceback.
"""

from __future__ import annotations

import doctest
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ratelab
import ratelab.cli.lab as lab
from ratelab import checkout
from ratelab.cli import main

BIN = Path(sys.executable).parent
QUICK_STORM = ["--clients", "5", "--duration", "5", "--surge", "none",
               "--behaviours", "immediate"]


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def refused(capsys, argv, flag, code=2) -> str:
    """Run `argv`; it must exit `code` with one line naming `flag`; the line."""
    assert main(argv) == code
    line = one_line(capsys.readouterr().err)
    assert flag in line, line
    return line


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- tracebacks


def test_race_on_a_store_that_does_not_answer_is_one_line_exit_1(capsys):
    line = refused(capsys, ["race", "--strategy", "lua", "--store",
                            f"redis://127.0.0.1:{free_port()}/0"], "did not answer", code=1)
    assert line.startswith("ratelab race: error:") and "redis-server" in line


def test_the_console_script_prints_no_traceback_and_debug_shows_one():
    argv = [BIN / "ratelab", "race", "--store", f"redis://127.0.0.1:{free_port()}/0"]
    plain = subprocess.run(argv, capture_output=True, text=True)
    assert plain.returncode == 1 and len(plain.stderr.strip().splitlines()) == 1
    debug = subprocess.run([*argv, "--debug"], capture_output=True, text=True)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_notebooks_takes_a_name_relative_to_the_notebooks_folder():
    folder = checkout.notebooks()
    first = sorted(folder.glob("[0-9][0-9]-*.ipynb"))[0]
    assert lab.notebook_paths([first.name]) == [folder / first.name]
    assert lab.notebook_paths([first.stem]) == [folder / first.name]


def test_notebooks_with_an_unknown_name_is_exit_2(capsys):
    refused(capsys, ["notebooks", "no-such-notebook.ipynb"], "no-such-notebook.ipynb")


def test_storm_surge_with_two_numbers_is_refused(capsys):
    line = refused(capsys, ["storm", "--surge", "10,20"], "--surge")
    assert "START,END,FACTOR" in line


# ---------------------------------------------------------------- nonsense accepted


def test_storm_window_is_not_a_summary_interval(capsys):
    line = refused(capsys, ["storm", "--window", "100,50"], "--window")
    assert "--param window=" in line and "--summary-interval" in line


def test_storm_inverted_summary_interval_is_refused(capsys):
    refused(capsys, ["storm", *QUICK_STORM, "--summary-interval", "4,1"], "--summary-interval")
    refused(capsys, ["storm", *QUICK_STORM, "--summary-interval", "1,9"], "--summary-interval")


def test_fps_refuses_a_negative_frame_count(capsys):
    refused(capsys, ["fps", "--frames", "-1"], "--frames")
    from ratelab.widgets import LiveLimiter

    live = LiveLimiter("token-bucket")
    try:
        with pytest.raises(ValueError, match="frames"):
            live.measure_fps(frames=-1)
        with pytest.raises(ValueError, match="dt"):
            live.measure_fps(frames=2, dt=0)
    finally:
        live.close()


def test_error_analysis_refuses_a_share_above_1(capsys):
    refused(capsys, ["error-analysis", "--synthetic", "--human", "2"], "--human")
    from ratelab.traces.population import Population

    with pytest.raises(ValueError, match="human"):
        Population(human=2)


def test_race_exhaustive_refuses_options_it_would_ignore(capsys):
    refused(capsys, ["race", "--exhaustive", "--requests", "999"], "--requests")
    refused(capsys, ["race", "--exhaustive", "--latency", "fixed:0.001"], "--latency")
    refused(capsys, ["race", "--think", "0.1"], "--think")  # sim runs in virtual time
    refused(capsys, ["race", "--exhaustive", "--seed", "3"], "--seed")
    refused(capsys, ["bench", "--no-reference", "--no-limits", "--slice", "5"], "--slice")


def test_error_analysis_refuses_population_options_for_a_trace(capsys):
    refused(capsys, ["error-analysis", "--dataset", "epa-http", "--sources", "5"], "--sources")


# ---------------------------------------------------------------- limiter parameters


def test_storm_takes_gcra_with_its_own_defaults(capsys):
    assert main(["storm", "--limiter", "gcra", *QUICK_STORM, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["scenario"]["limiter_params"] == {"rate": 100.0, "burst": 100}


def test_storm_param_errors_name_the_parameter(capsys):
    line = refused(capsys, ["storm", "--param", "rate=-1"], "--param")
    assert "rate must be a positive" in line and "capacity" not in line
    line = refused(capsys, ["storm", "--param", "capacity=1e9x"], "--param")
    assert "capacity" in line and "'1e9x'" in line
    line = refused(capsys, ["storm", "--limiter", "gcra", "--param", "capacity=3"], "--param")
    assert "gcra has no parameter 'capacity'" in line and "burst: int" in line


def test_storm_default_surge_outside_a_short_duration_names_both_flags(capsys):
    line = refused(capsys, ["storm", "--duration", "10"], "--surge")
    assert "--duration 10" in line and "--surge none" in line


# ---------------------------------------------------------------- flags, not parameters


def test_errors_name_the_flag_not_the_python_parameter(capsys):
    line = refused(capsys, ["burst", "--service", "0"], "--service")
    assert "service_per_s" not in line
    line = refused(capsys, ["race", "--exhaustive", "--gateways", "5"], "--gateways")
    assert "clients" not in line
    line = refused(capsys, ["burst", "--max-wait", "0"], "--max-wait")
    assert "max_wait_s" not in line


def test_a_mistyped_option_gets_a_suggestion(capsys):
    line = refused(capsys, ["race", "--gatways", "3"], "--gatways")
    assert line.endswith("did you mean --gateways?")


def test_option_errors_name_the_option(capsys):
    refused(capsys, ["race", "--seed", "-1"], "--seed")
    refused(capsys, ["error-analysis", "--synthetic", "--window", "1e-12"], "--window")
    refused(capsys, ["error-analysis", "--synthetic", "--window", "0"], "--window")


# ---------------------------------------------------------------- help


@pytest.mark.parametrize("command", ["race", "storm", "burst", "fps", "bench", "notebooks",
                                     "error-analysis"])
def test_help_shows_defaults_and_never_none(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "(default: " in out and "default: None" not in out
    assert "(default: every core) (default" not in out


def test_race_help_explains_every_strategy(capsys):
    from ratelab.cluster.strategies import STRATEGIES

    with pytest.raises(SystemExit):
        main(["race", "--help"])
    out = capsys.readouterr().out
    for name in STRATEGIES:
        assert re.search(rf"^  {re.escape(name)} +\S", out, re.M), name


# ---------------------------------------------------------------- JSON


@pytest.mark.parametrize("argv", [["storm", *QUICK_STORM], ["burst"], ["limiters"],
                                  ["fps", "--frames", "2"], ["datasets", "list"]])
def test_json_where_it_was_refused(argv, capsys):
    assert main([*argv, "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), dict)


def test_error_analysis_json_keys_are_snake_case_and_the_table_numeric(capsys):
    assert main(["error-analysis", "--synthetic", "--sources", "40", "--requests", "2000",
                 "--no-progress", "--json"]) == 0
    modes = json.loads(capsys.readouterr().out)["modes"]
    for figures in modes.values():
        assert "wrong_decisions_pct" in figures and "false_negatives" in figures
        assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in figures)
    from ratelab.analysis import approximation_error
    from ratelab.traces import Trace

    table = approximation_error(Trace(np.array([0.5, 1.0, 1.5, 2.0, 2.5]),
                                      np.zeros(5, np.int32)), limit=2, window=1.0)
    assert all(dtype == np.float64 for dtype in table.dtypes)
    assert table.loc["wrong decisions (%)", "estimate"] == pytest.approx(60.0)


# ---------------------------------------------------------------- storm's report


def test_storm_prints_its_scenario_and_succeeded_in_percent(capsys):
    assert main(["storm", "--limiter", "token-bucket", "--param", "rate=20",
                 "--param", "capacity=5", *QUICK_STORM]) == 0
    out = capsys.readouterr().out
    assert out.startswith("limiter token-bucket(rate=20, capacity=5), scope global")
    assert "succeeded %" in out and max(len(line) for line in out.splitlines()) <= 120

    from ratelab.clients import Immediate, Server, poisson_demand, simulate
    from ratelab.limiters import make

    assert main(["storm", "--param", "rate=20", "--param", "capacity=5", *QUICK_STORM,
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["behaviours"][0]
    times, who = poisson_demand(5, 0.6, 5, np.random.default_rng(1))
    want = simulate(Immediate(max_attempts=10), Server(make("token-bucket", rate=20,
                                                           capacity=5)),
                    times, who, np.random.default_rng(2), rtt_s=0.05, horizon_s=5).summary()
    assert row["succeeded_pct"] == pytest.approx(100 * want["succeeded"])
    assert row["offered_per_s"] == pytest.approx(want["offered_per_s"])


# ---------------------------------------------------------------- the API explains itself


def test_make_lists_every_name_with_its_parameters_and_units():
    from ratelab.limiters import REGISTRY, make
    from ratelab.limiters.params import parameters

    doc = make.__doc__
    for name in REGISTRY:
        assert f"    {name} (" in doc, name
        for p in parameters(name):
            assert f"{p.name}: {p.type.__name__} ({p.unit})" in doc
            assert p.unit, f"{name}.{p.name} has no unit in ratelab.limiters.params.UNITS"


@pytest.mark.parametrize("name", ["token-bucket", "leaky-bucket", "fixed-window",
                                  "sliding-window-log", "sliding-window-counter", "gcra",
                                  "nginx"])
def test_each_limiter_documents_parameters_edge_cases_and_a_working_example(name):
    from ratelab.limiters import REGISTRY
    from ratelab.limiters.params import parameters

    cls = REGISTRY[name]
    doc = cls.__doc__
    assert "Parameters:" in doc and "Edge cases:" in doc and "Example" in doc
    for p in parameters(name):
        assert re.search(rf"^\s+{p.name}\s", doc, re.M), f"{name} does not document {p.name}"
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    tests = [t for t in finder.find(cls, cls.__name__, globs={cls.__name__: cls})
             if t.name == cls.__name__]
    assert tests and tests[0].examples
    for t in tests:
        runner.run(t)
    assert runner.failures == 0


def test_limiters_prints_plain_types(capsys):
    assert main(["limiters"]) == 0
    out = capsys.readouterr().out
    assert "'PerSecond'" not in out and "rate: float (requests per second)" in out


def test_progress_bars_never_overshoot():
    from ratelab.progress import bar

    with bar(10, delay_s=3600) as b:  # counting, never shown
        b.update(7)
        b.update(7)  # a total that was an estimate, passed
        assert b.n == 10


# ---------------------------------------------------------------- parsing lives in CLI modules


LIBRARY = sorted(p for p in (Path(ratelab.__file__).parent).rglob("*.py")
                 if "cli" not in p.relative_to(Path(ratelab.__file__).parent).parts)


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_library_modules_do_no_argument_parsing(path):
    """argparse lives in ratelab/cli/ only: a library module offers functions."""
    source = path.read_text()
    assert "argparse" not in source and "add_argument" not in source
    assert "add_parser" not in source
