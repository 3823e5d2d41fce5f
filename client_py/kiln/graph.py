"""Serialiser: an FX GraphModule in core ATen → a kiln.v1.Graph message.

Conventions (the contract the daemon's importer reads):

* ``Node.op`` is ``str(OpOverload)``: ``"aten.add.Tensor"``, ``"aten.mm.default"``.
* Arguments are named as in ``op._schema.arguments``. A tensor argument is
  ``Argument.value`` = the name of the value that produced it; a list of tensors
  (``Tensor[]``, e.g. ``aten.cat``'s ``tensors``) is one ``Argument`` per element,
  all with the schema name, in order. In a list of optional tensors
  (``Tensor?[]``, e.g. ``aten.index.Tensor``'s ``indices`` for ``x[:, i]``) a
  None element is an ``Argument`` with the schema name and ``attribute { none
  {} }`` in its list position; only ``Tensor?[]`` lists may hold None.
  Scalars and lists are typed ``Attribute``s (int→i, float→f, bool→b,
  str→s, int list→ints, float list→floats, bool list→ints of 0/1,
  dtype→dtype, None→none); device, layout and memory_format arguments are
  omitted (a resize into a memory format other than contiguous is refused:
  its values depend on it). Arguments the FX node does
  not give are omitted (the schema default applies).
* Every value has a ``TensorType`` from ``node.meta["val"]``. A symbolic size
  (a torch.export ``Dim``) is its traced extent plus its expression over the
  graph's symbols (``TensorType.symbols``, ``Graph.symbols``; see
  kiln.symbolic_sizes), as is a symbolic entry of an int list; the FX nodes
  that compute sizes emit nothing. An op with
  several results (``native_layer_norm``, ``split``...) names them
  ``"<node>.0"``, ``"<node>.1"``...; ``operator.getitem`` nodes emit nothing and
  resolve to those names.
* Placeholders are runtime inputs unless named in ``parameters``; ``get_attr``
  tensors are parameters. Parameters carry the SHA-256 digest of their bytes.

Anything that does not fit raises :class:`kiln.errors.UnsupportedOpError`
naming the FX node.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Mapping, Sequence

import torch
import torch.fx

from kiln.blobs import tensor_digest
from kiln.errors import InvalidArgumentError, UnsupportedOpError
from kiln.rng import SEED_ARGUMENT, SEED_INPUT, is_random
from kiln.symbolic_sizes import SymbolTable, is_symbolic
from kiln.tensors import DTYPE_TO_PROTO
from kiln.v1 import graph_pb2, tensor_pb2

__all__ = ["CallConvention", "SerializedGraph", "is_optional_tensor_list", "serialize_graph_module",
           "tensor_type_of"]

# Argument types Kiln leaves out: they say where a tensor lives, not what it is.
_OMITTED_TYPES = (torch.device, torch.layout, torch.memory_format)

#: The resizes: unlike other ops, which element lands where depends on
#: their memory format (the one argument of that type Kiln cannot omit).
_RESIZES = frozenset({torch.ops.aten.resize.default, torch.ops.aten.resize_.default})

#: Results that travel unnamed (left out) when no node reads them: the
#: vectors of the decompositions eigvalsh, svdvals and eigvals export to,
#: so that Kiln computes the values alone (aten.eigvalsh, aten.svdvals,
#: aten.eigvals) rather than the whole decomposition; and the LAPACK-style
#: extras of inv and solve (info, LU, pivots), which Kiln's complex forms
#: do not compute.
_LEFT_OUT_WHEN_UNREAD = {
    "aten::_linalg_eigh": (1,),
    "aten::linalg_eig": (1,),
    "aten::_linalg_svd": (0, 2),
    "aten::linalg_inv_ex": (1,),
    "aten::_linalg_solve_ex": (1, 2, 3),
}


def _read_results(node: torch.fx.Node) -> set[int] | None:
    """The result indices that something reads through a getitem (a
    getitem nothing uses reads nothing); None when some user reads the
    node otherwise."""
    read: set[int] = set()
    for user in node.users:
        if user.target is not operator.getitem or not isinstance(user.args[1], int):
            return None
        if user.users:
            read.add(user.args[1] % max(len(node.meta.get("val") or ()), 1))
    return read


@dataclasses.dataclass(frozen=True)
class CallConvention:
    """How a program's call differs from "tensors in, tensors out", applied
    by the client around each run of its executable.

    ``input_updates``: the program writes into its arguments; the first
    ``len(input_updates)`` graph outputs are the new values of these
    arguments (positions in the flattened call arguments, ``state`` first),
    and a call copies them into the caller's tensors, as eager leaves them. ``scalar_outputs``:
    graph outputs (positions among all graph outputs) the program returns as
    Python numbers (``t.item()``, ``_local_scalar_dense``): the graph returns
    the 0-d tensor and the call converts it.
    """

    input_updates: tuple[int, ...] = ()
    scalar_outputs: tuple[int, ...] = ()
    #: Buffers the program updates (a train-mode batch norm's running
    #: statistics): the graph's first inputs, which each call passes ahead
    #: of the caller's arguments (``with_state``) and whose new values
    #: ``input_updates`` writes back, as eager updates the module's buffers.
    state: tuple[torch.Tensor, ...] = ()

    def with_state(self, flat_inputs: list[Any]) -> list[Any]:
        """The call's arguments with the updated buffers ahead of them."""
        return [*self.state, *flat_inputs] if self.state else flat_inputs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallConvention):
            return NotImplemented
        return (self.input_updates, self.scalar_outputs) == \
            (other.input_updates, other.scalar_outputs) and \
            len(self.state) == len(other.state) and \
            all(a is b for a, b in zip(self.state, other.state))

    def __hash__(self) -> int:
        return hash((self.input_updates, self.scalar_outputs, tuple(map(id, self.state))))

    def apply(self, flat_inputs: Sequence[Any], outputs: Sequence[Any]) -> list[Any]:
        """The program's own outputs from the graph's, after writing the
        input updates back into ``flat_inputs``."""
        results = list(outputs)
        for position in self.scalar_outputs:
            results[position] = results[position].item()
        count = len(self.input_updates)
        updates = [(position, flat_inputs[position], value)
                   for position, value in zip(self.input_updates, results[:count])]
        # Every resize is checked before anything is written back.
        for position, target, value in updates:
            if target.shape != value.shape:
                _check_resizable(position, target, value)
        with torch.no_grad():
            for _, target, value in updates:
                if target.shape == value.shape:
                    target.copy_(value)
                    continue
                # resize_ and resize_as_ change the argument's shape, as in
                # eager, whose storage keeps what it held: only the leading
                # elements the input had are written (past them eager's are
                # uninitialised, or another view's).
                kept = min(target.numel(), value.numel())
                target.resize_(value.shape)
                target.view(-1)[:kept].copy_(value.reshape(-1)[:kept])
        return results[count:]


def _check_resizable(position: int, target: torch.Tensor, value: torch.Tensor) -> None:
    """InvalidArgumentError unless argument ``position`` can take the new
    shape of ``value`` as eager's resize_ would give it."""
    # Eager's resize_ keeps the storage's order; Kiln's values are the
    # row-major ones.
    if not target.is_contiguous():
        raise InvalidArgumentError(
            f"argument {position} is resized by the program and is not contiguous "
            f"(strides {list(target.stride())}); eager resizes over its storage "
            "order, Kiln over its row-major values: pass a contiguous tensor")
    storage = target.untyped_storage()
    needed = (target.storage_offset() + value.numel()) * target.element_size()
    if not storage.resizable() and needed > storage.nbytes():
        raise InvalidArgumentError(
            f"argument {position} is grown by the program, and its storage cannot "
            "grow (a tensor over memory torch does not own, such as an output "
            "Kiln mapped from a file): pass a tensor torch allocated")


@dataclasses.dataclass
class SerializedGraph:
    """A Graph message plus what the client needs to call it."""

    graph: graph_pb2.Graph
    #: Placeholder names of the runtime inputs, in Graph.inputs order (a
    #: graph with random ops has one more input, last: its seed, kiln.rng).
    input_names: list[str]
    #: Parameter value name → its tensor (to upload), in Graph.parameters order.
    parameters: dict[str, torch.Tensor]
    #: What a call does around the executable (mutated inputs, scalars).
    convention: CallConvention = CallConvention()


def _assertion_ops() -> frozenset:
    """The ATen ops that only check what tracing knew (names differ across
    torch releases, so each is looked up and skipped when absent)."""
    names = ("_assert_tensor_metadata", "_assert_scalar", "_assert_async",
             "sym_constrain_range", "sym_constrain_range_for_size")
    ops = set()
    for name in names:
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None:
            ops.update(getattr(packet, o) for o in packet.overloads())
    return frozenset(ops)


_ASSERTIONS = _assertion_ops()

#: Ops that turn a one-element tensor into a Python number.
_SCALAR_OUTPUTS = frozenset({torch.ops.aten._local_scalar_dense.default,
                             torch.ops.aten.item.default})


def _unsupported(node: torch.fx.Node, why: str) -> UnsupportedOpError:
    target = getattr(node, "target", None)
    return UnsupportedOpError(f"FX node '{node.name}' ({node.op} {target}): {why}",
                              context={"node": node.name})


def tensor_type_of(node: torch.fx.Node, val: Any,
                   symbols: SymbolTable | None = None) -> tensor_pb2.TensorType:
    """The TensorType of a (fake) tensor ``val`` produced by ``node``: its
    symbolic sizes carry their expressions into ``symbols`` (None: static
    shapes only)."""
    if not isinstance(val, torch.Tensor):
        raise _unsupported(node, f"produces a {type(val).__name__}, not a tensor; "
                                 "Kiln values are tensors only")
    code = DTYPE_TO_PROTO.get(val.dtype)
    if code is None:
        raise _unsupported(node, f"dtype {val.dtype} is not supported by Kiln")
    if symbols is not None and any(is_symbolic(d) for d in val.shape):
        try:
            return symbols.tensor_type(code, val.shape, "its output")
        except UnsupportedOpError as e:
            raise _unsupported(node, str(e)) from None
    shape = []
    for d in val.shape:
        if not isinstance(d, int):
            raise _unsupported(node, f"has symbolic shape {tuple(val.shape)}; "
                                     "Kiln needs static shapes")
        shape.append(d)
    return tensor_pb2.TensorType(dtype=code, shape=shape)


def is_optional_tensor_list(arg: torch._C.Argument) -> bool:
    """True for a ``Tensor?[]`` schema argument (e.g. ``aten.index.Tensor``'s indices)."""
    t = arg.type
    if not isinstance(t, torch.ListType):
        return False
    element = t.getElementType()
    return isinstance(element, torch.OptionalType) and isinstance(
        element.getElementType(), torch.TensorType)


def _value_meta(node: torch.fx.Node) -> Any:
    if "val" in node.meta:
        return node.meta["val"]
    raise _unsupported(node, "has no meta['val']; trace it with torch.export, "
                             "make_fx or AOTAutograd so values carry fake tensors")


class _Serializer:
    def __init__(self, gm: torch.fx.GraphModule, parameters: Mapping[str, torch.Tensor],
                 name: str):
        self.gm = gm
        self.param_tensors = dict(parameters)
        self.graph = graph_pb2.Graph(name=name)
        # FX node → value name(s): str for one result, list[str] for several.
        self.names: dict[torch.fx.Node, str | list[str]] = {}
        self.input_names: list[str] = []
        self.parameters: dict[str, torch.Tensor] = {}
        # A returned ``t.item()`` → the tensor it reads; positions of those
        # among Graph.outputs.
        self.scalars: dict[torch.fx.Node, torch.fx.Node] = {}
        self.scalar_outputs: list[int] = []
        # Symbolic sizes (torch.export Dims): their symbols and ranges.
        self.symbols = SymbolTable()
        # The seed input random nodes read (kiln.rng), made at the first.
        self.seed_input: str | None = None

    # --- values -------------------------------------------------------------

    def _tensor_name(self, node: torch.fx.Node, user: torch.fx.Node) -> str:
        name = self.names.get(node)
        if name is None:
            raise _unsupported(user, f"reads '{node.name}', which is not a tensor value Kiln knows")
        if isinstance(name, list):
            raise _unsupported(user, f"reads all results of '{node.name}' at once; "
                                     "only single results (via getitem) are tensors")
        return name

    def _add_parameter(self, node: torch.fx.Node, tensor: torch.Tensor) -> None:
        if not isinstance(tensor, torch.Tensor):
            raise _unsupported(node, f"parameter is a {type(tensor).__name__}, not a tensor")
        val = node.meta.get("val", tensor)
        ttype = tensor_type_of(node, val)
        if list(ttype.shape) != list(tensor.shape) or val.dtype != tensor.dtype:
            raise _unsupported(node, f"parameter tensor is {tensor.dtype} {list(tensor.shape)} "
                                     f"but the graph expects {val.dtype} {list(ttype.shape)}")
        param = self.graph.parameters.add()
        param.value.name = node.name
        param.value.type.CopyFrom(ttype)
        param.digest.CopyFrom(tensor_digest(tensor))
        self.parameters[node.name] = tensor
        self.names[node] = node.name

    def placeholder(self, node: torch.fx.Node) -> None:
        if node.name in self.param_tensors:
            self._add_parameter(node, self.param_tensors[node.name])
            return
        value = self.graph.inputs.add()
        value.name = node.name
        value.type.CopyFrom(tensor_type_of(node, _value_meta(node), self.symbols))
        self.input_names.append(node.name)
        self.names[node] = node.name

    def _seed(self) -> str:
        """The graph's seed input (kiln.rng), added after the placeholders
        the first time a random node needs it."""
        if self.seed_input is None:
            taken = {n.name for n in self.gm.graph.nodes}
            name, k = SEED_INPUT, 0
            while name in taken:
                k += 1
                name = f"{SEED_INPUT}_{k}"
            value = self.graph.inputs.add(name=name)
            value.type.dtype = tensor_pb2.DTYPE_I64
            self.seed_input = name
        return self.seed_input

    def get_attr(self, node: torch.fx.Node) -> None:
        obj: Any = self.gm
        for part in str(node.target).split("."):
            obj = getattr(obj, part)
        self._add_parameter(node, obj)

    # --- ops ----------------------------------------------------------------

    def getitem(self, node: torch.fx.Node) -> None:
        src, index = node.args
        names = self.names.get(src) if isinstance(src, torch.fx.Node) else None
        if not isinstance(names, list) or not isinstance(index, int):
            raise _unsupported(node, "getitem of something other than a multi-result op")
        if not -len(names) <= index < len(names):
            raise _unsupported(node, f"index {index} out of range for {len(names)} results")
        self.names[node] = names[index]

    def _attribute(self, node: torch.fx.Node, arg: torch._C.Argument, value: Any
                   ) -> graph_pb2.Attribute | None:
        """The typed attribute for a non-tensor argument (None: omit it)."""
        attr = graph_pb2.Attribute()
        if value is None:
            attr.none.SetInParent()
        elif isinstance(value, _OMITTED_TYPES):
            if (isinstance(value, torch.memory_format) and value != torch.contiguous_format
                    and node.target in _RESIZES):
                raise _unsupported(node, f"resizes into {value}; Kiln's graphs carry no "
                                         "memory formats, and a resize's values depend on "
                                         "it (resize into torch.contiguous_format)")
            return None
        elif isinstance(value, bool):
            attr.b = value
        elif isinstance(value, int):
            attr.i = value
        elif isinstance(value, float):
            attr.f = value
        elif isinstance(value, complex):
            attr.c.real = value.real
            attr.c.imag = value.imag
        elif isinstance(value, str):
            attr.s = value
        elif isinstance(value, torch.dtype):
            code = DTYPE_TO_PROTO.get(value)
            if code is None:
                raise _unsupported(node, f"argument '{arg.name}' is dtype {value}, "
                                         "which Kiln does not support")
            attr.dtype = code
        elif isinstance(value, (list, tuple)):
            # A size computed from symbolic sizes is an FX node of its own.
            items = [v.meta.get("val") if isinstance(v, torch.fx.Node) else v for v in value]
            if any(isinstance(v, torch.SymFloat) for v in items):
                raise _unsupported(node, f"argument '{arg.name}' is symbolic ({value}); "
                                         "Kiln's symbolic sizes are integers")
            if any(isinstance(v, torch.SymInt) for v in items):
                try:
                    self.symbols.int_list(items, attr, f"argument '{arg.name}'")
                except UnsupportedOpError as e:
                    raise _unsupported(node, str(e)) from None
                return attr
            if items and all(isinstance(v, bool) for v in items):
                # bool[] (convolution_backward's output_mask) travels as 0/1.
                attr.ints.values.extend(int(v) for v in items)
                return attr
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
                raise _unsupported(node, f"argument '{arg.name}' = {value!r} "
                                         "is not a list of numbers")
            wants_float = "float" in str(arg.type).lower() or any(
                isinstance(v, float) for v in items)
            if wants_float:
                attr.floats.values.extend(float(v) for v in items)
            else:
                attr.ints.values.extend(int(v) for v in items)
        elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise _unsupported(node, f"argument '{arg.name}' is symbolic ({value}); "
                                     "Kiln's symbolic sizes reach size lists and tensor "
                                     "types only")
        else:
            raise _unsupported(node, f"argument '{arg.name}' has type "
                                     f"{type(value).__name__}, which Kiln cannot serialise")
        return attr

    def _tensor_list(self, node: torch.fx.Node, arg: torch._C.Argument,
                     value: Sequence[Any], pb: graph_pb2.Node) -> None:
        """One Argument per element; None (``Tensor?[]`` only) as a none attribute."""
        optional = is_optional_tensor_list(arg)
        for v in value:
            if isinstance(v, torch.fx.Node):
                pb.arguments.add(name=arg.name, value=self._tensor_name(v, node))
            elif v is None and optional:
                pb.arguments.add(name=arg.name, attribute=graph_pb2.Attribute(
                    none=graph_pb2.NoneValue()))
            elif v is None:
                raise _unsupported(node, f"argument '{arg.name}' ({arg.type}) lists None "
                                         "among its tensors; only Tensor?[] lists may")
            else:
                raise _unsupported(node, f"argument '{arg.name}' ({arg.type}) lists a "
                                         f"{type(v).__name__} ({v!r}) among its tensors")

    def assertion(self, node: torch.fx.Node) -> None:
        """A node that only asserts what tracing already knew (newer torch
        emits ``aten._assert_tensor_metadata`` before a dtype conversion).
        Kiln graphs are static, so it is checked here, once, and not
        serialised."""
        if node.target is not torch.ops.aten._assert_tensor_metadata.default:
            return
        given = {**dict(zip(("a", "size", "stride", "dtype"), node.args)), **node.kwargs}
        tensor = given.get("a")
        val = tensor.meta.get("val") if isinstance(tensor, torch.fx.Node) else None
        if not isinstance(val, torch.Tensor):
            return
        dtype, size = given.get("dtype"), given.get("size")
        if dtype is not None and dtype != val.dtype or \
                size is not None and list(size) != list(val.shape):
            raise _unsupported(node, f"asserts {dtype} {size} of a {val.dtype} "
                                     f"{list(val.shape)} value: the traced graph contradicts "
                                     "itself")

    def scalar_output(self, node: torch.fx.Node) -> None:
        """``t.item()`` (``_local_scalar_dense``) returned by the program: the
        graph returns the 0-d tensor and the client converts it
        (CallConvention.scalar_outputs). A scalar that other ops use is data-
        dependent control of the graph, which Kiln's static graphs cannot be."""
        users = [u for u in node.users if u.op != "output"]
        if users:
            raise _unsupported(node, f"returns a scalar ({_value_meta(node)!r}) that "
                                     f"'{users[0].name}' uses; Kiln values are tensors, so "
                                     "only a scalar the program returns is supported")
        tensor = node.args[0]
        if not isinstance(tensor, torch.fx.Node):
            raise _unsupported(node, "takes no tensor value")
        self.scalars[node] = tensor

    def call_function(self, node: torch.fx.Node) -> None:
        op = node.target
        if op is operator.getitem:
            self.getitem(node)
            return
        if op in _SCALAR_OUTPUTS:
            self.scalar_output(node)
            return
        if isinstance(node.meta.get("val"), (torch.SymInt, torch.SymBool, torch.SymFloat)):
            # Size arithmetic (sym_size, s0 * s1, guards): its results reach
            # the size lists that use them as expressions.
            return
        if op in _ASSERTIONS and not node.users:
            self.assertion(node)
            return
        if not isinstance(op, torch._ops.OpOverload):
            raise _unsupported(node, "is not an ATen op overload; lower the graph to core "
                                     "ATen (torch.export + run_decompositions, or kiln.backend)")
        schema = op._schema
        pb = self.graph.nodes.add()
        pb.op = str(op)
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(node.args) > len(positional):
            raise _unsupported(node, f"has {len(node.args)} positional arguments; "
                                     f"the schema {schema} takes {len(positional)}")
        given: dict[str, Any] = {a.name: v for a, v in zip(positional, node.args)}
        for key, v in node.kwargs.items():
            if key in given:
                raise _unsupported(node, f"argument '{key}' given twice")
            given[key] = v
        known = {a.name for a in schema.arguments}
        unknown = set(given) - known
        if unknown:
            raise _unsupported(node, f"arguments {sorted(unknown)} are not in the schema {schema}")
        for arg in schema.arguments:
            if arg.name not in given:
                continue
            value = given[arg.name]
            takes_tensors = "Tensor" in str(arg.type)
            if isinstance(value, torch.fx.Node) and takes_tensors:
                pb.arguments.add(name=arg.name, value=self._tensor_name(value, node))
            elif isinstance(value, torch.fx.Node):
                attr = self._attribute(node, arg, value.meta.get("val"))
                if attr is not None:
                    pb.arguments.add(name=arg.name, attribute=attr)
            elif isinstance(value, (list, tuple)) and takes_tensors and (
                    is_optional_tensor_list(arg) or any(
                        isinstance(v, torch.fx.Node) for v in value)):
                self._tensor_list(node, arg, value, pb)
            else:
                attr = self._attribute(node, arg, value)
                if attr is not None:
                    pb.arguments.add(name=arg.name, attribute=attr)
        if is_random(op):
            pb.arguments.add(name=SEED_ARGUMENT, value=self._seed())
        val = _value_meta(node)
        if isinstance(val, (list, tuple)):
            names = []
            read = _read_results(node)
            unread = [i for i in _LEFT_OUT_WHEN_UNREAD.get(schema.name, ())
                      if read is not None and i not in read]
            for i, v in enumerate(val):
                if v is None or i in unread:
                    # A result the op leaves out (convolution_backward's under
                    # output_mask), or unread vectors of eigh, svd and eig: an
                    # unnamed, untyped output nobody reads.
                    pb.outputs.add(name="")
                    names.append("")
                    continue
                out = pb.outputs.add(name=f"{node.name}.{i}")
                out.type.CopyFrom(tensor_type_of(node, v, self.symbols))
                names.append(out.name)
            self.names[node] = names
        else:
            if not isinstance(val, torch.Tensor):
                raise _unsupported(node, f"returns a scalar ({type(val).__name__}); "
                                         "only tensors travel as Kiln values")
            out = pb.outputs.add(name=node.name)
            out.type.CopyFrom(tensor_type_of(node, val, self.symbols))
            self.names[node] = node.name

    def output(self, node: torch.fx.Node, keep: Sequence[int] | None) -> None:
        flat, _ = torch.utils._pytree.tree_flatten(node.args[0])
        indices = range(len(flat)) if keep is None else keep
        for i in indices:
            item = flat[i]
            if not isinstance(item, torch.fx.Node):
                raise _unsupported(node, f"output {i} is {item!r}, not a tensor value")
            if item in self.scalars:
                self.scalar_outputs.append(len(self.graph.outputs))
                item = self.scalars[item]
            self.graph.outputs.append(self._tensor_name(item, node))

    def run(self, keep_outputs: Sequence[int] | None) -> SerializedGraph:
        missing = set(self.param_tensors) - {
            n.name for n in self.gm.graph.nodes if n.op == "placeholder"}
        if missing:
            raise UnsupportedOpError(f"parameters {sorted(missing)} are not placeholders of the graph")
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self.placeholder(node)
            elif node.op == "get_attr":
                self.get_attr(node)
            elif node.op == "call_function":
                self.call_function(node)
            elif node.op == "output":
                self.output(node, keep_outputs)
            else:
                raise _unsupported(node, f"FX op kind '{node.op}' is not supported "
                                         "(expected a flat core-ATen graph)")
        self.symbols.declare(self.graph)
        return SerializedGraph(self.graph, self.input_names, self.parameters,
                               CallConvention(scalar_outputs=tuple(self.scalar_outputs)))


def serialize_graph_module(gm: torch.fx.GraphModule, *,
                           parameters: Mapping[str, torch.Tensor] | None = None,
                           name: str = "",
                           keep_outputs: Sequence[int] | None = None,
                           symbol_ranges: Mapping[str, tuple[Any, Any]] | None = None
                           ) -> SerializedGraph:
    """Serialises a core-ATen FX graph (values carrying ``meta["val"]``).

    Args:
        gm: the graph, e.g. ``ExportedProgram.graph_module`` after
            ``run_decompositions()`` or an AOTAutograd inference graph.
        parameters: placeholder name → tensor, for placeholders that are weights
            (Graph.parameters); every other placeholder is a runtime input.
        name: Graph.name (informational).
        keep_outputs: indices into the flattened output node to keep (default:
            all), e.g. only the user outputs of an exported program.
        symbol_ranges: symbol name → (min, max) of the symbolic sizes, where
            the caller knows better than the ShapeEnv (an exported program's
            range_constraints).
    """
    serializer = _Serializer(gm, parameters or {}, name)
    serializer.symbols = SymbolTable(symbol_ranges)
    return serializer.run(keep_outputs)
