"""riscv64 benchmark: simulated instructions per multiply-accumulate.

Compiles f32 matmuls (default 256^3) for the riscv64 target three ways, runs
each on a real kiln-agent-qemu device through kilnd, and reads the guest
instruction count from the Execute response:

  * rv64gc (scalar_only): the baseline, measured in the same run;
  * rv64gcv at VLEN 128 and VLEN 256.

Prints instructions per MAC and the ratio against the scalar baseline, plus
the wall time of one simulated call (qemu's speed on this host, for
context). Instruction counts are deterministic, so one steady-state call
each suffices; the first call on a device also pays one-time costs and is
discarded. A benchmark, not a test: it never fails on the numbers.

Usage: python bench/bench_riscv.py [--build-dir build] [--n 256]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--n", type=int, default=256, help="matmul size n (n^3 MACs)")
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)

    n = args.n
    macs = n ** 3
    torch.manual_seed(0)
    a, b = torch.randn(n, n), torch.randn(n, n)
    expected = a @ b
    exported = torch.export.export(MatMul(), (a, b))
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        daemon = Kilnd(work, work / "cache", extra_args=("--local-agents", "cpu,qemu"),
                       env={"KILN_AGENT_VLEN": "256"}).start()
        try:
            with kiln.Client(daemon.address) as client:
                deadline = time.monotonic() + 60
                while not client.devices(kind="riscv64"):
                    if time.monotonic() > deadline:
                        sys.exit("no riscv64 device registered (is kiln-agent-qemu built?)")
                    time.sleep(0.1)
                rows = []
                for label, options in VARIANTS:
                    compiled = client.compile(exported, target="riscv64", options=options)
                    compiled(a, b)  # first call on the device: one-time costs
                    start = time.perf_counter()
                    out = compiled(a, b)
                    wall = time.perf_counter() - start
                    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-3)
                    rows.append((label, compiled.last_counters["instructions"], wall))
        finally:
            daemon.stop()

    base = rows[0][1]
    print(f"matmul {n}x{n}x{n} f32 on kiln-agent-qemu ({macs} MACs), "
          "instructions from the TCG plugin")
    print(f"{'variant':28} {'instructions':>14} {'instr/MAC':>10} {'vs scalar':>10} "
          f"{'qemu wall':>10}")
    for label, instructions, wall in rows:
        print(f"{label:28} {instructions:>14,} {instructions / macs:>10.3f} "
              f"{base / instructions:>9.2f}x {wall * 1e3:>8.1f}ms")


if __name__ == "__main__":
    main()
