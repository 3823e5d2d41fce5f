"""Compiles run in kiln-compile-worker processes under limits (issue 13,
item 5): a compiler crash, a compile past its CPU time and one past its
memory each fail only their own request, with a status naming what
happened, and kilnd compiles the next model as before.

The crash and the out-of-memory are injected with the testing aid
--debug-compile-fault KIND:OP (the worker for graphs containing OP faults on
entering codegen); the CPU-time limit is met by a real compile, resnet18's,
under --compile-cpu-seconds 1."""

from __future__ import annotations

import pytest
import torch
import torchvision

import kiln
import kiln.testing
from lacked_ops import lacked
from support import Kilnd, assert_serving


class Sine(torch.nn.Module):
    """The faulting graph: aten.sin, which assert_serving's MLP lacks."""

    def forward(self, x):
        return torch.sin(x) * 2


def sine_program():
    return torch.export.export(Sine().eval(), (torch.randn(4, 8),))


def _daemon(tmp_path, name, *args) -> Kilnd:
    return Kilnd(tmp_path, tmp_path / f"{name}-cache", name=name, extra_args=args).start()


def test_a_compiler_crash_fails_only_its_request(tmp_path):
    daemon = _daemon(tmp_path, "crash", "--debug-compile-fault", "crash:aten.sin.default")
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            with pytest.raises(kiln.CompileError) as err:
                client.compile(sine_program())
            message = str(err.value)
            assert "the compiler crashed compiling graph" in message
            assert "in stage 'codegen'" in message
            assert "Segmentation fault" in message
            assert "kilnd is unaffected" in message
            assert_serving(client)
            # The crash left nothing behind: no cache entry, no job folder.
            with pytest.raises(kiln.CompileError):
                client.compile(sine_program())
            assert list((daemon.cache_dir / "compile-jobs").iterdir()) == []
    finally:
        daemon.assert_stops_cleanly()


class SineAndNextAfter(torch.nn.Module):
    """An op Kiln lacks (lacked_ops) makes placement check each node."""

    def forward(self, x):
        return lacked(torch.sin(x) + 2.0, torch.sin(x))


def test_a_crash_in_the_node_support_check_fails_only_its_request(tmp_path):
    # The whole-graph compile stops at the unsupported op (UNIMPLEMENTED),
    # before codegen; the same worker then runs placement's per-node check.
    daemon = _daemon(tmp_path, "support-crash", "--debug-compile-fault",
                     "crash:aten.sin.default")
    program = torch.export.export(SineAndNextAfter().eval(), (torch.randn(4, 8),))
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            with pytest.raises(kiln.CompileError) as err:
                client.compile(program, fallback="cpu")
            message = str(err.value)
            assert "the compiler crashed compiling graph" in message
            assert "in stage 'check-node-support'" in message
            assert "kilnd is unaffected" in message
            assert_serving(client)
    finally:
        daemon.assert_stops_cleanly()


def test_a_compile_out_of_memory_is_resource_exhausted(tmp_path):
    daemon = _daemon(tmp_path, "oom", "--debug-compile-fault", "oom:aten.sin.default",
                     "--compile-memory-bytes", "1GiB")
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            with pytest.raises(kiln.ResourceExhaustedError) as err:
                client.compile(sine_program())
            assert "ran out of its memory limit of 1073741824 bytes (--compile-memory-bytes)" \
                in str(err.value)
            assert "in stage 'codegen'" in str(err.value)
            assert_serving(client)
    finally:
        daemon.assert_stops_cleanly()


def test_a_compile_past_its_cpu_time_is_deadline_exceeded(tmp_path):
    daemon = _daemon(tmp_path, "cpu-limit", "--compile-cpu-seconds", "1")
    try:
        torch.manual_seed(0)
        model = torchvision.models.resnet18().eval()
        x = torch.randn(1, 3, 224, 224)
        with kiln.Client(daemon.address, timeout=300) as client:
            with pytest.raises(kiln.DeadlineExceededError) as err:
                # Generated code for the convolutions too: with oneDNN
                # taking them, resnet18 compiles within a second.
                client.compile(torch.export.export(model, (x,)),
                               options={"kernel_library": "none"})
            assert "CPU-time limit of 1 s (--compile-cpu-seconds)" in str(err.value)
            # A small model compiles within the same limit.
            assert_serving(client)
    finally:
        daemon.assert_stops_cleanly()
