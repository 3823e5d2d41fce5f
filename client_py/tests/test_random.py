"""Kiln's RNG contract on the client (kiln.rng): the serialiser gives a graph
with random ops one seed input that every random node names; host runs of
those nodes (CPU segments, the reference) seed torch from it."""

import torch
from torch import nn

from kiln.graph import serialize_graph_module
from kiln.reference import run_reference
from kiln.rng import SEED_ARGUMENT, fresh_seed, random_nodes, seed_input_of
from kiln.v1 import tensor_pb2


def serialize(model, *args):
    ep = torch.export.export(model, args).run_decompositions()
    return serialize_graph_module(ep.graph_module).graph


class Noisy(nn.Module):
    def forward(self, x):
        return x + torch.randn_like(x), nn.functional.dropout(x, 0.5, training=True), x * 2


def test_random_nodes_name_one_seed_input_after_the_placeholders():
    graph = serialize(Noisy(), torch.rand(3))
    assert [v.name for v in graph.inputs] == ["x", "kiln_rng_seed"]
    seed = graph.inputs[1]
    assert seed.type.dtype == tensor_pb2.DTYPE_I64 and list(seed.type.shape) == []
    drawn = random_nodes(graph)
    assert sorted(graph.nodes[i].op for i in drawn) == [
        "aten.native_dropout.default", "aten.randn_like.default"]
    for i, node in enumerate(graph.nodes):
        names = [a.value for a in node.arguments if a.name == SEED_ARGUMENT]
        assert names == (["kiln_rng_seed"] if i in drawn else [])
    assert seed_input_of(graph) == "kiln_rng_seed"


def test_a_graph_without_random_ops_has_no_seed():
    class Plain(nn.Module):
        def forward(self, x):
            return x * 2

    graph = serialize(Plain(), torch.rand(3))
    assert [v.name for v in graph.inputs] == ["x"] and seed_input_of(graph) is None


def test_the_seed_input_takes_a_free_name():
    class Named(nn.Module):
        def forward(self, kiln_rng_seed):
            return kiln_rng_seed + torch.rand_like(kiln_rng_seed)

    graph = serialize(Named(), torch.rand(2))
    assert [v.name for v in graph.inputs] == ["kiln_rng_seed", "kiln_rng_seed_1"]
    assert seed_input_of(graph) == "kiln_rng_seed_1"


def test_fresh_seed_follows_torchs_generator():
    torch.manual_seed(4)
    a, b = fresh_seed(), fresh_seed()
    torch.manual_seed(4)
    assert int(fresh_seed()) == int(a) and int(a) != int(b)
    assert a.dtype == torch.int64 and a.dim() == 0 and int(a) >= 0


def test_host_runs_of_random_nodes_repeat_under_one_seed():
    x = torch.rand(1000) + 1.0
    graph = serialize(Noisy(), x)

    def run(seed):
        values = run_reference(graph, [x, torch.tensor(seed)], {})
        return [values[n] for n in graph.outputs]

    first, again, other = run(5), run(5), run(6)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0])
    assert torch.equal(first[2], x * 2)
    kept = first[1] != 0
    torch.testing.assert_close(first[1][kept], x[kept] * 2.0)
