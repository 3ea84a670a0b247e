"""How many examples a property test draws: its full number, scaled by the loaded profile.

``make test`` draws every property test's full number of examples. ``make check`` is the fast
lane (``--hypothesis-profile=check``): the same properties with a tenth of the examples, never
fewer than :data:`FLOOR`, so a contributor gets an answer in about a minute and CI still runs
them all. The scale is read from Hypothesis' own profile mechanism, registered here and loaded
by its pytest plugin before any test module is imported.
"""

from __future__ import annotations

import math

from hypothesis import settings

FULL = 100
"""Examples per test under the default profile (Hypothesis' own default)."""

FLOOR = 5
"""The fewest examples any property gets, whatever the profile."""

settings.register_profile("check", max_examples=FULL // 10, deadline=None)


def examples(n: int, **kwargs) -> settings:
    """Settings for a property whose full run draws ``n`` examples (no deadline)."""
    scaled = math.ceil(n * settings.default.max_examples / FULL)
    return settings(max_examples=max(FLOOR, min(n, scaled)), deadline=None, **kwargs)
