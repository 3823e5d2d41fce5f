import pytest

from fake_daemon import FakeDaemon


@pytest.fixture
def fake_daemon():
    daemon = FakeDaemon()
    yield daemon
    daemon.stop()
