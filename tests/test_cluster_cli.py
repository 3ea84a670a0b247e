"""`ratelab race`: admitted against the limit, as text and JSON, on SimStore and real Redis."""

from __future__ import annotations

import json

import pytest

from ratelab.cli import main


def test_race_json_on_the_simulated_store(capsys):
    assert main(["race", "--strategy", "lua", "--gateways", "4", "--requests", "150",
                 "--limit", "100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["admitted"], out["over_admitted"], out["store"]) == (100, 0, "sim")


def test_race_text_for_per_instance_counters(capsys):
    main(["race", "--strategy", "local", "--gateways", "3", "--requests", "400",
          "--limit", "100"])
    assert capsys.readouterr().out.startswith(
        "local: admitted 300 of 400 requests against a limit of 100 (3 gateways, sim)")


def test_race_exhaustive_prints_the_bad_interleaving(capsys):
    main(["race", "--strategy", "naive", "--gateways", "2", "--exhaustive"])
    out = capsys.readouterr().out
    assert out.splitlines()[:6] == [
        "naive: 4 of 6 interleavings of 2 requests over-admit when one place is left",
        "for example (counter ends at 101):",
        "A: GET rl:0 -> 99", "B: GET rl:0 -> 99", "A: INCR rl:0 -> 100", "B: INCR rl:0 -> 101"]


def test_race_bad_arguments_exit_2(capsys):
    assert main(["race", "--strategy", "lua", "--gateways", "0"]) == 2
    assert "gateways" in capsys.readouterr().err
    assert main(["race", "--store", "memcached://x"]) == 2


@pytest.mark.service
def test_race_on_a_real_redis(redis_url, capsys):
    main(["race", "--strategy", "lua", "--store", redis_url, "--gateways", "8",
          "--requests", "120", "--limit", "50", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert (out["admitted"], out["store"]) == (50, "redis")
