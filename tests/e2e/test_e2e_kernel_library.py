"""Convolutions and matrix products on the cpu target run on oneDNN,
through the kernel library the cpu agent installs in the artifact, and
match eager.

The same models compiled with kernel_library "none" (generated code for
every op) are a second executable that agrees too. The artifact stays
self-contained: it names the library in its manifest, not in its ELF.
"""

from __future__ import annotations

import re

import pytest
import torch

import kiln
from test_e2e_cpu_targets import LIBRARIES, artifact_of, dynamic_dependencies

TOLERANCE = dict(rtol=1e-4, atol=1e-5)


class ConvNet(torch.nn.Module):
    """The convolutions resnet and mobilenet use (strided, padded, 1x1,
    depthwise, grouped) plus 1-d dilated and 3-d ones, with ops between."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 7, stride=2, padding=3)
        self.pointwise = torch.nn.Conv2d(16, 32, 1, bias=False)
        self.depthwise = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.grouped = torch.nn.Conv2d(32, 24, 3, stride=2, groups=4)
        self.line = torch.nn.Conv1d(4, 6, 3, dilation=2, padding=2)
        self.volume = torch.nn.Conv3d(2, 3, 3, padding=1)

    def forward(self, x, s, v):
        y = torch.relu(self.stem(x))
        y = self.depthwise(self.pointwise(y)) + 1.0
        return self.grouped(y), torch.tanh(self.line(s)), self.volume(v)


def example_inputs():
    g = torch.Generator().manual_seed(3)
    return (torch.randn(2, 3, 32, 30, generator=g), torch.randn(3, 4, 17, generator=g),
            torch.randn(1, 2, 5, 6, 7, generator=g))


@pytest.fixture(scope="module")
def exported():
    torch.manual_seed(0)
    model = ConvNet().eval()
    inputs = example_inputs()
    with torch.no_grad():
        expected = model(*inputs)
    return torch.export.export(model, inputs), inputs, expected


def test_convolutions_run_on_onednn_and_match_eager(client, exported, tmp_path):
    ep, inputs, expected = exported
    compiled = client.compile(ep)
    assert compiled.manifest.kernel_library == "onednn"
    for _ in range(2):  # the second call reuses each site's primitive
        for got, want in zip(compiled(*inputs), expected):
            torch.testing.assert_close(got, want, **TOLERANCE)
    path = tmp_path / "convnet.so"
    path.write_bytes(artifact_of(client, compiled))
    undefined, needed = dynamic_dependencies(path)
    assert set(needed) <= set(LIBRARIES), needed
    assert not any("dnnl" in s or s.startswith("kiln_rt_") for s in undefined), undefined


def test_generated_code_is_another_executable_that_agrees(client, exported):
    ep, inputs, expected = exported
    library = client.compile(ep)
    generated = client.compile(ep, options={"kernel_library": "none"})
    assert generated.manifest.kernel_library == ""
    assert generated.manifest.convolution_algorithm == ""
    assert generated.compile_key != library.compile_key
    # Without a library the convolution algorithm means nothing: one key.
    assert client.compile(ep, options={"kernel_library": "none",
                                       "convolution_algorithm": "direct"}
                          ).compile_key == generated.compile_key
    assert generated.digest != library.digest
    for got, theirs, want in zip(generated(*inputs), library(*inputs), expected):
        torch.testing.assert_close(got, want, **TOLERANCE)
        torch.testing.assert_close(got, theirs, **TOLERANCE)
    # The default resolves to the library by name: the same key.
    named = client.compile(ep, options={"kernel_library": "onednn"})
    assert named.compile_key == library.compile_key and named.cache_hit


def test_linear_layers_and_attention_run_on_onednn_and_match_eager(client):
    """nn.Linear (addmm of the transposed weight) and attention's batched
    products, through an encoder layer; two calls, the second with the
    weights already prepacked in the agent."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=96,
                                             batch_first=True).eval()
    x = torch.randn(3, 10, 64)
    with torch.no_grad():
        expected = layer(x)
    compiled = client.compile(torch.export.export(layer, (x,)))
    assert compiled.manifest.kernel_library == "onednn"
    for _ in range(2):
        torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=2e-5)
    generated = client.compile(torch.export.export(layer, (x,)),
                               options={"kernel_library": "none"})
    torch.testing.assert_close(generated(x), expected, rtol=1e-4, atol=2e-5)


class FusedBlocks(torch.nn.Module):
    """What the epilogues fold into library calls: resnet's conv, norm and
    residual add (not its relu); mobilenet's norm and hardswish (decomposed
    by torch.export), not relu6; a feed-forward's gelu and residual."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.norm = torch.nn.BatchNorm2d(16)
        self.depthwise = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
        self.norm2 = torch.nn.BatchNorm2d(16)
        self.pointwise = torch.nn.Conv2d(16, 8, 1)
        self.up = torch.nn.Linear(8, 32)
        self.down = torch.nn.Linear(32, 8)

    def forward(self, x):
        y = torch.relu(self.norm(self.conv(x)) + x)
        y = torch.nn.functional.hardswish(self.norm2(self.depthwise(y)))
        y = torch.nn.functional.relu6(self.pointwise(y))
        t = y.flatten(2).transpose(1, 2).reshape(-1, 8)  # (positions, 8)
        return t + self.down(torch.nn.functional.gelu(self.up(t)))


def fusedBlocks():
    torch.manual_seed(5)
    model = FusedBlocks().eval()
    for norm in (model.norm, model.norm2):  # statistics a trained model has
        norm.running_mean.uniform_(-0.5, 0.5)
        norm.running_var.uniform_(0.5, 2.0)
        norm.weight.data.uniform_(0.5, 1.5)
        norm.bias.data.uniform_(-0.2, 0.2)
    return model


def call_sites(linalg: str) -> list[tuple[str, list[int]]]:
    """Every library call site's kind and geometry fields in a linalg dump."""
    sites = re.findall(r"@__kiln_(convolution|matmul)\w* : memref<\d+xi64> = "
                       r"dense<\[([^\]]*)\]>", linalg)
    return [(kind, [int(v) for v in fields.split(", ")]) for kind, fields in sites]


def epilogues(linalg: str) -> list[list[int]]:
    """The epilogue fields (has_scale_shift, has_residual, activation) of
    every library call site in a linalg dump: a convolution's end with
    channels_last after them (kiln_rt_kernels.h)."""
    return sorted(fields[-4:-1] if kind == "convolution" else fields[-3:]
                  for kind, fields in call_sites(linalg))


def test_norms_residuals_and_activations_fold_into_the_calls(client):
    model = fusedBlocks()
    x = torch.randn(2, 16, 9, 9)
    with torch.no_grad():
        expected = model(x)
    compiled = client.compile(torch.export.export(model, (x,)),
                              options={"dump_stages": True})
    # On x86-64 every convolution's data is channels last (oneDNN's layout).
    assert [fields[-1] for kind, fields in call_sites(compiled.stage_dumps()["linalg"])
            if kind == "convolution"] == [1] * 3
    assert epilogues(compiled.stage_dumps()["linalg"]) == [
        [0, 0, 0],  # pointwise conv (relu6 stays generated: NaNs)
        [0, 0, 2],  # up + gelu
        [0, 1, 0],  # down + the residual
        [1, 0, 1],  # depthwise + norm + hardswish
        [1, 1, 0],  # conv + norm + residual (relu stays generated)
    ]
    for _ in range(2):
        torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=2e-5)
    # The op report says what runs each node: the calls and what folds into
    # them on oneDNN, relu and relu6 (NaNs) and the reshapes in generated code.
    units = {}
    for layer in compiled.op_report:
        units.setdefault(layer.op, set()).add(layer.unit)
    for op in ("aten.convolution.default", "aten.addmm.default", "aten.gelu.default",
               "aten._native_batch_norm_legit_no_training.default"):
        assert units.pop(op) == {"onednn"}, (op, units)
    for op in ("aten.relu.default", "aten.hardtanh.default", "aten.view.default"):
        assert units.pop(op) == {"generated"}, (op, units)
    # The linear weights' transposes are read untransposed by the calls; the
    # activations' transpose is generated.
    assert units.pop("aten.permute.default") == {"onednn", "generated"}
    # The residual adds and hardswish's ops (add, clamp, mul, div) fold.
    assert all(u == {"onednn"} for u in units.values()), units
    generated = client.compile(torch.export.export(model, (x,)),
                               options={"kernel_library": "none"})
    torch.testing.assert_close(generated(x), expected, rtol=1e-4, atol=2e-5)
    assert set(generated.op_report.units()) == {"generated"}


def test_pooling_between_convolutions_stays_channels_last(client):
    """resnet's stem (conv, batch norm, relu, 3x3/2 max pooling, conv) and an
    average pool between two convolutions: the pools read the channels-last
    data the calls write, so the only transpose left is the input's."""
    torch.manual_seed(2)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False),
        torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.AvgPool2d(2, ceil_mode=True),
        torch.nn.Conv2d(16, 8, 1)).eval()
    with torch.no_grad():
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 37, 33)
    with torch.no_grad():
        expected = model(x)
    compiled = client.compile(torch.export.export(model, (x,)),
                              options={"dump_stages": True})
    linalg = compiled.stage_dumps()["linalg"]
    transposes = re.findall(r"linalg\.transpose ins\(%\w+ : (tensor<[^>]*>)\)", linalg)
    assert transposes == ["tensor<2x3x37x33xf32>", "tensor<2x5x5x8xf32>"], transposes
    for _ in range(2):
        torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=2e-5)


def test_models_without_library_ops_name_no_library(client):
    model = torch.nn.Sequential(torch.nn.LayerNorm(8), torch.nn.ReLU()).eval()
    compiled = client.compile(torch.export.export(model, (torch.randn(2, 8),)))
    assert compiled.manifest.kernel_library == ""


def test_the_agent_reports_its_library(client):
    (device,) = client.devices("cpu")
    assert device.properties["kernel_libraries"] == "onednn"
    assert device.properties["onednn_version"].startswith("2.")


class BasicBlock(torch.nn.Module):
    """resnet's basic block at 64 channels: two 3x3 stride-1 convolutions,
    batch norms, relus and the residual, the convolutions oneDNN runs with
    Winograd's algorithm on AVX-512 under convolution_algorithm "auto"."""

    def __init__(self, channels: int = 64):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def test_convolution_algorithms_are_a_compile_option_and_both_match_eager(client):
    torch.manual_seed(4)
    model = BasicBlock().eval()
    with torch.no_grad():
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 64, 20, 18)
    with torch.no_grad():
        expected = model(x)
    ep = torch.export.export(model, (x,))
    fastest = client.compile(ep)
    direct = client.compile(ep, options={"convolution_algorithm": "direct"})
    named = client.compile(ep, options={"convolution_algorithm": "auto"})
    assert fastest.manifest.convolution_algorithm == "auto"
    assert direct.manifest.convolution_algorithm == "direct"
    # Part of the compile key: two executables; "auto" is the default's.
    assert direct.compile_key != fastest.compile_key
    assert named.compile_key == fastest.compile_key
    for _ in range(2):  # the second call runs the prepared (folded) sites
        got_fastest, got_direct = fastest(x), direct(x)
        torch.testing.assert_close(got_fastest, expected, **TOLERANCE)
        torch.testing.assert_close(got_direct, expected, **TOLERANCE)
    # Winograd's rounding differs from a direct convolution's, but within
    # ~1e-6 of the output's norm (measured 2.6e-7 to 1.3e-6 per layer).
    error = (got_fastest - expected).norm() / expected.norm()
    assert error < 1e-5, error


def test_bad_kernel_library_options_are_invalid_argument(client, exported):
    ep, _, _ = exported
    with pytest.raises(kiln.InvalidArgumentError, match="unknown library 'mkl'"):
        client.compile(ep, options={"kernel_library": "mkl"})
    with pytest.raises(kiln.InvalidArgumentError, match="applies to target 'cpu' only"):
        client.compile(ep, target="riscv64", options={"kernel_library": "onednn"})
    with pytest.raises(kiln.InvalidArgumentError, match="unknown algorithm 'fft'"):
        client.compile(ep, options={"convolution_algorithm": "fft"})
    with pytest.raises(kiln.InvalidArgumentError,
                       match="convolution_algorithm applies to target 'cpu' only"):
        client.compile(ep, target="riscv64", options={"convolution_algorithm": "direct"})


def test_an_agent_pinned_to_avx2_runs_onednns_avx2_kernels(start_kilnd, exported):
    """KILN_AGENT_CPU=x86-64-v3 keeps oneDNN to AVX2 (and FMA), whatever the
    host has: the same numbers, epilogues and NaNs included, come out of the
    kernels an AVX2 host runs.
    On an AVX2 host this is the host's own path."""
    daemon = start_kilnd(name="avx2")
    daemon.stop()
    daemon.env["KILN_AGENT_CPU"] = "x86-64-v3"
    daemon.start()
    ep, inputs, expected = exported
    with kiln.Client(daemon.address, timeout=300) as client:
        (device,) = client.devices("cpu")
        assert device.properties["onednn_isa"] == "avx2"
        compiled = client.compile(ep)
        assert compiled.manifest.kernel_library == "onednn"
        for got, want in zip(compiled(*inputs), expected):
            torch.testing.assert_close(got, want, **TOLERANCE)
        layer = torch.nn.Linear(64, 40).eval()
        x = torch.randn(9, 64)
        linear = client.compile(torch.export.export(layer, (x,)))
        with torch.no_grad():
            torch.testing.assert_close(linear(x), layer(x), **TOLERANCE)
        # The epilogues on AVX2's kernels: norms, residuals, hardswish and
        # gelu as post-ops, NaNs kept where eager keeps them.
        model = fusedBlocks()
        x = torch.randn(2, 16, 9, 9)
        x[0, 3, 4, 4] = float("nan")
        with torch.no_grad():
            expected = model(x)
        fused = client.compile(torch.export.export(model, (x,)))
        torch.testing.assert_close(fused(x), expected, rtol=1e-4, atol=2e-5,
                                   equal_nan=True)
