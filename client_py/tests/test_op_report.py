"""kiln.OpReport, CompiledModel.op_report, kiln.get_mlir and
`kiln compile --op-report`, against hand-built reports and the fake daemon."""

import pytest
import torch

import kiln
from kiln import cli
from kiln.op_report import format_count
from kiln.testing import MLP, example_inputs
from kiln.v1 import executable_pb2 as pb

STAGES = ["aten", "linalg", "llvm-dialect", "llvm-ir", "asm"]


def _report() -> pb.OpReport:
    fc = pb.OpReportLayer(name="addmm", op="aten.addmm.default", dialect_ops="aten.addmm",
                          kind=pb.OP_COST_KIND_CONTRACTION, unit="onednn", macs=4 * 64 * 128,
                          flops=2 * 4 * 64 * 128 + 4 * 128, parameter_bytes=(64 * 128 + 128) * 4,
                          activation_in_bytes=4 * 64 * 4, activation_out_bytes=4 * 128 * 4,
                          bytes_read=(64 * 128 + 128) * 4 + 4 * 64 * 4, bytes_written=4 * 128 * 4)
    relu = pb.OpReportLayer(name="relu", op="aten.relu.default", dialect_ops="aten.relu",
                            kind=pb.OP_COST_KIND_ELEMENTWISE, unit="generated", flops=512,
                            activation_in_bytes=2048, activation_out_bytes=2048,
                            bytes_read=2048, bytes_written=2048)
    totals = pb.OpReportLayer(name="total", macs=fc.macs, flops=fc.flops + relu.flops,
                              parameter_bytes=fc.parameter_bytes,
                              activation_in_bytes=1024 + 2048, activation_out_bytes=4096,
                              bytes_read=fc.bytes_read + 2048, bytes_written=4096)
    return pb.OpReport(layers=[fc, relu], totals=totals)


def test_view_is_typed_and_indexable():
    report = kiln.OpReport(_report())
    assert len(report) == 2 and [l.name for l in report] == ["addmm", "relu"]
    fc = report["addmm"]
    assert isinstance(fc, kiln.LayerCost)
    assert (fc.kind, fc.macs, fc.parameter_bytes) == ("contraction", 32768, 33280)
    assert report[1].kind == "elementwise"
    assert report.totals.flops == 2 * 32768 + 512 + 512
    with pytest.raises(KeyError, match="no layer named 'fc9'"):
        report["fc9"]


def test_table_rows_and_units():
    report = kiln.OpReport(_report())
    lines = str(report).splitlines()
    assert lines[0].split() == ["layer", "op", "kind", "unit", "MACs", "FLOPs", "params", "act",
                                "in", "act", "out", "read", "written"]
    assert lines[2].split()[:6] == ["addmm", "aten.addmm.default", "contraction", "onednn",
                                    "32.77K", "66.05K"]
    assert lines[3].split()[3] == "generated"
    assert "32.5 KiB" in lines[2]
    assert lines[-1].split()[:3] == ["total", "2", "layers"]
    exact = report.table(exact=True).splitlines()
    assert exact[2].split() == ["addmm", "aten.addmm.default", "contraction", "onednn", "32768",
                                "66048", "33280", "1024", "2048", "34304", "2048"]
    assert exact[-1].split()[-7:] == ["32768", "66560", "33280", "3072", "4096", "36352", "4096"]


def test_by_op_sums_layers_of_one_op():
    proto = _report()
    proto.layers.append(proto.layers[0])
    by_op = kiln.OpReport(proto).by_op()
    assert list(by_op) == ["aten.addmm.default", "aten.relu.default"]
    assert by_op["aten.addmm.default"].macs == 2 * 32768
    assert by_op["aten.addmm.default"].name == "2"
    assert by_op["aten.addmm.default"].unit == "onednn"
    proto.layers[2].unit = "generated"
    assert kiln.OpReport(proto).by_op()["aten.addmm.default"].unit == ""  # mixed


def test_units_name_the_layers_each_unit_runs():
    assert kiln.OpReport(_report()).units() == {"onednn": ["addmm"], "generated": ["relu"]}


def test_format_count():
    assert [format_count(n) for n in (0, 999, 6912, 1_500_000, 2 * 10**9)] == \
        ["0", "999", "6.91K", "1.50M", "2.00G"]


def test_empty_report_is_falsy():
    assert not kiln.OpReport(pb.OpReport())


def test_compiled_model_carries_the_daemons_report(fake_daemon):
    model = MLP().eval()
    inputs = example_inputs(model, 2)
    client = kiln.Client(fake_daemon.address, timeout=30)
    compiled = client.compile(torch.export.export(model, inputs))
    report = compiled.op_report
    nodes = [(n.outputs[0].name, n.op) for n in compiled.graph.nodes]
    assert [(l.name, l.op) for l in report] == nodes
    assert report.totals.activation_out_bytes == sum(l.activation_out_bytes for l in report)
    again = client.compile(torch.export.export(model, inputs))
    assert again.cache_hit and again.op_report.proto == report.proto


def test_get_mlir_asks_for_the_stages_of_the_same_executable(fake_daemon):
    model = MLP().eval()
    inputs = example_inputs(model, 2)
    client = kiln.Client(fake_daemon.address, timeout=30)
    compiled = client.compile(torch.export.export(model, inputs), options={"opt_level": 3})
    assert not fake_daemon.compile_requests[-1].options.dump_stages
    digest = compiled.digest
    stages = kiln.get_mlir(compiled)
    assert compiled.digest == digest
    assert list(stages) == STAGES
    assert all(f"fake {s} stage" in text for s, text in stages.items())
    last = fake_daemon.compile_requests[-1]
    assert last.options.dump_stages and last.options.opt_level == 3
    assert last.graph == compiled.graph
    assert kiln.get_mlir(compiled, stage="aten") == stages["aten"]


def test_get_mlir_uses_dumps_already_there(fake_daemon):
    model = MLP().eval()
    inputs = example_inputs(model, 2)
    client = kiln.Client(fake_daemon.address, timeout=30)
    compiled = client.compile(torch.export.export(model, inputs), options={"dump_stages": True})
    n = len(fake_daemon.compile_requests)
    assert "fake llvm-ir stage" in kiln.get_mlir(compiled, "llvm-ir")
    assert len(fake_daemon.compile_requests) == n


def test_get_mlir_of_an_output_tensor_and_of_a_module(fake_daemon):
    model = MLP().eval()
    inputs = example_inputs(model, 2)
    client = kiln.Client(fake_daemon.address, timeout=30)
    y = client.compile(torch.export.export(model, inputs))(*inputs)
    assert list(kiln.get_mlir(y)) == STAGES
    assert "fake asm stage" in kiln.get_mlir(model, "asm", example_inputs=inputs, client=client)
    with pytest.raises(kiln.KilnError, match="not returned by a Kiln-compiled model"):
        kiln.get_mlir(torch.ones(2))
    with pytest.raises(ValueError, match="unknown stage 'ptx'"):
        kiln.get_mlir(y, stage="ptx")
    with pytest.raises(kiln.InvalidArgumentError, match="example inputs"):
        kiln.get_mlir(model, client=client)


def test_cli_compile_prints_the_op_report(fake_daemon, tmp_path, capsys):
    path = tmp_path / "m.pt2"
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    torch.export.save(torch.export.export(model, (torch.randn(2, 4),)), path)
    assert cli.main(["-a", fake_daemon.address, "compile", str(path), "--op-report",
                     "--exact"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(out) if line.startswith("layer"))
    assert out[header].split()[3:6] == ["unit", "MACs", "FLOPs"]
    rows = [line.split() for line in out[header + 2:] if line and not line.startswith("-")]
    assert rows[-1][:3] == ["total", str(len(rows) - 1), "layers"]
    assert any(r[1] == "aten.relu.default" and r[-1] == "24" for r in rows)
    assert cli.main(["-a", fake_daemon.address, "compile", str(path), "--dump",
                     str(tmp_path / "dump")]) == 0
    assert "MACs" not in capsys.readouterr().out
    dumped = (tmp_path / "dump" / "op-report.txt").read_text()
    assert "aten.relu.default" in dumped and dumped.splitlines()[0].startswith("layer")


def test_remembered_outputs_are_not_kept_alive(fake_daemon):
    import gc
    import weakref

    from kiln import compiled as compiled_module
    model = MLP().eval()
    inputs = example_inputs(model, 2)
    client = kiln.Client(fake_daemon.address, timeout=30)
    y = client.compile(torch.export.export(model, inputs))(*inputs)
    ref, before = weakref.ref(y), len(compiled_module._PRODUCERS)
    del y
    gc.collect()
    assert ref() is None and len(compiled_module._PRODUCERS) == before - 1


def test_get_mlir_of_a_torch_compile_output(fake_daemon):
    torch._dynamo.reset()
    model = MLP().eval()
    fast = torch.compile(model, backend=kiln.backend(fake_daemon.address))
    y = fast(torch.randn(2, 32))
    assert list(kiln.get_mlir(y)) == STAGES
    assert fake_daemon.compile_requests[-1].options.dump_stages
