"""Placement and CPU fallback against a real kilnd.

The model below uses three nodes of an op Kiln does not compile
(``lacked_ops``) between ops it does. Under the default policy the
compile fails naming all three; with ``fallback="cpu"`` the daemon
partitions the graph into target executables and CPU runs, reports where
every op runs and why, and the client runs the partition, matching eager.
"""

from __future__ import annotations

import logging

import grpc
import pytest
import torch

import kiln
from kiln.testing import MLP
from kiln.v1 import compiler_pb2, placement_pb2
from lacked_ops import LACKED_NAME, LACKED_OP, lacked

LACKED = {LACKED_OP}
RTOL, ATOL = 1e-4, 1e-5


class Mixed(torch.nn.Module):
    """Linear layers around ops Kiln lacks; two outputs."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(8, 16)
        self.second = torch.nn.Linear(16, 8)

    def forward(self, x):
        h = torch.relu(self.first(x))
        a = lacked(h + 1.0, -h)                              # lacked
        m = lacked(h + 1.0, h - 2.0).amax(dim=1)             # lacked
        y = self.second(a) + m[:, None]
        z = lacked(torch.tanh(h) * 0.5 + 0.5, h)             # lacked
        return y, z.sum(dim=1)


def exported(batch=4):
    torch.manual_seed(3)
    model = Mixed().eval()
    x = torch.randn(batch, 8)
    return model, torch.export.export(model, (x,)), x


def assert_matches_eager(model, x, got):
    with torch.no_grad():
        want = model(x)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=RTOL, atol=ATOL)


def test_error_policy_names_every_op_the_target_lacks(client):
    _, ep, _ = exported()
    with pytest.raises(kiln.UnimplementedError) as err:
        client.compile(ep, target="cpu")
    message = str(err.value)
    assert err.value.code == grpc.StatusCode.UNIMPLEMENTED
    assert "target 'cpu' cannot compile 3 of" in message
    for op in LACKED:
        assert f"({op}): unsupported op '{op}'" in message
    assert 'fallback="cpu"' in message


def test_cpu_fallback_partitions_reports_and_matches_eager(client, caplog):
    model, ep, x = exported()
    with caplog.at_level(logging.WARNING, logger="kiln.placement"):
        compiled = client.compile(ep, target="cpu", fallback="cpu")
    assert compiled.partitioned
    placement = compiled.placement
    assert {n.op for n in placement.cpu_nodes} == LACKED
    assert all(n.reason.startswith(f"unsupported op '{n.op}'") for n in placement.cpu_nodes)
    total = len(compiled.graph.nodes)
    assert placement.message.cpu_nodes == 3
    assert placement.message.target_nodes == total - 3
    assert placement.fallback_fraction == pytest.approx(3 / total)
    # Every node is in exactly the segment the report says, and segments
    # alternate target and CPU (the CPU ops are clustered: at most 2 CPU runs).
    kinds = [s.placement for s in placement.segments]
    assert all(a != b for a, b in zip(kinds, kinds[1:]))
    assert kinds.count(placement_pb2.PLACEMENT_CPU) <= 2
    layer_units = {layer.name: layer.unit for layer in compiled.op_report}
    for n in placement.nodes:
        assert n.node in placement.segments[n.segment].nodes
        assert (n.placement == "cpu") == (n.op in LACKED)
        # What runs it: PyTorch on the CPU; on the target its op report
        # layer's unit (none for a node that compiles to no code of its own:
        # torch 2.5's export has a full slice).
        assert n.unit == ("pytorch" if n.placement == "cpu" else layer_units.get(n.name, "")), n
    assert {"onednn", "generated"} <= set(placement.units()), placement.units()
    for s in placement.segments:
        if s.placement == placement_pb2.PLACEMENT_TARGET:
            assert len(s.executable.hash) == 64 and s.manifest.target == "cpu"
        else:
            assert not s.executable.hash
    # Nothing falls back silently: one WARNING names every CPU op.
    warnings = [r.getMessage() for r in caplog.records if r.name == "kiln.placement"]
    assert len(warnings) == 1
    assert "3 of" in warnings[0] and all(op in warnings[0] for op in LACKED)
    assert "segment" in str(placement) and LACKED_NAME in str(placement)

    y, z = compiled(x)
    assert_matches_eager(model, x, (y, z))
    assert compiled.last_timings["cpu"] > 0.0
    # The op report covers the target segments: both linear layers' MACs.
    assert compiled.op_report.totals.macs == 4 * 8 * 16 + 4 * 16 * 8

    again = client.compile(ep, target="cpu", fallback="cpu")
    assert again.cache_hit
    assert [s.executable.hash for s in again.placement.segments] == \
        [s.executable.hash for s in placement.segments]
    x2 = torch.randn(4, 8)
    assert_matches_eager(model, x2, again(x2))


class ConvBnLacked(torch.nn.Module):
    """Batch norm's placeholder results (saved statistics nobody reads) and
    max pooling's indices must not trip the per-node check."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv(x))))
        return lacked(h + 1.0, h).sum(dim=(2, 3)) + h.mean()


def test_cpu_fallback_with_batch_norm_and_pooling(client):
    torch.manual_seed(5)
    model = ConvBnLacked().eval()
    model.bn.running_mean.uniform_(-0.5, 0.5)
    model.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, 8, 8)
    compiled = client.compile(torch.export.export(model, (x,)), fallback="cpu")
    assert [n.op for n in compiled.placement.cpu_nodes] == [LACKED_OP]
    torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


def test_partitioned_compiles_are_counted_in_metrics(kilnd, client):
    import urllib.request
    from test_e2e_metrics import sample

    def scrape():
        url = f"http://127.0.0.1:{kilnd.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            text = resp.read().decode()
        return (sample(text, "kiln_partitioned_compiles_total", target="cpu") or 0.0,
                sample(text, "kiln_fallback_nodes_total", target="cpu") or 0.0)

    _, ep, _ = exported()
    compiles, nodes = scrape()
    client.compile(ep, fallback="cpu")
    assert scrape() == (compiles + 1, nodes + 3)


def test_a_partitioned_compile_is_one_call_into_the_compiler(client):
    """The compiler answers in one call: the whole graph's compile fails for
    the ops the target lacks, and the same worker process checks every node,
    partitions the graph and compiles each target segment. kilnd caches the
    segments it carried; nothing else is compiled."""
    torch.manual_seed(5)
    model = Mixed().eval()
    x = torch.randn(3, 8)  # a batch no other test compiles: every key is new
    ep = torch.export.export(model, (x,))
    before = client.cache.stats()
    compiled = client.compile(ep, target="cpu", fallback="cpu")
    after = client.cache.stats()
    targets = [s for s in compiled.placement.message.segments
               if s.placement == placement_pb2.PLACEMENT_TARGET]
    assert len(targets) >= 2
    assert all(s.executable.hash and not s.cache_hit for s in targets)
    assert after.compile_misses == before.compile_misses + 1
    assert_matches_eager(model, x, compiled(x))
    # A repeat is all hits: the stored placement and the cached segments.
    again = client.compile(ep, target="cpu", fallback="cpu")
    assert again.cache_hit
    assert client.cache.stats().compile_misses == after.compile_misses


class LackedOpOfWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(4, 8) + 0.5)

    def forward(self, x):
        return lacked(self.w, self.w) * x


def test_cpu_segments_read_weights_from_the_store_when_not_given(client):
    """A raw Graph compile holds no weight tensors: a CPU node reading a
    parameter gets it from the daemon's store, by digest."""
    from kiln.export import serialize_exported
    torch.manual_seed(4)
    model = LackedOpOfWeight().eval()
    x = torch.randn(4, 8)
    serialized, _, _ = serialize_exported(torch.export.export(model, (x,)), "w")
    client.blobs.ensure_tensors(list(serialized.parameters.values()))
    compiled = client.compile_graph(serialized.graph,
                                    placement=placement_pb2.PlacementPolicy(
                                        fallback=placement_pb2.FALLBACK_POLICY_CPU))
    assert compiled.partitioned
    torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


def test_max_fallback_fraction_is_enforced(client):
    model, ep, x = exported()
    with pytest.raises(kiln.UnimplementedError, match="over placement.max_fallback_fraction 0.05"):
        client.compile(ep, target="cpu", fallback="cpu", max_fallback_fraction=0.05)
    compiled = client.compile(ep, target="cpu", fallback="cpu", max_fallback_fraction=0.5)
    assert_matches_eager(model, x, compiled(x))


def test_a_graph_the_target_compiles_is_one_target_segment(client):
    torch.manual_seed(0)
    model = MLP(d_in=8, d_hidden=16, d_out=4).eval()
    x = torch.randn(3, 8)
    compiled = client.compile(torch.export.export(model, (x,)), fallback="cpu")
    assert not compiled.partitioned
    placement = compiled.placement
    assert placement.summary() == f"all {len(compiled.graph.nodes)} ops run on target 'cpu'"
    assert len(placement.segments) == 1
    assert placement.segments[0].executable.hash == compiled.digest
    # The fallback policy is not part of the compile key.
    assert client.compile(torch.export.export(model, (x,))).compile_key == compiled.compile_key
    torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


def test_verify_checks_a_partitioned_model(client):
    model, ep, x = exported()
    compiled = client.compile(ep, fallback="cpu", verify=True)
    assert_matches_eager(model, x, compiled(x))
    assert compiled.last_verification is not None


def test_torch_compile_backend_with_cpu_fallback(kilnd, caplog):
    model, _, x = exported()
    backend = kiln.backend(kilnd.address, fallback="cpu")
    fast = torch.compile(model, backend=backend)
    # Inference: torch 2.5's AOT autograd traces the backward of a graph
    # whose parameters require grad.
    with caplog.at_level(logging.WARNING, logger="kiln.placement"), torch.no_grad():
        got = fast(x)
    assert_matches_eager(model, x, got)
    (spec,) = backend.compiled_graphs[0].specializations
    assert spec.partitioned
    assert {n.op for n in spec.placement.cpu_nodes} == LACKED
    assert any("run on the host CPU" in r.getMessage() for r in caplog.records)


def test_bad_policies_are_invalid_argument(client):
    _, ep, _ = exported()
    from kiln.export import serialize_exported
    serialized, _, _ = serialize_exported(ep, "mixed")
    client.blobs.ensure_tensors(list(serialized.parameters.values()))
    for policy, why in [
        (placement_pb2.PlacementPolicy(fallback=placement_pb2.FALLBACK_POLICY_CPU,
                                       max_fallback_fraction=1.5), "must be in 0..1"),
        (placement_pb2.PlacementPolicy(fallback=9), "placement.fallback: unknown value 9"),
        (placement_pb2.PlacementPolicy(max_fallback_fraction=0.5), "is not FALLBACK_POLICY_CPU"),
    ]:
        with pytest.raises(kiln.InvalidArgumentError, match=why):
            client.compile_graph(serialized.graph, placement=policy)
    with pytest.raises(ValueError, match="fallback must be one of"):
        client.compile(ep, fallback="gpu")


def test_raw_grpc_response_carries_the_placement(client):
    """What a non-Python client sees: the report in CompileResponse.placement."""
    _, ep, _ = exported()
    from kiln.export import serialize_exported
    serialized, _, _ = serialize_exported(ep, "mixed")
    client.blobs.ensure_tensors(list(serialized.parameters.values()))
    request = compiler_pb2.CompileRequest(
        graph=serialized.graph, target="cpu",
        placement=placement_pb2.PlacementPolicy(fallback=placement_pb2.FALLBACK_POLICY_CPU))
    response = client._rpc.compiler.Compile(request, timeout=300)
    assert not response.executable.hash
    assert response.placement.cpu_nodes == 3
    assert len(response.placement.nodes) == len(serialized.graph.nodes)


class Whitened(torch.nn.Module):
    """A linear layer, then a solve against its own Gram matrix and that
    matrix's LDL factor: torch exports both error checks through an effect
    token, and Kiln compiles both."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, x):
        h = self.proj(x)
        gram = h.mT @ h + torch.eye(4)
        return torch.linalg.solve(gram, h.mT).mT * 2, torch.linalg.ldl_factor(gram)[0] + 1


def test_an_ldl_factor_compiles_whole_with_its_check_dropped(client):
    """The check's effect token never reaches kilnd, and the factorisation
    compiles with the rest: one graph on the target, matching eager."""
    torch.manual_seed(5)
    model, x = Whitened().eval(), torch.randn(5, 6)
    compiled = client.compile(torch.export.export(model, (x,)), target="cpu")
    assert not compiled.partitioned
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=RTOL, atol=ATOL)


class WhitenedPastTheBound(torch.nn.Module):
    """An LDL factorisation past the loops' order bound (512), beside a
    projection Kiln compiles."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, x, a):
        return self.proj(x) * 2, torch.linalg.ldl_factor(a + a.mT)[0] + 1


def test_an_ldl_factor_past_the_bound_runs_on_the_cpu_around_its_dropped_check(client):
    """Without fallback the compile names the factorisation Kiln cannot
    take; with it that runs in PyTorch (its check's effect token dropped)
    and the rest on the target, matching eager."""
    torch.manual_seed(5)
    model = WhitenedPastTheBound().eval()
    x, a = torch.randn(5, 6), torch.randn(520, 520, dtype=torch.float64)
    ep = torch.export.export(model, (x, a))
    with pytest.raises(kiln.UnimplementedError) as err:
        client.compile(ep, target="cpu")
    assert "linalg_ldl_factor_ex" in str(err.value) and "at most 512" in str(err.value)
    compiled = client.compile(ep, target="cpu", fallback="cpu")
    assert compiled.partitioned
    assert all("ldl" in n.op for n in compiled.placement.cpu_nodes), compiled.placement.cpu_nodes
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, a), model(x, a), rtol=RTOL, atol=ATOL)


class PastTheOrderBound(torch.nn.Module):
    """svdvals and eigvalsh of matrices past the factorisation loops' order
    bound (512): torch exports them with vectors nothing reads."""

    def forward(self, a):
        square = a[:520, :520]
        return torch.linalg.svdvals(a * 2) + 1, torch.linalg.eigvalsh(square + square.mT)


def test_values_past_the_order_bound_run_on_the_cpu_with_their_vectors_left_out(client):
    """The unread vectors travel unnamed; under fallback the two nodes run
    in PyTorch, whose vectors nothing reads, and the rest on the target."""
    torch.manual_seed(6)
    model, a = PastTheOrderBound().eval(), torch.randn(600, 530, dtype=torch.float64)
    ep = torch.export.export(model, (a,))
    with pytest.raises(kiln.UnimplementedError) as err:
        client.compile(ep, target="cpu")
    assert "at most 512" in str(err.value)
    # Named by its first named result (its first, U, travels unnamed).
    assert "'' (aten._linalg_svd" not in str(err.value), err.value
    compiled = client.compile(ep, target="cpu", fallback="cpu")
    assert all(n.name for n in compiled.placement.cpu_nodes), compiled.placement.cpu_nodes
    assert sorted(n.op for n in compiled.placement.cpu_nodes) == [
        "aten._linalg_eigh.default", "aten._linalg_svd.default"]
    for got, want in zip(compiled(a), model(a)):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
