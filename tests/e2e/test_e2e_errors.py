"""Bad requests get the right typed error and the daemon keeps serving."""

import hashlib
import os
import re

import grpc
import pytest
import torch

import kiln
from kiln.testing import MLP
from kiln.v1 import compiler_pb2, graph_pb2, tensor_pb2
from support import assert_serving

F32 = tensor_pb2.DTYPE_F32


def one_op_graph(op="aten.add.Tensor", param_digest=None):
    """y = x + w, or y = op(x) with the given op."""
    g = graph_pb2.Graph(name="one_op")
    x = g.inputs.add(name="x", type=tensor_pb2.TensorType(dtype=F32, shape=[4]))
    n = g.nodes.add(op=op)
    n.arguments.add(name="self", value="x")
    if param_digest is not None:
        g.parameters.add(value=graph_pb2.Value(name="w", type=x.type), digest=param_digest)
        n.arguments.add(name="other", value="w")
    n.outputs.add(name="y", type=x.type)
    g.outputs.append("y")
    return g


@pytest.fixture
def mlp_compiled(client):
    torch.manual_seed(0)
    model = MLP(d_in=16, d_hidden=16, d_out=8).eval()
    x = torch.randn(2, 16)
    return client.compile(torch.export.export(model, (x,))), model, x


def test_unknown_op(client):
    # A well-formed graph with an op Kiln lacks: UNIMPLEMENTED, naming the
    # node, its op and how to let it run on the host CPU instead.
    with pytest.raises(kiln.UnimplementedError,
                       match=r"node 0 'y' \(aten\.definitely_not_an_op\.default\): "
                             r"unsupported op .*fallback=\"cpu\"") as info:
        client.compile_graph(one_op_graph("aten.definitely_not_an_op.default"))
    assert info.value.code == grpc.StatusCode.UNIMPLEMENTED
    assert_serving(client)


def test_wrong_input_shape(client, mlp_compiled):
    compiled, _, _ = mlp_compiled
    with pytest.raises(kiln.InvalidArgumentError) as info:
        compiled(torch.randn(3, 16))
    msg = str(info.value).lower()
    assert "expected" in msg and "got" in msg, msg
    assert "3" in msg and "2" in msg, msg
    assert_serving(client)


def test_wrong_input_dtype(client, mlp_compiled):
    compiled, _, _ = mlp_compiled
    with pytest.raises(kiln.InvalidArgumentError) as info:
        compiled(torch.randn(2, 16, dtype=torch.float64))
    assert any(w in str(info.value).lower() for w in ("dtype", "f64", "float64")), info.value
    assert_serving(client)


def test_wrong_input_count(client, mlp_compiled):
    compiled, _, x = mlp_compiled
    with pytest.raises(kiln.InvalidArgumentError):
        compiled(x, x)
    assert_serving(client)


# kilnd parses Compile and Execute requests itself (streamed unary), so bytes
# that are not the message get INVALID_ARGUMENT naming the message type, not
# grpc++'s own INTERNAL with an empty message.
UNPARSABLE_CODE = grpc.StatusCode.INVALID_ARGUMENT
UNPARSABLE_MESSAGE = "request is not a valid kiln.v1.CompileRequest"


def raw_compile(address, payload: bytes):
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary("/kiln.v1.Compiler/Compile",
                                   request_serializer=None, response_deserializer=None)
        return call(payload, timeout=30)


def _valid_request_bytes():
    req = compiler_pb2.CompileRequest(graph=one_op_graph("aten.relu.default"), target="cpu")
    return req.SerializeToString()


def test_truncated_request(kilnd, client):
    data = _valid_request_bytes()
    truncated = data[: len(data) // 2]  # cuts the graph field's payload short
    with pytest.raises(Exception):  # the bytes really are unparsable
        compiler_pb2.CompileRequest.FromString(truncated)
    with pytest.raises(grpc.RpcError) as info:
        raw_compile(kilnd.address, truncated)
    assert info.value.code() == UNPARSABLE_CODE, info.value
    assert UNPARSABLE_MESSAGE in info.value.details(), info.value
    assert_serving(client)


def test_garbage_request(kilnd, client):
    garbage = b"\x0a\xff\xff\xff\xff\x0f" + os.urandom(64)  # field 1, absurd length
    with pytest.raises(grpc.RpcError) as info:
        raw_compile(kilnd.address, garbage)
    assert info.value.code() == UNPARSABLE_CODE, info.value
    assert UNPARSABLE_MESSAGE in info.value.details(), info.value
    assert_serving(client)


def test_garbage_execute_request(kilnd, client):
    with grpc.insecure_channel(kilnd.address) as channel:
        call = channel.unary_unary("/kiln.v1.Executor/Execute",
                                   request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as info:
            call(b"\x1a\xff\xff\xff\xff\x0f" + os.urandom(32), timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    assert "request is not a valid kiln.v1.ExecuteRequest" in info.value.details()
    assert_serving(client)


def test_valid_raw_request_works(kilnd):
    # Control for the two tests above: the same channel with good bytes compiles.
    resp = compiler_pb2.CompileResponse.FromString(raw_compile(kilnd.address,
                                                               _valid_request_bytes()))
    assert len(resp.executable.hash) == 64


def test_parameter_never_uploaded(client):
    data = hashlib.sha256(b"kiln: a blob nobody uploaded").digest() * 2  # 64 bytes
    never = tensor_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=16)
    assert client.blobs.find_missing([never]) == {never.hash}
    with pytest.raises(kiln.FailedPreconditionError, match=never.hash):
        client.compile_graph(one_op_graph(param_digest=never))
    assert_serving(client)


def test_unknown_executable(client):
    unknown = hashlib.sha256(b"no such executable").hexdigest()
    with pytest.raises(kiln.NotFoundError) as info:
        client.execute(tensor_pb2.Digest(hash=unknown, size_bytes=100), [torch.randn(4)])
    assert info.value.code == grpc.StatusCode.NOT_FOUND
    assert_serving(client)


def test_unknown_target(client):
    with pytest.raises(kiln.InvalidArgumentError, match="no-such-target"):
        client.compile_graph(one_op_graph("aten.relu.default"), target="no-such-target")
    assert_serving(client)


def test_zero_sized_dimensions_compile_as_eager_defines_them(client):
    """Once refused (UNIMPLEMENTED); now an empty product is empty and one
    with an empty contraction is zeros (tests/registry/cases_empty.py has
    the rest; an op without a rule over an empty argument is UNIMPLEMENTED
    naming it: compiler/test/Import/zero-size-no-rule.textproto)."""
    class MatMul(torch.nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)

    for a, b in ((torch.randn(0, 4), torch.randn(4, 3)), (torch.randn(5, 0), torch.randn(0, 3))):
        compiled = client.compile(torch.export.export(MatMul(), (a, b)), target="cpu")
        got, want = compiled(a, b), a @ b
        assert got.shape == want.shape
        torch.testing.assert_close(got, want)
    assert_serving(client)


def histogram_graph(dtype=F32, bins=None, edges=None, range_=None):
    """histogram.bin_ct (bins, range) or histogram.bins_tensor (edges given
    as an input of that many elements) of a 6-element input."""
    g = graph_pb2.Graph(name="histogram")
    g.inputs.add(name="x", type=tensor_pb2.TensorType(dtype=dtype, shape=[6]))
    n = g.nodes.add(op="aten.histogram.bins_tensor" if edges else "aten.histogram.bin_ct")
    n.arguments.add(name="self", value="x")
    if edges:
        g.inputs.add(name="e", type=tensor_pb2.TensorType(dtype=dtype, shape=[edges]))
        n.arguments.add(name="bins", value="e")
        count = edges - 1
    else:
        n.arguments.add(name="bins").attribute.i = bins
        if range_ is not None:
            n.arguments.add(name="range").attribute.floats.values.extend(range_)
        count = bins
    n.outputs.add(name="h", type=tensor_pb2.TensorType(dtype=dtype, shape=[max(count, 0)]))
    n.outputs.add(name="e_out", type=tensor_pb2.TensorType(dtype=dtype, shape=[max(count + 1, 0)]))
    g.outputs.extend(["h", "e_out"])
    return g


def fractional_pool_graph(samples_shape, output_size=(2, 2), kernel=(2, 2)):
    """fractional_max_pool2d of a (1, 2, 5, 5) input with the given samples."""
    g = graph_pb2.Graph(name="fractional")
    g.inputs.add(name="x", type=tensor_pb2.TensorType(dtype=F32, shape=[1, 2, 5, 5]))
    g.inputs.add(name="u", type=tensor_pb2.TensorType(dtype=F32, shape=list(samples_shape)))
    n = g.nodes.add(op="aten.fractional_max_pool2d.default")
    n.arguments.add(name="self", value="x")
    n.arguments.add(name="kernel_size").attribute.ints.values.extend(kernel)
    n.arguments.add(name="output_size").attribute.ints.values.extend(output_size)
    n.arguments.add(name="random_samples", value="u")
    shape = [1, 2, *output_size]
    n.outputs.add(name="v", type=tensor_pb2.TensorType(dtype=F32, shape=shape))
    n.outputs.add(name="i", type=tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_I64, shape=shape))
    g.outputs.extend(["v", "i"])
    return g




def segment_reduce_graph(reduce="sum", bounds=("lengths", [2]), data_dtype=F32):
    """segment_reduce of a 6-element input with the given bounds input."""
    g = graph_pb2.Graph(name="segments")
    g.inputs.add(name="x", type=tensor_pb2.TensorType(dtype=data_dtype, shape=[6]))
    name, shape = bounds
    g.inputs.add(name="b", type=tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_I64, shape=shape))
    n = g.nodes.add(op="aten.segment_reduce.default")
    n.arguments.add(name="data", value="x")
    n.arguments.add(name="reduce").attribute.s = reduce
    n.arguments.add(name=name, value="b")
    segments = shape[-1] - (1 if name == "offsets" else 0)
    n.outputs.add(name="r", type=tensor_pb2.TensorType(dtype=data_dtype, shape=[segments]))
    g.outputs.append("r")
    return g


@pytest.mark.parametrize("graph, message", [
    (histogram_graph(bins=3, range_=[2.0, 1.0]), r"histogram's min \(2\) must not exceed its max \(1\)"),
    (histogram_graph(bins=3, range_=[0.0, float("inf")]), r"histogram's range must be finite"),
    (histogram_graph(bins=0), r"histogram's bins must be positive, not 0"),
    (histogram_graph(edges=1), r"bin edges must be 1-d with at least 2 edges"),
    (histogram_graph(dtype=tensor_pb2.DTYPE_I32, bins=3), r"counts float32 and float64 tensors"),
    (fractional_pool_graph((1, 2, 3)), r"random_samples must be \(1, 2, 2\) of the input's dtype, "
                                       r"not \(1, 2, 3\)"),
    (fractional_pool_graph((1, 2, 2), output_size=(5, 2)),
     r"an output of 5 with a kernel of 2 does not fit an input of 5"),
    (segment_reduce_graph(reduce="median"), r"reduce must be sum, mean, max, min or prod, not 'median'"),
    (segment_reduce_graph(bounds=("indices", [2])), r"eager does not support indices"),
    (segment_reduce_graph(bounds=("lengths", [2, 2])), r"lengths must have the data's dims before axis 0"),
    (segment_reduce_graph(data_dtype=tensor_pb2.DTYPE_I64), r"reduces floating-point data"),
])
def test_arguments_eager_refuses_while_tracing_are_invalid(client, graph, message):
    # torch.export refuses these (eager checks them while tracing); a
    # hand-made graph gets INVALID_ARGUMENT naming the node and its op.
    op = graph.nodes[0].op.replace(".", r"\.")
    with pytest.raises(kiln.InvalidArgumentError, match=rf"node 0 \({op}\)") as info:
        client.compile_graph(graph)
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert re.search(message, str(info.value)), str(info.value)
    assert_serving(client)
