"""riscv64 benchmark: simulated instructions per multiply-accumulate.

Compiles a model for the riscv64 target three ways, runs each on a real
kiln-agent-qemu device through kilnd, and reads the guest instruction count
from the Execute response:

  * rv64gc (scalar_only): the baseline, measured in the same run;
  * rv64gcv at VLEN 128 and VLEN 256.

The models: an f32 matmul (``--model matmul``, default 256^3) and resnet18 at
batch 1, 224x224 (``--model resnet18``; its MACs are its convolutions' and
its classifier's, counted from the module). Prints instructions per MAC and
the ratio against the scalar baseline, plus the wall time of one simulated
call (qemu's speed on this host, for context). Instruction counts are
deterministic, so one steady-state call each suffices; the first call on a
device also pays one-time costs and is discarded. A benchmark, not a test:
it never fails on the numbers (it does check the outputs against eager).

Usage: python bench/bench_riscv.py [--build-dir build] [--model matmul|resnet18] [--n 256]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402

VARIANTS = [
    ("rv64gc (scalar, baseline)", {"riscv": {"scalar_only": True}}),
    ("rv64gcv VLEN=128", {"riscv": {"vlen": 128}}),
    ("rv64gcv VLEN=256", {"riscv": {"vlen": 256}}),
]


class MatMul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def forward_counting_macs(model: torch.nn.Module, x: torch.Tensor
                          ) -> tuple[torch.Tensor, int]:
    """One eager forward and its multiply-accumulates: each convolution's
    output elements times its (in_channels / groups) x kernel window, plus
    the linear layers' in x out per row."""
    macs = 0

    def count(module: torch.nn.Module, _inputs, output: torch.Tensor) -> None:
        nonlocal macs
        if isinstance(module, torch.nn.Conv2d):
            window = module.in_channels // module.groups
            for k in module.kernel_size:
                window *= k
            macs += output.numel() * window
        elif isinstance(module, torch.nn.Linear):
            macs += output.numel() * module.in_features

    hooks = [m.register_forward_hook(count) for m in model.modules()
             if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.no_grad():
        output = model(x)
    for hook in hooks:
        hook.remove()
    return output, macs


def workload(name: str, n: int):
    """(description, exported program, inputs, eager outputs, MACs, tolerances)."""
    torch.manual_seed(0)
    if name == "matmul":
        a, b = torch.randn(n, n), torch.randn(n, n)
        return (f"matmul {n}x{n}x{n} f32", torch.export.export(MatMul(), (a, b)), (a, b),
                a @ b, n ** 3, dict(rtol=1e-4, atol=1e-3))
    import torchvision
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    expected, macs = forward_counting_macs(model, x)
    return ("resnet18 224x224 b1 f32", torch.export.export(model, (x,)), (x,), expected,
            macs, dict(rtol=1e-3, atol=1e-3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--model", choices=("matmul", "resnet18"), default="matmul")
    parser.add_argument("--n", type=int, default=256, help="matmul size n (n^3 MACs)")
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)

    what, exported, inputs, expected, macs, tolerance = workload(args.model, args.n)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        daemon = Kilnd(work, work / "cache", extra_args=("--local-agents", "cpu,qemu"),
                       env={"KILN_AGENT_VLEN": "256"}).start()
        try:
            with kiln.Client(daemon.address, timeout=1800) as client:
                deadline = time.monotonic() + 60
                while not client.devices(kind="riscv64"):
                    if time.monotonic() > deadline:
                        sys.exit("no riscv64 device registered (is kiln-agent-qemu built?)")
                    time.sleep(0.1)
                rows = []
                for label, options in VARIANTS:
                    compiled = client.compile(exported, target="riscv64", options=options)
                    compiled(*inputs)  # first call on the device: one-time costs
                    start = time.perf_counter()
                    out = compiled(*inputs)
                    wall = time.perf_counter() - start
                    torch.testing.assert_close(out, expected, **tolerance)
                    rows.append((label, compiled.last_counters["instructions"], wall))
        finally:
            daemon.stop()

    base = rows[0][1]
    print(f"{what} on kiln-agent-qemu ({macs:,} MACs), instructions from the TCG plugin")
    print(f"{'variant':28} {'instructions':>16} {'instr/MAC':>10} {'vs scalar':>10} "
          f"{'qemu wall':>10}")
    for label, instructions, wall in rows:
        print(f"{label:28} {instructions:>16,} {instructions / macs:>10.3f} "
              f"{base / instructions:>9.2f}x {wall * 1e3:>8.1f}ms")


if __name__ == "__main__":
    main()
