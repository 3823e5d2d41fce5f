"""Reference interpreter: runs a kiln.v1.Graph op by op with the client's torch.

Each ``Node`` is decoded back into a call of the ATen overload it names,
``torch.ops.aten.<op>.<overload>``, with its arguments as
:mod:`kiln.graph` wrote them (tensors by value name, typed attributes,
omitted arguments left to the schema default). The kernels are the ones in
the libtorch of the torch wheel the client imports, so the reference's
numerics are the client's PyTorch's.

Values are dense and row-major, as Kiln's are: each result is made contiguous
before later nodes read it (an ``aten.view`` of a transposed value then means
what it means to the compiler). Every value is kept by name (inputs,
parameters and every node's outputs), so
:mod:`kiln.verify` can compare any intermediate with what a target computes.

Errors are typed: an op torch does not know raises
:class:`kiln.errors.UnsupportedOpError`; a malformed graph (a value read
before it is defined, a name defined twice, a result count or type that
disagrees with the node's declared outputs, an argument the schema lacks,
a kernel that rejects its arguments) raises
:class:`kiln.errors.InvalidArgumentError`. Both name the node by index, its
first output and its op.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable, Mapping, Sequence

import torch

from kiln.errors import InvalidArgumentError, UnsupportedOpError
from kiln.graph import is_optional_tensor_list
from kiln.rng import SEED_ARGUMENT, seeded
from kiln.tensors import PROTO_TO_DTYPE
from kiln.v1 import graph_pb2, tensor_pb2

__all__ = ["resolve_op", "run_nodes", "run_reference", "node_label"]


def node_name(node: graph_pb2.Node) -> str:
    """A node's name: its first named output (its first results may be left
    out, unnamed); empty when it names none."""
    return next((out.name for out in node.outputs if out.name), "")


def node_label(index: int, node: graph_pb2.Node) -> str:
    """How errors name a node: ``node 7 'gelu' (aten.gelu.default)``."""
    first = node_name(node) if node.outputs else "<no outputs>"
    return f"node {index} '{first}' ({node.op or '<no op>'})"


def _node_context(index: int, node: graph_pb2.Node) -> dict[str, object]:
    return {"node": node_name(node) or str(index), "index": index, "op": node.op}


def resolve_op(op: str, *, index: int = -1,
               node: graph_pb2.Node | None = None) -> torch._ops.OpOverload:
    """The torch OpOverload for a Node.op string such as ``aten.addmm.default``."""
    label = node_label(index, node) if node is not None else f"op '{op}'"
    ctx = _node_context(index, node) if node is not None else {"op": op}
    parts = op.split(".")
    if len(parts) != 3 or not all(parts):
        raise UnsupportedOpError(f"{label}: '{op}' is not an op overload name "
                                 "(namespace.name.overload, e.g. aten.addmm.default)",
                                 context=ctx)
    namespace, name, overload = parts
    if namespace == "quantized_decomposed":
        # PT2E's quantize/dequantize ops exist once this module is imported.
        importlib.import_module("torch.ao.quantization.fx._decomposed")
    try:
        packet = getattr(getattr(torch.ops, namespace), name)
        return getattr(packet, overload)
    except (AttributeError, RuntimeError):
        raise UnsupportedOpError(f"{label}: torch {torch.__version__} has no op '{op}'",
                                 context=ctx) from None


def _is_list_type(arg: torch._C.Argument) -> bool:
    return isinstance(arg.type, torch.ListType) or (
        isinstance(arg.type, torch.OptionalType)
        and isinstance(arg.type.getElementType(), torch.ListType))


def _decode_attribute(attr: graph_pb2.Attribute, label: str, ctx: dict, arg: str) -> Any:
    kind = attr.WhichOneof("kind")
    if kind in ("i", "f", "b", "s"):
        return getattr(attr, kind)
    if kind == "ints":
        return list(attr.ints.values)
    if kind == "floats":
        return list(attr.floats.values)
    if kind == "none":
        return None
    if kind == "dtype":
        dtype = PROTO_TO_DTYPE.get(attr.dtype)
        if dtype is None:
            raise InvalidArgumentError(f"{label}: argument '{arg}' has unknown dtype "
                                       f"{attr.dtype}", context=ctx)
        return dtype
    raise InvalidArgumentError(f"{label}: argument '{arg}' has an empty attribute",
                               context=ctx)


def _check_type(value: Any, declared: tensor_pb2.TensorType, what: str, label: str,
                ctx: dict) -> None:
    if not isinstance(value, torch.Tensor):
        raise InvalidArgumentError(f"{label}: {what} is a {type(value).__name__}, "
                                   "not a tensor", context=ctx)
    dtype = PROTO_TO_DTYPE.get(declared.dtype)
    if value.dtype != dtype or list(value.shape) != list(declared.shape):
        raise InvalidArgumentError(
            f"{label}: {what} is {value.dtype} {list(value.shape)} but the graph declares "
            f"{dtype} {list(declared.shape)}", context=ctx)


def _call_arguments(op: torch._ops.OpOverload, node: graph_pb2.Node,
                    values: Mapping[str, torch.Tensor], label: str, ctx: dict
                    ) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments of the call ``node`` describes."""
    schema = op._schema
    by_name: dict[str, list[graph_pb2.Argument]] = {}
    for a in node.arguments:
        if a.name != SEED_ARGUMENT:  # read by run_nodes (kiln.rng)
            by_name.setdefault(a.name, []).append(a)
    known = {a.name for a in schema.arguments}
    unknown = sorted(set(by_name) - known)
    if unknown:
        raise InvalidArgumentError(f"{label}: arguments {unknown} are not in the schema "
                                   f"{schema}", context=ctx)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for sarg in schema.arguments:
        given = by_name.get(sarg.name)
        if given is None:
            positional = False  # the schema default applies from here on
            continue
        decoded = []
        for a in given:
            if a.WhichOneof("kind") == "value":
                if a.value not in values:
                    raise InvalidArgumentError(
                        f"{label}: argument '{sarg.name}' reads '{a.value}', which is not "
                        "defined before it", context=ctx)
                decoded.append(values[a.value])
            elif a.WhichOneof("kind") == "attribute":
                decoded.append(_decode_attribute(a.attribute, label, ctx, sarg.name))
            else:
                raise InvalidArgumentError(f"{label}: argument '{sarg.name}' is empty",
                                           context=ctx)
        tensors_list = all(isinstance(v, torch.Tensor) for v in decoded)
        if _is_list_type(sarg) and tensors_list:
            value = decoded  # Tensor[]: one Argument per element
        elif is_optional_tensor_list(sarg) and all(
                v is None or isinstance(v, torch.Tensor) for v in decoded):
            value = decoded  # Tensor?[]: a none attribute stands for a None element
        elif len(decoded) == 1:
            value = decoded[0]
        else:
            raise InvalidArgumentError(f"{label}: argument '{sarg.name}' is given "
                                       f"{len(decoded)} times", context=ctx)
        if positional and not sarg.kwarg_only:
            args.append(value)
        else:
            kwargs[sarg.name] = value
    return args, kwargs


def _seed_of(node: graph_pb2.Node, values: Mapping[str, torch.Tensor], label: str,
             ctx: dict) -> torch.Tensor | None:
    """The call's seed a random node reads (kiln.rng), or None. A host run
    draws torch's numbers from a generator seeded by it, not Kiln's."""
    names = [a.value for a in node.arguments if a.name == SEED_ARGUMENT]
    if not names:
        return None
    if len(names) != 1 or names[0] not in values:
        raise InvalidArgumentError(f"{label}: its '{SEED_ARGUMENT}' argument must name one "
                                   "value defined before it", context=ctx)
    return values[names[0]]


def _define(values: dict[str, torch.Tensor], name: str, tensor: torch.Tensor, label: str,
            ctx: dict) -> None:
    if not name:
        raise InvalidArgumentError(f"{label}: a value has an empty name", context=ctx)
    if name in values:
        raise InvalidArgumentError(f"{label}: value '{name}' is defined more than once",
                                   context=ctx)
    values[name] = tensor


def run_nodes(graph: graph_pb2.Graph, indices: Iterable[int],
              values: dict[str, torch.Tensor]) -> None:
    """Runs ``graph.nodes[i]`` for each i in ``indices``, in that order,
    reading arguments from ``values`` (value name -> tensor) and adding each
    result to it. The placement runner uses it for CPU segments."""
    with torch.no_grad():
        for index in indices:
            node = graph.nodes[index]
            label, ctx = node_label(index, node), _node_context(index, node)
            op = resolve_op(node.op, index=index, node=node)
            args, kwargs = _call_arguments(op, node, values, label, ctx)
            seed = _seed_of(node, values, label, ctx)
            try:
                if seed is None:
                    result = op(*args, **kwargs)
                else:
                    with torch.random.fork_rng(devices=[]):
                        torch.manual_seed(seeded(seed, index))
                        result = op(*args, **kwargs)
            except Exception as e:  # the kernel rejected what the graph says
                raise InvalidArgumentError(f"{label}: torch raised {type(e).__name__}: "
                                           f"{str(e).splitlines()[0] if str(e) else ''}",
                                           context=ctx) from None
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            if len(results) != len(node.outputs):
                raise InvalidArgumentError(f"{label}: the op returns {len(results)} results "
                                           f"but the node declares {len(node.outputs)}",
                                           context=ctx)
            for out, value in zip(node.outputs, results):
                if not out.name:
                    # A result the node leaves out (None under output_mask,
                    # or eigh's and svd's unread vectors): nothing reads it.
                    continue
                _check_type(value, out.type, f"output '{out.name}'", label, ctx)
                # Kiln values are dense and row-major (no strides travel in the
                # graph), so a transposed view is read as its copy would be.
                _define(values, out.name, value.contiguous(), label, ctx)


def run_reference(graph: graph_pb2.Graph, inputs: Sequence[torch.Tensor],
                  parameters: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Runs ``graph`` eagerly; returns every value by name.

    Args:
        inputs: runtime inputs in ``graph.inputs`` order.
        parameters: parameter value name -> tensor, for ``graph.parameters``.

    The result maps each input, parameter and node output name to its
    tensor; ``[result[n] for n in graph.outputs]`` are the graph's outputs.
    """
    if len(inputs) != len(graph.inputs):
        raise InvalidArgumentError(f"the graph takes {len(graph.inputs)} inputs, "
                                   f"got {len(inputs)}")
    values: dict[str, torch.Tensor] = {}
    for p in graph.parameters:
        name = p.value.name
        if name not in parameters:
            raise InvalidArgumentError(f"parameter '{name}' has no tensor",
                                       context={"value": name})
        _check_type(parameters[name], p.value.type, f"parameter '{name}'", "graph", {})
        _define(values, name, parameters[name], "graph", {})
    for v, t in zip(graph.inputs, inputs):
        _check_type(t, v.type, f"input '{v.name}'", "graph", {})
        _define(values, v.name, t, "graph", {})

    run_nodes(graph, range(len(graph.nodes)), values)
    for name in graph.outputs:
        if name not in values:
            raise InvalidArgumentError(f"graph output '{name}' is not a value of the graph",
                                       context={"value": name})
    return values
