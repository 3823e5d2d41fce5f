"""Real models through kilnd + the CPU agent match PyTorch eager.

Each model runs at two batch sizes, through torch.compile(backend=kiln.backend)
and through Client.compile(torch.export.export(...)).
"""

import pytest
import torch

import kiln
from kiln.testing import MLP, BatchedMatmul, EncoderBlock, example_inputs

TOL = dict(rtol=1e-4, atol=1e-5)
BATCHES = (2, 5)
MODELS = {
    "mlp_gelu_exact": lambda: MLP(approximate="none"),
    "mlp_gelu_tanh": lambda: MLP(approximate="tanh"),
    "encoder_block": EncoderBlock,
    "batched_matmul": BatchedMatmul,
}


def make(name, seed=0):
    torch.manual_seed(seed)
    return MODELS[name]().eval()


@pytest.mark.parametrize("name", MODELS)
def test_export_matches_eager(client, name):
    model = make(name)
    for batch in BATCHES:
        inputs = example_inputs(model, batch, seed=batch)
        compiled = client.compile(torch.export.export(model, inputs), target="cpu")
        assert compiled.manifest.target == "cpu"
        assert len(compiled.digest) == 64
        out = compiled(*inputs)
        torch.testing.assert_close(out, model(*inputs), **TOL)
        assert compiled.last_timings["total"] >= 0


@pytest.mark.parametrize("name", MODELS)
def test_torch_compile_backend_matches_eager(kilnd, name):
    model = make(name)
    be = kiln.backend(kilnd.address, target="cpu")
    fast = torch.compile(model, backend=be)
    for batch in BATCHES:  # the second batch size makes Dynamo recompile (dynamic)
        inputs = example_inputs(model, batch, seed=batch)
        torch.testing.assert_close(fast(*inputs), model(*inputs), **TOL)
    compiled = [c for g in be.compiled_graphs for c in g.specializations]
    assert len(compiled) >= len(BATCHES)


def test_backend_under_grad_records_autograd_and_under_no_grad_does_not(kilnd):
    model = make("mlp_gelu_tanh")
    fast = torch.compile(model, backend=kiln.backend(kilnd.address))
    x = torch.randn(3, 32, requires_grad=True)
    out = fast(x)  # a forward and a backward graph (tests/e2e/test_e2e_training.py)
    assert out.requires_grad
    torch.testing.assert_close(out, model(x), **TOL)
    with torch.no_grad():
        out = fast(x)
    assert not out.requires_grad
    torch.testing.assert_close(out, model(x).detach(), **TOL)


def test_devices_lists_local_cpu_agent(client):
    cpus = [d for d in client.devices() if d.kind == "cpu"]
    assert cpus and cpus[0].state == "DEVICE_STATE_READY" and cpus[0].agent_id
    assert all(d.kind == "cpu" for d in client.devices(kind="cpu"))


class SpectralFilter(torch.nn.Module):
    """A complex64 parameter between an rfft and an irfft, and a complex
    output: complex values through the torch.compile backend."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(9, dtype=torch.complex64,
                                                     generator=torch.Generator().manual_seed(0)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        spectrum = torch.fft.rfft(x) * self.weight
        return torch.fft.irfft(spectrum, n=16), spectrum


def test_complex_values_through_the_backend_and_export(kilnd, client):
    model = SpectralFilter()
    x = torch.randn(4, 16)
    with torch.no_grad():
        expected = model(x)
        fast = torch.compile(model, backend=kiln.backend(kilnd.address, target="cpu"))
        got = fast(x)
        exported = client.compile(torch.export.export(model, (x,)), target="cpu")(x)
    for out in (got, exported):
        assert out[1].dtype == torch.complex64
        for g, w in zip(out, expected):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


class Resample(torch.nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def forward(self, x):
        return torch.nn.functional.interpolate(x, **self.kwargs)


UINT8_RESAMPLING = {
    "bilinear_up": dict(size=(13, 17), mode="bilinear"),
    "bilinear_down_align_corners": dict(scale_factor=0.6, mode="bilinear", align_corners=True),
    "bicubic_scale": dict(scale_factor=(1.7, 2.3), mode="bicubic"),
    "bicubic_recompute": dict(scale_factor=1.5, mode="bicubic", recompute_scale_factor=True),
    "bilinear_antialias_down": dict(size=(4, 5), mode="bilinear", antialias=True),
}


@pytest.mark.parametrize("name", UINT8_RESAMPLING)
def test_uint8_resampling_through_the_backend_is_eagers_bytes(kilnd, name):
    """Eager resamples uint8 in fixed point; torch.compile would decompose it
    into float arithmetic (off by one in some elements) but for the
    backend's kiln::upsample_uint8 (kiln/resampling.py)."""
    model = Resample(**UINT8_RESAMPLING[name])
    be = kiln.backend(kilnd.address, target="cpu")
    x = torch.randint(0, 256, (2, 3, 9, 11), dtype=torch.uint8,
                      generator=torch.Generator().manual_seed(len(name)))
    got = torch.compile(model, backend=be)(x)
    assert got.dtype == torch.uint8 and torch.equal(got, model(x))
    (spec,) = [c for g in be.compiled_graphs for c in g.specializations]
    assert [n.op for n in spec.graph.nodes if n.op.startswith("kiln.")] == \
        ["kiln.upsample_uint8.default"]
