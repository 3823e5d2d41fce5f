"""Neural-network building blocks: softmax, log_softmax, layer/batch/group/
instance norm, activations, dropout in eval, attention."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from tests.registry.registry import DTYPE_NAMES, case, rand, randint, randn, register

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

for dt in FLOATS:
    n = DTYPE_NAMES[dt]
    register(f"softmax_dlast_{n}", lambda x: torch.softmax(x, -1), randn(3, 8, dtype=dt, scale=3))
    register(f"log_softmax_dlast_{n}", lambda x: torch.log_softmax(x, -1),
             randn(3, 8, dtype=dt, scale=3))
    register(f"gelu_{n}", F.gelu, randn(3, 8, dtype=dt, scale=2))
    register(f"gelu_tanh_{n}", lambda x: F.gelu(x, approximate="tanh"),
             randn(3, 8, dtype=dt, scale=2))
for dim in (0, 1):
    register(f"softmax_d{dim}_f32", lambda x, d=dim: torch.softmax(x, d), randn(4, 5, 6))
    register(f"log_softmax_d{dim}_f32", lambda x, d=dim: F.log_softmax(x, d), randn(4, 5, 6))
register("softmax_large_values_f32", lambda x: torch.softmax(x, -1), randn(4, 16, scale=50.0))
register("softmax_long_row_f32", lambda x: torch.softmax(x, -1), randn(2, 1000))
register("softmax_dtype_f32_from_f16", lambda x: torch.softmax(x, -1, dtype=torch.float32),
         randn(3, 8, dtype=torch.float16))
register("log_softmax_large_values_f32", lambda x: F.log_softmax(x, 1), randn(4, 16, scale=50.0))
register("softmin_f32", lambda x: F.softmin(x, -1), randn(3, 7))
# Softmax over the last dim runs a tile of rows at a time: 48 tiles of 64
# rows of 128; 8 tiles of 50 f64 rows of 96; 485 tiles of 1 row (97 is prime).
register("softmax_row_tiles_f32", lambda x: torch.softmax(x, -1), randn(4, 3, 256, 128, scale=4))
register("log_softmax_row_tiles_f64", lambda x: F.log_softmax(x, -1),
         randn(2, 200, 96, dtype=torch.float64, scale=4))
register("softmax_row_per_tile_f32", lambda x: torch.softmax(x, -1), randn(5, 97, 300, scale=4))


@case("layer_norm_f32", randn(4, 16), shape=(16,))
@case("layer_norm_3d_f32", randn(2, 5, 32), shape=(32,))
@case("layer_norm_two_dims_f32", randn(2, 5, 6), shape=(5, 6))
@case("layer_norm_no_affine_f32", randn(3, 10), shape=(10,), affine=False)
@case("layer_norm_eps_f32", randn(3, 10, scale=1e-2), shape=(10,), eps=1e-2)
# Long rows (not a multiple of any vector width) off zero: the
# reassociated sums of both passes, remainders included.
@case("layer_norm_long_rows_offset_f32", randn(16, 4099), shape=(4099,), offset=3.0)
@case("layer_norm_f64", randn(4, 16, dtype=torch.float64), shape=(16,), dtype=torch.float64)
@case("layer_norm_f16", randn(4, 16, dtype=torch.float16), shape=(16,), dtype=torch.float16)
@case("layer_norm_bf16", randn(4, 16, dtype=torch.bfloat16), shape=(16,), dtype=torch.bfloat16)
class LayerNorm(nn.Module):
    def __init__(self, shape, affine: bool = True, eps: float = 1e-5,
                 dtype: torch.dtype = torch.float32, offset: float = 0.0):
        super().__init__()
        self.offset = offset
        self.ln = nn.LayerNorm(shape, eps=eps, elementwise_affine=affine, dtype=dtype)
        if affine:  # non-trivial affine parameters
            with torch.no_grad():
                self.ln.weight.copy_(torch.randn(self.ln.weight.shape))
                self.ln.bias.copy_(torch.randn(self.ln.bias.shape))

    def forward(self, x):
        return self.ln(x + self.offset if self.offset else x)


def _randomize_bn(bn: nn.Module) -> None:
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(bn.running_mean.shape))
        bn.running_var.copy_(torch.rand(bn.running_var.shape) + 0.5)
        if bn.weight is not None:
            bn.weight.copy_(torch.randn(bn.weight.shape))
            bn.bias.copy_(torch.randn(bn.bias.shape))


@case("batch_norm_1d_f32", randn(4, 6), kind=1, channels=6)
@case("batch_norm_1d_seq_f32", randn(4, 6, 10), kind=1, channels=6)
@case("batch_norm_2d_f32", randn(2, 3, 5, 5), kind=2, channels=3)
@case("batch_norm_3d_f32", randn(2, 3, 2, 4, 4), kind=3, channels=3)
@case("batch_norm_2d_no_affine_f32", randn(2, 4, 3, 3), kind=2, channels=4, affine=False)
@case("batch_norm_2d_f64", randn(2, 3, 5, 5, dtype=torch.float64), kind=2, channels=3,
      dtype=torch.float64)
class BatchNormEval(nn.Module):
    """Inference batch norm: running statistics (randomised, not 0/1)."""

    def __init__(self, kind: int, channels: int, affine: bool = True,
                 dtype: torch.dtype = torch.float32):
        super().__init__()
        cls = {1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[kind]
        self.bn = cls(channels, affine=affine, dtype=dtype)
        _randomize_bn(self.bn)

    def forward(self, x):
        return self.bn(x)


register("batch_norm_training_stats_f32",
         lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
         randn(4, 3, 5, 5), randn(3), randn(3))
register("batch_norm_training_stats_1d_f32",
         lambda x: F.batch_norm(x, None, None, training=True, eps=1e-3), randn(8, 5))


# Group norm's rows as layer norms (two passes in f32): rows of 6,272 far
# from zero (mean 500, std 1; a one-pass variance cancels there, off by
# about 1 at this offset), with the statistics returned; and rows that
# leave remainders after every vector. At this offset eager's own f32
# output is 1.1e-4 from the f64 result (its mean's rounding), and Kiln's
# sums round differently: 1e-3 absolute.
register("group_norm_offset_rows_stats_f32",
         lambda x, w, b: torch.native_group_norm(x + 500.0, w, b, 8, 64, 784, 8, 1e-5),
         randn(8, 64, 28, 28), randn(64), randn(64), atol=1e-3)
register("group_norm_odd_rows_f32", lambda x: F.group_norm(x, 3), randn(2, 9, 7, 11))


@case("group_norm_f32", randn(2, 6, 4, 4), groups=3, channels=6)
@case("group_norm_one_group_f32", randn(2, 4, 5), groups=1, channels=4)
@case("group_norm_per_channel_f32", randn(2, 4, 3, 3), groups=4, channels=4)
@case("group_norm_3d_f32", randn(1, 8, 2, 3, 3), groups=2, channels=8)
class GroupNorm(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.gn.weight.copy_(torch.randn(channels))
            self.gn.bias.copy_(torch.randn(channels))

    def forward(self, x):
        return self.gn(x)


@case("instance_norm_2d_f32", randn(2, 3, 5, 5), kind=2, affine=True)
@case("instance_norm_2d_no_affine_f32", randn(2, 3, 4, 6), kind=2, affine=False)
@case("instance_norm_1d_f32", randn(2, 4, 9), kind=1, affine=True)
class InstanceNorm(nn.Module):
    def __init__(self, kind: int, affine: bool):
        super().__init__()
        cls = {1: nn.InstanceNorm1d, 2: nn.InstanceNorm2d}[kind]
        channels = 4 if kind == 1 else 3
        self.norm = cls(channels, affine=affine)
        if affine:
            with torch.no_grad():
                self.norm.weight.copy_(torch.randn(channels))
                self.norm.bias.copy_(torch.randn(channels))

    def forward(self, x):
        return self.norm(x)


# Norms over f16/bf16 compute their statistics in f32, as eager does (issue
# 15: f16 instance norm returned all NaN).
for dt in (torch.float16, torch.bfloat16):
    n = DTYPE_NAMES[dt]
    register(f"instance_norm_2d_{n}",
             lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
             randn(2, 3, 48, 48, dtype=dt, scale=4.0), randn(3, dtype=dt), randn(3, dtype=dt))
    # Sums past f16's range (2304 values near 30): summed in f16, the mean
    # overflowed (inf), and every output was NaN.
    register(f"instance_norm_2d_large_sum_{n}", lambda x: F.instance_norm(x + 30.0),
             randn(2, 3, 48, 48, dtype=dt, scale=16.0))
    register(f"batch_norm_training_stats_{n}",
             lambda x: F.batch_norm(x, None, None, training=True), randn(8, 3, 20, 20, dtype=dt))
    register(f"group_norm_{n}", lambda x: F.group_norm(x, 2), randn(2, 4, 30, 30, dtype=dt))
    # Train-mode batch norm with weights on an offset input: eager's CPU
    # kernel normalises with the batch mean and 1/std rounded to the input's
    # type (what it saves), x * a + (b - mean * a), a = rstd * w; torch's
    # decomposition used the f32 values (bf16 outputs up to 0.2 apart).
    register(f"batch_norm_training_rounded_stats_{n}",
             lambda x, w, b: torch.ops.aten._native_batch_norm_legit.no_stats(
                 x + 4.0, w, b, True, 0.1, 1e-5),
             randn(2, 3, 4, 4, dtype=dt, scale=3.0), randn(3, dtype=dt, scale=4.0),
             randn(3, dtype=dt, scale=4.0))
    # With f32 weight and bias eager keeps (and normalises with) f32
    # statistics: nothing is rounded.
    register(f"batch_norm_training_mixed_f32_weights_{n}",
             lambda x, w, b: torch.ops.aten._native_batch_norm_legit.no_stats(
                 x + 4.0, w, b, True, 0.1, 1e-5),
             randn(2, 3, 4, 4, dtype=dt, scale=3.0), randn(3, scale=4.0), randn(3, scale=4.0))
    register(f"batch_norm_training_running_stats_rounded_{n}",
             lambda x, w, b: F.batch_norm(x + 4.0, torch.zeros(3, dtype=x.dtype),
                                          torch.ones(3, dtype=x.dtype), w, b, training=True),
             randn(2, 3, 4, 4, dtype=dt, scale=3.0), randn(3, dtype=dt, scale=4.0),
             randn(3, dtype=dt, scale=4.0))
    # native_layer_norm's statistics come back in the input's type on the
    # CPU; they are still computed, and used, in f32 (computed in bf16, the
    # mean of offset rows was off by an ulp and the outputs by several).
    register(f"native_layer_norm_statistics_{n}",
             lambda x, w, b: torch.ops.aten.native_layer_norm(x + 1.5, [2, 3], w, b, 0.5),
             randn(4, 2, 3, dtype=dt, scale=4.0), randn(2, 3, dtype=dt, scale=4.0),
             randn(2, 3, dtype=dt, scale=4.0))


register("rms_norm_written_out_f32",
         lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
         randn(2, 4, 16), randn(16))
register("normalize_l2_f32", lambda x: F.normalize(x, dim=-1), randn(3, 8))
register("dropout_eval_f32", lambda x: F.dropout(x, 0.5, training=False), randn(3, 8))
register("sdpa_f32", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
         randn(1, 2, 5, 8), randn(1, 2, 5, 8), randn(1, 2, 5, 8))
register("sdpa_causal_f32", lambda q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                           is_causal=True),
         randn(2, 2, 6, 4), randn(2, 2, 6, 4), randn(2, 2, 6, 4))
# A boolean mask that hides every key from query 0: torch's _safe_softmax
# gives that row zeros (Kiln folds its mask ops into one softmax).
register("sdpa_fully_masked_row_f32",
         lambda q, k, v: F.scaled_dot_product_attention(
             q, k, v, attn_mask=torch.arange(6)[:, None] > torch.arange(6)[None, :]),
         randn(2, 2, 6, 4), randn(2, 2, 6, 4), randn(2, 2, 6, 4))
# Every third query sees no key, across 8 tiles of 64 score rows.
register("sdpa_masked_rows_in_tiles_f32",
         lambda q, k, v: F.scaled_dot_product_attention(
             q, k, v, attn_mask=(torch.arange(128)[:, None] % 3 != 0).expand(128, 128)),
         randn(2, 2, 128, 16), randn(2, 2, 128, 16), randn(2, 2, 128, 16))
register("cross_entropy_f32", lambda x, t: F.cross_entropy(x, t), randn(4, 5),
         randint(0, 5, 4))
register("mse_loss_f32", F.mse_loss, randn(4, 5), randn(4, 5))
register("glu_f32", lambda x: F.glu(x, -1), randn(3, 8))
register("prelu_f32", lambda x, w: F.prelu(x, w), randn(2, 3, 4), randn(3))
register("threshold_f32", lambda x: F.threshold(x, 0.2, -1.0), randn(3, 8))
# threshold_backward promotes grad and self as eager does (issue 15: an int64
# grad with a float32 self gave int64; torch's own decomposition does that).
register("threshold_backward_f32", lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.1),
         randn(3, 8), randn(3, 8))
register("threshold_backward_i64_grad_f32_self",
         lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.0),
         randint(-5, 5, 3, 8), randn(3, 8))
register("threshold_backward_f32_grad_f64_self",
         lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5),
         randn(4, 5), randn(4, 5, dtype=torch.float64))
register("threshold_backward_f16_grad_i32_self",
         lambda g, x: torch.ops.aten.threshold_backward(g, x, 1),
         randn(2, 6, dtype=torch.float16), randint(-3, 3, 2, 6, dtype=torch.int32))
register("logsigmoid_f32", F.logsigmoid, randn(3, 8, scale=3.0))


@case("mha_module_f32", randn(2, 5, 16))
class MultiheadSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]

# Eval-mode native_batch_norm returning its saved statistics, which are
# empty (0,) tensors in eval mode.
register("native_batch_norm_eval_all_results_f32",
         lambda x, m, v, w, b: torch.native_batch_norm(x, w, b, m, v, False, 0.1, 1e-5),
         randn(2, 3, 4), randn(3), rand(3, low=0.5, high=2.0), randn(3), randn(3))


class BatchNormTrainStep(nn.Module):
    """A train-mode batch norm step: normalises with the batch statistics and
    updates its running statistics (buffers the program mutates), returned
    so that their new values are compared too."""

    def __init__(self, channels: int = 4, momentum: float | None = 0.1,
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(channels, momentum=momentum, dtype=dtype)
        with torch.no_grad():
            self.bn.weight.copy_(torch.linspace(0.5, 2.0, channels))
            self.bn.bias.copy_(torch.linspace(-1.0, 1.0, channels))
            self.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, channels))
            self.bn.running_var.copy_(torch.linspace(0.5, 1.5, channels))

    def forward(self, x):
        self.bn.train()
        y = self.bn(x)
        return (y, self.bn.running_mean * 1, self.bn.running_var * 1,
                self.bn.num_batches_tracked * 1)


register("batch_norm_train_step_running_stats_f32", BatchNormTrainStep,
         randn(4, 4, 5, 5, scale=2.0))
# (momentum=None, the cumulative average, reads num_batches_tracked as a
# number: torch.export refuses it.)
register("batch_norm_train_step_f64", BatchNormTrainStep,
         randn(2, 3, 4, 4, dtype=torch.float64, scale=3.0), channels=3, momentum=0.5,
         dtype=torch.float64)


class BatchNormTrainTwice(nn.Module):
    """Two train-mode steps in one program: the second normalises with its
    own batch and moves the running statistics on from the first's."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(5, momentum=0.3)

    def forward(self, x):
        self.bn.train()
        return self.bn(self.bn(x) * 2 + 1), self.bn.running_var + 0


register("batch_norm_train_twice_1d_f32", BatchNormTrainTwice, randn(6, 5, 7))
# torch >= 2.3's functional train-mode batch norm with its running update,
# called as the op (torch.export of BatchNorm in train mode gives it on
# some releases).
if hasattr(torch.ops.aten, "_batch_norm_with_update_functional"):
    register("batch_norm_with_update_functional_f32",
             lambda x, w, b, m, v: torch.ops.aten._batch_norm_with_update_functional(
                 x, w, b, m, v, 0.2, 1e-5)[:3] + torch.ops.aten._batch_norm_with_update_functional(
                 x, w, b, m, v, 0.2, 1e-5)[4:],
             randn(3, 4, 5, scale=2.0), randn(4), randn(4), randn(4), rand(4, low=0.5, high=2.0))
