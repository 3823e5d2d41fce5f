"""Symbolic sizes in the serialiser (kiln.symbolic_sizes): torch.export Dims
become size expressions over declared symbols, with their ranges; size
arithmetic nodes emit nothing; a size that is not a product is refused,
naming the FX node."""

from __future__ import annotations

import pytest
import torch

from kiln.errors import UnsupportedOpError
from kiln.export import serialize_exported


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Flatten(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0] * x.shape[1], 4) * 2


def test_a_batch_dim_is_a_symbol_with_its_range():
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(Linear(), (torch.randn(3, 8),), dynamic_shapes=({0: batch},))
    graph = serialize_exported(ep, "linear")[0].graph
    assert len(graph.symbols) == 1
    symbol = graph.symbols[0]
    assert (symbol.min, symbol.max) == (1, 64)
    (x,) = graph.inputs
    assert list(x.type.shape) == [3, 8]               # the traced size stays
    assert list(x.type.symbols) == [symbol.name, ""]
    assert all(not p.value.type.symbols for p in graph.parameters)  # weights static
    relu = graph.nodes[-1]
    assert list(relu.outputs[0].type.symbols) == [symbol.name, ""]


def test_a_derived_size_is_a_product_and_size_nodes_emit_nothing():
    batch = torch.export.Dim("batch", min=2, max=32)
    seq = torch.export.Dim("seq", min=2, max=16)
    ep = torch.export.export(Flatten(), (torch.randn(3, 5, 4),),
                             dynamic_shapes=({0: batch, 1: seq},))
    graph = serialize_exported(ep, "flatten")[0].graph
    names = sorted(s.name for s in graph.symbols)
    assert len(names) == 2
    ops = [n.op for n in graph.nodes]
    assert not any("sym_size" in op for op in ops)
    view = next(n for n in graph.nodes if n.op in ("aten.view.default", "aten.reshape.default",
                                                  "aten._unsafe_view.default"))
    assert list(view.outputs[0].type.symbols) == ["*".join(names), ""]
    size = next(a for a in view.arguments if a.name == "size")
    assert list(size.attribute.ints.values) == [15, 4]
    assert list(size.attribute.ints.symbols) == ["*".join(names), ""]


class Padded(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.pad(x, (0, 1)) * 2


def test_a_size_that_is_not_a_product_is_refused_by_node():
    length = torch.export.Dim("length", min=8, max=64)
    ep = torch.export.export(Padded(), (torch.randn(1, 2, 16),),
                             dynamic_shapes=({2: length},))
    with pytest.raises(UnsupportedOpError, match="products of symbols"):
        serialize_exported(ep, "pool")


def test_a_data_dependent_size_is_declared_with_its_range():
    """nonzero's row count comes from the values (an unbacked symbol): it is
    declared data-dependent with the ShapeEnv's range, its extent is the
    range's max, and torch's range assertions emit no node."""
    class NonZero(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x)

    ep = torch.export.export(NonZero(), (torch.tensor([[True, False], [True, True]]),))
    graph = serialize_exported(ep, "nonzero")[0].graph
    (symbol,) = graph.symbols
    assert symbol.data_dependent and (symbol.min, symbol.max) == (0, 4)
    assert [n.op for n in graph.nodes] == ["aten.nonzero.default"]
    (output,) = graph.nodes[0].outputs
    assert list(output.type.shape) == [4, 2]
    assert list(output.type.symbols) == [symbol.name, ""]


def test_a_data_dependent_size_without_a_bound_is_declared_up_to_2_40():
    """torch knows no bound for some counts (a masked_select of 2 elements):
    the size is declared up to 2^40, and the compiler allocates at what the
    selection can give."""
    class MaskedSelect(torch.nn.Module):
        def forward(self, x):
            return torch.masked_select(x, x > 0)

    ep = torch.export.export(MaskedSelect(), (torch.tensor([1.0, -1.0]),))
    graph = serialize_exported(ep, "masked_select")[0].graph
    (symbol,) = graph.symbols
    assert symbol.data_dependent and (symbol.min, symbol.max) == (0, 1 << 40)
    (output,) = graph.nodes[-1].outputs
    assert list(output.type.shape) == [1] and list(output.type.symbols) == [symbol.name]
