"""Grid sampling (F.grid_sample on 4-d and 5-d inputs, aten.grid_sampler_2d
and aten.grid_sampler_3d): every interpolation mode with every padding mode,
both align_corners, grids that reach outside [-1, 1], f64 and the half
types."""

import itertools

import torch
import torch.nn.functional as F

from tests.registry.registry import DTYPE_NAMES, const, rand, randn, register


def _sampler(mode: str, padding: str, align: bool):
    return lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                      align_corners=align)


# Points up to 0.3 beyond the input on each side: zeros padding reads 0
# there, border clips, reflection folds back.
for mode, padding, align in itertools.product(("bilinear", "nearest", "bicubic"),
                                              ("zeros", "border", "reflection"),
                                              (False, True)):
    corners = "corners" if align else "centers"
    register(f"grid_sample_{mode}_{padding}_{corners}_f32", _sampler(mode, padding, align),
             randn(2, 3, 5, 7), rand(2, 4, 6, 2, low=-1.3, high=1.3))

register("grid_sample_bilinear_reflection_f64", _sampler("bilinear", "reflection", False),
         randn(1, 2, 6, 5, dtype=torch.float64),
         rand(1, 5, 5, 2, dtype=torch.float64, low=-2.5, high=2.5))
register("grid_sample_bicubic_zeros_f64", _sampler("bicubic", "zeros", True),
         randn(1, 2, 6, 5, dtype=torch.float64),
         rand(1, 3, 4, 2, dtype=torch.float64, low=-1.2, high=1.2))
for dt in (torch.float16, torch.bfloat16):
    register(f"grid_sample_bilinear_border_{DTYPE_NAMES[dt]}",
             _sampler("bilinear", "border", False), randn(1, 3, 5, 5, dtype=dt),
             rand(1, 4, 4, 2, dtype=dt, low=-1.2, high=1.2))

# Points exactly halfway between pixels: nearest rounds half to even, as
# eager's nearbyint does (x = -0.5 and 0.5 with align_corners on a width
# of 3 land on 0.5 and 1.5, which go to 0 and 2).
register("grid_sample_nearest_ties_f32", _sampler("nearest", "zeros", True),
         randn(1, 1, 3, 3),
         const(torch.tensor([[[[-0.5, -0.5], [0.5, 0.5]], [[-1.0, 1.0], [1.0, -1.0]]]]),
               "half-pixel points"))
# A single row with align_corners: reflection over an empty span is 0.
register("grid_sample_bilinear_reflection_one_row_f32",
         _sampler("bilinear", "reflection", True), randn(1, 2, 1, 6),
         rand(1, 3, 3, 2, low=-1.5, high=1.5))

# 3-d sampling (aten.grid_sampler_3d): trilinear and nearest with every
# padding mode and both align_corners, points beyond the input.
for mode, padding, align in itertools.product(("bilinear", "nearest"),
                                              ("zeros", "border", "reflection"),
                                              (False, True)):
    corners = "corners" if align else "centers"
    register(f"grid_sample_3d_{mode}_{padding}_{corners}_f32", _sampler(mode, padding, align),
             randn(2, 3, 4, 5, 6), rand(2, 3, 4, 2, 3, low=-1.3, high=1.3))
register("grid_sample_3d_bilinear_reflection_f64", _sampler("bilinear", "reflection", False),
         randn(1, 2, 3, 4, 5, dtype=torch.float64),
         rand(1, 3, 3, 3, 3, dtype=torch.float64, low=-2.5, high=2.5))
for dt in (torch.float16, torch.bfloat16):
    register(f"grid_sample_3d_bilinear_border_{DTYPE_NAMES[dt]}",
             _sampler("bilinear", "border", False),
             randn(1, 2, 3, 4, 5, dtype=dt), rand(1, 2, 3, 2, 3, dtype=dt, low=-1.1, high=1.1))
register("grid_sample_3d_nearest_ties_f32", _sampler("nearest", "zeros", True),
         randn(1, 1, 3, 3, 3),
         const(torch.tensor([[[[[-0.5, 0.5, 0.0], [0.5, -0.5, 1.0]]]]]), "half-voxel ties"))
