"""Random ops compiled into executables (issues 15 and 18): Kiln's RNG
contract (docs/architecture.md, "Random numbers").

- The numbers are Philox4x32-10 under the call's seed, the same bits on cpu
  and riscv64: checked bit for bit against a numpy reference that itself
  reproduces Random123's known answers.
- Each call draws its seed from torch's default generator, so
  ``torch.manual_seed`` repeats a sequence of calls and the next call differs.
- Shapes, dtypes and distributions follow eager's contract: checked with
  statistics whose bounds are at least five standard errors wide (the draws
  are seeded, so each check is deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import kiln
import philox_reference as ref
from kiln.rng import fresh_seed, random_nodes
from lacked_ops import lacked
from support import kilnd_with_local_agents

N = 20000  # elements per statistical draw


@pytest.fixture(scope="module")
def rv(tmp_path_factory):
    """A daemon with cpu and qemu (riscv64) agents."""
    daemon = kilnd_with_local_agents(tmp_path_factory.mktemp("kilnd-random"), "kilnd-random",
                                     "cpu,qemu", "riscv64")
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture(scope="module")
def client(rv):
    with kiln.Client(rv.address, timeout=600) as c:
        yield c


def compile_on(client, model, args, target="cpu", **kwargs):
    return client.compile(torch.export.export(model, args), target=target, **kwargs)


def call_with_seed(compiled, args, torch_seed):
    """Runs one call after torch.manual_seed(torch_seed); returns the outputs
    and the seed that call drew."""
    torch.manual_seed(torch_seed)
    seed = int(fresh_seed())
    torch.manual_seed(torch_seed)
    outs = compiled(*args)
    return (outs if isinstance(outs, tuple) else (outs,)), seed


class Uniforms(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return (torch.rand(n), torch.rand(n, dtype=torch.float64),
                torch.rand(n, dtype=torch.float16), torch.rand(n, dtype=torch.bfloat16),
                torch.randint(0, 2**62, (n,)), torch.randn(n), torch.randn(n, dtype=torch.float64))


def test_the_numpy_reference_is_random123s_philox():
    for counter, key, want in ref.KNOWN_ANSWERS:
        got = ref.philox([np.uint64(c) for c in counter], [np.uint64(k) for k in key])
        assert [int(g) for g in got] == list(want)


@pytest.mark.parametrize("target", ["cpu", "riscv64"])
def test_the_draws_are_philox_bit_for_bit(rv, client, target):
    x = torch.zeros(1000)
    compiled = compile_on(client, Uniforms(), (x,), target)
    streams = random_nodes(compiled.graph)
    assert len(streams) == 7
    outs, seed = call_with_seed(compiled, (x,), 11)
    n = x.shape[0]
    for out, stream, (dtype, bits) in zip(outs, streams, [
            (torch.float32, 24), (torch.float64, 53), (torch.float16, 11), (torch.bfloat16, 8)]):
        assert out.dtype == dtype and out.shape == (n,)
        want = torch.from_numpy(ref.uniform(n, seed, stream, bits)).to(dtype)
        assert torch.equal(out, want), f"{dtype}: {(out != want).sum()} elements differ"
        assert 0.0 <= float(out.min()) and float(out.max()) < 1.0
    ints = outs[4]
    assert ints.dtype == torch.int64
    assert torch.equal(ints, torch.from_numpy(ref.bits63(n, seed, streams[4]) % 2**62))
    z32 = torch.from_numpy(ref.normal(n, seed, streams[5], wide=False)).float()
    torch.testing.assert_close(outs[5], z32, rtol=2e-6, atol=2e-6)
    z64 = torch.from_numpy(ref.normal(n, seed, streams[6], wide=True))
    torch.testing.assert_close(outs[6], z64, rtol=1e-12, atol=1e-12)


class Poisson(nn.Module):
    def forward(self, rates):
        return torch.poisson(rates), torch.poisson(rates.double())


@pytest.mark.parametrize("target", ["cpu", "riscv64"])
def test_poisson_is_the_reference_bit_for_bit(rv, client, target):
    # Rates across both algorithms' ranges (product method below 10, PTRS
    # from 10), and the edges: 0, +inf, NaN and a negative rate.
    torch.manual_seed(0)
    rates = torch.cat([torch.rand(600) * 60.0, torch.tensor([0.0, 9.999, 10.0, 1e6]),
                       torch.tensor([float("inf"), float("nan"), -1.0])])
    compiled = compile_on(client, Poisson(), (rates,), target)
    streams = random_nodes(compiled.graph)
    assert len(streams) == 2
    outs, seed = call_with_seed(compiled, (rates,), 4)
    for out, stream, dtype in zip(outs, streams, (torch.float32, torch.float64)):
        want = ref.poisson(rates.double().numpy(), seed, stream)
        assert out.dtype == dtype
        torch.testing.assert_close(out.double(), torch.from_numpy(want), rtol=0, atol=0,
                                   equal_nan=True)
    for out in outs:
        assert out[-7] == 0 and out[-3] == float("inf") and out[-2:].isnan().all()
        assert torch.equal(out[:-3], out[:-3].floor()) and out[:-3].min() >= 0


def test_poisson_counts_follow_the_distribution(rv, client):
    # A chi-square test of the counts against Poisson's probabilities, at
    # rate 3.5 (the product method) and 40 (PTRS).
    for rate, low, high in ((3.5, 0, 10), (40.0, 25, 56)):
        rates = torch.full((N,), rate)
        compiled = compile_on(client, Poisson(), (rates,))
        torch.manual_seed(8)
        counts = compiled(rates)[1].numpy().astype(np.int64)
        edges = np.arange(low, high + 1)
        pmf = np.array([math.exp(k * math.log(rate) - rate - math.lgamma(k + 1)) for k in edges])
        observed = np.array([(counts == k).sum() for k in edges], dtype=np.float64)
        expected = pmf * N
        below, above = (counts < low).sum(), (counts > high).sum()
        tails = np.array([below, above], dtype=np.float64)
        cdf_low = sum(math.exp(k * math.log(rate) - rate - math.lgamma(k + 1)) for k in range(low))
        tail_expected = np.array([cdf_low, 1.0 - cdf_low - pmf.sum()]) * N
        keep = tail_expected > 5
        chi2 = float(((observed - expected) ** 2 / expected).sum()
                     + ((tails - tail_expected) ** 2 / tail_expected)[keep].sum())
        dof = len(edges) + int(keep.sum()) - 1
        # p = 1e-6 for chi-square with `dof` degrees of freedom, by
        # Wilson-Hilferty.
        bound = dof * (1 - 2 / (9 * dof) + 4.753 * math.sqrt(2 / (9 * dof))) ** 3
        assert chi2 < bound, f"rate {rate}: chi-square {chi2:.1f} over {dof} dof (bound {bound:.1f})"


def test_torch_manual_seed_repeats_the_calls_and_each_call_draws_anew(rv, client):
    x = torch.zeros(64)
    compiled = compile_on(client, Uniforms(), (x,))
    torch.manual_seed(5)
    first, second = compiled(x), compiled(x)
    after = torch.rand(3)
    torch.manual_seed(5)
    again = compiled(x)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], second[0])
    # A call takes one draw from torch's generator, as a random op in eager
    # would take some: the generator moves on by exactly that.
    torch.manual_seed(5)
    fresh_seed(), fresh_seed()
    assert torch.equal(torch.rand(3), after)


def ks_statistic(sample: np.ndarray, cdf) -> float:
    s = np.sort(sample)
    n = len(s)
    c = cdf(s)
    return max(float(np.max(np.arange(1, n + 1) / n - c)), float(np.max(c - np.arange(n) / n)))


def normal_cdf(v):
    return 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


# The Kolmogorov-Smirnov bound at significance 1e-6 for N samples.
KS_BOUND = math.sqrt(-0.5 * math.log(0.5e-6) / N)


class Distributions(nn.Module):
    def forward(self, x, p):
        n = x.shape[0]
        return (torch.rand(n), torch.randn(n), torch.empty(n).normal_(2.0, 3.0),
                torch.empty(n).uniform_(-1.0, 3.0), torch.empty(n).exponential_(2.0),
                torch.bernoulli(p), torch.bernoulli(x, 0.25), torch.randint(3, 13, (n,)),
                torch.randn(n, dtype=torch.float16))


def test_distributions_follow_eagers_contract(rv, client):
    x, p = torch.zeros(N), torch.full((N,), 0.7)
    compiled = compile_on(client, Distributions(), (x, p))
    torch.manual_seed(21)
    outs = [t.double().numpy() for t in compiled(x, p)]
    u, z, g, w, e, b1, b2, ints, half = outs
    se = 1.0 / math.sqrt(N)  # one standard error, in units of sigma
    assert ks_statistic(u, lambda v: np.clip(v, 0, 1)) < KS_BOUND
    assert ks_statistic(z, normal_cdf) < KS_BOUND
    assert ks_statistic((g - 2.0) / 3.0, normal_cdf) < KS_BOUND
    assert ks_statistic((w + 1.0) / 4.0, lambda v: np.clip(v, 0, 1)) < KS_BOUND
    assert w.min() >= -1.0 and w.max() < 3.0
    assert ks_statistic(e, lambda v: 1.0 - np.exp(-2.0 * np.maximum(v, 0))) < KS_BOUND
    assert e.min() >= 0.0
    assert abs(b1.mean() - 0.7) < 5 * se * math.sqrt(0.21)
    assert abs(b2.mean() - 0.25) < 5 * se * math.sqrt(0.1875)
    assert set(np.unique(b1)) == {0.0, 1.0}
    counts = np.bincount(ints.astype(np.int64) - 3, minlength=10)
    assert ints.min() == 3 and ints.max() == 12 and len(counts) == 10
    chi2 = float(((counts - N / 10) ** 2 / (N / 10)).sum())
    assert chi2 < 37.0  # chi-square, 9 degrees of freedom, p = 4e-5
    assert abs(half.mean()) < 5 * se and abs(half.std() - 1.0) < 0.03
    # Two nodes of one graph draw independently.
    assert abs(np.corrcoef(u, (w + 1.0) / 4.0)[0, 1]) < 5 * se


class Choices(nn.Module):
    def forward(self, weights, rows):
        return (torch.multinomial(weights, 1), torch.multinomial(weights, 3),
                torch.multinomial(rows, 400, replacement=True), torch.randperm(50))


def test_multinomial_and_randperm(rv, client):
    weights = torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0]).expand(4000, 5).contiguous()
    rows = torch.tensor([[0.0, 1.0, 0.0, 3.0], [2.0, 2.0, 0.0, 0.0]])
    compiled = compile_on(client, Choices(), (weights, rows))
    torch.manual_seed(3)
    one, three, many, perm = compiled(weights, rows)
    assert one.shape == (4000, 1) and three.shape == (4000, 3) and one.dtype == torch.int64
    # One sample: category k with probability k / 10; never the zero weight.
    freq = torch.bincount(one.flatten(), minlength=5).double() / 4000
    assert freq[0] == 0
    torch.testing.assert_close(freq, torch.tensor([0.0, 0.1, 0.2, 0.3, 0.4], dtype=torch.float64),
                               rtol=0, atol=5 * math.sqrt(0.25 / 4000))
    # Without replacement: three distinct categories per row, never category 0
    # while four positive ones remain.
    assert all(len(set(r)) == 3 for r in three.tolist())
    assert (three != 0).all()
    # With replacement, per row: only positive weights, in proportion.
    assert set(many[0].tolist()) <= {1, 3} and set(many[1].tolist()) <= {0, 1}
    assert abs((many[0] == 3).double().mean() - 0.75) < 5 * math.sqrt(0.1875 / 400)
    assert abs((many[1] == 0).double().mean() - 0.5) < 5 * math.sqrt(0.25 / 400)
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))


class FractionalPool(nn.Module):
    def forward(self, x):
        return nn.functional.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5),
                                                   return_indices=True)


@pytest.mark.parametrize("target", ["cpu", "riscv64"])
def test_fractional_max_pool_pools_over_the_windows_it_draws(rv, client, target):
    """F.fractional_max_pool2d draws its (N, C, 2) samples with torch.rand
    in the graph: the call's Philox draw, reproduced here, given to eager's
    op, gives the same values and indices; the next call draws anew."""
    x = torch.randn(2, 3, 16, 16)
    compiled = compile_on(client, FractionalPool(), (x,), target)
    (values, indices), seed = call_with_seed(compiled, (x,), 11)
    [stream] = random_nodes(compiled.graph)
    samples = torch.from_numpy(ref.uniform(12, seed, stream, 24)).float().view(2, 3, 2)
    want_values, want_indices = torch.ops.aten.fractional_max_pool2d(x, [3, 3], [8, 8], samples)
    assert torch.equal(indices, want_indices)
    assert torch.equal(values, want_values)
    _, other = compiled(x)
    assert not torch.equal(other, indices)


class Dropout(nn.Module):
    def forward(self, x):
        return torch.ops.aten.native_dropout.default(x, 0.3, True)


def test_train_mode_dropout_scales_what_it_keeps(rv, client):
    x = torch.randn(N) + 5.0  # no zeros among the inputs
    compiled = compile_on(client, Dropout(), (x,))
    out, mask = compiled(x)
    assert mask.dtype == torch.bool and out.dtype == torch.float32
    assert abs((~mask).double().mean().item() - 0.3) < 5 * math.sqrt(0.21 / N)
    scale = torch.tensor(1.0 / 0.7, dtype=torch.float32)
    torch.testing.assert_close(out, torch.where(mask, x * scale, torch.zeros(())),
                               rtol=0, atol=0)


def test_dropout_in_training_compiles_and_its_gradient_follows_the_mask(rv):
    """Forward and backward through the torch.compile backend: the backward
    reads the forward's mask, so a dropped element gets no gradient and a
    kept one twice the upstream's (p = 0.5). The same torch seed repeats the
    step; the next seed drops others."""
    def f(x):
        return nn.functional.dropout(x, 0.5, training=True) * 3.0

    backend = kiln.backend(rv.address)
    compiled = torch.compile(f, backend=backend)
    x = (torch.rand(4096) + 0.5).requires_grad_()
    upstream = torch.randn(4096)

    def step(seed):
        x.grad = None
        torch.manual_seed(seed)
        out = compiled(x)
        out.backward(upstream)
        return out.detach(), x.grad.clone()

    out, grad = step(7)
    assert len(backend.compiled_graphs) == 2  # forward and backward, both Kiln's
    kept = out != 0
    assert abs(kept.double().mean().item() - 0.5) < 5 * math.sqrt(0.25 / 4096)
    zero = torch.zeros(())
    torch.testing.assert_close(out, torch.where(kept, x.detach() * 2.0 * 3.0, zero))
    torch.testing.assert_close(grad, torch.where(kept, upstream * 2.0 * 3.0, zero))
    again, grad_again = step(7)
    assert torch.equal(again, out) and torch.equal(grad_again, grad)
    assert not torch.equal(step(8)[0] != 0, kept)


class WithHostOp(nn.Module):
    def forward(self, x):
        return lacked(x, x) + torch.rand_like(x)


def test_random_nodes_in_a_partitioned_graph(rv, client):
    x = torch.rand(256) + 1.0
    compiled = compile_on(client, WithHostOp(), (x,), fallback="cpu")
    assert compiled.partitioned
    noise = compiled(x) - lacked(x, x)
    assert float(noise.min()) >= -1e-5 and float(noise.max()) < 1.0 + 1e-5
    assert noise.std() > 0.2


def test_bad_random_arguments_are_clear_errors(rv, client):
    class BadP(nn.Module):
        def forward(self, x):
            return torch.ops.aten.bernoulli.p(x, 1.5)

    class TooMany(nn.Module):
        def forward(self, w):
            return torch.ops.aten.multinomial.default(w, 6, False)

    x = torch.rand(4)
    with pytest.raises(kiln.errors.InvalidArgumentError, match=r"bernoulli.*\[0, 1\]"):
        compile_on(client, BadP(), (x,))
    graph = kiln.serialize_graph_module(
        torch.export.export(TooMany(), (torch.rand(4),)).run_decompositions().graph_module)
    with pytest.raises(kiln.errors.InvalidArgumentError, match="6 samples without replacement"):
        client.compile(graph.graph)
    # A random node without the seed argument (a hand-written graph).
    graph = kiln.serialize_graph_module(
        torch.export.export(Uniforms(), (x,)).run_decompositions().graph_module)
    for node in graph.graph.nodes:
        kept = [a for a in node.arguments if a.name != "kiln_seed"]
        del node.arguments[:]
        node.arguments.extend(kept)
    with pytest.raises(kiln.errors.InvalidArgumentError, match=r"node \d+ \(aten.rand.default\).*kiln_seed"):
        client.compile(graph.graph)


def test_verify_refuses_a_graph_that_draws(rv, client):
    with pytest.raises(kiln.errors.InvalidArgumentError, match="random numbers"):
        compile_on(client, WithHostOp(), (torch.rand(8) + 1.0,), verify=True,
                   fallback="cpu")(torch.rand(8) + 1.0)
