"""verify=True against a real kilnd, and a deliberately wrong lowering.

kilnd's --debug-miscompile (KILN_DEBUG_MISCOMPILE) makes the compiler perturb
the results of the named ops (r * 1.01 + 0.01). Verification must pass on the
spine models with an honest daemon and, with the fault injected, name exactly
the first node whose op was miscompiled.
"""

from __future__ import annotations

import math
import subprocess

import pytest
import torch

import kiln
from kiln.export import serialize_exported
from kiln.testing import MLP, EncoderBlock, example_inputs
from support import Kilnd, require_binaries

GELU = "aten.gelu.default"


def make(model_cls, seed=0, **kwargs):
    torch.manual_seed(seed)
    return model_cls(**kwargs).eval()


def export(model, batch=3):
    inputs = example_inputs(model, batch, seed=batch)
    return torch.export.export(model, inputs), inputs


def first_node(graph, op):
    return next((i, n.outputs[0].name) for i, n in enumerate(graph.nodes) if n.op == op)


def last_op_of_encoder() -> str:
    ep, _ = export(make(EncoderBlock))
    return serialize_exported(ep, "")[0].graph.nodes[-1].op


@pytest.fixture(scope="module")
def gelu_kilnd(tmp_path_factory):
    """kilnd whose gelu lowering is wrong (set by flag)."""
    work = tmp_path_factory.mktemp("kilnd-miscompile-gelu")
    daemon = Kilnd(work, work / "cache", name="kilnd-gelu",
                   extra_args=("--debug-miscompile", GELU)).start()
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.fixture(scope="module")
def last_op_kilnd(tmp_path_factory):
    """kilnd whose lowering of the encoder block's last op is wrong (set by
    environment variable)."""
    work = tmp_path_factory.mktemp("kilnd-miscompile-last")
    op = last_op_of_encoder()
    daemon = Kilnd(work, work / "cache", name="kilnd-last",
                   env={"KILN_DEBUG_MISCOMPILE": op}).start()
    daemon.miscompiled_op = op
    yield daemon
    daemon.assert_stops_cleanly()


@pytest.mark.parametrize("model_cls,kwargs", [(MLP, {}), (MLP, {"approximate": "tanh"}),
                                              (EncoderBlock, {})],
                         ids=["mlp", "mlp-tanh", "encoder"])
def test_verify_passes_on_the_spine_models(client, model_cls, kwargs):
    model = make(model_cls, **kwargs)
    ep, inputs = export(model)
    compiled = client.compile(ep, target="cpu", verify=True)
    out = compiled(*inputs)
    report = compiled.last_verification
    assert report.passed and not report.probes
    assert len(report.outputs) == len(compiled.graph.outputs)
    torch.testing.assert_close(out, model(*inputs), rtol=1e-3, atol=1e-5)


def test_backend_verify_passes(kilnd):
    model = make(EncoderBlock)
    x = example_inputs(model, 2)[0]
    backend = kiln.backend(kilnd.address, verify=True)
    out = torch.compile(model, backend=backend)(x)
    torch.testing.assert_close(out, model(x), rtol=1e-3, atol=1e-5)
    assert [g.last_verification.passed for g in backend.compiled_graphs] == [True]


def test_the_injected_fault_is_real(gelu_kilnd):
    # Without verify the miscompiled daemon silently returns wrong numbers.
    model = make(MLP)
    ep, inputs = export(model)
    with kiln.Client(gelu_kilnd.address) as c:
        out = c.compile(ep)(*inputs)
    assert not torch.allclose(out, model(*inputs), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("model_cls", [MLP, EncoderBlock], ids=["mlp", "encoder"])
def test_verify_names_the_miscompiled_gelu(gelu_kilnd, model_cls):
    model = make(model_cls)
    ep, inputs = export(model)
    with kiln.Client(gelu_kilnd.address) as c:
        compiled = c.compile(ep, verify=True)
        with pytest.raises(kiln.VerificationError) as info:
            compiled(*inputs)
    err = info.value
    index, name = first_node(compiled.graph, GELU)
    assert (err.index, err.node, err.op) == (index, name, GELU)
    assert err.output == name
    assert err.max_abs_error > 1e-3
    assert f"node {index} '{name}' ({GELU})" in str(err)
    assert "every value it reads matches the reference" in str(err)
    assert isinstance(err, kiln.KilnError) and err.code is None
    report = err.report
    producers = {o.name: i for i, n in enumerate(compiled.graph.nodes) for o in n.outputs}
    m = min(producers[o] for o in compiled.graph.outputs)
    assert 1 <= len(report.probes) <= math.ceil(math.log2(m + 1)) + 1
    print(f"\n{model_cls.__name__}: {len(compiled.graph.nodes)} nodes, "
          f"{len(report.probes)} probes, {report.compiles} compiled, "
          f"{report.seconds:.2f}s\n{err}")


def test_second_verify_reuses_the_probe_compiles(gelu_kilnd):
    ep, inputs = export(make(EncoderBlock), batch=4)
    with kiln.Client(gelu_kilnd.address) as c:
        compiled = c.compile(ep)
        errors = []
        for _ in range(2):
            with pytest.raises(kiln.VerificationError) as info:
                compiled(*inputs, verify=True)
            errors.append(info.value)
    first, second = errors
    assert first.node == second.node
    assert len(first.report.probes) == len(second.report.probes)
    assert second.report.compiles == 0
    assert all(p.cache_hit for p in second.report.probes)


def test_backend_verify_names_gelu_despite_eager_fallback(gelu_kilnd):
    model = make(MLP)
    x = example_inputs(model, 2)[0]
    backend = kiln.backend(gelu_kilnd.address, verify=True, fallback="eager")
    with pytest.raises(kiln.VerificationError, match=GELU) as info:
        torch.compile(model, backend=backend)(x)
    assert info.value.op == GELU


def test_verify_on_the_last_op_finds_its_first_use(last_op_kilnd):
    op = last_op_kilnd.miscompiled_op
    ep, inputs = export(make(EncoderBlock))
    with kiln.Client(last_op_kilnd.address) as c:
        compiled = c.compile(ep, verify=True)
        with pytest.raises(kiln.VerificationError) as info:
            compiled(*inputs)
    index, name = first_node(compiled.graph, op)
    assert (info.value.index, info.value.node, info.value.op) == (index, name, op)


def test_miscompiled_executables_never_share_cache_entries(tmp_path):
    ep, inputs = export(make(MLP))
    keys = []
    for name, extra in (("honest", ()), ("miscompiled", ("--debug-miscompile", GELU))):
        d = Kilnd(tmp_path, tmp_path / "cache", name=name,
                  extra_args=("--cache-salt", "verify-e2e", *extra)).start()
        try:
            with kiln.Client(d.address) as c:
                compiled = c.compile(ep)
                assert not compiled.cache_hit
                keys.append(compiled.compile_key)
        finally:
            d.assert_stops_cleanly()
    assert keys[0] != keys[1]


def test_flag_is_documented_and_checked():
    kilnd = require_binaries() / "kilnd"
    help_text = subprocess.run([str(kilnd), "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    assert "--debug-miscompile  [env KILN_DEBUG_MISCOMPILE" in help_text
    assert "(default: none)" in help_text.split("--debug-miscompile")[1].splitlines()[0]
    bad = subprocess.run([str(kilnd), "--debug-miscompile=gelu"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode != 0
    assert "'gelu' is not an op overload name" in bad.stdout + bad.stderr
