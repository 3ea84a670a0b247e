"""The fast and the reference log readers on one file, and the check that they agree: the
traces tests hold every compiled reader to the line-by-line one with these."""

from __future__ import annotations

import warnings

import numpy as np

from ratelab.traces.loaders import LoadWarning, load_log


def both(path, fmt, **kw):
    """(fast, reference) traces of `path` read as `fmt`, their warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        fast = load_log(path, fmt, engine="fast", progress=False, **kw)
        ref = load_log(path, fmt, engine="reference", progress=False, **kw)
    return fast, ref


def assert_same(fast, ref):
    """The same requests, names, malformed-line report and ordering note."""
    np.testing.assert_array_equal(fast.time, ref.time)
    np.testing.assert_array_equal(fast.key, ref.key)
    assert list(fast.key_names) == list(ref.key_names)
    assert fast.meta["report"] == ref.meta["report"]
    assert fast.meta.get("out_of_order") == ref.meta.get("out_of_order")
