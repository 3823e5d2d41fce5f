"""Models whose outputs are views of their inputs, and non-contiguous inputs,
through both client paths."""

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
