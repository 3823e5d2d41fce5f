"""Tensors with a zero-sized dimension end to end (issue 15): an empty input
and an empty output cross kilnd, the agent and both transports as zero
bytes, and results with elements computed over empty arguments (a sum over
an empty dim, a product with an empty contraction) match eager. The op-level
cases are the registry's `empty` family; this checks the data path."""

from __future__ import annotations

import torch

import kiln


class EmptyAndFull(torch.nn.Module):
    """Empty in, empty out, and full results made from empty arguments."""

    def forward(self, x, e, k):
        return (
            torch.tanh(e) + 1,                   # [0, 3]: nothing computed
            x[:, 4:] @ k.t() + e.sum(0),         # [2, 0] @ [0, 3]: zeros, + zeros
            x.sum(1) + k.sum(1).sum(),           # a sum over an empty dim is 0
            x[:, 5:] * 2,                        # a slice past the end: [2, 0]
        )


def arguments():
    g = torch.Generator().manual_seed(3)
    return (torch.randn(2, 4, generator=g), torch.randn(0, 3, generator=g),
            torch.randn(3, 0, generator=g))


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-6)


def test_empty_tensors_over_the_local_socket_and_grpc(kilnd):
    model, args = EmptyAndFull().eval(), arguments()
    want = model(*args)
    exported = torch.export.export(model, args)
    for local in (True, False):
        with kiln.Client(kilnd.address, timeout=300, local=local) as client:
            compiled = client.compile(exported)
            got = compiled(*args)
            assert compiled.last_transport == ("local" if local else "grpc")
        check(got, want)


def test_empty_tensors_through_the_torch_compile_backend(kilnd):
    model, args = EmptyAndFull().eval(), arguments()
    compiled = torch.compile(model, backend=kiln.backend(kilnd.address, target="cpu"))
    check(compiled(*args), model(*args))
