"""Training-step benchmark: one optimizer step (forward, loss, backward, SGD
with momentum) of LeNet (batch 16, 1x28x28) and an MLP (32-64-64-10, batch
64) through Kiln's torch.compile backend against eager PyTorch and Inductor
(torch.compile's default backend), measured in the same run with the same
weights and data, each with --threads threads (the agent's compute threads
and torch's). Kiln's step is two Execute calls (the forward and the backward
graph) plus the tensors the backward reads travelling back and forth.

Also the same loop on a Kiln device (``model.to(kiln.device(...))``, the
lazy device): each step records forward, backward and optimizer step and
runs them as one graph at ``loss.item()``; weights, gradients and momentum
stay on the agent (held tensors), and only the loss comes back.

Prints the median step time of --steps steps after --warmup steps, and the
ratios against eager and Inductor. A benchmark, not a test: it never fails on
the numbers (it checks that the three loss curves agree).

Usage: python bench/bench_training.py [--build-dir build] [--steps 30] [--threads 1]
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
import torch.nn.functional as F

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import kiln  # noqa: E402


def models():
    from test_e2e_training import LeNet, mlp  # the models the training tests train
    return {"LeNet b16": (LeNet, (16, 1, 28, 28)), "MLP b64": (mlp, (64, 32))}


def timed_steps(model, step, x, y, warmup: int, steps: int) -> tuple[float, list[float]]:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    times, losses = [], []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(step(x), y)
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - t0
        losses.append(loss.item())
        if i >= warmup:
            times.append(elapsed)
    return statistics.median(times), losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)

    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        daemon = Kilnd(work, work / "cache",
                       env={"KILN_AGENT_COMPUTE_THREADS": str(args.threads)}).start()
        device = kiln.device(daemon.address, target="cpu")
        try:
            for label, (make, shape) in models().items():
                g = torch.Generator().manual_seed(1)
                x = torch.randn(*shape, generator=g)
                y = torch.randint(0, 10, (shape[0],), generator=g)
                results = {}
                for system in ("eager", "inductor", "kiln", "device"):
                    torch.manual_seed(0)
                    model = make()
                    torch._dynamo.reset()
                    if system == "device":
                        model = model.to(device)
                        results[system] = timed_steps(model, model, x.to(device),
                                                      y.to(device), args.warmup, args.steps)
                        continue
                    step = {"eager": model,
                            "inductor": lambda m=model: torch.compile(m),
                            "kiln": lambda m=model: torch.compile(
                                m, backend=kiln.backend(daemon.address))}[system]
                    step = step() if system != "eager" else step
                    results[system] = timed_steps(model, step, x, y, args.warmup, args.steps)
                curves = [torch.tensor(losses) for _, losses in results.values()]
                for curve in curves[1:]:
                    torch.testing.assert_close(curve, curves[0], rtol=1e-3, atol=1e-4)
                rows.append((label, {k: t for k, (t, _) in results.items()}))
        finally:
            daemon.stop()
    print(f"training step (forward, loss, backward, SGD momentum), {args.threads} thread(s), "
          f"median of {args.steps} steps")
    print(f"{'model':10} {'eager':>9} {'inductor':>9} {'kiln':>9} {'device':>9} "
          f"{'kiln/eager':>10} {'kiln/inductor':>13} {'device/eager':>12}")
    for label, t in rows:
        print(f"{label:10} {t['eager'] * 1e3:7.2f}ms {t['inductor'] * 1e3:7.2f}ms "
              f"{t['kiln'] * 1e3:7.2f}ms {t['device'] * 1e3:7.2f}ms "
              f"{t['kiln'] / t['eager']:9.2f}x {t['kiln'] / t['inductor']:12.2f}x "
              f"{t['device'] / t['eager']:11.2f}x")


if __name__ == "__main__":
    main()
