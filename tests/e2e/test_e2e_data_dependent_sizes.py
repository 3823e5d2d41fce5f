"""Data-dependent sizes end to end (issue 15): programs whose output sizes
depend on the values (nonzero, masked_select, x[mask], unique,
repeat_interleave with a tensor of repeats) compile once; every
call returns the sizes its values give, matching eager, and the ops after
the selection (elementwise, reductions) see only the selected rows."""

from __future__ import annotations

import pytest
import torch

import kiln

#: Selections copy values; the sums reorder f32 additions.
RTOL, ATOL = 1e-5, 1e-5


class Nonzero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x)


class MaskedSelect(torch.nn.Module):
    def forward(self, x, m):
        return torch.masked_select(x, m)


class RowsByMask(torch.nn.Module):
    """x[mask] over the leading dim, then ops on the selected rows."""

    def forward(self, x, m):
        rows = x[m]
        return rows * 2 + 1, rows.sum(), (x > 0).nonzero()


class Unique(torch.nn.Module):
    def forward(self, x):
        return torch.unique(x, return_inverse=True, return_counts=True)


class UniqueColumns(torch.nn.Module):
    """The distinct columns, and an op after them on the selected slices."""

    def forward(self, x):
        columns, inverse, counts = torch.unique(x, dim=1, return_inverse=True,
                                                return_counts=True)
        return columns, inverse, counts, columns.sum(dim=0)


class RunsOfRows(torch.nn.Module):
    """The runs of equal rows."""

    def forward(self, x):
        runs, inverse, counts = torch.unique_consecutive(x, dim=0, return_inverse=True,
                                                         return_counts=True)
        return runs * 2, inverse, counts


class RepeatedRows(torch.nn.Module):
    """Row j of x, r[j] times; the program bounds the length by 12."""

    def forward(self, x, r):
        y = torch.repeat_interleave(x, r, dim=0)
        torch._check(y.shape[0] <= 12)
        return y + 1


class Histogram(torch.nn.Module):
    """Weighted counts of the values 0, 1, ...; the program bounds the
    length by 10, and minlength makes it at least 3."""

    def forward(self, x, w):
        y = torch.bincount(x, w, minlength=3)
        torch._check(y.shape[0] <= 10)
        return y


class UnboundedBincount(torch.nn.Module):
    def forward(self, x):
        return torch.bincount(x)


class UnboundedRepeat(torch.nn.Module):
    def forward(self, x, r):
        return torch.repeat_interleave(x, r, dim=0)


def _compile(client, model, *example):
    return client.compile(torch.export.export(model, example))


def _export_or_skip(model, *example):
    """torch.export of ``model``; torch releases whose fake kernel of an op
    has no data-dependent size (2.5: unique_consecutive, bincount) skip."""
    try:
        return torch.export.export(model, example)
    except torch._dynamo.exc.Unsupported as e:
        if "dynamic shape operator" not in str(e):
            raise
        pytest.skip(f"torch {torch.__version__}'s export has no data-dependent "
                    f"size for it: {e}")


@pytest.mark.parametrize("local", [False, True], ids=["grpc", "local"])
def test_nonzero_returns_the_rows_the_values_give(kilnd, local):
    torch.manual_seed(0)
    x = torch.randn(4, 5)
    with kiln.Client(kilnd.address, timeout=300, local=local) as client:
        compiled = _compile(client, Nonzero(), x)
        (symbol,) = compiled.manifest.symbols
        assert symbol.data_dependent and (symbol.min, symbol.max) == (0, 20)
        for zeros in (0, 7, 20):
            x = torch.randn(4, 5)
            x.view(-1)[torch.randperm(20)[:zeros]] = 0
            got = compiled(x)
            assert got.dtype == torch.int64 and got.shape == (20 - zeros, 2)
            assert torch.equal(got, torch.nonzero(x))


def test_masked_select_broadcasts_and_counts(kilnd):
    torch.manual_seed(1)
    x, m = torch.randn(3, 4), torch.rand(4) > 0.5
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = _compile(client, MaskedSelect(), x, m)
        for mask in (torch.zeros(4, dtype=torch.bool), torch.ones(4, dtype=torch.bool),
                     torch.tensor([True, False, False, True])):
            x = torch.randn(3, 4)
            got = compiled(x, mask)
            torch.testing.assert_close(got, torch.masked_select(x, mask), rtol=0, atol=0)


def test_unique_counts_the_values_each_call_gives(kilnd):
    # One compile for at most 24 distinct values; each call has its own.
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = _compile(client, Unique(), torch.randint(0, 5, (4, 6)))
        (symbol,) = compiled.manifest.symbols
        assert symbol.data_dependent and symbol.max == 24
        for high in (1, 3, 24, 1000):
            x = torch.randint(0, high, (4, 6))
            values, inverse, counts = compiled(x)
            want = torch.unique(x, return_inverse=True, return_counts=True)
            assert values.shape == want[0].shape  # its own count, each call
            for got, expected in zip((values, inverse, counts), want):
                assert got.dtype == expected.dtype and torch.equal(got, expected)


@pytest.mark.parametrize("model, most", [(UniqueColumns, 7), (RunsOfRows, 5)],
                         ids=["unique_dim1", "unique_consecutive_dim0"])
def test_unique_along_a_dim_sizes_that_dim_each_call(kilnd, model, most):
    # One compile; the data-dependent size is the values' dim 1 (distinct
    # columns, up to 7) or dim 0 (runs of rows, up to 5), each call its own.
    program = _export_or_skip(model(), torch.randint(0, 2, (5, 7)))
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(program)
        assert [s.max for s in compiled.manifest.symbols] == [most]
        sizes = set()
        for high in (1, 2, 3, 1000):
            x = torch.randint(0, high, (5, 7))
            got, want = compiled(x), model()(x)
            assert got[0].shape == want[0].shape  # its own size, each call
            sizes.add(tuple(got[0].shape))
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and torch.equal(g, w)
        assert len(sizes) > 1


def test_ops_after_a_mask_see_only_the_selected_rows(kilnd):
    torch.manual_seed(2)
    x, m = torch.randn(6, 3), torch.rand(6) > 0.5
    model = RowsByMask()
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = _compile(client, model, x, m)
        assert sum(s.data_dependent for s in compiled.manifest.symbols) == 2
        for mask in (torch.zeros(6, dtype=torch.bool), torch.ones(6, dtype=torch.bool),
                     torch.rand(6) > 0.5):
            x = torch.randn(6, 3)
            got = compiled(x, mask)
            want = model(x, mask)
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


def test_torch_compile_captures_a_selection_in_one_graph(kilnd):
    """With Dynamo capturing ops of data-dependent output size, the backend
    compiles the graph once, its row counts computed in each run."""
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        _run_compiled_selection(kilnd)


def _run_compiled_selection(kilnd):
    torch._dynamo.reset()
    model = RowsByMask()
    backend = kiln.backend(kilnd.address, target="cpu")
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    torch.manual_seed(3)
    for _ in range(3):
        x, m = torch.randn(6, 3), torch.rand(6) > 0.5
        got, want = compiled(x, m), model(x, m)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)
    (graph,) = backend.compiled_graphs
    (executable,) = graph.specializations
    assert any(s.data_dependent for s in executable.manifest.symbols)
    torch._dynamo.reset()


@pytest.mark.parametrize("shapes", [((4,), (3, 4)), ((2,), (2,))],
                         ids=["mask_broadcasts_over_self", "two_elements"])
def test_masked_select_counts_past_torchs_own_bound(kilnd, shapes):
    """torch bounds masked_select's count by self's elements (none at all
    for 2): Kiln allocates at what the broadcast selection can give."""
    self_shape, mask_shape = shapes
    torch.manual_seed(5)
    x, m = torch.randn(*self_shape), torch.ones(*mask_shape, dtype=torch.bool)
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = _compile(client, MaskedSelect(), x, m)
        (symbol,) = compiled.manifest.symbols
        assert symbol.max == m.numel()
        for mask in (torch.ones(*mask_shape, dtype=torch.bool),
                     torch.rand(*mask_shape) > 0.5):
            got = compiled(x, mask)
            torch.testing.assert_close(got, torch.masked_select(x, mask), rtol=0, atol=0)


@pytest.mark.parametrize("cpu", ["x86-64-v2", "x86-64-v3"])
def test_a_selection_compiled_for_a_named_cpu_runs_here(kilnd, cpu):
    """The count and row loops need nothing past the baseline: compiled for
    a named CPU (not the host's), the executable runs on either kind of
    machine and gives eager's rows."""
    torch.manual_seed(6)
    x, m = torch.randn(6, 3), torch.rand(6) > 0.5
    model = RowsByMask()
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(torch.export.export(model, (x, m)), options={"cpu": cpu})
        assert compiled.manifest.cpu == cpu
        for mask in (torch.zeros(6, dtype=torch.bool), torch.rand(6) > 0.5):
            x = torch.randn(6, 3)
            for g, w in zip(compiled(x, mask), model(x, mask)):
                assert g.shape == w.shape
                torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("local", [False, True], ids=["grpc", "local"])
def test_repeat_interleave_length_is_each_calls_sum(kilnd, local):
    """The program's torch._check bounds the length: one compile, each
    call's own sum; a sum past the bound is INVALID_ARGUMENT naming the size
    and its range, never a write past the buffer."""
    x, r = torch.randn(4, 3), torch.tensor([1, 0, 3, 2])
    model = RepeatedRows()
    with kiln.Client(kilnd.address, timeout=300, local=local) as client:
        compiled = _compile(client, model, x, r)
        (symbol,) = compiled.manifest.symbols
        assert symbol.data_dependent and symbol.max == 12
        for repeats in ([1, 0, 3, 2], [0, 0, 0, 0], [3, 3, 3, 3], [12, 0, 0, 0]):
            r = torch.tensor(repeats)
            x = torch.randn(4, 3)
            got = compiled(x, r)
            assert got.shape == (sum(repeats), 3)
            torch.testing.assert_close(got, model(x, r), rtol=0, atol=0)
        # Each repeat alone below the bound, their sum past it; and one
        # repeat far past every size (the count saturates, no overflow).
        for repeats in ([4, 4, 4, 1], [2**62, 2**62, 0, 0]):
            with pytest.raises(kiln.InvalidArgumentError,
                               match=r"data-dependent size 'u0' more than 12, outside \[0, 12\]"):
                compiled(x, torch.tensor(repeats))
        torch.testing.assert_close(compiled(x, torch.tensor([1, 1, 1, 1])), x + 1)


def test_repeat_interleave_without_a_bound_says_how_to_give_one(kilnd):
    x, r = torch.randn(4, 3), torch.tensor([1, 0, 3, 2])
    with kiln.Client(kilnd.address, timeout=300) as client:
        with pytest.raises(kiln.UnimplementedError) as info:
            _compile(client, UnboundedRepeat(), x, r)
    message = str(info.value)
    assert "aten.repeat_interleave.Tensor" in message
    assert "no upper bound" in message and "output_size" in message
    assert "torch._check(y.shape[0] <= N)" in message


@pytest.mark.parametrize("local", [False, True], ids=["grpc", "local"])
def test_bincount_length_is_each_calls_largest_value(kilnd, local):
    """One compile; each call's length is max(minlength, max(x) + 1), its
    counts eager's exactly; a value past the bound is INVALID_ARGUMENT
    naming the size and its range, never a write past the buffer."""
    model = Histogram()
    with kiln.Client(kilnd.address, timeout=300, local=local) as client:
        compiled = client.compile(_export_or_skip(model, torch.randint(0, 5, (16,)),
                                                  torch.rand(16)))
        (symbol,) = compiled.manifest.symbols
        assert symbol.data_dependent and symbol.max == 10
        for high in (1, 3, 7, 10):
            x, w = torch.randint(0, high, (16,)), torch.rand(16)
            got = compiled(x, w)
            assert got.shape == (max(3, int(x.max()) + 1),)
            torch.testing.assert_close(got, model(x, w), rtol=0, atol=0)
        for values in ([10] + [0] * 15, [2**62] + [1] * 15):
            with pytest.raises(kiln.InvalidArgumentError,
                               match=r"data-dependent size 'u0' more than 10, outside \[3, 10\]"):
                compiled(torch.tensor(values), torch.rand(16))


def test_bincount_without_a_bound_says_how_to_give_one(kilnd):
    with kiln.Client(kilnd.address, timeout=300) as client:
        with pytest.raises(kiln.UnimplementedError) as info:
            client.compile(_export_or_skip(UnboundedBincount(), torch.randint(0, 5, (16,))))
    message = str(info.value)
    assert "aten.bincount.default" in message and "no upper bound" in message
    assert "torch._check(y.shape[0] <= N)" in message
