"""kiln.device: a daemon's target as a lazy PyTorch device (issue 18 part 3).

Everything runs through a real kilnd and its local agents over loopback.
Values are checked against eager PyTorch: bit-exact where the program is
exact (views, writes, seeded random draws), otherwise at the training
tests' tolerances (loss curves rtol 1e-4, atol 1e-5: f32 sums in another
order).
"""

from __future__ import annotations

import logging
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

import kiln
from lacked_ops import LACKED_NAME, lacked
from test_e2e_training import OPTIMIZERS, data, losses, rv_kilnd, twins  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(
    not hasattr(torch._C, "_acc"),
    reason=f"torch {torch.__version__} cannot host a Python device (no torch._C._acc)")


class Adder(torch.nn.Module):
    def forward(self, a, b):
        return a + b


@pytest.fixture(scope="module")
def dev(kilnd):
    return kiln.device(kilnd.address, target="cpu")


@pytest.fixture(scope="module")
def host_fallback_dev(kilnd):
    return kiln.device(kilnd.address, target="cpu", fallback="cpu")


def test_seed_000_example_line_by_line(dev):
    torch.manual_seed(0)
    cpu_tensor = torch.randn(1, 2, 3)
    a = cpu_tensor.to(dev)
    model = Adder().to(dev)
    before = kiln.device_stats(dev)["graphs_run"]

    r = model(a, a)
    assert r.device == dev and r.pending
    first = kiln.get_mlir(r)
    assert first.count("aten.add") == 1 and "aten.mul" not in first, first

    r = r + torch.randn(1, 2, 3, device=dev)       # recorded, not run
    r = r * torch.randn(1, 2, 3, device=dev)
    module = kiln.get_mlir(r)
    assert module.count("aten.add ") == 2 and module.count("aten.mul ") == 1, module
    assert module.count("func.func") == 1
    assert kiln.device_stats(dev)["graphs_run"] == before, "get_mlir ran something"

    got = r.cpu()
    torch.manual_seed(0)
    c = torch.randn(1, 2, 3)
    want = (c + c + torch.randn(1, 2, 3)) * torch.randn(1, 2, 3)
    assert torch.equal(got, want)
    assert kiln.device_stats(dev)["graphs_run"] == before + 1
    assert not r.pending
    assert "device='kiln:" in repr(r)


def test_get_mlir_of_a_computed_tensor_says_so(dev):
    t = torch.ones(3).to(dev) * 2
    t.cpu()
    with pytest.raises(kiln.InvalidArgumentError, match="computed already"):
        kiln.get_mlir(t)


def test_a_repeated_graph_compiles_once(dev):
    def step(x):
        return ((x.to(dev) * 3).relu() - 1).sum(0).cpu()

    step(torch.randn(4, 5))
    compiled = kiln.device_stats(dev)["graphs_compiled"]
    for _ in range(3):
        x = torch.randn(4, 5)
        torch.testing.assert_close(step(x), ((x * 3).relu() - 1).sum(0))
    assert kiln.device_stats(dev)["graphs_compiled"] == compiled


def test_a_chain_of_ops_is_one_graph_and_only_its_ends_travel(dev):
    x = torch.randn(256, 256)
    stats0 = kiln.device_stats(dev)
    y = x.to(dev)
    for _ in range(10):
        y = torch.tanh(y * 1.5 + 0.25)
    got = y.cpu()
    stats = kiln.device_stats(dev)
    want = x
    for _ in range(10):
        want = torch.tanh(want * 1.5 + 0.25)
    # Kiln's tanh is not libm's: ulps apart, compounded over ten rounds.
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert stats["graphs_run"] - stats0["graphs_run"] == 1
    assert stats["bytes_to_device"] - stats0["bytes_to_device"] == x.nbytes
    assert stats["bytes_from_device"] - stats0["bytes_from_device"] == x.nbytes


def test_intermediates_stay_on_the_device_between_graphs(dev):
    """Two graphs, the second reading the first's result: that result stays
    on the agent (held), so the bytes that move are x in and two scalars
    out, counted by the device's stats."""
    x = torch.randn(256, 256)
    before = kiln.device_stats(dev)
    y = x.to(dev) * 2 + 1
    first = y.sum().item()             # graph 1: y is kept on the device
    z = torch.tanh(y) * 3
    second = z.sum().item()            # graph 2 reads y where it is
    after = kiln.device_stats(dev)
    assert after["graphs_run"] - before["graphs_run"] == 2
    assert after["bytes_to_device"] - before["bytes_to_device"] == x.nbytes
    assert after["bytes_from_device"] - before["bytes_from_device"] == 8
    assert after["held_outputs"] - before["held_outputs"] >= 2   # y, then z
    want_y = x * 2 + 1
    assert first == pytest.approx(want_y.sum().item(), rel=1e-5)
    assert second == pytest.approx((torch.tanh(want_y) * 3).sum().item(), rel=1e-4)
    # Asked for, a held value comes back (and only then).
    torch.testing.assert_close(y.cpu(), want_y)
    assert kiln.device_stats(dev)["bytes_from_device"] - after["bytes_from_device"] == x.nbytes


def test_held_tensors_are_released_when_unreferenced(kilnd):
    """Nothing refers to a kept value any more: its handle goes back with
    the next call, and the agent stops holding it."""
    device = kiln.device(kilnd.address, target="cpu")
    state = kiln.lazy_tensor.device_state(device)
    y = torch.ones(64, 64).to(device) + 1
    y.sum().item()
    assert state._held_on, "y should be held"
    handles = set(state._held_on)
    del y
    import gc
    gc.collect()
    assert handles <= set(state._releases)
    (torch.ones(2).to(device) * 2).cpu()      # carries the release
    assert not state._releases and not (handles & set(state._held_on))
    # kilnd no longer knows them (the agent drops them with its next task:
    # TaskRunnerTest checks that side).
    plus1 = kilnd_client_compile(kilnd.address, _Plus1(), torch.randn(64, 64))
    for handle in handles:
        with pytest.raises(kiln.FailedPreconditionError, match="not held by any device"):
            plus1.run([kiln.tensors.HeldTensor(handle, torch.float32, (64, 64))])


def kilnd_client_compile(address, module, x):
    return kiln.Client(address).compile(torch.export.export(module, (x,)), target="cpu")


def test_a_process_releases_what_it_holds_when_it_exits(kilnd):
    script = textwrap.dedent(f"""
        import torch, kiln
        dev = kiln.device({kilnd.address!r})
        y = torch.ones(32).to(dev) * 2
        y.sum().item()                      # y is held now
        state = kiln.lazy_tensor.device_state(dev)
        print(" ".join(state._held_on))
    """)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(kiln.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    handles = done.stdout.split()
    assert handles, done.stdout
    plus1 = kilnd_client_compile(kilnd.address, _Plus1(), torch.randn(32))
    for handle in handles:
        with pytest.raises(kiln.FailedPreconditionError, match="not held by any device"):
            plus1.run([kiln.tensors.HeldTensor(handle, torch.float32, (32,))])


def test_release_without_running_anything(kilnd):
    x = torch.randn(4)
    compiled = kilnd_client_compile(kilnd.address, _Plus1(), x)
    kept = compiled.run([x], keep_outputs=[0])[0]
    client = compiled.session
    assert client.release_held([kept.handle, "held-unknown"]) == 1
    assert client.release_held([kept.handle]) == 0
    with pytest.raises(kiln.FailedPreconditionError, match="not held"):
        compiled.run([kept])


def test_a_partitioned_graph_reads_held_values_from_the_host(host_fallback_dev):
    """A cut the target cannot compile whole (fallback="cpu") runs partly on
    the host: values the device holds come back for it first."""
    x = torch.rand(5, 3) + 0.5
    y = x.to(host_fallback_dev) * 2
    assert y.sum().item() == pytest.approx((x * 2).sum().item(), rel=1e-5)  # y now held
    got = lacked(y, y).cpu()  # an op Kiln lacks
    assert torch.equal(got, lacked(x * 2, x * 2))


@pytest.mark.parametrize("local", [True, False], ids=["local-socket", "grpc"])
def test_bad_held_inputs_are_refused_with_the_right_status(kilnd, local):
    client = kiln.Client(kilnd.address, local=local)
    x = torch.randn(4)
    compiled = client.compile(torch.export.export(_Plus1(), (x,)), target="cpu")
    kept = compiled.run([x], keep_outputs=[0])[0]
    assert isinstance(kept, kiln.tensors.HeldTensor) and kept.shape == (4,)
    torch.testing.assert_close(compiled.run([kept])[0], x + 2)
    with pytest.raises(kiln.InvalidArgumentError, match="keep_outputs names output 3"):
        compiled.run([x], keep_outputs=[3])
    with pytest.raises(kiln.InvalidArgumentError, match="twice"):
        compiled.run([x], keep_outputs=[0, 0])
    wrong = kiln.tensors.HeldTensor(kept.handle, torch.float32, (2, 2))
    with pytest.raises(kiln.InvalidArgumentError, match="input 0"):
        compiled.run([wrong])
    compiled.run([x], release=[kept.handle])
    with pytest.raises(kiln.FailedPreconditionError, match="not held"):
        compiled.run([kept])
    forged = kiln.tensors.HeldTensor("held-" + "0" * 32, torch.float32, (4,))
    with pytest.raises(kiln.FailedPreconditionError, match="not held"):
        compiled.run([forged])
    assert compiled.last_transport == ("local" if local else "grpc")
    client.close()


class _Plus1(torch.nn.Module):
    def forward(self, x):
        return x + 1


def _writes(x):
    """Writes through views and aliases, each of which eager shows in the
    others."""
    x[1].add_(10)
    x.t()[0].mul_(2)
    flat = x.view(12)
    x.add_(1)                      # shows in flat
    x.detach()[2:, 1:3].zero_()    # an alias's view
    _, rest = x.split(2, dim=0)
    rest.sub_(5)
    x.unbind(1)[3].neg_()
    return x, flat


def test_writes_through_views_and_aliases_match_eager(dev):
    want = _writes(torch.arange(12.).reshape(3, 4))
    got = _writes(torch.arange(12.).reshape(3, 4).to(dev))
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)


def test_a_write_through_a_diagonal_scatters_back(dev):
    def write(x):
        y = x * 1
        y.diagonal(1).copy_(torch.tensor([7.0, 8.0, 9.0]).to(x.device))
        y.diagonal().mul_(-1)
        return y

    x = torch.arange(12.).reshape(3, 4)
    assert torch.equal(write(x.to(dev)).cpu(), write(x))


def test_a_write_through_an_expanded_view_is_refused_as_in_eager(dev):
    x = torch.zeros(1, 3).to(dev).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element"):
        x.add_(1)


def test_random_ops_draw_from_torchs_generator_on_the_host(dev):
    torch.manual_seed(5)
    want = (torch.rand(4), F.dropout(torch.ones(8), 0.5), torch.randn(2, 3))
    torch.manual_seed(5)
    got = (torch.rand(4, device=dev), F.dropout(torch.ones(8, device=dev), 0.5),
           torch.randn(2, 3).to(dev))
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)
    assert kiln.device_stats(dev)["host_ops"]["aten.native_dropout.default"] >= 1


@pytest.fixture(scope="module")
def random_dev(kilnd):
    return kiln.device(kilnd.address, target="cpu", random="device")


def test_random_ops_draw_on_the_device_when_asked(random_dev):
    """random="device": random ops are recorded into the graph (Kiln's RNG
    contract) and nothing runs on the host; the same torch seed repeats the
    draws, which are Kiln's numbers, not eager's."""
    dev = random_dev
    a = torch.randn(1, 2, 3).to(dev)
    r = Adder().to(dev)(a, a) + torch.randn(1, 2, 3, device=dev)
    assert '"random_normal"' in kiln.get_mlir(r)
    assert r.cpu().shape == (1, 2, 3)

    def draw():
        return [t.cpu() for t in (torch.rand(4, device=dev),
                                  F.dropout(torch.ones(64, device=dev) * 3, 0.5))]

    torch.manual_seed(5)
    first = draw()
    torch.manual_seed(5)
    again = draw()
    assert all(torch.equal(f, g) for f, g in zip(first, again))
    assert set(first[1].unique().tolist()) == {0.0, 6.0}
    assert kiln.device_stats(dev)["host_ops"] == {}
    torch.manual_seed(5)
    assert not torch.equal(first[0], torch.rand(4))


def test_values_needed_now_cut_the_graph(dev):
    t = torch.tensor([0., 3., 0., 2.]).to(dev) * 2
    assert torch.equal(torch.nonzero(t).cpu(), torch.tensor([[1], [3]]))
    # repeat_interleave's length is the repeats' sum: the positions are
    # computed now, the rows they pick on the device.
    rows = torch.repeat_interleave(t.view(4, 1), torch.tensor([1, 0, 2, 1]).to(dev), dim=0)
    assert torch.equal(rows.cpu(), torch.tensor([[0.], [0.], [0.], [4.]]))
    assert bool(t.sum() > 0) is True            # control flow on a value
    assert t.sum().item() == 10.0


def test_an_op_the_target_lacks_is_an_error_or_reported(dev, host_fallback_dev, caplog):
    # An op Kiln lacks, at a shape no other test compiles it for:
    # the warning comes with the compile, and a graph compiled before is not
    # compiled again.
    x = torch.rand(7, 3) + 0.5
    with pytest.raises(kiln.UnimplementedError, match=LACKED_NAME):
        lacked(x.to(dev), x.to(dev)).cpu()
    with caplog.at_level(logging.WARNING, logger="kiln.placement"):
        values = lacked(x.to(host_fallback_dev), x.to(host_fallback_dev)).cpu()
    assert torch.equal(values, lacked(x, x))
    assert any(LACKED_NAME in r.getMessage() for r in caplog.records)


def on_a_fresh_device(kilnd, body: str, device_args: str = "") -> str:
    """Runs ``body`` in a child Python in which ``dev`` is kiln:0 on kilnd:
    PyTorch's autograd engine serves one Kiln device per process (the
    first), and this process made others before."""
    script = textwrap.dedent(f"""
        import sys
        import torch, kiln
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        from test_e2e_training import OPTIMIZERS, data, losses, twins
        dev = kiln.device({kilnd.address!r}, target="cpu"{device_args})
        assert dev.index == 0, dev
    """) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(kiln.__file__).parents[1])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_lenet_trains_on_the_device_like_eager(kilnd):
    on_a_fresh_device(kilnd, """
        eager, on_device, shape = twins("lenet")
        x, y = data(shape)
        want = losses(eager, eager, OPTIMIZERS["sgd_momentum"](eager.parameters()), x, y, 20)
        on_device = on_device.to(dev)
        assert all(p.device == dev for p in on_device.parameters())
        assert all(isinstance(p, torch.nn.Parameter) for p in on_device.parameters())
        xd, yd = x.to(dev), y.to(dev)
        before = kiln.device_stats(dev)
        got = losses(on_device, on_device, OPTIMIZERS["sgd_momentum"](on_device.parameters()),
                     xd, yd, 20)
        moved = {k: kiln.device_stats(dev)[k] - before[k]
                 for k in ("bytes_to_device", "bytes_from_device")}
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
        # Weights, gradients and momentum stay on the agent between steps, and
        # so does the batch: the weights and the batch travel once (plus a
        # 0-d scalar or two per step), and each step's loss comes back.
        weights = sum(p.numel() * 4 for p in on_device.parameters())
        assert moved["bytes_to_device"] <= weights + x.nbytes + y.nbytes + 20 * 8, moved
        assert moved["bytes_from_device"] == 20 * 4, moved
        for (name, p), q in zip(on_device.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5,
                                       msg=name)
    """)


def test_dropout_trains_on_the_device_without_leaving_it(kilnd):
    """random="device": an MLP with train-mode dropout trains on kiln:0 with
    its masks drawn on the agent; the same torch seed repeats the loss
    curve, nothing runs on the host, and only the losses come back."""
    on_a_fresh_device(kilnd, """
        import torch.nn.functional as F
        def run():
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                        torch.nn.Dropout(0.3), torch.nn.Linear(32, 4)).to(dev)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            x, y = data((64, 16))
            x, y = x.to(dev), (y % 4).to(dev)
            torch.manual_seed(5)
            curve = []
            for _ in range(6):
                opt.zero_grad()
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                curve.append(loss.item())
            return curve
        before = kiln.device_stats(dev)
        first, second = run(), run()
        stats = kiln.device_stats(dev)
        assert first == second, (first, second)
        assert not any("dropout" in op or "bernoulli" in op for op in stats["host_ops"]), stats
        assert stats["bytes_from_device"] - before["bytes_from_device"] == 12 * 4, stats
    """, device_args=', random="device"')


def test_mlp_trains_with_capturable_adam_in_one_graph_per_step(kilnd):
    on_a_fresh_device(kilnd, """
        eager, on_device, shape = twins("mlp")
        x, y = data(shape)
        want = losses(eager, eager, torch.optim.Adam(eager.parameters(), lr=1e-3), x, y, 12)
        on_device = on_device.to(dev)
        optimizer = torch.optim.Adam(on_device.parameters(), lr=1e-3, capturable=True)
        xd, yd = x.to(dev), y.to(dev)
        compiled0 = kiln.device_stats(dev)["graphs_compiled"]
        got = losses(on_device, on_device, optimizer, xd, yd, 12)
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
        # The first steps differ (no optimizer state yet); after that, every
        # step is the same graph.
        assert kiln.device_stats(dev)["graphs_compiled"] - compiled0 <= 3
    """)


def test_autograd_past_the_first_device_is_refused_by_name(kilnd, dev):
    # Three devices in this process: the third is kiln:2 or later.
    third = [kiln.device(kilnd.address, target="cpu") for _ in range(2)][-1]
    assert third.index >= 2
    w = torch.randn(4, 4).to(third).requires_grad_()
    with pytest.raises(kiln.UnimplementedError, match="recorded on kiln:0 only"):
        (w * 2).sum()
    # Inference there works, and detach records nothing.
    with torch.no_grad():
        got = (w * 2).sum().cpu()
    torch.testing.assert_close(got, (w.detach().cpu() * 2).sum())


def test_the_riscv64_target_is_a_device_too(rv_kilnd):
    rv = kiln.device(rv_kilnd.address, target="riscv64")
    torch.manual_seed(1)
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    got = (torch.relu(x.to(rv) @ w.to(rv)) + 1).cpu()
    torch.testing.assert_close(got, torch.relu(x @ w) + 1, rtol=1e-5, atol=1e-6)
    assert kiln.device_stats(rv)["graphs_run"] == 1


def test_seed_002_capture_function(dev):
    lhs, rhs = torch.rand(2, 3), torch.rand(3, 4)
    with kiln.capture_function("mm", [lhs, rhs], device=dev) as f:
        result = torch.mm(lhs, rhs)
        f.returns([result])
    assert torch.equal(result, torch.mm(lhs, rhs)), "the block ran as usual"
    module = f.module
    assert "aten.mm %arg0, %arg1" in module and "%arg2" not in module, module
    a, b = torch.rand(2, 3), torch.rand(3, 4)
    torch.testing.assert_close(f.compiled(a, b), torch.mm(a, b), rtol=1e-5, atol=1e-6)


def test_capture_draws_random_values_once(dev):
    x = torch.randn(3)
    torch.manual_seed(7)
    with kiln.capture_function("noisy", [x], device=dev) as f:
        y = x + torch.randn(3)
        f.returns([y])
    after = torch.randn(1)
    torch.manual_seed(7)
    noise = torch.randn(3)
    assert torch.equal(after, torch.randn(1)), "the capture drew twice"
    assert torch.equal(y, x + noise)
    assert "aten.add" in f.module


def test_capture_keeps_inputs_a_random_op_only_reads(dev):
    x = torch.randn(3)
    with kiln.capture_function("noise_like", [x], device=dev) as f:
        h = x * 2
        y = h + torch.randn_like(h)
        f.returns([y])
    assert "aten.mul %arg0" in f.module, f.module
    x2, noise = torch.randn(3), y - x * 2
    torch.testing.assert_close(f.compiled(x2, noise), x2 * 2 + noise)


def test_capture_refuses_results_from_outside(dev):
    x, elsewhere = torch.randn(3), torch.randn(3)
    with pytest.raises(kiln.InvalidArgumentError, match="not computed inside"):
        with kiln.capture_function("f", [x], device=dev) as f:
            f.returns([elsewhere])
