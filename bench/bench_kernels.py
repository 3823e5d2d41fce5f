"""The kernels section of bench/run.sh (``--sections kernels``): the
reductions, normalisations, softmaxes, scans and elementwise chains that
models spend their time between matmuls and convolutions in, one op per
module, through Kiln's generated code against eager PyTorch (its vectorised
ATen CPU kernels) on the same f32 inputs, end to end and the agent's run
alone, at each thread count (op_sections.measure_ops).

The run column is the kernel's quality: a float sum that LLVM kept in order
(no reassociation) ran 15-19x eager's time here until sessions 58-59 found
it by hand; this section shows such a gap on every run. The end-to-end
column adds the call's transport (tensors up to 4 MiB each way, through a
direct channel's exchange buffer).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F

from op_sections import HEADERS, OpCase, measure_ops, randn


def _layer_norm_inputs(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (torch.randn(1024, 256, generator=g), 1 + 0.1 * torch.randn(256, generator=g),
            0.1 * torch.randn(256, generator=g))


def _group_norm_inputs(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (torch.randn(8, 64, 28, 28, generator=g), 1 + 0.1 * torch.randn(64, generator=g),
            0.1 * torch.randn(64, generator=g))


def _two(*shape: int) -> Callable[[torch.Generator], tuple[torch.Tensor, ...]]:
    return lambda g: (torch.randn(*shape, generator=g), torch.randn(*shape, generator=g))


CASES = (
    OpCase("sum(-1) 256x4096", lambda x: x.sum(-1), randn(256, 4096)),
    OpCase("mean(-1) 32x128x256", lambda x: x.mean(-1), randn(32, 128, 256)),
    OpCase("sum() 1024x1024", lambda x: x.sum(), randn(1024, 1024)),
    OpCase("amax(-1) 256x4096", lambda x: x.amax(-1), randn(256, 4096)),
    OpCase("argmax(-1) 256x4096", lambda x: x.argmax(-1), randn(256, 4096)),
    OpCase("var(-1) 256x1024", lambda x: x.var(-1), randn(256, 1024)),
    OpCase("mean((2,3)) 1x576x7x7", lambda x: x.mean((2, 3)), randn(1, 576, 7, 7)),
    OpCase("softmax(-1) 8x8x128x128", lambda x: x.softmax(-1), randn(8, 8, 128, 128)),
    OpCase("log_softmax(-1) 64x1000", lambda x: x.log_softmax(-1), randn(64, 1000)),
    OpCase("layer_norm 1024x256", lambda x, w, b: F.layer_norm(x, (256,), w, b),
           _layer_norm_inputs),
    OpCase("group_norm 8x64x28x28/8", lambda x, w, b: F.group_norm(x, 8, w, b),
           _group_norm_inputs),
    OpCase("cumsum(-1) 256x1024", lambda x: x.cumsum(-1), randn(256, 1024)),
    OpCase("gelu 1024x1024", F.gelu, randn(1024, 1024)),
    OpCase("x*sigmoid(x)+y 1024x1024", lambda x, y: x * torch.sigmoid(x) + y,
           _two(1024, 1024)),
)


def measure_kernels(clients: dict[int, Any], threads: Sequence[int], args: Any,
                    h: Any) -> list[str]:
    """The section's lines: a table of op, thread count, Kiln end to end and
    run, eager, their ratios and the error, then the ratios' geomeans."""
    rows = measure_ops(CASES, "kernels", clients, threads, args, h)
    return ["Kernels (bench_kernels.py): median ms per call, Kiln's generated code against "
            "eager's ATen CPU kernels, f32;",
            "err = relative L2 vs eager.",
            *h.table(HEADERS, rows)]
