"""Random ops (Kiln's RNG contract, docs/architecture.md "Random numbers"):
Kiln draws its own numbers, so a case returns what eager's contract fixes
and compares that: shapes, dtypes and ranges exactly (``floor`` of a [0, 1)
draw is zero), and statistics of 65536 draws within tolerances of at least
six standard errors (mean, variance, tail fractions), so a wrong
distribution, scale, shift, probability or range fails while the numbers
themselves differ from eager's.

tests/e2e/test_e2e_random.py checks the numbers bit for bit against a host
reference of Kiln's generator, and the seeding."""

import torch
import torch.nn.functional as F

from tests.registry.registry import const, rand, randn, register

N = 65536


def stats(x):
    """Mean, variance and the fractions below -1, 0.25 and 1."""
    x = x.double()
    return torch.stack([x.mean(), x.var(), (x < -1).double().mean(),
                        (x < 0.25).double().mean(), (x < 1).double().mean()])


# Shapes, dtypes and ranges: exact.
register("rand_dtypes_shapes",
         lambda x: tuple(torch.rand(3, 5, dtype=d).floor() for d in
                         (torch.float32, torch.float64, torch.float16, torch.bfloat16))
         + (torch.rand_like(x).floor(), torch.rand(()).floor()),
         randn(2, 7))
register("randn_like_dtypes",
         lambda x, h: (torch.randn_like(x) * 0, torch.randn_like(h) * 0,
                       torch.randn(4, 1, dtype=torch.float64) * 0),
         randn(3, 4), randn(5, dtype=torch.float16))
register("randint_range", lambda: (torch.randint(3, 13, (N,)).min(),
                                   torch.randint(3, 13, (N,)).max(),
                                   torch.randint(5, (2, 3), dtype=torch.int32) // 5))
register("randperm_is_a_permutation", lambda: (torch.randperm(50).sort().values,
                                               torch.randperm(7, dtype=torch.int32).sort().values))

# Distributions: statistics of N draws (atol covers six standard errors).
register("rand_stats", lambda: stats(torch.rand(N)), atol=0.012)
register("rand_stats_f64", lambda: stats(torch.rand(N, dtype=torch.float64)), atol=0.012)
register("randn_stats", lambda: stats(torch.randn(N)), atol=0.035)
register("randn_stats_f16", lambda: stats(torch.randn(N, dtype=torch.float16)), atol=0.035)
register("randn_like_stats_f64", lambda x: stats(torch.randn_like(x)),
         randn(256, 256, dtype=torch.float64), atol=0.035)
register("normal_stats", lambda: stats((torch.empty(N).normal_(2.0, 3.0) - 2.0) / 3.0),
         atol=0.035)
register("normal_tensor_mean_std",
         lambda m, s: stats((torch.normal(m, s) - m) / s),
         rand(N, low=-2.0, high=2.0), rand(N, low=0.5, high=3.0), atol=0.035)
register("uniform_stats", lambda: stats((torch.empty(N).uniform_(-1.0, 3.0) + 1.0) / 4.0),
         atol=0.012)
register("exponential_stats", lambda: stats(torch.empty(N).exponential_(2.0) * 2.0),
         atol=0.05)
register("randint_stats", lambda: stats(torch.randint(0, 10, (N,)) / 10.0), atol=0.012)
register("bernoulli_p_stats", lambda x: stats(torch.bernoulli(x, 0.3)),
         rand(N), atol=0.012)
register("bernoulli_tensor_stats", lambda p: stats(torch.bernoulli(p) - p),
         rand(N), atol=0.012)
register("bernoulli_p_f64_dtype", lambda x: torch.bernoulli(x.to(torch.float64), 0.5) * 0,
         rand(8))


def dropout_stats(x):
    y = F.dropout(x, 0.25, training=True)
    return torch.stack([(y == 0).double().mean(), y.double().mean(), y.max().double()])


register("dropout_train_stats", dropout_stats, const(torch.ones(N)), atol=0.012)


def native_dropout_mask(x):
    """The mask's keep fraction, and that the output is zero where it drops."""
    out, mask = torch.ops.aten.native_dropout.default(x, 0.5, True)
    kept = torch.where(mask, out, torch.zeros(()))
    return mask.double().mean(), (kept - out).abs().max()


register("native_dropout_mask", native_dropout_mask, rand(N, low=1.0, high=2.0), atol=0.012)
register("dropout_eval_is_identity",
         lambda x: torch.ops.aten.native_dropout.default(x, 0.5, False), randn(4, 5))


def category_frequencies(weights, samples, replacement):
    picks = torch.multinomial(weights, samples, replacement=replacement)
    return torch.stack([(picks == k).double().mean() for k in range(weights.shape[-1])])


register("multinomial_one_sample_frequencies",
         lambda w: category_frequencies(w.expand(8192, 4).contiguous(), 1, False),
         const(torch.tensor([0.0, 1.0, 2.0, 5.0])), atol=0.03)
register("multinomial_replacement_frequencies",
         lambda w: category_frequencies(w, 8192, True),
         const(torch.tensor([[1.0, 0.0, 3.0, 4.0], [2.0, 2.0, 0.0, 4.0]])), atol=0.03)
register("multinomial_without_replacement_takes_all",
         lambda w: torch.multinomial(w, 5).sort(dim=-1).values,
         rand(3, 5, low=0.1, high=1.0))

# log_normal_, cauchy_ and geometric_, which the client decomposes with
# torch's own decompositions (from normal and uniform draws): the log of a
# log-normal draw is normal; atan(x) / pi + 1/2 of a Cauchy draw is uniform
# on (0, 1); a geometric draw's mean is 1 / p.
register("log_normal_stats", lambda: stats((torch.empty(N).log_normal_(1.0, 2.0).log() - 1.0) / 2.0),
         atol=0.035)
register("cauchy_stats",
         lambda: stats(torch.atan(torch.empty(N).cauchy_(3.0, 2.0) - 3.0) / torch.pi + 0.5),
         atol=0.012)
register("geometric_stats", lambda: stats(torch.empty(N).geometric_(0.3) / 10.0), atol=0.02)


# poisson: the product method below rate 10, PTRS from 10, and rates that
# vary by element: the counts standardized by their rate, (k - rate) /
# sqrt(rate), have mean 0 and variance 1 (atol: six standard errors of the
# variance, sqrt((2 + 1/rate) / N) each); counts are whole numbers, rate 0
# gives 0, and the dtype follows the rates'.
def poisson_stats(rates):
    k = torch.poisson(rates)
    return stats((k - rates) / rates.sqrt())


register("poisson_small_rate_stats", poisson_stats, const(torch.full((N,), 3.5)), atol=0.04)
register("poisson_large_rate_stats", poisson_stats,
         const(torch.full((N,), 40.0, dtype=torch.float64)), atol=0.04)
register("poisson_mixed_rates_stats", poisson_stats, rand(N, low=0.5, high=60.0), atol=0.04)


def poisson_counts(rates):
    k = torch.poisson(rates)
    return (k - k.floor(), k.min() >= 0, torch.poisson(rates * 0),
            torch.poisson(rates.half()) * 0, torch.poisson(rates.to(torch.bfloat16)).min() >= 0)


register("poisson_counts_are_whole", poisson_counts, rand(4, 64, low=0.0, high=30.0))


def rrelu_train_stats(x):
    """Train-mode RReLU: a negative element's slope is uniform in [1/8, 1/3)
    (mean 11/48), a positive element passes unchanged."""
    y = F.rrelu(x, training=True)
    negative = x < 0
    slopes = y / x
    mean = torch.where(negative, slopes, 0.0).sum() / negative.sum()
    low = torch.where(negative, slopes, float("inf")).min()
    high = torch.where(negative, slopes, -float("inf")).max()
    kept = torch.where(negative, True, y == x).all()
    return torch.stack([mean.double() * 48 / 11, (low >= 1 / 8).double(),
                        (high < 1 / 3).double(), kept.double()])


register("rrelu_train_stats", rrelu_train_stats, rand(N, low=-1.0, high=1.0), atol=0.012)
