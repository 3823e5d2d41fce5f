"""Fixtures: a session-wide kilnd, a factory for private ones, and clients."""

from __future__ import annotations

import pytest
import torch

import kiln
from support import Kilnd, require_binaries


@pytest.fixture(scope="session")
def kilnd(tmp_path_factory):
    """One daemon (with its local CPU agent) for the whole session."""
    require_binaries()
    work = tmp_path_factory.mktemp("kilnd")
    daemon = Kilnd(work, work / "cache").start()
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture
def client(kilnd):
    with kiln.Client(kilnd.address, timeout=300) as c:
        yield c


@pytest.fixture
def start_kilnd(tmp_path):
    """Starts private daemons (e.g. to restart one on the same cache dir);
    every one still running at the end must stop cleanly."""
    started: list[Kilnd] = []

    def start(cache_dir=None, name=None, extra_args=()) -> Kilnd:
        d = Kilnd(tmp_path, cache_dir or (tmp_path / "cache"),
                  name=name or f"kilnd{len(started)}", extra_args=tuple(extra_args))
        started.append(d)
        return d.start()

    yield start
    for d in started:
        d.assert_stops_cleanly()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
