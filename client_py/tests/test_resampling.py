"""kiln/resampling.py: the Dynamo-graph rewrite that keeps uint8 bilinear
and bicubic resampling whole under torch.compile (no daemon)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from kiln.backend import lower_to_core_aten
from kiln.resampling import keep_uint8_resampling_whole


def dynamo_graph(fn, x):
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=capture, dynamic=False)(x)
    (gm,) = graphs
    return gm


U8 = torch.randint(0, 256, (1, 2, 6, 7), dtype=torch.uint8,
                   generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("kwargs", [
    dict(size=(9, 4), mode="bilinear"),
    dict(scale_factor=2.5, mode="bicubic", align_corners=True),
    dict(scale_factor=(0.5, 1.5), mode="bilinear", recompute_scale_factor=True),
    dict(size=(3, 3), mode="bicubic", antialias=True),
])
def test_uint8_resampling_becomes_the_custom_op_with_eagers_bytes(kwargs):
    def fn(x):
        return F.interpolate(x, **kwargs) + 1

    gm = dynamo_graph(fn, U8)
    assert keep_uint8_resampling_whole(gm) == 1
    out = gm(U8)
    assert torch.equal(out[0] if isinstance(out, (tuple, list)) else out, fn(U8))
    lowered = lower_to_core_aten(gm, [U8])
    ops = [str(n.target) for n in lowered.graph.nodes if n.op == "call_function"]
    assert "kiln.upsample_uint8.default" in ops
    assert not any("index" in op or "_to_copy" in op for op in ops), ops


@pytest.mark.parametrize("x,mode", [(U8.float(), "bilinear"), (U8, "nearest")])
def test_other_resampling_is_left_to_torch(x, mode):
    gm = dynamo_graph(lambda t: F.interpolate(t, scale_factor=2.0, mode=mode), x)
    assert keep_uint8_resampling_whole(gm) == 0


def test_the_op_refuses_another_mode():
    with pytest.raises(ValueError, match="'bilinear' or 'bicubic'"):
        torch.ops.kiln.upsample_uint8(U8, [3, 3], False, None, "nearest", False)
