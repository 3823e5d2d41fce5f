"""Models whose outputs are views of their inputs, and non-contiguous inputs,
through both client paths."""

import pytest
import torch

import kiln


class Views(torch.nn.Module):
    def forward(self, a):
        return a.view(2, 2, 2).permute(2, 0, 1), a.t()


def test_view_outputs_and_strided_input_via_export(client):
    a = torch.randn(2, 4).t().contiguous().t()  # non-contiguous input
    model = Views()
    compiled = client.compile(torch.export.export(model, (a,)), target="cpu")
    for got, want in zip(compiled(a), model(a)):
        assert torch.equal(got, want)


def test_view_outputs_via_torch_compile(kilnd):
    a = torch.randn(2, 4)
    model = Views()
    compiled = torch.compile(model, backend=kiln.backend(kilnd.address))
    for got, want in zip(compiled(a), model(a)):
        assert torch.equal(got, want)


class TwiceAndOne(torch.nn.Module):
    def forward(self, z):
        return z * 2 + 1


@pytest.mark.parametrize("transport", ["local", "grpc"])
@pytest.mark.parametrize("rows", [3, 600])  # inline, and big enough for a blob or memfd
def test_lazily_conjugated_and_negated_inputs_go_as_their_values(kilnd, transport, rows):
    # z.conj() and z.conj().imag keep their memory and set a bit: the wire
    # carries the conjugated (negated) values, as eager computes with them.
    z = torch.randn(rows, 512, dtype=torch.complex64, generator=torch.Generator().manual_seed(0))
    model = TwiceAndOne()
    with kiln.Client(kilnd.address, timeout=300, local=transport == "local") as c:
        compiled = c.compile(torch.export.export(model, (z,)), target="cpu")
        conj = z.conj()
        # z first: conj shares its memory, strides and version (a blob's
        # digest is cached by those), yet is another tensor.
        torch.testing.assert_close(compiled(z), model(z), rtol=0, atol=0)
        got = compiled(conj)
        assert compiled.last_transport in ({"local", "direct"} if transport == "local"
                                           else {"grpc"})
        torch.testing.assert_close(got, model(conj), rtol=0, atol=0)
        real = torch.randn(rows, 512, generator=torch.Generator().manual_seed(1))
        compiled_real = c.compile(torch.export.export(model, (real,)), target="cpu")
        negated = z.conj().imag
        assert negated.is_neg()
        torch.testing.assert_close(compiled_real(z.imag), model(z.imag), rtol=0, atol=0)
        torch.testing.assert_close(compiled_real(negated), model(negated), rtol=0, atol=0)


class ResizeAs(torch.nn.Module):
    def forward(self, x, like):
        return x.resize_as_(like)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8, torch.bool,
                                   torch.float16, torch.complex64])
def test_a_resize_keeps_the_leading_elements_and_grows_with_zeros(client, dtype):
    # Eager leaves the elements past the input's uninitialised; Kiln writes
    # zeros there, and the registry (which compares with eager) cannot check
    # them.
    x = torch.arange(12).reshape(4, 3).to(dtype)
    # Non-strict: torch 2.5's Dynamo cannot trace resize_as_.
    compiled = client.compile(torch.export.export(ResizeAs(), (x.clone(), torch.empty(2, 7)),
                                                  strict=False), target="cpu")
    got = compiled(x.clone(), torch.empty(2, 7))
    assert got.shape == (2, 7) and got.dtype == dtype
    assert torch.equal(got.flatten()[:12], x.flatten())
    assert torch.equal(got.flatten()[12:], torch.zeros(2, dtype=dtype))
    shrunk = client.compile(torch.export.export(ResizeAs(), (x.clone(), torch.empty(5)),
                                                strict=False), target="cpu")
    assert torch.equal(shrunk(x.clone(), torch.empty(5)), x.flatten()[:5])


def test_a_resized_argument_is_written_back_as_eager_leaves_it(client):
    x = torch.arange(12.).reshape(4, 3)
    compiled = client.compile(torch.export.export(ResizeAs(), (x.clone(), torch.empty(2, 7)),
                                                  strict=False), target="cpu")
    # Its own storage grows: the shape changes and its elements lead.
    arg = x.clone()
    compiled(arg, torch.empty(2, 7))
    assert arg.shape == (2, 7) and torch.equal(arg.flatten()[:12], x.flatten())
    # A view of a larger storage keeps what the storage held past it, as in
    # eager (no zeros written there).
    big = torch.arange(100., 120.)
    arg = big[:12].view(4, 3)
    eager_big = big.clone()
    ResizeAs()(eager_big[:12].view(4, 3), torch.empty(2, 7))
    compiled(arg, torch.empty(2, 7))
    assert torch.equal(big, eager_big)
    # A non-contiguous argument: eager resizes over its storage order, Kiln
    # over its values; refused, and the argument is left as it was.
    arg = torch.arange(12.).reshape(3, 4).t()
    with pytest.raises(kiln.errors.InvalidArgumentError, match="not contiguous"):
        compiled(arg, torch.empty(2, 7))
    assert torch.equal(arg, torch.arange(12.).reshape(3, 4).t())
