"""verify=True against the fake daemon, with a wrong op injected into it."""

import math

import pytest
import torch

import fake_daemon as fake_daemon_module
import kiln
from kiln.errors import KilnError, VerificationError
from kiln.testing import MLP, EncoderBlock, example_inputs
from kiln.verify import TOLERANCES, compare, tolerance


class _Perturbed:
    """An op that computes r * 1.01 + 0.01 instead of r."""

    def __init__(self, op):
        self.op = op
        self._schema = op._schema

    def __call__(self_, **kwargs):
        return self_.op(**kwargs) * 1.01 + 0.01


@pytest.fixture
def miscompile(monkeypatch):
    """miscompile("aten.gelu.default"): the fake daemon gets that op wrong."""
    real = fake_daemon_module._resolve_op

    def inject(*names):
        def resolve(name):
            op = real(name)
            return _Perturbed(op) if op is not None and name in names else op
        monkeypatch.setattr(fake_daemon_module, "_resolve_op", resolve)
    return inject


def compile_model(daemon, model, batch=2, **kwargs):
    torch.manual_seed(0)
    model.eval()
    inputs = example_inputs(model, batch)
    client = kiln.Client(daemon.address)
    compiled = client.compile(torch.export.export(model, inputs), **kwargs)
    return compiled, inputs


def first_node(graph, op):
    return next((i, n) for i, n in enumerate(graph.nodes) if n.op == op)


def test_verify_passes_and_reports(fake_daemon):
    compiled, inputs = compile_model(fake_daemon, EncoderBlock(), verify=True)
    out = compiled(*inputs)
    report = compiled.last_verification
    assert report.passed and not report.probes
    assert [c.name for c in report.outputs] == list(compiled.graph.outputs)
    assert all(c.ok and c.max_abs_error <= 1e-6 for c in report.outputs)
    assert out.shape == inputs[0].shape


def test_verify_names_the_first_diverging_node(fake_daemon, miscompile):
    compiled, inputs = compile_model(fake_daemon, MLP())
    compiled(*inputs)  # not verified: no error
    miscompile("aten.gelu.default")
    compiled, inputs = compile_model(fake_daemon, MLP(d_in=31))
    with pytest.raises(VerificationError) as info:
        compiled(*inputs, verify=True)
    err = info.value
    index, node = first_node(compiled.graph, "aten.gelu.default")
    assert (err.node, err.op, err.index) == (node.outputs[0].name, "aten.gelu.default", index)
    assert err.output == node.outputs[0].name
    assert 1e-3 < err.max_abs_error < 1.0
    assert f"node {index} '{err.node}' (aten.gelu.default)" in str(err)
    assert "every value it reads matches the reference" in str(err)
    report = err.report
    assert not report.passed and report.node == err.node
    # Binary search: at most ceil(log2(m + 1)) probes plus one for the culprit.
    producer = max(i for i, n in enumerate(compiled.graph.nodes)
                   if n.outputs[0].name in compiled.graph.outputs)
    assert len(report.probes) <= math.ceil(math.log2(producer + 1)) + 1
    assert isinstance(err, KilnError)


def test_verify_on_the_last_op_still_finds_its_first_use(fake_daemon, miscompile):
    compiled, inputs = compile_model(fake_daemon, EncoderBlock())
    last = compiled.graph.nodes[-1].op
    miscompile(last)
    compiled, inputs = compile_model(fake_daemon, EncoderBlock(), verify=True)
    with pytest.raises(VerificationError) as info:
        compiled(*inputs)
    index, node = first_node(compiled.graph, last)
    assert (info.value.index, info.value.op) == (index, last)
    assert compiled.last_verification is None


def test_probes_are_served_from_the_compile_cache_the_second_time(fake_daemon, miscompile):
    miscompile("aten.gelu.default")
    compiled, inputs = compile_model(fake_daemon, MLP())
    with pytest.raises(VerificationError) as first:
        compiled(*inputs, verify=True)
    with pytest.raises(VerificationError) as second:
        compiled(*inputs, verify=True)
    assert first.value.report.compiles == len(first.value.report.probes)
    assert second.value.report.compiles == 0
    assert second.value.node == first.value.node


def test_backend_verify(fake_daemon, miscompile):
    torch.manual_seed(0)
    model = MLP().eval()
    x = example_inputs(model, 2)[0]
    backend = kiln.backend(fake_daemon.address, verify=True)
    torch._dynamo.reset()
    out = torch.compile(model, backend=backend)(x)
    torch.testing.assert_close(out, model(x))
    assert backend.compiled_graphs[0].last_verification.passed
    miscompile("aten.gelu.default")
    backend = kiln.backend(fake_daemon.address, verify=True, fallback="eager")
    torch._dynamo.reset()
    with pytest.raises(VerificationError, match="aten.gelu.default"):
        torch.compile(model, backend=backend)(x)
    torch._dynamo.reset()


def test_compare_tolerances():
    assert tolerance(torch.float32) == TOLERANCES[torch.float32]
    assert tolerance(torch.int64) == (0.0, 0.0)
    e = torch.tensor([1.0, 0.0, float("nan"), float("inf")])
    assert compare("x", e.clone(), e).ok
    close = compare("x", e + torch.tensor([5e-4, 5e-6, 0.0, 0.0]), e)
    assert close.ok and close.max_abs_error == pytest.approx(5e-4, rel=1e-3)
    far = compare("x", e + torch.tensor([2e-3, 0.0, 0.0, 0.0]), e)
    assert not far.ok and far.worst_index == 0
    nan = compare("x", torch.tensor([1.0, 0.0, 1.0, float("inf")]), e)
    assert not nan.ok and math.isinf(nan.max_abs_error)
    ints = torch.tensor([1, 2, 3])
    assert not compare("i", ints + torch.tensor([0, 0, 1]), ints).ok
    shape = compare("s", torch.zeros(2), torch.zeros(3))
    assert not shape.ok and "reference has" in shape.note
