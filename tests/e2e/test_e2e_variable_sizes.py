"""Variable sizes end to end (issue 18, part 2): a program exported with
torch.export Dims compiles once, for the declared range, and that one
executable serves every size in it with results that match eager; a size
outside the range is INVALID_ARGUMENT naming the input, the dimension and
the symbol; an op Kiln compiles for static sizes only is UNIMPLEMENTED
naming it."""

from __future__ import annotations

import pytest
import torch

import kiln

#: f32 products and sums in another order than eager's kernels.
RTOL, ATOL = 1e-5, 1e-5


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


class Encoder(torch.nn.Module):
    """A transformer encoder block (attention, layer norm, GELU MLP)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = torch.nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
            activation="gelu", batch_first=True)

    def forward(self, x):
        return self.block(x)


def export_mlp(low: int = 1, high: int = 64):
    torch.manual_seed(0)
    model = Mlp().eval()
    batch = torch.export.Dim("batch", min=low, max=high)
    example = (torch.randn(4, 32),)
    return model, torch.export.export(model, example, dynamic_shapes=({0: batch},))


@pytest.mark.parametrize("local", [False, True], ids=["grpc", "local"])
def test_one_executable_serves_every_batch_size(kilnd, local):
    model, exported = export_mlp()
    with kiln.Client(kilnd.address, timeout=300, local=local) as client:
        compiled = client.compile(exported)
        manifest = compiled.manifest
        assert [(s.min, s.max) for s in manifest.symbols] == [(1, 64)]
        symbol = manifest.symbols[0].name
        assert list(manifest.inputs[0].type.symbols) == [symbol, ""]
        assert list(manifest.outputs[0].type.symbols) == [symbol, ""]
        for batch in (1, 3, 4, 17, 64):
            x = torch.randn(batch, 32)
            got = compiled(x)
            assert got.shape == (batch, 10)
            torch.testing.assert_close(got, model(x), rtol=RTOL, atol=ATOL)
        # Compiling it again is the same executable, from the cache.
        again = client.compile(exported)
        assert again.digest == compiled.digest and again.cache_hit


def test_a_size_outside_the_range_names_input_dimension_and_symbol(kilnd):
    _, exported = export_mlp(low=2, high=8)
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(exported)
        for batch in (1, 9):
            with pytest.raises(kiln.InvalidArgumentError) as caught:
                compiled(torch.randn(batch, 32))
            message = str(caught.value)
            assert f"dimension 0 is {batch}" in message
            assert "must be in [2, 8]" in message
        with pytest.raises(kiln.InvalidArgumentError, match="f32\\[s\\w*, 32\\]"):
            compiled(torch.randn(4, 31))


def test_the_encoder_block_varies_batch_and_sequence_length(kilnd):
    torch.manual_seed(1)
    model = Encoder().eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    seq = torch.export.Dim("seq", min=2, max=128)
    exported = torch.export.export(model, (torch.randn(2, 8, 32),),
                                   dynamic_shapes=({0: batch, 1: seq},))
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(exported)
        assert len(compiled.manifest.symbols) == 2
        for b, s in ((1, 2), (2, 8), (3, 17), (5, 64)):
            x = torch.randn(b, s, 32)
            with torch.no_grad():
                want = model(x)
            torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-4)


def test_resnet18_varies_its_batch_with_one_executable(kilnd):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(3)
    model = torchvision.models.resnet18(num_classes=10).eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    exported = torch.export.export(model, (torch.randn(2, 3, 64, 64),),
                                   dynamic_shapes=({0: batch},))
    with kiln.Client(kilnd.address, timeout=600) as client:
        compiled = client.compile(exported)
        assert [(s.min, s.max) for s in compiled.manifest.symbols] == [(1, 8)]
        for b in (1, 3, 5):
            x = torch.randn(b, 3, 64, 64)
            with torch.no_grad():
                want = model(x)
            got = compiled(x)
            assert got.shape == (b, 10)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


class Cumulative(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=0)


def test_an_op_compiled_for_static_sizes_only_is_unimplemented(kilnd):
    batch = torch.export.Dim("batch", min=2, max=32)
    exported = torch.export.export(Cumulative(), (torch.randn(4, 3),),
                                   dynamic_shapes=({0: batch},))
    with kiln.Client(kilnd.address, timeout=300) as client:
        with pytest.raises(kiln.UnimplementedError, match="aten.cumsum.default") as caught:
            client.compile(exported)
        assert "static sizes only" in str(caught.value)


def test_torch_compile_dynamic_compiles_once_for_every_batch(kilnd):
    torch.manual_seed(2)
    model = Mlp().eval()
    backend = kiln.backend(kilnd.address, target="cpu")
    compiled = torch.compile(model, backend=backend, dynamic=True)
    with torch.no_grad():
        for batch in (3, 5, 17, 40):
            x = torch.randn(batch, 32)
            torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)
    graphs = backend.compiled_graphs
    assert len(graphs) == 1
    executables = graphs[0].specializations
    assert len(executables) == 1, executables
    assert len(executables[0].manifest.symbols) == 1


def test_torch_compile_of_a_graph_with_static_only_ops_specialises_per_size(kilnd):
    backend = kiln.backend(kilnd.address, target="cpu")
    compiled = torch.compile(Cumulative(), backend=backend, dynamic=True)
    for batch in (3, 5):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(compiled(x), torch.cumsum(x, 0))
    assert len(backend.compiled_graphs) == 1
    executables = backend.compiled_graphs[0].specializations
    assert len(executables) == 2
    assert all(len(e.manifest.symbols) == 0 for e in executables)


def test_torch_compile_automatic_dynamic_shapes_go_symbolic_after_the_second_shape(kilnd):
    torch.manual_seed(4)
    model = Mlp().eval()
    backend = kiln.backend(kilnd.address, target="cpu")
    compiled = torch.compile(model, backend=backend)   # no dynamic=: Dynamo decides
    with torch.no_grad():
        for batch in (3, 5, 9, 30):
            x = torch.randn(batch, 32)
            torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)
    # The first shape compiles static; the second makes Dynamo recompile the
    # graph with a dynamic batch, which Kiln compiles once for every later one.
    executables = [e for g in backend.compiled_graphs for e in g.specializations]
    assert len(executables) == 2, executables
    assert len(executables[0].manifest.symbols) == 0
    assert len(executables[1].manifest.symbols) == 1
