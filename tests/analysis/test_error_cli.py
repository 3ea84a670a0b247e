"""``ratelab error-analysis``: every form prints a table or JSON with the same figures."""

from __future__ import annotations

import json

import pytest

from ratelab.analysis.stream import analyse_population
from ratelab.cli import main
from ratelab.traces.population import Population

SMALL = ["--sources", "400", "--requests", "200000", "--chunk-requests", "40000",
         "--limit", "50", "--window", "60", "--no-progress"]


def test_synthetic_json_matches_the_library(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    pop = Population(sources=400, requests=200_000, chunk_requests=40_000)
    want = analyse_population(pop, 50, 60, "both", progress=False)
    assert out["modes"]["estimate"] == json.loads(json.dumps(want.to_dict()))["modes"]["estimate"]
    assert out["modes"]["admission"]["requests"] == want.requests
    assert out["population"]["sources"] == 400 and out["run"]["chunks"] == pop.n_chunks


def test_workers_without_dask_is_an_error_naming_the_flag(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--workers", "2"]) == 2
    assert "--workers needs --engine dask" in capsys.readouterr().err


def test_synthetic_table(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--mode", "estimate"]) == 0
    out = capsys.readouterr().out
    assert "wrong decisions (%)" in out and "admission" not in out.split("\n")[1]


def test_bad_limit_is_an_error_naming_it(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--limit", "-3"]) == 2
    assert "limit" in capsys.readouterr().err


def test_dataset_at_peak_quantiles_json(data_dir, capsys):
    from ratelab import datasets
    from ratelab.analysis import tally, thresholds

    assert main(["error-analysis", "--dataset", "epa-http", "--window", "60",
                 "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    trace = datasets.load("epa-http", progress=False, warn=False)
    limits = thresholds(trace, 60.0)
    assert [r["quantile"] for r in out["results"]] == [0.9, 0.99, 0.999]
    assert [r["limit"] for r in out["results"]] == [limits[q] for q in (0.9, 0.99, 0.999)]
    want = tally(trace, limits[0.99], 60.0).to_dict()
    assert out["results"][1]["modes"] == json.loads(json.dumps(want))["modes"]
    assert out["load_report"]["out_of_order"] == 15
    assert out["load_report"]["dropped"] == {} and out["load_report"]["warnings"] == []


@pytest.mark.parametrize("file, fmt, requests", [
    ("NASA_access_log_Jul95_first1000.clf.gz", "clf", 1000),
    ("nasa_19950801.tsv.gz", "nasa-tsv", 33996),
    ("epa-http.txt.gz", "epa", 47748),
])
def test_trace_file_in_each_format(data_dir, capsys, file, fmt, requests):
    assert main(["error-analysis", "--trace", str(data_dir / file), "--format", fmt,
                 "--limit", "5", "--window", "10", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["requests"] == requests
    assert out["results"][0]["modes"]["admission"]["requests"] == requests


def test_trace_table_names_the_percentile(data_dir, capsys):
    assert main(["error-analysis", "--dataset", "nasa-1995-08-01", "--quantiles", "0.99",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "99th percentile of per-source peak counts" in out
    assert "33,996 requests" in out


def test_missing_trace_file_is_an_environment_error_naming_the_option(capsys, tmp_path):
    assert main(["error-analysis", "--trace", str(tmp_path / "none.log"), "--no-progress"]) == 1
    assert "--trace" in capsys.readouterr().err


def test_the_recorded_command_reproduces_every_argument(capsys):
    """The JSON's "command" parses back to the same analysis, to the last digit."""
    import shlex

    from ratelab.cli import parser

    argv = ["error-analysis", "--synthetic", "--sources", "40", "--requests", "2000",
            "--volume-sigma", "1.2345678", "--bot-jitter-s", "0.1234567",
            "--limit", "12.3456789", "--window", "7.25", "--no-progress", "--json"]
    assert main(argv) == 0
    command = json.loads(capsys.readouterr().out)["command"]
    words = shlex.split(command)
    assert words[0] == "ratelab"
    again, first = parser().parse_args(words[1:]), parser().parse_args(argv)
    for name in ("pop_volume_sigma", "pop_bot_jitter_s", "pop_sources", "pop_requests",
                 "limit", "window", "mode"):
        assert getattr(again, name) == getattr(first, name), name


def test_by_behaviour_adds_up_to_the_whole_population(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--json",
                 "--by-behaviour"]) == 0
    out = json.loads(capsys.readouterr().out)
    pop = Population(sources=400, requests=200_000, chunk_requests=40_000)
    want = analyse_population(pop, 50, 60, "both", workers=1, progress=False)
    want = json.loads(json.dumps(want.to_dict()))["modes"]
    for mode in want:  # the same counts; float sums added in another order agree to rounding
        assert out["modes"][mode] == pytest.approx(want[mode], rel=1e-12)
    assert out["command"].endswith("--by-behaviour")
    behaviours = {k: v for k, v in out["by_behaviour"].items()
                  if k not in ("over_threshold", "never_over")}
    for mode in ("estimate", "admission"):
        total = out["misjudged"][mode]
        assert sum(b[mode]["false_negatives"] for b in behaviours.values()) == total["false_negatives"]
        assert sum(b[mode]["false_positives"] for b in behaviours.values()) == total["false_positives"]
        assert sum(b["false_negatives"] for b in total["false_negatives_by_over_pct"]) \
            == total["false_negatives"]
    assert out["by_behaviour"]["never_over"]["estimate"]["false_negatives"] == 0
