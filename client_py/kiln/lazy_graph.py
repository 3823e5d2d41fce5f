"""Recorded ATen operations, cut into graphs that Kiln compiles and runs.

The lazy device (:mod:`kiln.device`) and :func:`kiln.capture_function` do
not run operations when they are called. Each becomes a :class:`LazyNode`:
the ATen op, its arguments (other nodes' outputs appear as :class:`Ref`) and
the meta tensors that give its outputs' shapes and dtypes. A node with no op
is a *leaf*: a value that exists, on the host or resident on a device.

When a value is needed, :class:`GraphCut` takes the pending nodes it depends
on, in the order they were recorded, and makes them one graph: the leaves
they read are its inputs, the requested values and every other value still
referenced (by a live tensor or a node outside the cut) are its outputs.
The graph is traced with ``make_fx`` through Kiln's decompositions, so the
daemon sees the same core-ATen graphs as from ``torch.export``, compiled
once per structure (the daemon's cache, and a client-side map keyed by the
cut's structure), and run. Its outputs become leaves; the nodes before them
are dropped.
"""

from __future__ import annotations

import collections
import functools
import itertools
import weakref
from typing import Any, Callable, NamedTuple, Sequence

import torch

__all__ = ["LazyNode", "Ref", "GraphCut", "meta_of", "leaves", "map_leaves"]

_serials = itertools.count()
_CLONE = torch.ops.aten.clone.default


@functools.cache
def decompositions() -> Any:
    """Kiln's decomposition table, built once per process (it is read on
    every compile and by every mutating op without a functional form)."""
    from kiln.export import decomposition_table
    return decomposition_table()


def meta_of(value: torch.Tensor) -> torch.Tensor:
    """A contiguous meta tensor with ``value``'s shape and dtype."""
    return torch.empty(value.shape, dtype=value.dtype, device="meta")


class LazyNode:
    """One recorded op, or a leaf that holds values."""

    __slots__ = ("serial", "op", "args", "kwargs", "metas", "values", "held",
                 "consumers", "holders", "__weakref__")

    def __init__(self, op: Callable[..., Any] | None, args: tuple, kwargs: dict,
                 metas: list[torch.Tensor], values: list[torch.Tensor] | None = None):
        #: Creation order: a node's arguments always have smaller serials.
        self.serial = next(_serials)
        self.op = op
        self.args = args
        self.kwargs = kwargs
        #: One meta tensor per tensor output, in pytree order.
        self.metas = metas
        #: Per output, once the node ran: its host value (None while only
        #: the device has it). Always set for a host leaf.
        self.values: list[Any] | None = values
        #: Per output, once the node ran: the device's HeldTensor handle
        #: (None when only the host has the value).
        self.held: list[Any] | None = None
        #: Pending nodes that read this one.
        self.consumers: weakref.WeakSet[LazyNode] = weakref.WeakSet()
        #: Storages (kiln.lazy_tensor) that stand for one of its outputs.
        self.holders: weakref.WeakSet[Any] = weakref.WeakSet()
        for ref in refs_in((args, kwargs)):
            ref.node.consumers.add(self)

    @classmethod
    def leaf(cls, value: torch.Tensor) -> "LazyNode":
        return cls(None, (), {}, [meta_of(value)], [value])

    @property
    def pending(self) -> bool:
        return self.values is None

    def materialised(self, values: list[Any], held: list[Any] | None = None) -> None:
        """The node ran: it becomes a leaf. ``values`` per output (None where
        only the device holds it), ``held`` the device's handles."""
        self.values, self.held = values, held
        self.op, self.args, self.kwargs = None, (), {}

    def __repr__(self) -> str:
        what = "leaf" if self.op is None else str(self.op)
        return f"LazyNode#{self.serial}({what})"


class Ref(NamedTuple):
    """Output ``index`` of ``node``."""
    node: LazyNode
    index: int

    @property
    def meta(self) -> torch.Tensor:
        return self.node.metas[self.index]

    @property
    def key(self) -> tuple[int, int]:
        return (id(self.node), self.index)


def leaves(tree: Any) -> list[Any]:
    """The leaves of ATen arguments or results (tuples, lists and dicts;
    a Ref is a leaf). Cheaper than pytree on the recording path."""
    kind = type(tree)
    if kind is tuple or kind is list or (isinstance(tree, tuple) and kind is not Ref):
        out: list[Any] = []
        for item in tree:
            out.extend(leaves(item))
        return out
    if kind is dict:
        return leaves(list(tree.values()))
    return [tree]


def map_leaves(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with every leaf replaced by ``fn(leaf)`` (see :func:`leaves`)."""
    kind = type(tree)
    if kind is tuple or kind is list:
        return kind(map_leaves(fn, item) for item in tree)
    if isinstance(tree, tuple) and kind is not Ref:  # torch.return_types
        return kind([map_leaves(fn, item) for item in tree])
    if kind is dict:
        return {k: map_leaves(fn, v) for k, v in tree.items()}
    return fn(tree)


def refs_in(tree: Any) -> list[Ref]:
    return [leaf for leaf in leaves(tree) if type(leaf) is Ref]


def _map_refs(fn: Callable[[Ref], Any], tree: Any) -> Any:
    return map_leaves(lambda x: fn(x) if type(x) is Ref else x, tree)


class GraphCut:
    """The pending nodes that ``wanted`` depends on, as one graph.

    ``keep_live`` adds every other value of the cut that something still
    references as an output, so it is not computed twice; ``get_mlir`` leaves
    it off to show exactly the graph of what it was asked about.
    ``leading_inputs`` are graph inputs ahead of the rest, used or not.
    """

    def __init__(self, wanted: Sequence[Ref], keep_live: bool = True,
                 leading_inputs: Sequence[Ref] = ()):
        nodes: dict[int, LazyNode] = {}
        stack = [r.node for r in wanted if r.node.pending]
        while stack:
            node = stack.pop()
            if id(node) in nodes:
                continue
            nodes[id(node)] = node
            stack.extend(r.node for r in refs_in((node.args, node.kwargs)) if r.node.pending)
        self.nodes = sorted(nodes.values(), key=lambda n: n.serial)
        # Declared arguments first, in their order (kiln.capture_function).
        inputs: dict[tuple[int, int], Ref] = {r.key: r for r in leading_inputs}
        for node in self.nodes:
            for ref in refs_in((node.args, node.kwargs)):
                if not ref.node.pending:
                    inputs.setdefault(ref.key, ref)
        #: Values the graph reads, in Graph.inputs order.
        self.inputs = list(inputs.values())
        outputs: dict[tuple[int, int], Ref] = {}
        for ref in wanted:  # with its node's other outputs, so the node settles
            if not ref.node.pending:
                continue  # a value that exists already
            outputs[ref.key] = ref
            if keep_live:
                for i in range(len(ref.node.metas)):
                    outputs.setdefault((id(ref.node), i), Ref(ref.node, i))
        if keep_live:
            for node in self.nodes:
                if self._referenced_after(node, nodes):
                    for i in range(len(node.metas)):
                        outputs.setdefault((id(node), i), Ref(node, i))
        #: Host values that will be read again (a live tensor holds them):
        #: the graph also returns a copy of each, for the device to keep, so
        #: they travel once (a model's weights, a batch used every step).
        #: Copy output key → the input it copies.
        self.uploads: dict[tuple[int, int], Ref] = {}
        if keep_live:
            for ref in self.inputs:
                if ((ref.node.held is None or ref.node.held[ref.index] is None)
                        and self._referenced_after(ref.node, nodes)):
                    copy = LazyNode(_CLONE, (ref,), {}, [ref.meta])
                    self.nodes.append(copy)
                    outputs[(id(copy), 0)] = Ref(copy, 0)
                    self.uploads[(id(copy), 0)] = ref
        #: Values the graph returns, in Graph.outputs order.
        self.outputs = list(outputs.values())
        #: Which of them the caller needs on the host (the rest may stay on
        #: the device).
        self.wanted = {r.key for r in wanted}

    @staticmethod
    def _referenced_after(node: LazyNode, cut: dict[int, LazyNode]) -> bool:
        if any(getattr(h, "ref", None) is not None and h.ref.node is node
               for h in list(node.holders)):
            return True
        return any(id(c) not in cut for c in list(node.consumers))

    @property
    def empty(self) -> bool:
        return not self.nodes

    def structure(self) -> str:
        """What makes two cuts the same graph: ops, arguments (values by
        position), input types and which values are outputs."""
        position = {id(n): i for i, n in enumerate(self.nodes)}
        input_pos = {r.key: k for k, r in enumerate(self.inputs)}

        def encode(ref: Ref) -> tuple:
            if ref.key in input_pos:
                return ("in", input_pos[ref.key])
            return ("node", position[id(ref.node)], ref.index)

        ops = [(str(n.op), _map_refs(encode, (n.args, n.kwargs))) for n in self.nodes]
        types = [(tuple(r.meta.shape), str(r.meta.dtype)) for r in self.inputs]
        return repr((ops, types, [encode(r) for r in self.outputs]))

    def replay(self) -> Callable[..., list[torch.Tensor]]:
        """A function of the input values that runs the cut's ops and returns
        its outputs (what ``make_fx`` traces)."""
        nodes, inputs, outputs = self.nodes, self.inputs, self.outputs

        def run(*values: torch.Tensor) -> list[torch.Tensor]:
            env: dict[tuple[int, int], torch.Tensor] = {
                r.key: v for r, v in zip(inputs, values)}
            for node in nodes:
                args, kwargs = _map_refs(lambda r: env[r.key], (node.args, node.kwargs))
                result = node.op(*args, **kwargs)
                flat = [t for t in leaves(result) if isinstance(t, torch.Tensor)]
                for i, t in enumerate(flat):
                    env[(id(node), i)] = t
            given = {id(v) for v in values}
            # A returned input or view would alias the caller's memory; the
            # device hands back fresh tensors either way.
            return [env[r.key].clone() if id(env[r.key]) in given or env[r.key]._is_view()
                    else env[r.key] for r in outputs]

        return run

    def trace(self) -> torch.fx.GraphModule:
        """The cut as a core-ATen FX graph whose values carry ``meta["val"]``."""
        from torch.fx.experimental.proxy_tensor import make_fx

        examples = [torch.empty_strided(r.meta.shape, r.meta.stride(), dtype=r.meta.dtype)
                    for r in self.inputs]
        return make_fx(self.replay(), decomposition_table=decompositions(),
                       tracing_mode="fake")(*examples)

    def settle(self, outputs: Sequence[Any], is_held: Callable[[Any], bool]) -> None:
        """The graph ran: its outputs (in ``outputs`` order: host tensors, or
        handles of values the device kept, which ``is_held`` tells apart)
        become leaves."""
        by_node: dict[int, list] = collections.defaultdict(list)
        for k, ref in enumerate(self.outputs):
            source = self.uploads.get(ref.key)
            if source is not None:  # a host value the device now holds too
                if is_held(outputs[k]):
                    if source.node.held is None:
                        source.node.held = [None] * len(source.node.metas)
                    source.node.held[source.index] = outputs[k]
                continue
            if ref.node.pending:
                by_node[id(ref.node)].append((ref.index, k))
        for node in self.nodes:
            slots = by_node.get(id(node))
            if not slots or len(slots) != len(node.metas):
                continue  # not an output (or only partly: keep its recipe)
            got = [outputs[k] for _, k in sorted(slots)]
            held = [o if is_held(o) else None for o in got]
            node.materialised([None if is_held(o) else o for o in got],
                              held if any(h is not None for h in held) else None)
