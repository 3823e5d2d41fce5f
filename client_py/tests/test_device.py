"""kiln.device without a daemon: registration, recording, and what makes two
recorded graphs the same (no value is needed, so nothing is contacted)."""

from __future__ import annotations

import pytest
import torch

import kiln
from kiln.lazy_graph import GraphCut
from kiln.lazy_tensor import KilnTensor

HAS_HOOKS = hasattr(torch._C, "_acc")
needs_hooks = pytest.mark.skipif(not HAS_HOOKS, reason="this torch has no torch._C._acc")


@pytest.mark.skipif(HAS_HOOKS, reason="this torch can host a Python device")
def test_an_older_torch_is_told_what_it_lacks():
    with pytest.raises(kiln.UnimplementedError, match="torch._C._acc"):
        kiln.device("127.0.0.1:9")


@pytest.fixture(scope="module")
def dev():
    # Nothing here needs a value, so the unreachable address is never dialled.
    return kiln.device("127.0.0.1:9", target="cpu")


@needs_hooks
def test_factories_on_the_device_record_instead_of_running(dev):
    t = torch.empty(2, 3, device=dev)
    assert isinstance(t, KilnTensor) and t.pending
    assert t.shape == (2, 3) and t.dtype == torch.float32 and t.device == dev
    u = (t + 1).to(torch.float64).t()
    assert u.shape == (3, 2) and u.dtype == torch.float64 and u.stride() == (1, 3)
    assert u.pending and kiln.device_stats(dev)["graphs_run"] == 0


@needs_hooks
def test_invalid_fallback_is_refused():
    with pytest.raises(ValueError, match="fallback"):
        kiln.device("127.0.0.1:9", fallback="eager")
    with pytest.raises(ValueError, match="random must be"):
        kiln.device("127.0.0.1:9", random="agent")


def _program(dev, scale):
    x = torch.zeros(4, 4, device=dev)
    return ((x * scale).relu() + x).sum(1)


@needs_hooks
def test_the_same_program_is_the_same_graph(dev):
    a, b = _program(dev, 2.0), _program(dev, 2.0)
    c = _program(dev, 3.0)
    key = [GraphCut([t._kiln_storage.ref]).structure() for t in (a, b, c)]
    assert key[0] == key[1]
    assert key[0] != key[2], "a different scalar is a different graph"


@needs_hooks
def test_shape_errors_surface_when_the_op_is_called(dev):
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3, device=dev) @ torch.zeros(2, 3, device=dev)
