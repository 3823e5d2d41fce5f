"""Tensors on a Kiln device: ATen operations recorded lazily, run on demand.

A :class:`KilnTensor` is a wrapper subclass (``__torch_dispatch__``) whose
device is ``kiln:N``. It holds no data. Every ATen op that reaches it is
recorded (:mod:`kiln.lazy_graph`), with the op's meta kernel giving the
result's shape and dtype, and nothing runs until a value is needed:
``.cpu()``, ``.item()``, printing, ``bool(t)`` (control flow on a value), or
an op that only the host can do. Then the pending graph is cut, compiled by
the daemon (cached: a second cut of the same structure compiles nothing) and
run by an agent.

Mutation is handled the way functionalization does it: an in-place op
records its functional form and *rebinds* the tensor's storage to the new
value. Aliases made by ``detach``/``alias`` share one storage. A view
(``view``, ``slice``, ``select``, ``t``...) reads through its base, so a
write to the base shows in the view; a write through a view scatters the new
values back into the base (``slice_scatter``, ``select_scatter``...).

Random ops run on the host with PyTorch's generator, so seeded programs draw
what eager draws; a device made with ``random="device"`` records them like
any op instead, and they draw Kiln's numbers on the agent (docs/architecture.md,
"Random numbers").
Ops the meta kernels cannot shape (data-dependent output sizes) run on the
host when the device was made with ``fallback="cpu"``, each reported on the
``kiln.placement`` logger; otherwise they raise :class:`UnsupportedOpError`.
"""

from __future__ import annotations

import collections
import logging
import threading
import weakref
from typing import Any, Callable, Sequence

import torch

from kiln.errors import UnimplementedError, UnsupportedOpError
from kiln.lazy_graph import (GraphCut, LazyNode, Ref, decompositions, leaves, map_leaves,
                             meta_of)
from kiln.tensors import HeldTensor

__all__ = ["KilnTensor", "DeviceState", "DEVICES", "materialise", "device_state",
           "compile_pending", "wrap_host_value", "zeros_tensor"]

log = logging.getLogger("kiln.device")
placement_log = logging.getLogger("kiln.placement")

aten = torch.ops.aten

#: kiln:N → its state; kiln.device() fills it.
DEVICES: dict[int, "DeviceState"] = {}


class TransferStats:
    """Bytes that crossed between this process and the daemon, per device."""

    def __init__(self) -> None:
        self.graphs_run = 0
        self.graphs_compiled = 0
        self.bytes_to_device = 0
        self.bytes_from_device = 0
        self.held_outputs = 0
        self.host_ops: collections.Counter[str] = collections.Counter()

    def as_dict(self) -> dict[str, Any]:
        return {"graphs_run": self.graphs_run, "graphs_compiled": self.graphs_compiled,
                "bytes_to_device": self.bytes_to_device,
                "bytes_from_device": self.bytes_from_device,
                "held_outputs": self.held_outputs,
                "host_ops": dict(self.host_ops)}


class DeviceState:
    """One ``kiln:N``: the daemon, the target, and the graphs compiled so far."""

    #: Compiled graphs kept per device (least recently used dropped first).
    MAX_GRAPHS = 256

    def __init__(self, index: int, client: Any, target: str, fallback: str | None,
                 options: Any = None, random: str = "host"):
        self.index = index
        self.device = torch.device("kiln", index)
        self.client = client
        self.target = target
        self.fallback = fallback
        self.options = options
        #: Where random ops draw: "host" (torch's generator) or "device".
        self.random = random
        self.stats = TransferStats()
        self._graphs: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._lock = threading.RLock()
        #: Handles of held tensors nothing refers to any more: released with
        #: the next call (finalizers add to it, from any thread).
        self._releases: list[str] = []
        # Reentrant: a finalizer may run (garbage collection) while this
        # thread holds it, and it takes it again.
        self._release_lock = threading.RLock()
        #: handle → the device that holds it (ExecuteResponse.device_id).
        self._held_on: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"kiln:{self.index} (target {self.target!r} on {self.client.address})"

    def compile(self, cut: GraphCut) -> Any:
        """The executable for the cut's structure (compiled at most once per
        structure by this process; the daemon's cache serves repeats across
        processes)."""
        key = cut.structure()
        with self._lock:
            compiled = self._graphs.get(key)
            if compiled is not None:
                self._graphs.move_to_end(key)
                return compiled
        from kiln.graph import serialize_graph_module
        from kiln.placement import placement_policy
        serialized = serialize_graph_module(cut.trace(), name=f"kiln_{self.index}_graph")
        placement = placement_policy("cpu") if self.fallback == "cpu" else None
        compiled = self.client.compile_serialized(serialized, target=self.target,
                                                  options=self.options, placement=placement)
        with self._lock:
            self.stats.graphs_compiled += 1
            self._graphs[key] = compiled
            while len(self._graphs) > self.MAX_GRAPHS:
                self._graphs.popitem(last=False)
        return compiled

    def run(self, cut: GraphCut) -> None:
        """Runs the cut. Outputs the host asked for come back; the rest stay
        on the device that ran it (held), and later cuts pass their handles.
        A partitioned graph (fallback="cpu") returns everything."""
        compiled = self.compile(cut)
        inputs = [_input_value(r) for r in cut.inputs]
        # One call runs on one device: values held by another device than
        # the first held input's come to the host first (kilnd may place
        # calls without held inputs on any device of the target). A
        # partitioned graph (fallback="cpu") runs parts on the host, so it
        # takes every input there and keeps nothing.
        anchor = None if compiled.partitioned else next(
            (self._held_on.get(v.handle) for v in inputs if isinstance(v, HeldTensor)), None)
        for k, (ref, value) in enumerate(zip(cut.inputs, inputs)):
            if isinstance(value, HeldTensor) and (
                    compiled.partitioned or self._held_on.get(value.handle) != anchor):
                if ref.node.values[ref.index] is None:
                    _fetch(ref, self)
                inputs[k] = ref.node.values[ref.index]
        if compiled.partitioned:
            outputs = compiled.run(inputs)
        else:
            keep = [k for k, r in enumerate(cut.outputs) if r.key not in cut.wanted]
            releases = self._take_releases()
            try:
                outputs = compiled.run(inputs, keep_outputs=keep, release=releases)
            except BaseException:
                self._release_later(releases, forget=False)  # not sent: next time
                raise
        self.stats.graphs_run += 1
        self.stats.bytes_to_device += sum(_host_bytes(t) for t in inputs)
        self.stats.bytes_from_device += sum(_host_bytes(t) for t in outputs)
        held = [o.handle for o in outputs if isinstance(o, HeldTensor)]
        for handle in held:
            self._held_on[handle] = compiled.last_device_id
        cut.settle(outputs, lambda o: isinstance(o, HeldTensor))
        for node in [*cut.nodes, *(r.node for r in cut.uploads.values())]:
            if node.held is not None:
                # Released with the next call once nothing refers to the node.
                weakref.finalize(node, self._release_later,
                                 [h.handle for h in node.held if h is not None])
        self.stats.held_outputs += len(held)

    def _release_later(self, handles: list[str], forget: bool = True) -> None:
        with self._release_lock:
            self._releases.extend(handles)
            if forget:
                for handle in handles:
                    self._held_on.pop(handle, None)

    def release_all(self, timeout: float = 1.0) -> None:
        """Releases every handle this process still has on the daemon (run
        at interpreter exit, one attempt of at most ``timeout`` seconds):
        each agent frees its tensors with the next task it runs."""
        with self._release_lock:
            handles = self._take_releases() + list(self._held_on)
            self._held_on.clear()
        if handles:
            self.client.release_held(handles, timeout=timeout)

    def _take_releases(self) -> list[str]:
        with self._release_lock:
            taken, self._releases = self._releases, []
        return taken


def device_state(device: torch.device | str | int | None) -> DeviceState:
    if isinstance(device, int):
        index = device
    else:
        device = torch.device(device if device is not None else "kiln")
        index = device.index or 0
    state = DEVICES.get(index)
    if state is None:
        raise UnsupportedOpError(f"kiln:{index} is not a Kiln device yet",
                                 hint="make it with kiln.device(address, target=...)")
    return state


# --- storages ------------------------------------------------------------------


class _Storage:
    """The value a tensor currently stands for. Aliases share one; in-place
    ops rebind it."""

    __slots__ = ("ref", "__weakref__")

    def __init__(self, ref: Ref):
        self.ref = ref
        ref.node.holders.add(self)

    def bind(self, ref: Ref) -> None:
        self.ref = ref
        ref.node.holders.add(self)


class _ViewStorage:
    """A view: output ``index`` of ``op(base, *args)``, read through the base
    every time, so writes to the base show."""

    __slots__ = ("base", "op", "args", "kwargs", "index", "metas", "_cache", "__weakref__")

    def __init__(self, base: Any, op: Any, args: tuple, kwargs: dict, index: int,
                 metas: list[torch.Tensor]):
        self.base, self.op, self.args, self.kwargs = base, op, args, kwargs
        self.index, self.metas = index, metas
        self._cache: tuple[Ref, Ref] | None = None

    @property
    def ref(self) -> Ref:
        base = self.base.ref
        if self._cache is None or self._cache[0] != base:
            node = LazyNode(self.op, (base, *self.args), self.kwargs, self.metas)
            self._cache = (base, Ref(node, self.index))
        return self._cache[1]

    def bind(self, ref: Ref) -> None:
        """A write through the view: scatter ``ref`` back into the base."""
        self.base.bind(_scatter_back(self, self.base.ref, ref))


# --- the tensor ----------------------------------------------------------------


class KilnTensor(torch.Tensor):
    """A tensor on a Kiln device (see the module docstring)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, storage: Any, meta: torch.Tensor, state: DeviceState,
                requires_grad: bool = False) -> "KilnTensor":
        t = torch.Tensor._make_wrapper_subclass(
            cls, meta.shape, strides=meta.stride(), storage_offset=meta.storage_offset(),
            dtype=meta.dtype, device=state.device, requires_grad=requires_grad)
        t._kiln_storage = storage
        t._kiln_meta = meta
        t._kiln_state = state
        return t

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    # A traceable wrapper subclass (no inner tensors): Module.to() then swaps
    # parameters in whole instead of assigning .data, which would leave the
    # storage of the old Python object behind.
    def __tensor_flatten__(self) -> tuple[list[str], Any]:
        return [], (self._kiln_storage, self._kiln_meta, self._kiln_state)

    @staticmethod
    def __tensor_unflatten__(inner: dict, ctx: Any, outer_size: Any, outer_stride: Any
                             ) -> "KilnTensor":
        storage, meta, state = ctx
        return KilnTensor(storage, meta, state)

    @property
    def data(self) -> torch.Tensor:  # type: ignore[override]
        return self.detach()

    @data.setter
    def data(self, value: torch.Tensor) -> None:
        if not isinstance(value, KilnTensor) or value._kiln_state is not self._kiln_state:
            raise UnsupportedOpError(f"assigning .data of {self.device} from a tensor on "
                                     f"{value.device}; use .to({str(self.device)!r}) first")
        if value.shape != self.shape or value.dtype != self.dtype:
            raise UnsupportedOpError(".data of a kiln tensor can only be given a tensor of "
                                     f"the same shape and dtype ({tuple(self.shape)}, "
                                     f"{self.dtype}); got ({tuple(value.shape)}, {value.dtype})")
        self._kiln_storage = value._kiln_storage

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        value = materialise([self])[0]
        text = repr(value)
        extras = [f"device='{self.device}'"]
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return text[:-1] + ", " + ", ".join(extras) + ")"

    __str__ = __repr__

    @property
    def pending(self) -> bool:
        """True while the value is not computed yet."""
        return self._kiln_storage.ref.node.pending

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return _dispatch(func, args, kwargs or {})


def _wrap(ref: Ref, state: DeviceState) -> KilnTensor:
    return KilnTensor(_Storage(ref), ref.meta, state)


def wrap_host_value(value: torch.Tensor, state: DeviceState) -> KilnTensor:
    """A device tensor whose value is ``value`` (not copied: the caller's)."""
    return _wrap(Ref(LazyNode.leaf(value), 0), state)


def zeros_tensor(shape: Sequence[int], dtype: torch.dtype, state: DeviceState) -> KilnTensor:
    """A pending zero-filled tensor (what ``empty`` gives on the device)."""
    meta = torch.empty(list(shape), dtype=dtype, device="meta")
    node = LazyNode(aten.zeros.default, (list(shape),), {"dtype": dtype}, [meta])
    return _wrap(Ref(node, 0), state)


def _input_value(ref: Ref) -> Any:
    """What a graph input sends: the device's handle when it holds the
    value (nothing travels), else the host value."""
    held = ref.node.held
    if held is not None and held[ref.index] is not None:
        return held[ref.index]
    return ref.node.values[ref.index]


def _host_bytes(value: Any) -> int:
    return value.numel() * value.element_size() if isinstance(value, torch.Tensor) else 0


def materialise(tensors: Sequence[KilnTensor]) -> list[torch.Tensor]:
    """The host values of ``tensors``, running what they still wait for and
    fetching what only the device holds."""
    refs = [t._kiln_storage.ref for t in tensors]
    by_state: dict[int, list[Ref]] = collections.defaultdict(list)
    states = {}
    for t, ref in zip(tensors, refs):
        if ref.node.pending:
            by_state[t._kiln_state.index].append(ref)
            states[t._kiln_state.index] = t._kiln_state
    for index, wanted in by_state.items():
        state = states[index]
        with state._lock:
            cut = GraphCut(wanted)
            if not cut.empty:
                state.run(cut)
    for t, ref in zip(tensors, refs):
        if ref.node.values[ref.index] is None:
            _fetch(ref, t._kiln_state)
    return [ref.node.values[ref.index] for ref in refs]


def _fetch(ref: Ref, state: DeviceState) -> None:
    """Brings a value only the device holds to the host (a graph that
    copies it out), and keeps it there too."""
    copy = Ref(LazyNode(aten.clone.default, (ref,), {}, [ref.meta]), 0)
    with state._lock:
        state.run(GraphCut([copy]))
    ref.node.values[ref.index] = copy.node.values[0]


def compile_pending(tensors: Sequence[KilnTensor],
                    arguments: Sequence[KilnTensor] = ()) -> Any:
    """The compiled graph of everything ``tensors`` still wait for, and
    nothing else (None when their values exist): what ``get_mlir`` shows.
    ``arguments`` are its first inputs, in order."""
    state = tensors[0]._kiln_state
    cut = GraphCut([t._kiln_storage.ref for t in tensors], keep_live=False,
                   leading_inputs=[a._kiln_storage.ref for a in arguments])
    return None if cut.empty else state.compile(cut)


# --- dispatch ------------------------------------------------------------------


def _kiln_tensors(tree: Any) -> list[KilnTensor]:
    return [x for x in leaves(tree) if isinstance(x, KilnTensor)]


def _state_of(args: Any, kwargs: Any) -> DeviceState:
    tensors = _kiln_tensors((args, kwargs))
    states = {t._kiln_state.index: t._kiln_state for t in tensors}
    if len(states) > 1:
        raise RuntimeError("Expected all tensors to be on the same device, but found "
                           f"{', '.join(f'kiln:{i}' for i in sorted(states))}")
    if states:
        return next(iter(states.values()))
    device = kwargs.get("device")
    return device_state(device)


def _is_kiln_device(x: Any) -> bool:
    return isinstance(x, torch.device) and x.type == "kiln"


def _to_meta(x: Any) -> Any:
    if isinstance(x, KilnTensor):
        return x._kiln_meta
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
    if _is_kiln_device(x):
        return torch.device("meta")
    return x


def _to_ref(x: Any) -> Any:
    if isinstance(x, KilnTensor):
        return x._kiln_storage.ref
    if isinstance(x, torch.Tensor):  # a host tensor (a 0-d scalar, say): its value now
        return Ref(LazyNode.leaf(x.detach().clone()), 0)
    if _is_kiln_device(x):
        return torch.device("cpu")
    return x


def _contiguous(meta: torch.Tensor) -> torch.Tensor:
    return meta if meta.is_contiguous() else torch.empty(meta.shape, dtype=meta.dtype,
                                                         device="meta")


def _check_autograd_device(args: tuple) -> None:
    """Autograd records on kiln:0 only. PyTorch's engine gives each device
    index a ready queue, counted once per process from the device guard, and
    a device guard written in Python (torch._C._acc) reports one device: a
    backward() through kiln:1 would fail inside the engine with an internal
    assert. So an op that autograd records there is refused up front."""
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, KilnTensor) and t.requires_grad and t.device.index:
                raise UnimplementedError(
                    f"autograd on {t.device}: PyTorch's autograd engine serves one Kiln "
                    "device per process (its Python device guard reports one device), "
                    "so gradients are recorded on kiln:0 only",
                    hint="train on the first device made with kiln.device(); other "
                         "devices run under torch.no_grad()")


def _dispatch(func: Any, args: tuple, kwargs: dict) -> Any:
    if torch.is_grad_enabled() and func is not torch.ops.aten.detach.default:
        _check_autograd_device(args)  # detach records nothing
    special = _SPECIAL.get(func)
    if special is not None:
        return special(func, args, kwargs)
    if func in _EMPTY_AS_ZEROS:
        return _record(_EMPTY_AS_ZEROS[func], args, kwargs)
    if torch.Tag.nondeterministic_seeded in func.tags and \
            _state_of(args, kwargs).random == "host":
        return _on_host(func, args, kwargs, reason=None)  # eager's draws
    if func.is_view:
        return _view(func, args, kwargs)
    if func._schema.is_mutable:
        return _mutate(func, args, kwargs)
    return _record(func, args, kwargs)


def _meta_key(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        m = x._kiln_meta if isinstance(x, KilnTensor) else x
        return (tuple(m.shape), tuple(m.stride()), m.storage_offset(), m.dtype)
    if isinstance(x, (list, tuple)):
        return ("seq", tuple(_meta_key(i) for i in x))
    if isinstance(x, dict):
        return ("map", tuple((k, _meta_key(v)) for k, v in x.items()))
    return x


#: (op, argument types and values) → the meta result. A training loop runs
#: the same ops on the same shapes every step; PyTorch's meta kernels (many
#: written in Python) were half of the time spent recording one (measured).
_META_CACHE: collections.OrderedDict[Any, Any] = collections.OrderedDict()
_META_CACHE_SIZE = 4096


def _meta_result(func: Any, args: tuple, kwargs: dict) -> Any:
    try:
        key = (func, _meta_key(args), _meta_key(kwargs))
        hash(key)
    except TypeError:  # an unhashable argument: no caching
        key = None
    if key is not None and key in _META_CACHE:
        _META_CACHE.move_to_end(key)
        return _META_CACHE[key]
    margs, mkwargs = map_leaves(_to_meta, (args, kwargs))
    meta_out = func(*margs, **mkwargs)
    if key is not None:
        _META_CACHE[key] = meta_out
        if len(_META_CACHE) > _META_CACHE_SIZE:
            _META_CACHE.popitem(last=False)
    return meta_out


def _record_refs(func: Any, args: tuple, kwargs: dict) -> tuple[Any, LazyNode | None]:
    """Records ``func``: (its meta result, the node), or (meta result, None)
    when it has no tensor outputs."""
    meta_out = _meta_result(func, args, kwargs)
    metas = [_contiguous(m) for m in leaves(meta_out) if isinstance(m, torch.Tensor)]
    if not metas:
        return meta_out, None
    rargs, rkwargs = map_leaves(_to_ref, (args, kwargs))
    return meta_out, LazyNode(func, tuple(rargs), dict(rkwargs), metas)


def _record(func: Any, args: tuple, kwargs: dict) -> Any:
    state = _state_of(args, kwargs)
    try:
        meta_out, node = _record_refs(func, args, kwargs)
    except NotImplementedError as e:
        return _on_host(func, args, kwargs, reason=f"no shape function ({e})".splitlines()[0])
    if node is None:  # a question about shapes (is_same_size...): the meta answer
        return meta_out
    count = iter(range(len(node.metas)))
    return map_leaves(lambda m: _wrap(Ref(node, next(count)), state)
                           if isinstance(m, torch.Tensor) else m, meta_out)


def _view(func: Any, args: tuple, kwargs: dict) -> Any:
    base = args[0]
    state = base._kiln_state
    meta_out = _meta_result(func, args, kwargs)
    metas = [m for m in leaves(meta_out) if isinstance(m, torch.Tensor)]
    node_metas = [_contiguous(m) for m in metas]
    rest = tuple(map_leaves(_to_ref, args[1:]))
    count = iter(range(len(metas)))

    def wrap(m: Any) -> Any:
        if not isinstance(m, torch.Tensor):
            return m
        index = next(count)
        storage = _ViewStorage(base._kiln_storage, func, rest, dict(kwargs), index, node_metas)
        return KilnTensor(storage, metas[index], state)

    return map_leaves(wrap, meta_out)


#: In-place ops whose functional form has another name or overload.
_FUNCTIONAL_NAMES = {
    aten.normal_.default: aten.normal_functional.default,
    aten.bernoulli_.float: aten.bernoulli.p,
    aten.bernoulli_.Tensor: aten.bernoulli.Tensor,
}


def _functional_variant(func: Any) -> Any:
    """``add_.Tensor`` → ``add.Tensor``, ``_foreach_mul_.Scalar`` →
    ``_foreach_mul.Scalar``; None when there is none."""
    renamed = _FUNCTIONAL_NAMES.get(func)
    if renamed is not None:
        return renamed
    name = func._schema.name.split("::")[1]
    if not name.endswith("_"):
        return None
    packet = getattr(aten, name[:-1], None)
    return getattr(packet, func._overloadname, None) if packet is not None else None


def _written_args(func: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The arguments ``func`` writes into (tensors, or lists of them)."""
    written = []
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is not None and a.alias_info.is_write:
            value = args[i] if i < len(args) else kwargs.get(a.name)
            if value is not None:
                written.append(value)
    return written


def _mutate(func: Any, args: tuple, kwargs: dict) -> Any:
    written = _written_args(func, args, kwargs)
    functional = _functional_variant(func)
    is_out = any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
                 for a in func._schema.arguments)
    if functional is None or is_out or len(written) != 1:
        decomposition = decompositions().get(func)
        if decomposition is not None:  # e.g. batch norm updating its running stats
            return decomposition(*args, **kwargs)
        return _on_host(func, args, kwargs, reason="it writes into its arguments")
    targets = written[0]
    result = _record(functional, args, kwargs)
    if isinstance(targets, torch.Tensor):
        _assign(targets, result)
        return targets
    for target, value in zip(targets, result):
        _assign(target, value)
    return None


def _assign(target: Any, value: KilnTensor) -> None:
    """``target`` now holds ``value`` (cast to its dtype, as in-place ops do)."""
    if not isinstance(target, KilnTensor):
        raise UnsupportedOpError(f"an in-place op writes a {target.device} tensor from "
                                 "kiln tensors; move it to the kiln device first")
    if value.shape != target.shape:
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                           f"broadcast shape {list(value.shape)}")
    if value.dtype != target.dtype:
        if not torch.can_cast(value.dtype, target.dtype):
            raise RuntimeError(f"result type {_dtype_name(value.dtype)} can't be cast to "
                               f"the desired output type {_dtype_name(target.dtype)}")
        value = _record(aten._to_copy.default, (value,), {"dtype": target.dtype})
    target._kiln_storage.bind(value._kiln_storage.ref)


def _dtype_name(dtype: torch.dtype) -> str:
    return {torch.float32: "Float", torch.float64: "Double", torch.int64: "Long",
            torch.int32: "Int", torch.bool: "Bool", torch.float16: "Half",
            torch.bfloat16: "BFloat16"}.get(dtype, str(dtype))


def _on_host(func: Any, args: tuple, kwargs: dict, reason: str | None) -> Any:
    """Runs ``func`` with PyTorch on the host. ``reason`` None: by contract
    (random ops); otherwise a placement fallback, which must be allowed."""
    state = _state_of(args, kwargs)
    if reason is not None:
        if state.fallback != "cpu":
            raise UnsupportedOpError(f"{func} cannot be recorded on {state.device}: {reason}",
                                     hint="make the device with fallback=\"cpu\" to run such "
                                          "ops on the host")
        placement_log.warning("kiln: %s ran on the host, not on %s target %r: %s",
                              func, state.device, state.target, reason)
    state.stats.host_ops[str(func)] += 1
    tensors = _kiln_tensors((args, kwargs))
    written = {id(t) for w in _written_args(func, args, kwargs)
               for t in (w if isinstance(w, (list, tuple)) else [w])}
    # A random fill (normal_, uniform_...) overwrites all of its target: what
    # the target held is not needed, so nothing runs to compute it.
    fill = reason is None and len(tensors) == len(written)
    values = ([torch.empty(t.shape, dtype=t.dtype) for t in tensors] if fill
              else materialise(tensors))
    host = {id(t): (v.clone() if id(t) in written and not fill else v)
            for t, v in zip(tensors, values)}
    cargs, ckwargs = map_leaves(
        lambda x: host[id(x)] if isinstance(x, KilnTensor)
        else torch.device("cpu") if _is_kiln_device(x) else x, (args, kwargs))
    out = func(*cargs, **ckwargs)
    back = {id(host[id(t)]): t for t in tensors if id(t) in written}
    for t in tensors:
        if id(t) in written:
            t._kiln_storage.bind(Ref(LazyNode.leaf(host[id(t)]), 0))

    def wrap(o: Any) -> Any:
        if not isinstance(o, torch.Tensor):
            return o
        return back[id(o)] if id(o) in back else wrap_host_value(o, state)

    return map_leaves(wrap, out)


# --- special ops ----------------------------------------------------------------


def _alias(func: Any, args: tuple, kwargs: dict) -> KilnTensor:
    """detach/alias: a new tensor object on the same storage."""
    t = args[0]
    return KilnTensor(t._kiln_storage, t._kiln_meta, t._kiln_state)


def _to_copy(func: Any, args: tuple, kwargs: dict) -> Any:
    x = args[0]
    device = kwargs.get("device")
    dtype = kwargs.get("dtype") or x.dtype
    if device is not None and torch.device(device).type != "kiln":
        value = materialise([x])[0]
        return value.to(device=device, dtype=dtype, copy=True)
    if device is not None and (torch.device(device).index or 0) != x._kiln_state.index:
        value = materialise([x])[0]
        return wrap_host_value(value.to(dtype), device_state(device))
    if dtype == x.dtype:
        return _record(aten.clone.default, (x,), {})
    return _record(aten._to_copy.default, (x,), {"dtype": dtype})


def _copy_(func: Any, args: tuple, kwargs: dict) -> Any:
    dst, src = args[0], args[1]
    if not isinstance(dst, KilnTensor):  # device → host
        dst.copy_(materialise([src])[0])
        return dst
    if isinstance(src, KilnTensor) and src._kiln_state is dst._kiln_state:
        value = src
        if value.dtype != dst.dtype:
            value = _record(aten._to_copy.default, (value,), {"dtype": dst.dtype})
        if value.shape != dst.shape:
            value = _record(aten.clone.default, (_view(aten.expand.default,
                                                       (value, list(dst.shape)), {}),), {})
        dst._kiln_storage.bind(value._kiln_storage.ref)
        return dst
    host = materialise([src])[0] if isinstance(src, KilnTensor) else src.detach()
    value = host.to(dst.dtype).expand(dst.shape).contiguous().clone()
    dst._kiln_storage.bind(Ref(LazyNode.leaf(value), 0))
    return dst


def _on_host_op(func: Any, args: tuple, kwargs: dict) -> Any:
    """Ops whose answer is a host value (``item``, ``bool``) or whose shape
    depends on values (``nonzero``): the value is needed now."""
    state = _state_of(args, kwargs)
    state.stats.host_ops[str(func)] += 1
    tensors = _kiln_tensors((args, kwargs))
    values = {id(t): v for t, v in zip(tensors, materialise(tensors))}
    cargs, ckwargs = map_leaves(lambda x: values[id(x)] if isinstance(x, KilnTensor)
                                     else x, (args, kwargs))
    out = func(*cargs, **ckwargs)
    return map_leaves(lambda o: wrap_host_value(o, state)
                           if isinstance(o, torch.Tensor) else o, out)


_SPECIAL: dict[Any, Callable[..., Any]] = {
    aten.detach.default: _alias,
    aten.alias.default: _alias,
    aten.lift_fresh.default: _alias,
    aten._to_copy.default: _to_copy,
    aten.copy_.default: _copy_,
    aten._local_scalar_dense.default: _on_host_op,
    aten.is_nonzero.default: _on_host_op,
    aten.equal.default: _on_host_op,
    aten.nonzero.default: _on_host_op,
    aten.masked_select.default: _on_host_op,
    aten._unique2.default: _on_host_op,
    aten.unique_consecutive.default: _on_host_op,
    aten.unique_dim.default: _on_host_op,
    aten.repeat_interleave.Tensor: _on_host_op,
    aten.bincount.default: _on_host_op,
}

#: ``empty`` has no defined values; on the device it is zeros.
_EMPTY_AS_ZEROS = {
    aten.empty_like.default: aten.zeros_like.default,
    aten.new_empty.default: aten.new_zeros.default,
}


# --- writes through views ---------------------------------------------------------


def _record_ref(func: Any, args: tuple) -> Ref:
    margs = map_leaves(lambda x: x.meta if isinstance(x, Ref) else x, args)
    meta = func(*margs)
    return Ref(LazyNode(func, args, {}, [_contiguous(meta)]), 0)


def _scatter_back(view: _ViewStorage, base: Ref, new: Ref) -> Ref:
    """The base after writing ``new`` into the part ``view`` shows."""
    name = view.op._schema.name.split("::")[1]
    args = view.args
    shape = list(base.meta.shape)
    if name in ("view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "flatten",
                "unflatten", "view_as"):
        return _record_ref(aten.view.default, (new, shape))
    if name in ("t", "transpose", "permute", "mT", "numpy_T"):
        rank = len(shape)
        if name == "permute":
            perm = [d % rank for d in args[0]]
        elif name == "transpose":
            perm = list(range(rank))
            a, b = args[0] % rank, args[1] % rank
            perm[a], perm[b] = perm[b], perm[a]
        else:
            perm = list(reversed(range(rank))) if rank == 2 else list(range(rank))
        inverse = [perm.index(i) for i in range(rank)]
        return _record_ref(aten.permute.default, (new, inverse))
    if name == "slice":
        return _record_ref(aten.slice_scatter.default, (base, new, *args))
    if name == "select":
        return _record_ref(aten.select_scatter.default, (base, new, *args))
    if name == "diagonal":
        return _record_ref(aten.diagonal_scatter.default, (base, new, *args))
    if name == "as_strided":
        return _record_ref(aten.as_strided_scatter.default, (base, new, *args))
    if name == "unbind":
        dim = args[0] if args else 0
        return _record_ref(aten.select_scatter.default, (base, new, dim, view.index))
    if name in ("split", "split_with_sizes"):
        dim = (args[1] if len(args) > 1 else 0) % len(shape)
        if name == "split":
            sizes = [args[0]] * (shape[dim] // args[0]) + (
                [shape[dim] % args[0]] if shape[dim] % args[0] else [])
        else:
            sizes = list(args[0])
        start = sum(sizes[:view.index])
        return _record_ref(aten.slice_scatter.default,
                           (base, new, dim, start, start + sizes[view.index]))
    if name == "expand":
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    raise UnimplementedError(f"writing through a view made by {view.op} is not supported on "
                             "a kiln device", hint="clone() the view, write to the clone")
