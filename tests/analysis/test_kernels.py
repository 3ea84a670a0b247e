"""The error analysis's kernels: the relative-error histogram's bins found by table are the
bins its definition gives (a base-10 logarithm per request)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from budget import examples
from numba import njit

from ratelab.analysis import kernels as K


@njit
def bins_by_table(values, bins):
    out = np.empty(len(values), np.int64)
    for i in range(len(values)):
        out[i] = K._bin(values[i], bins)
    return out


def test_the_table_gives_every_edge_and_its_neighbours_the_defined_bin():
    edges, _ = K.bin_table()
    inner = edges[2:-1]
    values = np.concatenate([inner, np.nextafter(inner, 0), np.nextafter(inner, np.inf),
                             [0.0, 5e-324, 1e-300, 1e-7, 1e-6, 1.0, 9999.0, 1e4, 1e5, 1e300]])
    got = bins_by_table(values, K.bin_table())
    assert got.tolist() == [K.bin_of(float(x)) for x in values]
    # each edge is where the bin changes: the float below it is one bin lower
    assert np.all(got[len(inner):2 * len(inner)] == np.arange(2, K.N_LOG_BINS + 1) - 1)


@examples(200)
@given(st.lists(st.floats(0.0, 1e6, allow_nan=False) |
                st.builds(lambda e, m: m * 10.0 ** e, st.integers(-12, 8), st.floats(1, 10)),
                min_size=1, max_size=50))
def test_the_table_gives_any_relative_error_the_defined_bin(values):
    values = np.array(values)
    assert bins_by_table(values, K.bin_table()).tolist() == [K.bin_of(x) for x in values]


def test_the_definition_is_the_logarithm_cut_in_hundredths_of_a_decade():
    assert K.bin_of(0.0) == 0
    assert K.bin_of(10.0 ** K.LOG_LO) == 1 and K.bin_of(1e-9) == 1
    assert K.bin_of(1.0) == 1 + round(-K.LOG_LO * K.BINS_PER_DECADE)
    assert K.bin_of(0.99) == K.bin_of(1.0) - 1  # log10(0.99) = -0.0044: the bin below
    assert K.bin_of(1e9) == K.N_LOG_BINS
