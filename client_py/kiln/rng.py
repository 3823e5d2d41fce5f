"""Kiln's RNG contract on the client side (docs/architecture.md, "Random
numbers").

A graph with random ops (the ATen ops torch tags ``nondeterministic_seeded``:
``rand``, ``randn``, ``bernoulli``, ``native_dropout``, ``multinomial``...)
takes one more input, an int64 0-d tensor named :data:`SEED_INPUT`, which each
random node reads through its :data:`SEED_ARGUMENT` argument. The target
computes Philox4x32-10 keyed by it, so the numbers follow eager's
distributions but not eager's values.

Every call of a compiled model fills the seed with a fresh draw from torch's
default CPU generator (:func:`fresh_seed`). ``torch.manual_seed(s)`` before a
sequence of calls therefore repeats Kiln's numbers, on every target and CPU,
and each call advances torch's generator as a random op in eager would.
"""

from __future__ import annotations

from typing import Any

import torch

from kiln.v1 import graph_pb2

__all__ = ["SEED_ARGUMENT", "SEED_INPUT", "fresh_seed", "is_random", "random_nodes",
           "seed_input_of", "seeded"]

#: The node argument that names the graph's seed input.
SEED_ARGUMENT = "kiln_seed"
#: The name the client gives the seed input (made unique within a graph).
SEED_INPUT = "kiln_rng_seed"


def is_random(op: Any) -> bool:
    """True for an ATen op overload that draws random numbers."""
    return isinstance(op, torch._ops.OpOverload) and \
        torch.Tag.nondeterministic_seeded in op.tags


def random_nodes(graph: graph_pb2.Graph) -> list[int]:
    """Indices of the graph's nodes that read the seed."""
    return [i for i, node in enumerate(graph.nodes)
            if any(a.name == SEED_ARGUMENT for a in node.arguments)]


def seed_input_of(graph: graph_pb2.Graph) -> str | None:
    """The name of the input the graph's random nodes read, or None."""
    for node in graph.nodes:
        for argument in node.arguments:
            if argument.name == SEED_ARGUMENT and argument.WhichOneof("kind") == "value":
                return argument.value
    return None


def fresh_seed() -> torch.Tensor:
    """A seed for one call: 63 bits from torch's default CPU generator."""
    return torch.randint(0, 2**63 - 1, (), dtype=torch.int64)


def seeded(seed: torch.Tensor, node_index: int) -> int:
    """The torch seed a host run of random node ``node_index`` uses under
    the call's ``seed`` (CPU segments and the reference): a value of the
    seed, so a run is repeatable, but not Kiln's Philox numbers."""
    return (int(seed) * 0x9E3779B97F4A7C15 + node_index) % (2**63 - 1)
