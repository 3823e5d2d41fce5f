"""Variable-size benchmark: what one executable for a range of sizes costs
against a static compile of each size (issue 18, part 2).

For an MLP 256-256-256-10 and resnet18 at 112x112 (the batch varies) and a
transformer encoder block (d_model 64, 4 heads; batch and sequence length
vary), it compiles once with torch.export Dims and once per size without,
through a real kilnd and cpu agent, and prints per size the median run time
of each executable, their ratio (symbolic / static, same run), eager
PyTorch's time, and the compile times (one symbolic compile against one
static compile per size). A benchmark, not a test: it never fails on the
numbers (it checks that both executables agree with eager).

Usage: python bench/bench_variable_sizes.py [--build-dir build] [--runs 30] [--threads 1]
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


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
            torch.nn.ReLU(), torch.nn.Linear(256, 10))

    def forward(self, x):
        return self.layers(x)


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = torch.nn.TransformerEncoderLayer(
            d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
            activation="gelu", batch_first=True)

    def forward(self, x):
        return self.block(x)


def cases():
    """label -> (model, example shape, dynamic dims {dim: Dim}, the shapes to run)."""
    batch = torch.export.Dim("batch", min=1, max=512)
    seq = torch.export.Dim("seq", min=2, max=256)
    return {
        "MLP 256-256-10": (Mlp, (8, 256), {0: batch},
                           [(1, 256), (8, 256), (64, 256), (256, 256)]),
        "encoder d64": (Encoder, (2, 16, 64), {0: batch, 1: seq},
                        [(1, 16, 64), (4, 64, 64), (8, 128, 64)]),
        "resnet18 112px": (resnet18, (2, 3, 112, 112), {0: batch},
                           [(1, 3, 112, 112), (4, 3, 112, 112), (8, 3, 112, 112)]),
    }


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


def median_time(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.environ.get("KILN_BUILD_DIR", "build"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    os.environ["KILN_BUILD_DIR"] = str(pathlib.Path(args.build_dir).resolve())
    from support import Kilnd  # noqa: E402  (reads KILN_BUILD_DIR)

    torch.set_num_threads(args.threads)
    print(f"{'model':<16} {'shape':<14} {'symbolic ms':>11} {'static ms':>10} "
          f"{'sym/static':>10} {'eager ms':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        daemon = Kilnd(work, work / "cache",
                       env={"KILN_AGENT_COMPUTE_THREADS": str(args.threads)}).start()
        try:
            with kiln.Client(daemon.address, timeout=600) as client:
                for label, (make, example, dims, shapes) in cases().items():
                    torch.manual_seed(0)
                    model = make().eval()
                    t0 = time.perf_counter()
                    symbolic = client.compile(torch.export.export(
                        model, (torch.randn(*example),), dynamic_shapes=(dims,)))
                    symbolic_compile = time.perf_counter() - t0
                    static_compile = 0.0
                    for shape in shapes:
                        x = torch.randn(*shape)
                        t0 = time.perf_counter()
                        static = client.compile(torch.export.export(model, (x,)))
                        static_compile += time.perf_counter() - t0
                        with torch.no_grad():
                            want = model(x)
                        for compiled in (symbolic, static):
                            torch.testing.assert_close(compiled(x), want, rtol=1e-4,
                                                       atol=1e-4)
                        t_sym = median_time(lambda: symbolic(x), args.runs)
                        t_static = median_time(lambda: static(x), args.runs)
                        with torch.no_grad():
                            t_eager = median_time(lambda: model(x), args.runs)
                        print(f"{label:<16} {str(list(shape)):<14} {t_sym * 1e3:>11.3f} "
                              f"{t_static * 1e3:>10.3f} {t_sym / t_static:>10.2f} "
                              f"{t_eager * 1e3:>9.3f}")
                    print(f"{label:<16} compile: one symbolic {symbolic_compile:.2f} s, "
                          f"{len(shapes)} static {static_compile:.2f} s")
        finally:
            daemon.stop()


if __name__ == "__main__":
    main()
