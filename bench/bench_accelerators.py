"""The simulated accelerators' figures (issue 17): resnet18 on the simulated
MDLA (Kiln's 16-bit fixed-point model) and on the simulated AI Engine array
(Kiln's bf16 model of an AIE-ML array), through a real kilnd with both
agents started with --simulate.

Prints, per device and input size: the estimated cycles and what they are at
the device model's clock, the numeric error against f32 that the device
reports (max abs, as a share of max |output|, and RMS), the error against
eager PyTorch in this process, and the host wall time of a call. These are
Kiln's models of the devices, not measurements of hardware. A benchmark, not
a test: it never fails on the numbers.

Usage: python bench/bench_accelerators.py [--build-dir build] [--sizes 64,224]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import torch
import torchvision

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402

#: The clock each device's cycle model assumes (docs/devices/*.md).
CLOCK_HZ = {"mdla": 187.5e6, "acap": 1.25e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--sizes", default="64,224", help="input sides, comma separated")
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import kilnd_with_local_agents  # noqa: E402  (reads KILN_BUILD_DIR)

    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        daemon = kilnd_with_local_agents(pathlib.Path(tmp), "kilnd-bench-acc", "cpu,mdla,acap",
                                         "acap", env={"KILN_AGENT_SIMULATE": "true"})
        try:
            with kiln.Client(daemon.address, timeout=600) as client:
                for side in [int(s) for s in args.sizes.split(",")]:
                    x = torch.randn(1, 3, side, side)
                    with torch.no_grad():
                        ref = model(x)
                    exported = torch.export.export(model, (x,))
                    for target in ("mdla", "acap"):
                        compiled = client.compile(exported, target=target)
                        compiled(x)  # load
                        t0 = time.perf_counter()
                        out = compiled(x)
                        wall = time.perf_counter() - t0
                        c = compiled.last_counters
                        e = c["numeric_error"]
                        cycles = c["estimated_cycles"]
                        rows.append((target, e["numeric_type"], f"1x3x{side}x{side}",
                                     f"{cycles:,}", f"{cycles / CLOCK_HZ[target] * 1e3:.2f} ms",
                                     f"{e['max_abs_error']:.3g}",
                                     f"{100 * e['max_abs_error'] / e['max_abs_reference']:.2f} %",
                                     f"{e['rms_error']:.3g}",
                                     f"{(out - ref).abs().max().item():.3g}", f"{wall:.2f} s"))
        finally:
            daemon.stop()
    head = ("device", "numeric type", "input", "est. cycles", "at model clock",
            "max err", "of max |out|", "rms err", "max err vs eager", "host wall")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    print("\nresnet18, random weights (torch.manual_seed(0)); cycles and errors are Kiln's "
          "models of the devices (docs/devices/mdla.md, docs/devices/acap.md); the wall "
          "time includes each device's f32 comparison run.")


if __name__ == "__main__":
    main()
