"""The Trace columns: building, checking, slicing, merging."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ratelab.traces import Trace, merge
from ratelab.traces import generators as g


def test_from_labels_numbers_keys_by_first_appearance():
    t = Trace.from_labels([0.0, 1.0, 2.0, 3.0], ["b", "a", "b", "c"])
    assert list(t.key) == [0, 1, 0, 2] and list(t.key_names) == ["b", "a", "c"]
    assert t.n_keys == 3 and t.name_of(1) == "a"


def test_from_arrays_sorts_stably_and_counts_disorder():
    t = Trace.from_arrays([3.0, 1.0, 1.0, 2.0], [0, 1, 2, 3], sort=True)
    assert list(t.time) == [1.0, 1.0, 2.0, 3.0] and list(t.key) == [1, 2, 3, 0]
    assert t.meta["out_of_order"] == 1


@pytest.mark.parametrize("time, key, cost, match", [
    ([1.0, 0.0], [0, 0], None, "sorted"),
    ([0.0, np.nan], [0, 0], None, "finite"),
    ([0.0, 1.0], [0, -1], None, "key"),
    ([0.0, 1.0], [0, 0], [1.0, 0.0], "cost"),
    ([0.0, 1.0], [0], None, "one length"),
    ([0.0, 1.0], [0, 2**32 + 1], None, "key"),   # would wrap to 1 in int32
    ([0.0, 1.0], [0, 1.5], None, "key"),         # would truncate to 1
])
def test_bad_columns_are_refused(time, key, cost, match):
    with pytest.raises(ValueError, match=match):
        Trace(np.array(time), np.array(key), None if cost is None else np.array(cost))


def test_dataframe_round_trip_and_slicing():
    t = Trace.from_labels([0.0, 0.5, 1.0, 2.0], ["x", "y", "x", "y"], cost=[1, 2, 1, 3])
    df = t.to_dataframe()
    assert list(df.columns) == ["time", "key", "name", "cost"]
    back = Trace.from_dataframe(df, key="name", cost="cost")
    np.testing.assert_array_equal(back.time, t.time)
    np.testing.assert_array_equal(back.key, t.key)
    np.testing.assert_array_equal(back.cost, t.cost)
    assert list(t.between(0.5, 2.0).time) == [0.5, 1.0]  # [start, end)
    assert list(t.for_keys([1]).time) == [0.5, 2.0]
    assert list(t.head(1).time) == [0.0] and list(t.shifted(10).time) == [10, 10.5, 11, 12]
    assert Trace.from_dataframe(pd.DataFrame({"time": [0.0], "key": [4]})).n_keys == 5


def test_merge_keeps_generated_names():
    rng = np.random.default_rng(3)
    humans = g.poisson([1.0, 0.0], 10, rng)                      # ids 0, 1 (1 sends nothing)
    bots = g.periodic(2.0, 10, rng, n_sources=2, key_offset=2)   # ids 2, 3
    t = merge([humans, bots])
    assert len(t) == len(humans) + len(bots) and np.all(np.diff(t.time) >= 0)
    assert list(t.key_names) == ["poisson 0", "poisson 1", "periodic 2", "periodic 3"]
    unnamed = merge([Trace(np.array([1.0]), np.array([0])), bots])
    assert unnamed.key_names is None


def test_merge_refuses_traces_that_share_a_key_id():
    """Two generators left at key_offset=0 both send as key 0: merged, they would silently
    become one source (under one of the two names)."""
    rng = np.random.default_rng(3)
    a, b = g.poisson(5.0, 10, rng), g.flood(2.0, 10)
    with pytest.raises(ValueError, match="key_offset"):
        merge([a, b])
    assert merge([a, g.flood(2.0, 10, key_offset=1)]).n_keys == 2
