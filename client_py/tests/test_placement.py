"""kiln.placement without a daemon: the policy message, and the report's
summary and table as a user reads them."""

from __future__ import annotations

import pytest

from kiln.placement import PlacementReport, placement_policy
from kiln.v1 import placement_pb2 as pb

TARGET, CPU = pb.PLACEMENT_TARGET, pb.PLACEMENT_CPU


def report(cpu_ops: int = 1) -> PlacementReport:
    m = pb.PlacementReport(target="riscv64")
    m.nodes.add(node=0, name="mm", op="aten.mm.default", placement=TARGET, segment=0)
    for i in range(cpu_ops):
        m.nodes.add(node=1 + i, name=f"lg{i}", op="aten.ldexp.Tensor", placement=CPU,
                    reason="unsupported op 'aten.ldexp.Tensor'", segment=1)
    m.segments.add(placement=TARGET, nodes=[0], inputs=["w", "x"], outputs=["mm"],
                   executable={"hash": "ab" * 32, "size_bytes": 10})
    m.segments.add(placement=CPU, nodes=list(range(1, 1 + cpu_ops)), inputs=["mm"],
                   outputs=[f"lg{cpu_ops - 1}"])
    m.target_nodes, m.cpu_nodes = 1, cpu_ops
    m.fallback_fraction = cpu_ops / (1 + cpu_ops)
    return PlacementReport(m)


def test_policy_messages():
    assert placement_policy().fallback == pb.FALLBACK_POLICY_ERROR
    assert not placement_policy("cpu").HasField("max_fallback_fraction")
    capped = placement_policy("cpu", 0.25)
    assert capped.fallback == pb.FALLBACK_POLICY_CPU and capped.max_fallback_fraction == 0.25
    assert placement_policy("cpu", 0).HasField("max_fallback_fraction")  # 0 is a cap, not unset


@pytest.mark.parametrize("kwargs, why", [
    ({"fallback": "eager"}, "fallback must be one of error, cpu"),
    ({"fallback": "error", "max_fallback_fraction": 0.5}, "needs fallback='cpu'"),
    ({"fallback": "cpu", "max_fallback_fraction": 1.01}, "must be in 0..1"),
    ({"fallback": "cpu", "max_fallback_fraction": -0.1}, "must be in 0..1"),
])
def test_bad_policies_raise_value_error(kwargs, why):
    with pytest.raises(ValueError, match=why):
        placement_policy(**kwargs)


def test_summary_names_the_cpu_ops_and_their_reasons():
    r = report()
    assert r.partitioned
    assert [n.name for n in r.cpu_nodes] == ["lg0"]
    assert r.summary() == (
        "1 of 2 ops (50.0%) run on the host CPU with PyTorch instead of target 'riscv64', "
        "in 2 segments: node 1 'lg0' (aten.ldexp.Tensor): unsupported op "
        "'aten.ldexp.Tensor'")


def test_summary_stops_naming_after_five():
    text = report(cpu_ops=8).summary()
    assert text.count("unsupported op") == 5 and text.endswith("; and 3 more")


def test_table_lists_segments_and_cpu_nodes():
    lines = str(report()).splitlines()
    assert lines[0] == ("placement on target 'riscv64': 1 target ops, 1 CPU ops "
                        "(fallback fraction 0.500)")
    assert lines[1].startswith("  segment 0: target    1 ops executable abababababab")
    assert "reads w, x  -> mm" in lines[1]
    assert lines[2].startswith("  segment 1: cpu       1 ops  reads mm  -> lg0")
    assert lines[3] == ("  cpu  node 1 'lg0' (aten.ldexp.Tensor): "
                        "unsupported op 'aten.ldexp.Tensor'")


def test_units_say_what_runs_each_node():
    m = pb.PlacementReport(target="acap", target_nodes=3, cpu_nodes=1)
    m.nodes.add(node=0, name="conv", placement=TARGET, unit="aie")
    m.nodes.add(node=1, name="pool", placement=TARGET, unit="generated")
    m.nodes.add(node=2, name="relu", placement=TARGET, unit="aie")
    m.nodes.add(node=3, name="lg", placement=CPU, unit="pytorch", reason="unsupported")
    r = PlacementReport(m)
    assert r.units() == {"aie": ["conv", "relu"], "generated": ["pool"], "pytorch": ["lg"]}
    assert [n.unit for n in r.nodes] == ["aie", "generated", "aie", "pytorch"]
    lines = str(r).splitlines()
    assert lines[-3:] == ["  unit aie           2 ops: conv, relu",
                          "  unit generated     1 ops: pool",
                          "  unit pytorch       1 ops: lg"]
    assert PlacementReport(pb.PlacementReport()).units() == {}
    # A dead node (no unit) is left out; a long list stops after twelve.
    m.nodes.add(node=4, name="dead", placement=TARGET, segment=-1)
    for i in range(13):
        m.nodes.add(node=5 + i, name=f"r{i}", placement=TARGET, unit="aie")
    r = PlacementReport(m)
    assert "dead" not in str(r)
    assert str(r).splitlines()[-3].endswith("r8, r9, and 3 more")


def test_a_whole_graph_is_not_partitioned():
    m = pb.PlacementReport(target="cpu", target_nodes=2)
    m.nodes.add(node=0, placement=TARGET)
    m.nodes.add(node=1, placement=TARGET)
    m.segments.add(placement=TARGET, nodes=[0, 1])
    r = PlacementReport(m)
    assert not r.partitioned and r.cpu_nodes == []
    assert r.summary() == "all 2 ops run on target 'cpu'"
