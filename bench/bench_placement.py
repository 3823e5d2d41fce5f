"""Placement benchmark: what falling back to the CPU costs.

Two torchvision resnet18 variants (random weights, eval mode, 1x3x64x64) on a
real kilnd with its local CPU agent:

  * whole: resnet18 as is; the cpu target compiles all of it (the baseline,
    measured in the same run);
  * partitioned: the same network with one op Kiln lacks (the tests'
    custom op kiln_test::lacked, tests/e2e/lacked_ops.py, applied to the
    activations after layer2), compiled with fallback="cpu":
    two target segments around a CPU run.

Prints, for each, the cold compile (nothing cached), the warm compile (every
executable cached, and for the partitioned graph its placement too) and the
median call
latency over --calls calls, with ratios against the whole-graph baseline and
against eager PyTorch in this process. A benchmark, not a test: it never
fails on the numbers (it does check the outputs against eager).

Usage: python bench/bench_placement.py [--build-dir build] [--calls 20]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402
from lacked_ops import lacked  # noqa: E402


class WithLackedOp(torch.nn.Module):
    """resnet18 with an op the cpu target lacks after layer2."""

    def __init__(self, net: torch.nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.net
        x = n.maxpool(n.relu(n.bn1(n.conv1(x))))
        x = n.layer2(n.layer1(x))
        x = lacked(x + 1.0, -x)
        x = n.layer4(n.layer3(x))
        return n.fc(torch.flatten(n.avgpool(x), 1))


def median_call(fn, x, calls: int) -> float:
    fn(x)  # warm: loads, first-touch
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)
    import torchvision

    torch.manual_seed(0)
    torch.set_num_threads(1)  # the agent runs one thread too
    net = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.randn(1, 3, 64, 64)
    variants = [("whole (baseline)", net, "error"), ("partitioned", WithLackedOp(net), "cpu")]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        daemon = Kilnd(work, work / "cache").start()
        rows = []
        try:
            with kiln.Client(daemon.address) as client:
                for label, model, fallback in variants:
                    ep = torch.export.export(model, (x,))
                    t0 = time.perf_counter()
                    compiled = client.compile(ep, fallback=fallback)
                    cold = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    warm_model = client.compile(ep, fallback=fallback)
                    warm = time.perf_counter() - t0
                    assert warm_model.cache_hit
                    with torch.no_grad():
                        expected = model(x)
                        torch.testing.assert_close(compiled(x), expected, rtol=1e-3, atol=1e-4)
                        eager = median_call(model, x, args.calls)
                    call = median_call(compiled, x, args.calls)
                    segments = len(compiled.placement.segments)
                    cpu_ops = compiled.placement.message.cpu_nodes
                    rows.append((label, len(compiled.graph.nodes), segments, cpu_ops,
                                 cold, warm, call, eager))
        finally:
            daemon.stop()
    base = rows[0]
    print(f"resnet18 1x3x64x64, cpu target, median of {args.calls} calls")
    print(f"{'variant':18} {'ops':>4} {'segs':>4} {'cpu ops':>7} {'cold compile':>13} "
          f"{'warm compile':>13} {'call':>9} {'eager':>9} {'call vs whole':>13} "
          f"{'call vs eager':>13}")
    for label, ops, segs, cpu_ops, cold, warm, call, eager in rows:
        print(f"{label:18} {ops:4d} {segs:4d} {cpu_ops:7d} {cold:11.3f} s {warm:11.3f} s "
              f"{call * 1e3:7.2f} ms {eager * 1e3:7.2f} ms {call / base[6]:12.2f}x "
              f"{call / eager:12.2f}x")
    print(f"partitioned/whole: cold compile {rows[1][4] / base[4]:.2f}x, "
          f"warm compile {rows[1][5] / base[5]:.2f}x")


if __name__ == "__main__":
    main()
