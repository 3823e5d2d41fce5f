"""The op report and kiln.get_mlir against a real kilnd: exact numbers for
known layers, the same report from a cache hit (also after a restart, when it
comes from the stored ExecutableRecord), and every pipeline stage."""

import pytest
import torch

import kiln
from kiln import cli
from kiln.testing import MLP, example_inputs

F32 = 4


def _layers_of(report, op):
    return [layer for layer in report if layer.op == op]


def test_linear_numbers_and_cache_hit(client):
    batch, d_in, d_out = 4, 64, 128
    model = torch.nn.Linear(d_in, d_out)
    x = torch.randn(batch, d_in)
    compiled = client.compile(torch.export.export(model, (x,)))
    report = compiled.op_report
    (fc,) = _layers_of(report, "aten.addmm.default")
    assert fc.kind == "contraction" and fc.dialect_ops == "aten.addmm"
    assert fc.macs == batch * d_in * d_out
    assert fc.flops == 2 * batch * d_in * d_out + batch * d_out      # + the bias add
    assert fc.parameter_bytes == (d_in * d_out + d_out) * F32       # weight (transposed) + bias
    assert fc.activation_in_bytes == batch * d_in * F32
    assert fc.activation_out_bytes == batch * d_out * F32
    assert fc.bytes_read == fc.parameter_bytes + fc.activation_in_bytes
    assert fc.bytes_written == fc.activation_out_bytes
    (t,) = _layers_of(report, "aten.permute.default") or _layers_of(report, "aten.t.default")
    assert t.kind == "data-movement" and t.macs == 0
    assert t.parameter_bytes == d_in * d_out * F32
    assert report.totals.macs == batch * d_in * d_out
    assert report.totals.parameter_bytes == (d_in * d_out + d_out) * F32
    assert "addmm" in str(report) and "total" in str(report)

    again = client.compile(torch.export.export(model, (x,)))
    assert again.cache_hit and again.digest == compiled.digest
    assert again.op_report.proto == report.proto


def test_report_survives_a_restart(start_kilnd, tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
    x = torch.randn(2, 8)
    first = start_kilnd(cache_dir=tmp_path / "shared")
    with kiln.Client(first.address) as c:
        compiled = c.compile(torch.export.export(model, (x,)))
        report = compiled.op_report.proto
    assert first.stop() == 0
    second = start_kilnd(cache_dir=tmp_path / "shared")
    with kiln.Client(second.address) as c:
        hit = c.compile(torch.export.export(model, (x,)))
    assert hit.cache_hit and hit.op_report.proto == report
    assert hit.op_report.totals.macs == 2 * 8 * 16


def test_conv_pool_numbers(client):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2)).eval()
    x = torch.randn(1, 3, 16, 16)
    report = client.compile(torch.export.export(model, (x,))).op_report
    (conv,) = _layers_of(report, "aten.convolution.default")
    assert conv.macs == (1 * 8 * 16 * 16) * (3 * 3 * 3)
    assert conv.parameter_bytes == (8 * 3 * 3 * 3 + 8) * F32
    assert conv.activation_in_bytes == 3 * 16 * 16 * F32
    assert conv.activation_out_bytes == 8 * 16 * 16 * F32
    (relu,) = _layers_of(report, "aten.relu.default")
    assert relu.kind == "elementwise" and relu.flops == 8 * 16 * 16
    (pool,) = _layers_of(report, "aten.max_pool2d_with_indices.default")
    assert pool.kind == "window" and pool.macs == 0
    assert pool.flops == (8 * 8 * 8) * (2 * 2)
    assert report.totals.macs == conv.macs


def test_mlp_totals_match_the_module(client):
    torch.manual_seed(0)
    model = MLP().eval()
    (x,) = example_inputs(model, 3)
    report = client.compile(torch.export.export(model, (x,))).op_report
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert report.totals.macs == sum(3 * m.in_features * m.out_features for m in linears)
    assert report.totals.parameter_bytes == sum(p.numel() * F32 for p in model.parameters())
    fcs = _layers_of(report, "aten.addmm.default")
    assert [l.macs for l in fcs] == [3 * m.in_features * m.out_features for m in linears]
    assert all(l.kind == "elementwise" for l in _layers_of(report, "aten.gelu.default"))
    for field in ("flops", "activation_in_bytes", "activation_out_bytes", "bytes_read",
                  "bytes_written"):
        assert getattr(report.totals, field) == sum(getattr(l, field) for l in report)


def test_get_mlir_every_stage(client):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    x = torch.randn(2, 8)
    compiled = client.compile(torch.export.export(model, (x,)))
    digest = compiled.digest
    stages = kiln.get_mlir(compiled)  # the daemon dumps the cached executable's stages
    assert compiled.digest == digest
    assert list(stages) == ["aten", "linalg", "llvm-dialect", "llvm-ir", "asm"]
    assert "aten.addmm" in stages["aten"] and "func.func @kiln_main" in stages["aten"]
    assert "linalg." in stages["linalg"] and "aten." not in stages["linalg"]
    assert "llvm.func" in stages["llvm-dialect"]
    assert "define " in stages["llvm-ir"] and "kiln_invoke" in stages["llvm-ir"]
    assert "kiln_invoke:" in stages["asm"]
    y = compiled(x)
    assert kiln.get_mlir(y, stage="aten") == stages["aten"]
    assert "aten.relu" in kiln.get_mlir(model, "aten", example_inputs=(x,), client=client)


def test_cli_compile_op_report(kilnd, tmp_path, capsys):
    path = tmp_path / "linear.pt2"
    model = torch.nn.Linear(64, 128)
    torch.export.save(torch.export.export(model, (torch.randn(4, 64),)), path)
    assert cli.main(["-a", kilnd.address, "--no-progress", "compile", str(path),
                     "--op-report", "--exact", "--dump", str(tmp_path / "dump")]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    addmm = next(r for r in rows if len(r) > 1 and r[1] == "aten.addmm.default")
    assert addmm[3:7] == ["onednn", str(4 * 64 * 128), str(2 * 4 * 64 * 128 + 4 * 128),
                          str((64 * 128 + 128) * F32)]
    dumped = (tmp_path / "dump" / "op-report.txt").read_text().splitlines()
    assert " ".join(addmm) in [" ".join(line.split()) for line in dumped]


def test_resnet18_totals_match_counts_from_forward_hooks(client):
    """MACs counted independently, from each Conv2d/Linear's output in eager
    forward hooks, and parameter bytes from the state dict (buffers are graph
    parameters too)."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 32, 32)
    macs = []

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            kh, kw = module.kernel_size
            macs.append(output.numel() * module.in_channels // module.groups * kh * kw)
        elif isinstance(module, torch.nn.Linear):
            macs.append(output.numel() * module.in_features)

    report = client.compile(torch.export.export(model, (x,))).op_report
    handles = [m.register_forward_hook(count) for m in model.modules()]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    assert report.totals.macs == sum(macs)
    convs = _layers_of(report, "aten.convolution.default")
    assert len(convs) == 20 and sum(c.macs for c in convs) == sum(macs[:-1])
    state = model.state_dict().values()
    assert report.totals.parameter_bytes == sum(t.numel() * t.element_size() for t in state)
