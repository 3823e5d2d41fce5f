"""Spine benchmark: compiled matmul vs torch eager, and models through kilnd.

Prints, from one run:
  * matmul 512^3 and 1024^3 f32: Kiln's generated code (compiled by
    kiln-compile, called in-process through its C-ABI entry point) vs
    torch.mm, both on ONE thread (Kiln's CPU code is single-threaded).
  * MLP and transformer encoder block: a call through kilnd (RPC + agent +
    compiled code) vs eager PyTorch in-process, same thread count (1).
Ratios are against the baseline measured in the same run; this is a
benchmark, not a test: it never fails on speed.

Usage: python bench/bench_spine.py [--build-dir build] [--reps N]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402
from kiln.testing import MLP, EncoderBlock, example_inputs  # noqa: E402
from kiln.v1 import graph_pb2, tensor_pb2  # noqa: E402


def best_of(fn, reps: int) -> float:
    """Best wall time of `reps` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def matmul_graph(n: int) -> graph_pb2.Graph:
    def value(name: str) -> graph_pb2.Value:
        return graph_pb2.Value(name=name, type=tensor_pb2.TensorType(
            dtype=tensor_pb2.DTYPE_F32, shape=[n, n]))
    graph = graph_pb2.Graph(name=f"mm{n}", inputs=[value("a"), value("b")], outputs=["c"])
    node = graph.nodes.add(op="aten.mm.default", outputs=[value("c")])
    node.arguments.add(name="self", value="a")
    node.arguments.add(name="mat2", value="b")
    return graph


def bench_matmul(bin_dir: pathlib.Path, workdir: pathlib.Path, n: int, reps: int) -> None:
    graph_path = workdir / f"mm{n}.pb"
    so_path = workdir / f"mm{n}.so"
    graph_path.write_bytes(matmul_graph(n).SerializeToString())
    subprocess.run([str(bin_dir / "kiln-compile"), str(graph_path), "-o", str(so_path)], check=True)
    library = ctypes.CDLL(str(so_path))
    a, b = torch.randn(n, n), torch.randn(n, n)
    out, ref = torch.empty(n, n), torch.empty(n, n)
    buffers = (ctypes.c_void_p * 3)(a.data_ptr(), b.data_ptr(), out.data_ptr())
    kiln_s = best_of(lambda: library.kiln_invoke(buffers), reps)
    torch_s = best_of(lambda: torch.mm(a, b, out=ref), reps)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-3)
    flops = 2.0 * n ** 3
    print(f"matmul {n}^3 f32   kiln {flops / kiln_s / 1e9:6.1f} GFLOP/s   "
          f"torch {flops / torch_s / 1e9:6.1f} GFLOP/s   kiln/torch speed {torch_s / kiln_s:.2f}")


def bench_model(client: kiln.Client, name: str, model: torch.nn.Module, batch: int,
                reps: int) -> None:
    model.eval()
    inputs = example_inputs(model, batch)
    compiled = client.compile(torch.export.export(model, inputs), target="cpu")
    with torch.no_grad():
        eager_s = best_of(lambda: model(*inputs), reps)
        remote_s = best_of(lambda: compiled(*inputs), reps)
        torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-4, atol=1e-5)
    run_us = compiled.last_timings.get("run", 0.0) * 1e6
    print(f"{name:<22} kiln via kilnd {remote_s * 1e3:7.3f} ms (device run {run_us:7.1f} us)   "
          f"eager {eager_s * 1e3:7.3f} ms   eager/kiln {eager_s / remote_s:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str((REPO / args.build_dir).resolve())
    bin_dir = pathlib.Path(os.environ["KILN_BUILD_DIR"]) / "bin"
    torch.set_num_threads(1)
    print(f"threads: 1 for both sides; cpu: {os.uname().machine}, torch {torch.__version__}")

    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as tmp:
        workdir = pathlib.Path(tmp)
        for n in (512, 1024):
            bench_matmul(bin_dir, workdir, n, max(3, args.reps // (4 if n >= 1024 else 1)))

        from support import Kilnd  # the e2e tests' launcher
        daemon = Kilnd(workdir / "daemon", workdir / "cache").start()
        try:
            with kiln.Client(daemon.address) as client:
                bench_model(client, "MLP batch 64", MLP(256, 512, 256), 64, args.reps)
                bench_model(client, "encoder block batch 8", EncoderBlock(128, 4, 512), 8,
                            args.reps)
        finally:
            daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
