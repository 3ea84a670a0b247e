"""Shared fixtures: real services started for the test session, and the data directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from services import redis_server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def redis_url():
    """URL of a real redis-server started for this test session."""
    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The directory of recorded traces ($RATELAB_DATA), or skip when it is not there."""
    path = Path(os.environ.get("RATELAB_DATA", ROOT.parent / "shared" / "traces"))
    if not path.is_dir():
        pytest.skip(f"no recorded traces at {path} (set RATELAB_DATA)")
    return path
