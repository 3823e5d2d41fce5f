"""kiln.reference: the op-by-op interpreter against eager PyTorch, and its errors."""

import pytest
import torch
import torch.nn as nn

from kiln.export import serialize_exported
from kiln.errors import InvalidArgumentError, KilnError, UnsupportedOpError
from kiln.reference import resolve_op, run_reference
from kiln.testing import MLP, BatchedMatmul, EncoderBlock, example_inputs
from kiln.v1 import graph_pb2


def exported(model, inputs):
    model.eval()
    ep = torch.export.export(model, inputs)
    serialized, _, _ = serialize_exported(ep, "")
    return serialized


def run(serialized, inputs):
    values = run_reference(serialized.graph, list(inputs), serialized.parameters)
    return values, [values[n] for n in serialized.graph.outputs]


class ConvNet(nn.Module):
    """Convolution, batch norm, pooling, flatten, cat and a reduction."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, stride=2)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        z = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], dim=1)
        return self.fc(z), y.sum(dim=1, keepdim=True).argmax(dim=-1)


@pytest.mark.parametrize("make", [lambda: MLP(), lambda: MLP(approximate="tanh"),
                                  lambda: EncoderBlock(), lambda: BatchedMatmul()],
                         ids=["mlp", "mlp-tanh", "encoder", "bmm"])
def test_matches_eager_on_spine_models(make):
    torch.manual_seed(0)
    model = make()
    inputs = example_inputs(model, 3)
    serialized = exported(model, inputs)
    values, outs = run(serialized, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    torch.testing.assert_close(outs[0], expected, rtol=1e-5, atol=1e-6)
    # Every node's every output is kept, with the declared type.
    for node in serialized.graph.nodes:
        for out in node.outputs:
            assert list(values[out.name].shape) == list(out.type.shape), out.name


def test_matches_eager_on_a_conv_net_with_integer_outputs():
    torch.manual_seed(0)
    model = ConvNet()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 16, 16)
    serialized = exported(model, (x,))
    _, outs = run(serialized, (x,))
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(outs[0], expected[0], rtol=1e-5, atol=1e-6)
    assert outs[1].dtype == torch.int64
    assert torch.equal(outs[1], expected[1])


def test_matches_eager_on_torchvision_resnet18():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    x = torch.randn(1, 3, 32, 32)
    serialized = exported(model, (x,))
    _, outs = run(serialized, (x,))
    with torch.no_grad():
        expected = model.eval()(x)
    torch.testing.assert_close(outs[0], expected, rtol=1e-4, atol=1e-5)


def mlp_graph():
    torch.manual_seed(0)
    model = MLP()
    inputs = example_inputs(model, 2)
    return exported(model, inputs), inputs


def test_unknown_op_is_typed_and_names_the_node():
    serialized, inputs = mlp_graph()
    node = serialized.graph.nodes[1]
    node.op = "aten.not_an_op.default"
    with pytest.raises(UnsupportedOpError) as info:
        run(serialized, inputs)
    assert f"node 1 '{node.outputs[0].name}' (aten.not_an_op.default)" in str(info.value)
    assert info.value.context["node"] == node.outputs[0].name
    with pytest.raises(UnsupportedOpError, match="not an op overload name"):
        resolve_op("gelu")


def test_undefined_value_is_a_malformed_graph():
    serialized, inputs = mlp_graph()
    node = serialized.graph.nodes[2]
    arg = next(a for a in node.arguments if a.WhichOneof("kind") == "value")
    arg.value = "nowhere"
    with pytest.raises(InvalidArgumentError, match=r"node 2 .*reads 'nowhere', which is not "
                                                   r"defined before it"):
        run(serialized, inputs)


def test_wrong_declared_type_and_result_count_are_malformed():
    serialized, inputs = mlp_graph()
    out = serialized.graph.nodes[0].outputs[0]
    out.type.shape.append(7)
    with pytest.raises(InvalidArgumentError, match="but the graph declares"):
        run(serialized, inputs)
    serialized, inputs = mlp_graph()
    serialized.graph.nodes[0].outputs.add(name="extra", type=out.type)
    with pytest.raises(InvalidArgumentError, match="returns 1 results but the node declares 2"):
        run(serialized, inputs)


def test_kernel_errors_and_bad_arguments_name_the_node():
    serialized, inputs = mlp_graph()
    serialized.graph.nodes[0].arguments.add(name="no_such_argument").attribute.i = 1
    with pytest.raises(InvalidArgumentError, match=r"arguments \['no_such_argument'\] are not "
                                                   "in the schema"):
        run(serialized, inputs)
    g = graph_pb2.Graph()
    g.inputs.add(name="x", type=dict(dtype=1, shape=[2, 3]))
    g.inputs.add(name="y", type=dict(dtype=1, shape=[4, 5]))
    mm = g.nodes.add(op="aten.mm.default", outputs=[dict(name="mm", type=dict(dtype=1, shape=[2, 5]))])
    mm.arguments.add(name="self", value="x")
    mm.arguments.add(name="mat2", value="y")
    with pytest.raises(InvalidArgumentError, match=r"node 0 'mm' \(aten.mm.default\): torch "
                                                   "raised RuntimeError"):
        run_reference(g, [torch.randn(2, 3), torch.randn(4, 5)], {})
    assert issubclass(InvalidArgumentError, KilnError)


class AdvancedIndexing(nn.Module):
    """None (a whole dim) in index lists: adjacent, apart, trailing, index_put."""

    def forward(self, x, i, j):
        y = x.clone()
        y[:, i] = 0.5
        z = x.clone()
        z[i, :, j] += 1.0
        return x[:, i], x[i, :, j], x[..., j], x[:, i, j], y, z


def test_matches_eager_with_none_in_index_lists():
    model = AdvancedIndexing()
    inputs = (torch.randn(3, 4, 5), torch.tensor([0, 2]), torch.tensor([[1], [-1]]))
    serialized = exported(model, inputs)
    ops = {n.op for n in serialized.graph.nodes}
    assert {"aten.index.Tensor", "aten.index_put.default"} <= ops
    _, outs = run(serialized, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_quantized_decomposed_ops_resolve_without_importing_them_first():
    # PT2E graphs name quantized_decomposed ops, which exist only once their
    # module is imported; resolving one imports it.
    import subprocess
    import sys
    code = ("from kiln.reference import resolve_op; "
            "op = resolve_op('quantized_decomposed.quantize_per_tensor.default'); "
            "print(op.name())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "quantized_decomposed::quantize_per_tensor"
