"""Client.compile and kiln.backend against the in-process fake daemon.

The fake daemon executes graphs with torch's own ops, so these check that the
serialised graph means what the FX graph meant, and the client's protocol.
"""

import hashlib
import logging

import grpc
import pytest
import torch

import kiln
from kiln import blobs
from kiln.compiled import PARAMETER_SET_MIN
from kiln.tensors import tensor_bytes
from kiln.testing import MLP, BatchedMatmul, EncoderBlock, example_inputs
from kiln.v1 import graph_pb2, tensor_pb2

TOL = dict(rtol=1e-4, atol=1e-5)
MODELS = [lambda: MLP(approximate="none"), lambda: MLP(approximate="tanh"),
          EncoderBlock, BatchedMatmul]


@pytest.mark.parametrize("make", MODELS)
def test_export_compile_matches_eager(fake_daemon, make):
    torch.manual_seed(0)
    model = make().eval()
    client = kiln.Client(fake_daemon.address, timeout=30)
    for batch in (1, 3):
        inputs = example_inputs(model, batch, seed=batch)
        compiled = client.compile(torch.export.export(model, inputs))
        torch.testing.assert_close(compiled(*inputs), model(*inputs), **TOL)
        assert set(compiled.timings) >= {"upload", "compile"}
        assert set(compiled.last_timings) >= {"upload", "queue", "fetch", "load", "run", "total"}
        again = client.compile(torch.export.export(model, inputs))
        assert again.cache_hit and again.digest == compiled.digest


@pytest.mark.parametrize("make", MODELS)
def test_backend_matches_eager(fake_daemon, make):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = make().eval()
    be = kiln.backend(fake_daemon.address)
    fast = torch.compile(model, backend=be)
    for batch in (2, 5):  # the second batch makes Dynamo go dynamic
        inputs = example_inputs(model, batch, seed=batch)
        with torch.no_grad():  # inference (under grad the graph trains)
            torch.testing.assert_close(fast(*inputs), model(*inputs), **TOL)
    # Weights went as parameters, not inputs, and were uploaded once each;
    # from PARAMETER_SET_MIN on, one ParameterSet blob names them.
    n_params = len(list(model.parameters()))
    assert all(len(fake_daemon.parameters_of(r)) == n_params for r in fake_daemon.executes)
    assert all(r.HasField("parameter_set") == (n_params >= PARAMETER_SET_MIN)
               for r in fake_daemon.executes)
    param_writes = [h for h, _ in fake_daemon.writes]
    assert len(param_writes) == len(set(param_writes))


def test_backend_records_autograd_only_under_grad(fake_daemon):
    torch._dynamo.reset()
    model = MLP()
    be = kiln.backend(fake_daemon.address)
    fast = torch.compile(model, backend=be)
    x = torch.randn(2, 32)
    with torch.no_grad():
        assert not fast(x).requires_grad
    assert len(be.compiled_graphs) == 1  # inference: no backward graph
    out = fast(x)  # grad mode on, weights require grad: forward + backward
    assert out.requires_grad
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for got, want in zip(grads, (p.grad for p in model.parameters())):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert len(be.compiled_graphs) == 3


def test_backend_sees_in_place_weight_updates(fake_daemon):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = MLP().eval()
    fast = torch.compile(model, backend=kiln.backend(fake_daemon.address))
    x = torch.randn(2, 32)
    fast(x)
    with torch.no_grad():
        model.fc3.bias.add_(1.0)
    torch.testing.assert_close(fast(x), model(x), **TOL)


def test_new_weights_same_executable(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    torch.manual_seed(0)
    a = MLP().eval()
    torch.manual_seed(1)
    b = MLP().eval()
    x = example_inputs(a, 2)
    ca = client.compile(torch.export.export(a, x))
    cb = client.compile(torch.export.export(b, x))
    assert cb.cache_hit and cb.digest == ca.digest
    torch.testing.assert_close(cb(*x), b(*x), **TOL)
    torch.testing.assert_close(ca(*x), a(*x), **TOL)


def test_an_input_kilnd_will_not_name_goes_by_its_digest(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    model = MLP().eval()
    x = torch.randn(16384, 32)  # 2 MiB
    compiled = client.compile(torch.export.export(model, (x,)))
    for refusal in ((grpc.StatusCode.FAILED_PRECONDITION,
                     "kilnd has no room for 2097152 bytes now; upload the blob by its digest"),
                    (grpc.StatusCode.RESOURCE_EXHAUSTED, "'alice' keeps 9 bytes ... quota")):
        fake_daemon.refuse_unnamed = refusal
        x = x + 1
        hashed = blobs.hash_count
        torch.testing.assert_close(compiled(x), model(x), **TOL)
        sent = fake_daemon.executes[-1].inputs[0].blob.hash
        assert sent == hashlib.sha256(tensor_bytes(x)).hexdigest()
        assert fake_daemon.named_by_daemon[sent] is False
        assert blobs.hash_count == hashed + 1
    # Any other refusal is the caller's to see.
    fake_daemon.refuse_unnamed = (grpc.StatusCode.FAILED_PRECONDITION,
                                  "this client speaks Kiln client protocol 3")
    with pytest.raises(kiln.FailedPreconditionError, match="protocol 3"):
        compiled(x + 1)


def test_a_name_that_is_not_a_digest_of_the_upload_is_refused(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    model = MLP().eval()
    x = torch.randn(16384, 32)
    compiled = client.compile(torch.export.export(model, (x,)))
    for bogus in (tensor_pb2.Digest(hash="A" * 64, size_bytes=x.nbytes),
                  tensor_pb2.Digest(hash="a" * 64, size_bytes=5)):
        fake_daemon.name_unnamed_as = bogus
        with pytest.raises(kiln.KilnError, match="not a SHA-256 digest of that size"):
            compiled(x)


def test_a_retry_after_lost_weights_does_not_send_the_inputs_again(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    model = MLP().eval()
    x = torch.randn(16384, 32)
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), **TOL)
    first = fake_daemon.executes[-1]
    sent = first.inputs[0].blob.hash
    # The daemon lost the weights (a restart on a fresh store, say) and
    # still holds the input: the weights go again, the input does not.
    for p in fake_daemon.parameters_of(first):
        del fake_daemon.blobs[p.hash]
    writes = len(fake_daemon.writes)
    torch.testing.assert_close(compiled(x), model(x), **TOL)
    again = [h for h, _ in fake_daemon.writes[writes:]]
    assert again and sent not in again
    assert fake_daemon.executes[-1].inputs[0].blob.hash == sent


def test_large_inputs_go_as_blobs(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    model = MLP().eval()
    x = torch.randn(16384, 32)  # 2 MiB
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), **TOL)
    req = fake_daemon.executes[-1]
    assert req.inputs[0].WhichOneof("payload") == "blob"
    # The input only passes through (the daemon need not fsync it); weights
    # are kept.
    assert fake_daemon.in_transit[req.inputs[0].blob.hash] is True
    assert req.parameters and not any(fake_daemon.in_transit[p.hash] for p in req.parameters)
    # Sent without its hash (the daemon named it), and not hashed here.
    assert fake_daemon.named_by_daemon[req.inputs[0].blob.hash] is True
    assert not any(fake_daemon.named_by_daemon[p.hash] for p in req.parameters)
    hashed = blobs.hash_count
    writes = len(fake_daemon.writes)
    torch.testing.assert_close(compiled(x), model(x), **TOL)  # the same tensor
    assert blobs.hash_count == hashed and len(fake_daemon.writes) == writes
    x2 = x + 1  # another tensor: sent, named, not hashed
    torch.testing.assert_close(compiled(x2), model(x2), **TOL)
    assert blobs.hash_count == hashed and len(fake_daemon.writes) == writes + 1
    assert fake_daemon.executes[-1].inputs[0].blob.hash == \
        hashlib.sha256(tensor_bytes(x2)).hexdigest()
    small = torch.randn(2, 32)
    compiled2 = client.compile(torch.export.export(model, (small,)))
    compiled2(small)
    assert fake_daemon.executes[-1].inputs[0].WhichOneof("payload") == "data"


def test_server_errors_are_typed(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)
    g = graph_pb2.Graph(name="bad")
    v = g.inputs.add(name="x")
    v.type.dtype, v.type.shape[:] = 1, [2]
    n = g.nodes.add(op="aten.definitely_not_an_op.default")
    n.arguments.add(name="self", value="x")
    o = n.outputs.add(name="y")
    o.type.CopyFrom(v.type)
    g.outputs.append("y")
    with pytest.raises(kiln.InvalidArgumentError, match="definitely_not_an_op"):
        client.compile_graph(g)
    with pytest.raises(kiln.NotFoundError):
        client.execute("ab" * 32, [torch.randn(2)])


def test_fallback_eager_logs_warning(fake_daemon, caplog):
    torch._dynamo.reset()
    model = MLP().eval()
    fast = torch.compile(model, backend=kiln.backend(fake_daemon.address, target="nope",
                                                     fallback="eager"))
    x = torch.randn(2, 32)
    with caplog.at_level(logging.WARNING, logger="kiln.backend"):
        torch.testing.assert_close(fast(x), model(x))
    assert any("eager" in r.message and "unknown target" in r.message for r in caplog.records)


def test_no_fallback_raises_typed(fake_daemon):
    torch._dynamo.reset()
    fast = torch.compile(MLP().eval(), backend=kiln.backend(fake_daemon.address, target="nope"))
    with pytest.raises(kiln.InvalidArgumentError, match="unknown target"):
        fast(torch.randn(2, 32))


def test_devices(fake_daemon):
    devs = kiln.Client(fake_daemon.address).devices()
    assert devs[0].kind == "cpu" and devs[0].state == "DEVICE_STATE_READY"


def test_many_medium_inputs_stay_under_message_limit(fake_daemon):
    client = kiln.Client(fake_daemon.address, timeout=30)

    class Sum(torch.nn.Module):
        def forward(self, a, b, c, d, e):
            return a + b + c + d + e

    xs = [torch.randn(200_000) for _ in range(5)]  # 800 KB each: inline alone, 4 MB together
    compiled = client.compile(torch.export.export(Sum(), tuple(xs)))
    torch.testing.assert_close(compiled(*xs), sum(xs), rtol=1e-5, atol=1e-5)
    req = fake_daemon.executes[-1]
    assert req.ByteSize() < 4 * 1024 * 1024
    kinds = [m.WhichOneof("payload") for m in req.inputs]
    assert "data" in kinds and "blob" in kinds
