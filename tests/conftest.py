"""Shared fixtures: real services started for the test session, and the data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

import budget  # noqa: F401  (registers the "check" profile before Hypothesis loads it)
from services import redis_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def redis_url():
    """URL of a real redis-server started for this test session."""
    with redis_server() as url:
        yield url


@pytest.fixture(params=["sim", "redis"])
def store(request):
    """A SimStore, then a real redis-server's RedisStore: the same test runs on both."""
    from ratelab.store import RedisStore, SimStore

    s = SimStore() if request.param == "sim" else RedisStore(request.getfixturevalue("redis_url"))
    yield s
    s.close()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The repository's data/ folder: the recorded traces ship there, so it is never missing."""
    from ratelab.datasets import DATA, DATASETS

    missing = [d.file for d in DATASETS.values() if not (DATA / d.file).is_file()]
    assert not missing, f"recorded traces missing from {DATA}: {missing}"
    return DATA


def pytest_terminal_summary(terminalreporter):
    """One line saying how many tests skipped for want of a service, and which services."""
    from collections import Counter

    reasons = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if "is not installed" in reason:
            reasons[reason.removeprefix("Skipped: ").split(" is not installed")[0]] += 1
    if reasons:
        by = ", ".join(f"{n} need {what}" for what, n in sorted(reasons.items()))
        terminalreporter.write_line(
            f"services: {sum(reasons.values())} tests skipped ({by}); install them with "
            "apt-get install redis-server nginx haproxy chromium, or see .ci/run", yellow=True)
