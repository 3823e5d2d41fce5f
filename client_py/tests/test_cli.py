"""The kiln CLI without kilnd: parsing, formatting, error lines, and the
commands against the in-process fake daemon."""

from __future__ import annotations

import grpc
import pytest
import torch

from kiln import cli
from kiln.cli_format import CliError, describe_error, format_bytes, format_table, parse_size
from kiln.errors import (CompileError, DeadlineExceededError, InvalidArgumentError, KilnError,
                         UnavailableError)


@pytest.mark.parametrize("text,expected", [
    ("0", 0), ("1000000", 1_000_000), ("512M", 512_000_000), ("2GiB", 2 * 1024**3),
    ("1.5KiB", 1536), ("10 kb", 10_000), ("3Ti", 3 * 1024**4),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "-1", "12X", "GiB", "1.3B", "1e9"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError, match="not a"):
        parse_size(text)


@pytest.mark.parametrize("n,expected", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                        (5 * 1024**3, "5.0 GiB")])
def test_format_bytes(n, expected):
    assert format_bytes(n) == expected


def test_format_table_aligns_columns():
    text = format_table(("ID", "KIND"), [("a/0", "cpu"), ("longer/1", "qemu")])
    assert text.splitlines() == ["ID        KIND", "a/0       cpu", "longer/1  qemu"]


def test_parser_defaults_and_env(monkeypatch):
    monkeypatch.delenv("KILN_ADDRESS", raising=False)
    args = cli.build_parser().parse_args(["compile", "m.pt2"])
    assert (args.address, args.target, args.opt_level, args.dump) == ("localhost:50051", "cpu", 0, None)
    monkeypatch.setenv("KILN_ADDRESS", "db:1234")
    assert cli.build_parser().parse_args(["devices"]).address == "db:1234"
    assert cli.build_parser().parse_args(["-a", "x:1", "devices"]).address == "x:1"
    args = cli.build_parser().parse_args(["run", "m.pt2", "-i", "a.pt", "-i", "b.pt"])
    assert [str(p) for p in args.input] == ["a.pt", "b.pt"]
    assert cli.build_parser().parse_args(["cache", "gc", "--target-bytes", "1Gi"]).target_bytes == 1024**3


def test_machine_options_carry_only_what_was_given():
    from kiln import cli_commands
    args = cli.build_parser().parse_args(["compile", "m.pt2"])
    assert cli_commands.machine_options(args) == {}
    args = cli.build_parser().parse_args(
        ["compile", "m.pt2", "--cpu", "znver3", "--convolution-algorithm", "direct"])
    assert cli_commands.machine_options(args) == {"cpu": "znver3",
                                                  "convolution_algorithm": "direct"}


def test_parser_rejects_an_unknown_convolution_algorithm(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compile", "m.pt2", "--convolution-algorithm", "fft"])
    assert "invalid choice: 'fft'" in capsys.readouterr().err


def test_parser_rejects_bad_size(capsys):
    with pytest.raises(SystemExit) as e:
        cli.build_parser().parse_args(["cache", "gc", "--target-bytes", "lots"])
    assert e.value.code == 2
    assert "not a size" in capsys.readouterr().err


@pytest.mark.parametrize("err,hint_part", [
    (UnavailableError("connect failed", code=grpc.StatusCode.UNAVAILABLE,
                      context={"address": "h:1"}), "is kilnd running at h:1?"),
    (UnavailableError("no device of kind 'acap' registered", code=grpc.StatusCode.UNAVAILABLE),
     "kiln devices"),
    (DeadlineExceededError("slow", code=grpc.StatusCode.DEADLINE_EXCEEDED), "--timeout"),
    (CompileError("llvm failed", code=grpc.StatusCode.INTERNAL), "kiln-compile"),
    (InvalidArgumentError("unknown op aten.foo", code=grpc.StatusCode.INVALID_ARGUMENT),
     "rejected"),
    (KilnError("Method not found: kiln.v1.Cache/GetCacheStats", code=grpc.StatusCode.UNIMPLEMENTED,
               context={"rpc": "kiln.v1.Cache/GetCacheStats", "address": "h:1"}),
     "does not implement kiln.v1.Cache/GetCacheStats"),
    (CliError("no such model file: x", "save one"), "save one"),
])
def test_every_expected_error_has_a_hint(err, hint_part):
    message, hint = describe_error(err)
    assert "\n" not in message and message
    assert hint_part in hint


def test_missing_model_exits_1_with_one_line(tmp_path, capsys):
    assert cli.main(["--address", "127.0.0.1:1", "compile", str(tmp_path / "no.pt2")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"kiln: error: no such model file: {tmp_path / 'no.pt2'}"
    assert err[1].startswith("hint: ")


def test_not_an_archive_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    assert cli.main(["compile", str(bad)]) == 1
    assert "is not a torch.export archive" in capsys.readouterr().err


def test_import_of_a_missing_module_exits_1(tmp_path, capsys):
    model = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(torch.nn.ReLU(), (torch.randn(2),)), model)
    assert cli.main(["compile", "--import", "kiln_no_such_module", str(model)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("kiln: error: --import kiln_no_such_module: ModuleNotFoundError")
    assert "PYTHONPATH" in err[1]


def test_import_runs_the_modules_before_loading(tmp_path, capsys, fake_daemon, monkeypatch):
    (tmp_path / "kiln_cli_marker_a.py").write_text("LOADED = True\n")
    (tmp_path / "kiln_cli_marker_b.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    model = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(torch.nn.ReLU(), (torch.randn(2),)), model)
    code = cli.main(["-a", fake_daemon.address, "compile", str(model),
                     "--import", "kiln_cli_marker_a", "--import", "kiln_cli_marker_b"])
    assert code == 0, capsys.readouterr().err
    import sys
    assert sys.modules["kiln_cli_marker_a"].LOADED and sys.modules["kiln_cli_marker_b"].LOADED


def test_bad_input_file_fails_before_compiling(tmp_path, capsys, fake_daemon):
    model = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(torch.nn.ReLU(), (torch.randn(2),)), model)
    (tmp_path / "x.pt").write_text("garbage")
    code = cli.main(["-a", fake_daemon.address, "run", str(model), "-i", str(tmp_path / "x.pt")])
    assert code == 1
    assert "cannot read input" in capsys.readouterr().err
    assert fake_daemon.compiles == 0


def test_devices_against_fake_daemon(fake_daemon, capsys):
    assert cli.main(["-a", fake_daemon.address, "devices"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "KIND", "DEVICE", "STATE", "QUEUE", "AGENT", "PROPERTIES"]
    assert len(out) >= 2 and out[1].split()[1:3] == ["cpu", "hardware"]


def test_run_against_fake_daemon(fake_daemon, tmp_path, capsys):
    model = tmp_path / "m.pt2"
    x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
    torch.export.save(torch.export.export(torch.nn.ReLU(), (x,)), model)
    torch.save(x, tmp_path / "x.pt")
    out_file = tmp_path / "y.pt"
    assert cli.main(["-a", fake_daemon.address, "run", str(model), "-i", str(tmp_path / "x.pt"),
                     "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "output 0: float32[2, 2]  min 0  max 3" in out
    torch.testing.assert_close(torch.load(out_file, weights_only=True), torch.relu(x))


def test_cache_on_a_daemon_without_it(fake_daemon, capsys):
    # The fake daemon has no kiln.v1.Cache: UNIMPLEMENTED, told plainly.
    assert cli.main(["-a", fake_daemon.address, "cache", "stats"]) == 1
    err = capsys.readouterr().err
    assert "[UNIMPLEMENTED]" in err and "does not implement kiln.v1.Cache/GetCacheStats" in err


def test_upload_progress_reports_every_chunk(fake_daemon):
    import kiln
    from kiln.blobs import CHUNK_BYTES
    seen = []
    t = torch.arange(3 * CHUNK_BYTES // 4, dtype=torch.float32)    # 3 MiB: 3 chunks
    with kiln.Client(fake_daemon.address) as c:
        _, uploaded = c.blobs.ensure_tensors([t], progress=lambda s, n: seen.append((s, n)))
    total = t.numel() * 4
    assert uploaded == total
    assert seen[0] == (0, total) and seen[-1] == (total, total) and len(seen) == 4


def test_progress_display_path_runs(fake_daemon, tmp_path, capsys):
    """The rich upload bar and compile spinner (shown on terminals) work end to end."""
    import kiln
    from kiln.cli_commands import compile_file
    from kiln.cli_progress import Reporter
    model = tmp_path / "lin.pt2"
    torch.manual_seed(0)
    lin = torch.nn.Linear(512, 1024).eval()          # 2 MiB of weights: several chunks
    torch.export.save(torch.export.export(lin, (torch.randn(2, 512),)), model)
    with kiln.Client(fake_daemon.address) as c:
        _, compiled = compile_file(c, model, "cpu", 0, Reporter(enabled=True))
    assert len(compiled.digest) == 64
    assert sum(len(sizes) for _, sizes in fake_daemon.writes) >= 3


def test_counters_merge_over_segments():
    from kiln.counters import merge_counters
    merged = merge_counters([
        {"instructions": 5, "estimated_cycles": 100,
         "numeric_error": {"numeric_type": "q16", "max_abs_error": 0.01,
                           "max_abs_reference": 2.0, "rms_error": 0.001}},
        {"instructions": 0, "estimated_cycles": 0},
        {"instructions": 1, "estimated_cycles": 50,
         "numeric_error": {"numeric_type": "q16", "max_abs_error": 0.02,
                           "max_abs_reference": 1.0, "rms_error": 0.0005}},
    ])
    assert merged["instructions"] == 6 and merged["estimated_cycles"] == 150
    assert merged["numeric_error"] == {"numeric_type": "q16", "max_abs_error": 0.02,
                                       "max_abs_reference": 2.0, "rms_error": 0.001}
    assert "numeric_error" not in merge_counters([{"instructions": 1}])
