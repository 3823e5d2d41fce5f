"""uint8 bilinear and bicubic resampling under ``torch.compile``.

Eager resamples uint8 images in fixed point (int16 weights, integer sums,
one rounding per pass), and Kiln's importer lowers ``upsample_bilinear2d``
and ``upsample_bicubic2d`` of uint8 the same way. But under torch.compile,
functionalization decomposes ``F.interpolate``'s composite ``.vec`` op into
float arithmetic before any decomposition table is asked, and that rounds
once at the end: off by one in some elements.

So the backend, before AOT export, puts ``kiln::upsample_uint8`` in place of
each ``F.interpolate`` of a 4-d uint8 tensor in bilinear or bicubic mode
(:func:`keep_uint8_resampling_whole`): a custom op, which AOT export keeps
whole, with the arguments of ``upsample_bilinear2d.vec`` (input,
output_size, align_corners, scale_factors) plus the mode and the antialias
flag. Its kernel is eager's ATen op, so the CPU fallback and verification
run eager's; kilnd's importer reads it as the ATen op it names.
"""

from __future__ import annotations

import inspect
import math
from typing import Optional, Sequence

import torch
import torch.fx
import torch.nn.functional as F

__all__ = ["keep_uint8_resampling_whole", "upsample_uint8"]

_ATEN = {
    ("bilinear", False): torch.ops.aten.upsample_bilinear2d.vec,
    ("bicubic", False): torch.ops.aten.upsample_bicubic2d.vec,
    ("bilinear", True): torch.ops.aten._upsample_bilinear2d_aa.vec,
    ("bicubic", True): torch.ops.aten._upsample_bicubic2d_aa.vec,
}


@torch.library.custom_op(
    "kiln::upsample_uint8", mutates_args=(),
    schema="(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors, "
           "str mode, bool antialias) -> Tensor")
def upsample_uint8(input: torch.Tensor, output_size: Optional[Sequence[int]],
                   align_corners: bool, scale_factors: Optional[Sequence[float]], mode: str,
                   antialias: bool) -> torch.Tensor:
    """Eager's uint8 resampling: upsample_bilinear2d.vec or
    upsample_bicubic2d.vec (their antialiased forms with ``antialias``)."""
    op = _ATEN.get((mode, antialias))
    if op is None:
        raise ValueError(f"kiln::upsample_uint8 resamples 'bilinear' or 'bicubic', not {mode!r}")
    return op(input, output_size, align_corners, scale_factors)


@upsample_uint8.register_fake
def _upsample_uint8_fake(input, output_size, align_corners, scale_factors, mode, antialias):
    if output_size is not None:
        sizes = list(output_size)
    else:
        sizes = [math.floor(input.shape[2 + i] * s) for i, s in enumerate(scale_factors)]
    return input.new_empty((*input.shape[:2], *sizes))


_INTERPOLATE = inspect.signature(F.interpolate)


def _uint8_example(node: torch.fx.Node) -> bool:
    value = node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None
    return isinstance(value, torch.Tensor) and value.dtype == torch.uint8 and value.dim() == 4


def _static(value) -> bool:
    """No graph value inside (a symbolic size stays with F.interpolate)."""
    if isinstance(value, (list, tuple)):
        return all(_static(v) for v in value)
    return not isinstance(value, (torch.fx.Node, torch.SymInt, torch.SymFloat))


def _upsample_arguments(node: torch.fx.Node) -> Optional[tuple]:
    """(input, output_size, align_corners, scale_factors, mode, antialias) of
    an F.interpolate call as F.interpolate computes them for 4-d input, or
    None where it is not a uint8 bilinear/bicubic one this rewrites."""
    try:
        bound = _INTERPOLATE.bind(*node.args, **node.kwargs)
    except TypeError:
        return None
    a = dict(bound.arguments)
    x, mode = a.get("input"), a.get("mode", "nearest")
    if mode not in ("bilinear", "bicubic") or not _uint8_example(x):
        return None
    size, scale = a.get("size"), a.get("scale_factor")
    rest = [a.get("align_corners"), a.get("recompute_scale_factor"), a.get("antialias", False)]
    if not _static([size, scale, *rest]) or (size is None) == (scale is None):
        return None  # symbolic, or F.interpolate's own error to raise
    align_corners, recompute, antialias = rest
    in_sizes = node.args[0].meta["example_value"].shape[2:]
    if size is not None:
        output_size = list(size) if isinstance(size, (list, tuple)) else [size, size]
        scale_factors = None
    else:
        scale_factors = [float(s) for s in (scale if isinstance(scale, (list, tuple))
                                            else [scale, scale])]
        output_size = None
        if recompute:
            if not all(isinstance(n, int) for n in in_sizes):
                return None  # a symbolic size: F.interpolate computes it
            output_size = [math.floor(float(n) * s) for n, s in zip(in_sizes, scale_factors)]
            scale_factors = None
    return (x, output_size, bool(align_corners), scale_factors, mode, bool(antialias))


def keep_uint8_resampling_whole(gm: torch.fx.GraphModule) -> int:
    """Replaces, in a Dynamo graph (in place), each F.interpolate of a 4-d
    uint8 tensor in bilinear or bicubic mode with kiln::upsample_uint8; the
    number replaced."""
    replaced = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in (F.interpolate, F.upsample):
            continue
        arguments = _upsample_arguments(node)
        if arguments is None:
            continue
        with gm.graph.inserting_before(node):
            new = gm.graph.call_function(torch.ops.kiln.upsample_uint8.default, arguments)
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        replaced += 1
    if replaced:
        gm.recompile()
    return replaced
