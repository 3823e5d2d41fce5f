"""Kiln's own decompositions (linalg_pinv, eye, pdist) against eager, in
plain torch (no daemon): every overload, tolerance kind and batch shape."""

import pytest
import torch

from kiln.export import decomposition_table, run_decompositions
from kiln.linalg_decompositions import pdist_decompositions, pinv_decompositions


def _decomposed(overload):
    return pinv_decompositions()[overload]


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_matches_eager_with_default_tolerances(shape):
    torch.manual_seed(0)
    a = torch.randn(*shape, dtype=torch.float64)
    got = _decomposed(torch.ops.aten.linalg_pinv.atol_rtol_tensor)(a)
    torch.testing.assert_close(got, torch.linalg.pinv(a), rtol=1e-10, atol=1e-10)


def test_pinv_tolerances_drop_the_values_eager_drops():
    a = torch.diag(torch.tensor([4.0, 1.0, 0.5, 1e-9], dtype=torch.float64))
    tensor_form = _decomposed(torch.ops.aten.linalg_pinv.atol_rtol_tensor)
    float_form = _decomposed(torch.ops.aten.linalg_pinv.atol_rtol_float)
    for kwargs in ({"rtol": 0.2}, {"atol": 0.7}, {"atol": 0.7, "rtol": 0.3}, {"atol": 0.0}):
        want = torch.linalg.pinv(a, **kwargs)
        torch.testing.assert_close(float_form(a, **kwargs), want)
        tensors = {k: torch.tensor(v) for k, v in kwargs.items()}
        torch.testing.assert_close(tensor_form(a, **tensors), want)
    # The default rtol keeps 1e-9 (above eps * 4 * 4) and drops nothing.
    assert float_form(a)[3, 3] == pytest.approx(1e9)
    # A batch of tolerances, one per matrix.
    batch = torch.stack([a, 2 * a])
    atol = torch.tensor([0.7, 3.0], dtype=torch.float64)
    torch.testing.assert_close(tensor_form(batch, atol=atol), torch.linalg.pinv(batch, atol=atol))


def test_pinv_hermitian_and_rcond_forms_match_eager():
    torch.manual_seed(1)
    b = torch.randn(5, 3, dtype=torch.float64)
    s = b @ b.mT  # rank 3 of 5, symmetric
    got = _decomposed(torch.ops.aten.linalg_pinv.atol_rtol_float)(s, hermitian=True)
    torch.testing.assert_close(got, torch.linalg.pinv(s, hermitian=True), rtol=1e-8, atol=1e-8)
    got = _decomposed(torch.ops.aten.linalg_pinv.default)(b, 1e-3)
    torch.testing.assert_close(got, torch.pinverse(b, rcond=1e-3))
    empty = torch.zeros(0, 3)
    assert _decomposed(torch.ops.aten.linalg_pinv.atol_rtol_tensor)(empty).shape == (3, 0)


def test_an_export_of_pinv_leaves_an_svd_and_no_pinv():
    class Pinv(torch.nn.Module):
        def forward(self, a):
            return torch.linalg.pinv(a)

    assert torch.ops.aten.linalg_pinv.atol_rtol_tensor in decomposition_table()
    ep = run_decompositions(torch.export.export(Pinv(), (torch.randn(4, 3),)))
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "aten._linalg_svd.default" in ops
    assert not any("pinv" in op for op in ops), ops


def test_an_export_of_a_large_eye_counts_in_int64():
    """Newer torch decomposes eye(n >= 256) over uint16 aranges, a dtype
    Kiln's graphs do not carry; Kiln's decomposition counts in int64."""
    class Eye(torch.nn.Module):
        def forward(self, x):
            return x + torch.eye(300), torch.eye(260, 3, dtype=torch.bool)

    x = torch.randn(300, 300)
    ep = run_decompositions(torch.export.export(Eye(), (x,)))
    aranges = [n for n in ep.graph.nodes if n.op == "call_function" and "arange" in str(n.target)]
    assert aranges and all(n.kwargs.get("dtype", torch.int64) == torch.int64 for n in aranges)
    got = ep.module()(x)
    torch.testing.assert_close(got[0], x + torch.eye(300), rtol=0, atol=0)
    assert torch.equal(got[1], torch.eye(260, 3, dtype=torch.bool))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 0.5, 3.0, float("inf")])
@pytest.mark.parametrize("rows", [0, 1, 2, 7])
def test_pdist_matches_eager(p, rows):
    x = torch.randn(rows, 5, dtype=torch.float64)
    x[:, 0] = x[:, 0].round()  # repeated entries for p = 0's count
    decomposed = pdist_decompositions()[torch.ops.aten._pdist_forward.default]
    torch.testing.assert_close(decomposed(x, p), torch.pdist(x, p), rtol=1e-12, atol=1e-12)


def test_an_export_of_pdist_leaves_no_pdist():
    class Pdist(torch.nn.Module):
        def forward(self, x):
            return torch.pdist(x, p=3.0)

    ep = run_decompositions(torch.export.export(Pdist(), (torch.randn(6, 4),)))
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert not any("pdist" in op for op in ops), ops
    x = torch.randn(6, 4)
    torch.testing.assert_close(ep.module()(x), torch.pdist(x, p=3.0))


def test_torchs_decompositions_of_non_core_ops_leave_only_core_ops():
    """view_copy, addmv, dist, ldexp (and the other _TORCH_DECOMPOSED ops)
    decompose with torch's own decompositions, to ops Kiln compiles."""
    class Several(torch.nn.Module):
        def forward(self, x, v, e):
            return (torch.view_copy(x, (20,)), torch.addmv(v, x, torch.ones(5)),
                    torch.dist(x, x.flip(0), 3.0), torch.ldexp(x, e),
                    torch.permute_copy(x, (1, 0)), torch.narrow_copy(x, 0, 1, 2))

    args = (torch.randn(4, 5), torch.randn(4), torch.randint(-3, 3, (4, 5)))
    ep = run_decompositions(torch.export.export(Several(), args))
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    # (torch 2.5 has no decomposition of permute_copy; the importer takes
    # it as a permute.)
    for name in ("view_copy", "addmv", "dist", "ldexp", "narrow_copy"):
        assert not any(f"aten.{name}." in op for op in ops), ops
    for got, want in zip(ep.module()(*args), Several()(*args)):
        torch.testing.assert_close(got, want)


@pytest.mark.skipif(not hasattr(torch, "nonzero_static"), reason="torch has no nonzero_static")
@pytest.mark.parametrize("shape", [(3, 4), (7,), (), (2, 0, 3), (2, 3, 4)])
def test_nonzero_static_matches_eager_cut_and_padded(shape):
    table = decomposition_table()
    decomposed = table[torch.ops.aten.nonzero_static.default]
    g = torch.Generator().manual_seed(len(shape))
    x = (torch.rand(shape, generator=g) > 0.5).to(torch.float32) if shape else torch.tensor(2.0)
    for size in (0, 1, 3, 30):
        for fill in (-1, 9):
            assert torch.equal(decomposed(x, size=size, fill_value=fill),
                               torch.nonzero_static(x, size=size, fill_value=fill))
