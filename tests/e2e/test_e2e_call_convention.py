"""Programs that write into their arguments or their buffers (a train-mode
batch norm's running statistics) or return Python numbers, end to end:
Client.compile of an exported program (with verification) and the kiln
CLI's `run --compare` against eager; torch.compile's backend refuses input
mutation by name, or runs it in PyTorch with fallback="eager"."""

from __future__ import annotations

import re

import pytest
import torch

import kiln
from test_e2e_cli import run_kiln


class ScalesInPlace(torch.nn.Module):
    """Writes into both arguments and returns a tensor."""

    def forward(self, x, counts):
        x.mul_(2.0)
        x[:, 0] = -1.0
        counts.add_(1)
        return torch.relu(x) + 0.5


class ScalesAndTotals(ScalesInPlace):
    """The same, also returning a Python float."""

    def forward(self, x, counts):
        y = super().forward(x, counts)
        return y, x.abs().sum().item()


def _inputs():
    g = torch.Generator().manual_seed(3)
    return torch.randn(4, 5, generator=g), torch.zeros(4, dtype=torch.int64)


def _export(module, x, counts):
    """torch.export of ``module`` on copies; torch releases whose export cannot
    return a Python number (2.5's signature has no SymFloat output) skip."""
    try:
        return torch.export.export(module, (x.clone(), counts.clone()))
    except Exception as e:  # noqa: BLE001 - torch's own refusal, by release
        if isinstance(module, ScalesAndTotals) and "SymFloat" in str(e):
            pytest.skip(f"torch {torch.__version__}'s export cannot return a Python "
                        f"number: {e}")
        raise


def test_exported_program_leaves_eager_values_in_its_arguments(client):
    x, counts = _inputs()
    ex, ecounts = x.clone(), counts.clone()
    expected = ScalesInPlace()(ex, ecounts)
    m = client.compile(_export(ScalesInPlace(), x, counts), verify=True)
    assert m.convention.input_updates == (0, 1)
    torch.testing.assert_close(m(x, counts), expected)
    torch.testing.assert_close(x, ex)          # the argument as eager left it
    assert torch.equal(counts, ecounts)         # int64 written back exactly
    assert m.last_verification is not None      # verified before the write-back
    y2 = m(x, counts)                           # a second call starts from the new values
    torch.testing.assert_close(y2, ScalesInPlace()(ex, ecounts))
    assert torch.equal(counts, torch.full((4,), 2))


class ConvBatchNormTrain(torch.nn.Module):
    """A train-mode step: batch statistics normalise; the running statistics
    and the batch count are buffers the program updates."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4, momentum=0.25)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def test_exported_train_step_updates_the_modules_buffers_as_eager(client):
    eager = ConvBatchNormTrain().train()
    model = ConvBatchNormTrain().train()
    x = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(9)) * 2 + 1
    m = client.compile(torch.export.export(model, (x,)), verify=True)
    # The buffers are the call's first inputs; torch.export's state_dict holds
    # the module's own tensors, so a call updates the module.
    assert [t.data_ptr() for t in m.convention.state] == [
        b.data_ptr() for b in (model.bn.running_mean, model.bn.running_var,
                               model.bn.num_batches_tracked)]
    assert model.bn.num_batches_tracked.item() == 0     # export ran nothing
    for step in range(3):
        xs = x * (step + 1)
        torch.testing.assert_close(m(xs), eager(xs), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(model.bn.running_mean, eager.bn.running_mean)
        torch.testing.assert_close(model.bn.running_var, eager.bn.running_var)
        assert model.bn.num_batches_tracked.item() == step + 1
    assert m.last_verification is not None


def test_a_program_that_updates_a_parameter_is_refused_by_name(client):
    class Decays(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))

        def forward(self, x):
            with torch.no_grad():
                self.w.mul_(0.5)
            return x * self.w

    try:
        ep = torch.export.export(Decays(), (torch.ones(3),))
    except RuntimeError as e:  # torch 2.5's export refuses it itself
        pytest.skip(f"torch {torch.__version__} cannot export a parameter update: {e}")
    with pytest.raises(kiln.UnsupportedOpError, match="PARAMETER_MUTATION output \\(w\\)"):
        client.compile(ep)


def test_a_returned_item_is_a_python_number(client):
    x, counts = _inputs()
    expected, expected_total = ScalesAndTotals()(x.clone(), counts.clone())
    m = client.compile(_export(ScalesAndTotals(), x, counts))
    y, total = m(x, counts)
    torch.testing.assert_close(y, expected)
    assert isinstance(total, float) and abs(total - expected_total) < 1e-4 * expected_total


def test_cli_run_compares_with_eager_on_the_original_inputs(kilnd, tmp_path):
    x, counts = _inputs()
    torch.export.save(_export(ScalesAndTotals(), x, counts), tmp_path / "inplace.pt2")
    torch.save(x, tmp_path / "x.pt")
    torch.save(counts, tmp_path / "c.pt")
    out = run_kiln("run", str(tmp_path / "inplace.pt2"), "--input", str(tmp_path / "x.pt"),
                   "--input", str(tmp_path / "c.pt"), "--compare",
                   address=kilnd.address).stdout
    assert re.search(r"^output 0: float32\[4, 5\]", out, re.M), out
    assert re.search(r"^output 1: float \d", out, re.M), out
    diffs = [float(v) for v in re.findall(r"max \|kiln - eager\| = (\S+)", out)]
    assert len(diffs) == 2 and max(diffs) < 1e-4, out


def test_torch_compile_refuses_input_mutation_by_name_and_falls_back_when_asked(kilnd):
    def f(x, y):
        x.add_(y)
        return x * 3

    x, y = torch.randn(3, 4), torch.randn(3, 4)
    strict = torch.compile(f, backend=kiln.backend(kilnd.address, target="cpu"))
    with pytest.raises(Exception, match="writes into its inputs") as info:
        strict(x.clone(), y)
    assert "ViewAndMutationMeta" not in str(info.value)
    ex = x.clone()
    expected = f(ex, y)
    lenient = torch.compile(f, backend=kiln.backend(kilnd.address, target="cpu",
                                                    fallback="eager"))
    torch.testing.assert_close(lenient(x, y), expected)
    torch.testing.assert_close(x, ex)
