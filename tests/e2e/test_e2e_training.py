"""Training through the torch.compile backend (issue 18, part 1): with grad
mode on and weights that require grad, each Dynamo graph becomes
AOTAutograd's joint graph, partitioned into a forward and a backward graph
that kilnd compiles and an agent runs. Gradients match eager's, and an
optimizer loop (SGD with momentum, Adam) gives eager's loss at every one of
50 steps, on cpu and on riscv64 (qemu).

Tolerances: gradients of the first step rtol 1e-4, atol 1e-5 (f32, sums in
another order); the loss curve the same at every step. Both runs feed their
own rounding back through the weights, so the learning rates keep training
out of the chaotic regime (at SGD lr 0.05 with momentum, LeNet's loss spikes
after 20 steps and any two implementations part ways; measured here, Kiln's
curve was eager's to 1e-7 until then)."""

from __future__ import annotations


import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kiln
from support import kilnd_with_local_agents

STEPS = 50


class LeNet(nn.Module):
    """LeNet-5 on 28x28 images: two 5x5 convolutions with max pooling, three
    linear layers."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def mlp():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 10))


MODELS = {"mlp": (mlp, (16, 32)), "lenet": (LeNet, (16, 1, 28, 28))}
OPTIMIZERS = {
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3),
}


def data(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g), torch.randint(0, 10, (shape[0],), generator=g)


def twins(name):
    """The same model twice (same initial weights): one for eager, one for Kiln."""
    make, shape = MODELS[name]
    torch.manual_seed(0)
    eager = make()
    kiln_model = make()
    kiln_model.load_state_dict(eager.state_dict())
    return eager, kiln_model, shape


def losses(model, step_fn, optimizer, x, y, steps, loss_fn=F.cross_entropy):
    curve = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(step_fn(x), y)
        loss.backward()
        optimizer.step()
        curve.append(loss.item())
    return curve


@pytest.fixture(scope="module")
def rv_kilnd(tmp_path_factory):
    daemon = kilnd_with_local_agents(tmp_path_factory.mktemp("kilnd-train-rv"),
                                     "kilnd-train-rv", "cpu,qemu", "riscv64")
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_gradients_match_eager(kilnd, name):
    eager, trained, shape = twins(name)
    x, y = data(shape)
    backend = kiln.backend(kilnd.address)
    out = torch.compile(trained, backend=backend)(x)
    assert out.requires_grad
    F.cross_entropy(out, y).backward()
    F.cross_entropy(eager(x), y).backward()
    for (pname, p), (_, q) in zip(trained.named_parameters(), eager.named_parameters()):
        assert p.grad is not None, pname
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=pname)
    # A forward graph and a backward graph, each compiled once.
    assert [len(g.specializations) for g in backend.compiled_graphs] == [1, 1]


class CausalAttention(nn.Module):
    """Masked self-attention through F.scaled_dot_product_attention."""

    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(32, 96), nn.Linear(32, 32)

    def forward(self, x):
        q, k, v = self.qkv(x).view(x.shape[0], x.shape[1], 3, 4, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(x.shape))


ATTENTION = {
    "encoder_block": lambda: nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                                        batch_first=True),
    "causal_attention": CausalAttention,
}


@pytest.mark.parametrize("name", sorted(ATTENTION))
def test_attention_gradients_match_eager(kilnd, name):
    """Attention's backward (CPU flash attention's, in eager) reaches Kiln
    as matmuls and a softmax (kiln.export's decomposition)."""
    torch.manual_seed(0)
    eager, trained = ATTENTION[name](), ATTENTION[name]()
    trained.load_state_dict(eager.state_dict())
    x = torch.randn(2, 6, 32)
    torch.compile(trained, backend=kiln.backend(kilnd.address))(x).pow(2).mean().backward()
    eager(x).pow(2).mean().backward()
    for (pname, p), (_, q) in zip(trained.named_parameters(), eager.named_parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=pname)


def test_encoder_block_trains_like_eager(kilnd):
    """The encoder block as a regression model, 20 Adam steps: the loss
    curve matches eager's at every step."""
    torch.manual_seed(0)
    eager, trained = ATTENTION["encoder_block"](), ATTENTION["encoder_block"]()
    trained.load_state_dict(eager.state_dict())
    g = torch.Generator().manual_seed(5)
    x, target = torch.randn(4, 6, 32, generator=g), torch.randn(4, 6, 32, generator=g)

    def curve(model, step):
        return losses(model, step, torch.optim.Adam(model.parameters(), lr=1e-3), x, target,
                      20, loss_fn=F.mse_loss)

    want = curve(eager, eager)
    got = curve(trained, torch.compile(trained, backend=kiln.backend(kilnd.address)))
    assert want[-1] < 0.9 * want[0]  # the loop does train
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)


def bn_cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Flatten(), nn.Linear(8 * 3 * 3, 10))


def test_train_mode_batch_norm_uses_batch_statistics_and_updates_buffers(kilnd):
    """Train-mode batch norm normalises with the batch's statistics and
    updates running_mean, running_var and num_batches_tracked, as eager."""
    torch.manual_seed(0)
    eager, trained = bn_cnn(), bn_cnn()
    trained.load_state_dict(eager.state_dict())
    x, y = data((8, 3, 8, 8), seed=2)
    step = torch.compile(trained, backend=kiln.backend(kilnd.address))
    got = losses(trained, step, torch.optim.SGD(trained.parameters(), lr=0.01, momentum=0.9),
                 x, y, 5)
    want = losses(eager, eager, torch.optim.SGD(eager.parameters(), lr=0.01, momentum=0.9),
                  x, y, 5)
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
    for (name, b), (_, e) in zip(trained.named_buffers(), eager.named_buffers()):
        torch.testing.assert_close(b, e, rtol=1e-4, atol=1e-5, msg=name)
    assert int(trained[1].num_batches_tracked) == 5


def test_resnet18_trains_with_eager_gradients(kilnd):
    """resnet18 (train mode, batch norm included), three SGD steps with
    momentum: on the first, every parameter's gradient within 1e-3 of
    eager's (relative, in norm; f32 sums in another order through 20
    layers); the three losses within rtol 2e-3; every running statistic
    updated alike.

    The problem is chosen to be well conditioned. With batch 4 and lr 0.01,
    eager against eager with its weights moved by 1e-6 (relative) gave
    losses 12 % apart by the third step: batch norm over 4 samples at 1x1
    in layer4. With batch 8 and lr 0.001, the same test stays within 3e-4."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    eager = torchvision.models.resnet18(num_classes=10)
    trained = torchvision.models.resnet18(num_classes=10)
    trained.load_state_dict(eager.state_dict())
    x, y = data((8, 3, 32, 32), seed=3)
    step = torch.compile(trained, backend=kiln.backend(kilnd.address))
    opt_k = torch.optim.SGD(trained.parameters(), lr=0.001, momentum=0.9)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.001, momentum=0.9)
    got, want = [], []
    for i in range(3):
        opt_k.zero_grad()
        opt_e.zero_grad()
        loss_k, loss_e = F.cross_entropy(step(x), y), F.cross_entropy(eager(x), y)
        loss_k.backward()
        loss_e.backward()
        if i == 0:
            for (name, p), (_, q) in zip(trained.named_parameters(),
                                         eager.named_parameters()):
                assert (p.grad - q.grad).norm() <= 1e-3 * q.grad.norm(), name
        opt_k.step()
        opt_e.step()
        got.append(loss_k.item())
        want.append(loss_e.item())
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=2e-3, atol=1e-4)
    for (name, b), (_, e) in zip(trained.named_buffers(), eager.named_buffers()):
        torch.testing.assert_close(b, e, rtol=2e-3, atol=1e-4, msg=name)


def test_train_mode_dropout_compiles_and_a_seed_repeats_the_curve(kilnd):
    """Train-mode dropout compiles into the forward graph (Kiln's RNG
    contract, docs/architecture.md "Random numbers"): nothing runs on the
    host, the same torch seed gives the same loss curve, and the curve
    descends. Its masks are Kiln's, not eager's (test_e2e_random.py checks
    the masks and their gradients)."""
    def make():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 10))

    x, y = data((64, 32), seed=4)

    def curve():
        model = make()
        backend = kiln.backend(kilnd.address)
        step = torch.compile(model, backend=backend)
        torch.manual_seed(123)
        got = losses(model, step, torch.optim.SGD(model.parameters(), lr=0.05), x, y, 8)
        compiled = [c for g in backend.compiled_graphs for c in g.specializations]
        assert compiled and not any(c.partitioned for c in compiled)
        assert any(c.seed_input for c in compiled)  # the forward draws
        torch._dynamo.reset()
        return got

    first, second = curve(), curve()
    assert first == second
    assert first[-1] < first[0]


def test_an_input_that_requires_grad_gets_its_gradient(kilnd):
    eager, trained, shape = twins("mlp")
    x, _ = data(shape)
    xe, xk = x.clone().requires_grad_(), x.clone().requires_grad_()
    torch.compile(trained, backend=kiln.backend(kilnd.address))(xk).pow(2).sum().backward()
    eager(xe).pow(2).sum().backward()
    torch.testing.assert_close(xk.grad, xe.grad, rtol=1e-4, atol=1e-5)


def test_under_no_grad_the_graph_is_inference_only(kilnd):
    _, trained, shape = twins("mlp")
    backend = kiln.backend(kilnd.address)
    with torch.no_grad():
        out = torch.compile(trained, backend=backend)(data(shape)[0])
    assert not out.requires_grad
    assert len(backend.compiled_graphs) == 1  # no backward graph


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_loss_curve_matches_eager_on_cpu(kilnd, name, optimizer):
    check_loss_curve(kilnd.address, "cpu", name, optimizer)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_loss_curve_matches_eager_on_riscv64(rv_kilnd, name, optimizer):
    check_loss_curve(rv_kilnd.address, "riscv64", name, optimizer)


def check_loss_curve(address, target, name, optimizer):
    eager, trained, shape = twins(name)
    x, y = data(shape, seed=1)
    want = losses(eager, eager, OPTIMIZERS[optimizer](eager.parameters()), x, y, STEPS)
    step = torch.compile(trained, backend=kiln.backend(address, target=target))
    got = losses(trained, step, OPTIMIZERS[optimizer](trained.parameters()), x, y, STEPS)
    assert want[-1] < 0.8 * want[0]  # the loop does train
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
