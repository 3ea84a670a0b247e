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
    assert main(["error-analysis", "--synthetic", *SMALL, "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    pop = Population(sources=400, requests=200_000, chunk_requests=40_000)
    want = analyse_population(pop, 50, 60, "both", workers=1, progress=False)
    assert out["modes"]["estimate"] == json.loads(json.dumps(want.to_dict()))["modes"]["estimate"]
    assert out["modes"]["admission"]["requests"] == want.requests
    assert out["population"]["sources"] == 400 and out["run"]["chunks"] == pop.n_chunks


def test_two_processes_give_the_one_process_answer():
    pop = Population(sources=400, requests=200_000, chunk_requests=40_000, seed=3)
    one = analyse_population(pop, 50, 60, "both", workers=1, progress=False)
    two = analyse_population(pop, 50, 60, "both", workers=2, progress=False)
    assert one.to_dict() == two.to_dict()


def test_synthetic_table(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--mode", "estimate"]) == 0
    out = capsys.readouterr().out
    assert "wrong decisions (%)" in out and "admission" not in out.split("\n")[1]


def test_bad_limit_is_an_error_naming_it(capsys):
    assert main(["error-analysis", "--synthetic", *SMALL, "--limit", "-3"]) == 2
    assert "limit" in capsys.readouterr().err
