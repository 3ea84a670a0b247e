"""The recorded full-scale runs in data/ agree with each other.

Notebook 05 reads the overall figures from ``error-analysis-full-scale.json`` and the tally by
behaviour from ``error-analysis-full-scale-by-behaviour.json``, two runs of the same command
(the second adds ``--by-behaviour``): the second's overall figures must be the first's.
"""

from __future__ import annotations

import json

import pytest

from ratelab import checkout
from ratelab.analysis.error import KEYS


def records():
    data = checkout.root() / "data"
    return (json.loads((data / "error-analysis-full-scale.json").read_text()),
            json.loads((data / "error-analysis-full-scale-by-behaviour.json").read_text()))


def test_the_by_behaviour_run_is_the_same_run():
    plain, split = records()
    assert split["command"] == plain["command"] + " --by-behaviour"
    assert set(split["modes"]) == set(plain["modes"])
    for mode, figures in split["modes"].items():
        named = {KEYS.get(label, label): value for label, value in plain["modes"][mode].items()}
        for key, value in figures.items():  # float sums added in another order: to 1e-9
            assert value == (pytest.approx(named[key], rel=1e-9) if isinstance(value, float)
                             else named[key]), (mode, key)


def test_the_behaviours_add_up_to_the_whole():
    _, split = records()
    kinds = {k: g for k, g in split["by_behaviour"].items() if k not in ("over_threshold", "never_over")}
    for field in ("sources", "requests"):
        assert sum(g[field] for g in kinds.values()) == split["modes"]["estimate"][field]
    for mode in split["modes"]:
        for field in ("false_negatives", "false_positives"):
            assert sum(g[mode][field] for g in kinds.values()) == split["modes"][mode][field]
