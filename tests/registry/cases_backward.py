"""Backward ops AOTAutograd keeps in core ATen (issues 15 and 18), called
directly: convolution_backward (input, weight and bias gradients; strides,
padding, dilation, groups, 1-d and 3-d, partial output masks) and
max_pool{2,3}d_with_indices_backward (overlapping windows add up)."""

import torch

from tests.registry.registry import rand, randn, register

aten = torch.ops.aten


def conv_backward(stride, padding, dilation, groups, mask=(True, True, True)):
    def run(dy, x, w):
        grads = aten.convolution_backward(dy, x, w, [w.shape[0]], stride, padding, dilation,
                                          False, [0] * (x.dim() - 2), groups, list(mask))
        return tuple(g for g in grads if g is not None)  # the masked-out ones are None
    return run


def conv_out(x_shape, w_shape, stride, padding, dilation):
    return [(x + 2 * p - d * (k - 1) - 1) // s + 1
            for x, k, s, p, d in zip(x_shape[2:], w_shape[2:], stride, padding, dilation)]


# (name, x shape, w shape, stride, padding, dilation, groups)
CONVS = [
    ("2d_plain", (2, 3, 8, 8), (4, 3, 3, 3), [1, 1], [0, 0], [1, 1], 1),
    ("2d_stride2_pad1", (2, 3, 9, 9), (5, 3, 3, 3), [2, 2], [1, 1], [1, 1], 1),
    ("2d_stride3_uneven", (1, 2, 10, 11), (3, 2, 2, 3), [3, 2], [0, 1], [1, 1], 1),
    ("2d_dilation2", (2, 2, 9, 9), (3, 2, 3, 3), [1, 1], [2, 2], [2, 2], 1),
    ("2d_groups2", (2, 4, 7, 7), (6, 2, 3, 3), [1, 1], [1, 1], [1, 1], 2),
    ("2d_depthwise_stride2", (2, 3, 8, 8), (3, 1, 3, 3), [2, 2], [1, 1], [1, 1], 3),
    ("2d_lenet_5x5", (4, 6, 12, 12), (16, 6, 5, 5), [1, 1], [0, 0], [1, 1], 1),
    ("1d", (2, 3, 16), (4, 3, 5), [2], [2], [1], 1),
    ("3d", (1, 2, 5, 6, 6), (3, 2, 3, 3, 3), [1, 2, 2], [1, 1, 1], [1, 1, 1], 1),
    # Padding past dilation * (kernel - 1): the input gradient is cut from
    # that of a widened input.
    ("2d_padding_past_kernel", (2, 3, 4, 5), (4, 3, 1, 3), [1, 1], [1, 1], [1, 1], 1),
    ("2d_padding_past_dilated_kernel_strided", (1, 2, 7, 7), (3, 2, 2, 2), [2, 2], [3, 2],
     [2, 1], 1),
]
for name, xs, ws, s, p, d, g in CONVS:
    ys = [xs[0], ws[0], *conv_out(xs, ws, s, p, d)]
    register(f"convolution_backward_{name}_f32", conv_backward(s, p, d, g),
             randn(*ys), randn(*xs), randn(*ws))
register("convolution_backward_f64", conv_backward([2, 1], [1, 0], [1, 1], 1),
         randn(2, 4, 3, 5, dtype=torch.float64), randn(2, 3, 6, 7, dtype=torch.float64),
         randn(4, 3, 3, 3, dtype=torch.float64))
register("convolution_backward_weight_and_bias_only_f32",
         conv_backward([1, 1], [1, 1], [1, 1], 1, (False, True, True)),
         randn(2, 4, 6, 6), randn(2, 3, 6, 6), randn(4, 3, 3, 3))
register("convolution_backward_input_only_f32",
         conv_backward([2, 2], [0, 0], [1, 1], 1, (True, False, False)),
         randn(2, 4, 3, 3), randn(2, 3, 7, 7), randn(4, 3, 3, 3))


def pool_backward(kernel, stride, padding, dims=2, dilation=None, ceil_mode=False):
    pool = aten.max_pool2d_with_indices if dims == 2 else aten.max_pool3d_with_indices
    back = (aten.max_pool2d_with_indices_backward if dims == 2
            else aten.max_pool3d_with_indices_backward)
    dilation = dilation or [1] * dims

    def run(x, dy):
        _, indices = pool(x, kernel, stride, padding, dilation, ceil_mode)
        return back(dy, x, kernel, stride, padding, dilation, ceil_mode, indices)
    return run


register("max_pool2d_backward_2x2_f32", pool_backward([2, 2], [2, 2], [0, 0]),
         randn(2, 3, 8, 8), randn(2, 3, 4, 4))
register("max_pool2d_backward_overlapping_3x3_s2_pad1_f32",
         pool_backward([3, 3], [2, 2], [1, 1]), randn(2, 3, 9, 9), randn(2, 3, 5, 5))
register("max_pool2d_backward_unbatched_f32", pool_backward([2, 2], [1, 1], [0, 0]),
         randn(3, 5, 5), randn(3, 4, 4))
register("max_pool2d_backward_f64", pool_backward([2, 3], [2, 1], [1, 0]),
         randn(1, 2, 6, 7, dtype=torch.float64), randn(1, 2, 4, 5, dtype=torch.float64))
register("max_pool2d_backward_dilated_ceil_f32",
         pool_backward([3, 2], [2, 1], [1, 0], dilation=[2, 2], ceil_mode=True),
         randn(2, 2, 10, 9), randn(2, 2, 5, 7))
register("max_pool2d_backward_stride1_3x3_f32", pool_backward([3, 3], [1, 1], [1, 1]),
         randn(1, 4, 7, 7), randn(1, 4, 7, 7))
register("max_pool2d_backward_resnet_stem_f32", pool_backward([3, 3], [2, 2], [1, 1]),
         randn(1, 8, 32, 32), randn(1, 8, 16, 16))
register("max_pool2d_backward_bf16", pool_backward([2, 2], [2, 2], [0, 0]),
         randn(1, 3, 6, 6, dtype=torch.bfloat16), randn(1, 3, 3, 3, dtype=torch.bfloat16))
register("max_pool3d_backward_f32", pool_backward([2, 2, 2], [2, 2, 2], [0, 0, 0], dims=3),
         randn(1, 2, 4, 6, 6), randn(1, 2, 2, 3, 3))

# Leaky and randomized-leaky ReLU gradients (the noise is an input: in
# training the gradient is grad * noise, in eval the leaky gradient with the
# mean slope).
register("leaky_relu_backward_f32",
         lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.2, False),
         randn(3, 5), randn(3, 5))
register("leaky_relu_backward_bf16",
         lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.01, True),
         randn(3, 5, dtype=torch.bfloat16), randn(3, 5, dtype=torch.bfloat16))
for training in (True, False):
    register(f"rrelu_with_noise_backward_{'train' if training else 'eval'}_f32",
             lambda g, x, noise, t=training: torch.ops.aten.rrelu_with_noise_backward(
                 g, x, noise, 0.1, 0.3, t, False),
             randn(3, 5), randn(3, 5), rand(3, 5, low=0.1, high=0.3))
