import subprocess
import sys

import pytest

from ratelab.limiters import NAMES, make
from test_properties import PARAMS


def test_the_registry_names_every_algorithm():
    assert NAMES == ("token-bucket", "leaky-bucket", "fixed-window", "sliding-window-log",
                     "sliding-window-counter", "gcra", "nginx", "haproxy")
    assert set(PARAMS) == set(NAMES)


def test_params_rebuild_an_equal_limiter_and_clone_forgets_state():
    for name in NAMES:
        lim = make(name, **PARAMS[name])
        assert make(name, **lim.params).params == lim.params
        for _ in range(3):
            lim.allow("k", 0.0)
        assert not lim.allow("k", 0.0).allowed
        assert lim.clone().allow("k", 0.0).allowed
        lim.reset("k")
        assert lim.allow("k", 0.0).allowed


def test_import_ratelab_stays_light():
    """Importing ratelab must not pull in the heavy machinery (numba, pandas, matplotlib)."""
    code = ("import sys, ratelab; heavy = {'numba', 'pandas', 'matplotlib', 'simpy', 'lupa'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", NAMES)
def test_state_is_what_the_limiter_keeps_for_a_key(name):
    """``Limiter.state`` (what notebook 03 weighs): None before a key's first request, then
    the state its decisions read, the same after a peek; reset forgets it."""
    lim = make(name, **PARAMS[name])
    assert lim.state("a") is None
    lim.allow("a", 10.0)
    kept = lim.state("a")
    assert kept is not None and lim.state("b") is None
    lim.peek("a", 10.5)
    assert lim.state("a") is kept
    lim.reset("a")
    assert lim.state("a") is None
