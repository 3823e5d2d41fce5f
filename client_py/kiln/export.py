"""From PyTorch programs to Kiln graphs: torch.export programs decomposed to
core ATen, and fx GraphModules, serialised as kiln.v1.Graph plus weights."""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from typing import Any

import torch
import torch.nn.functional as F
import torch.fx

from kiln.errors import InvalidArgumentError, UnsupportedOpError
from kiln.graph import SerializedGraph, serialize_graph_module
from kiln.linalg_decompositions import pdist_decompositions, pinv_decompositions

__all__ = ["decomposition_table", "run_decompositions", "serialize_exported",
           "serialize_model"]

# Ops newer torch releases keep in "core ATen" that Kiln's compiler takes in
# their decomposed form (index arithmetic, gathers): torch 2.5 decomposed
# the .vec upsamplings by default, later releases do not.
_ALSO_DECOMPOSED = ("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
                    "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
                    "upsample_bicubic2d")

# Ops outside core ATen whose decompositions in torch's table are made of
# ops Kiln compiles (the copy variants of views, addmv, dist, ldexp, and
# the log-normal, Cauchy and geometric draws from uniform and normal
# ones); torch.export keeps them whole otherwise. (Special functions such
# as lgamma decompose only to prims there; Kiln imports them whole.)
_TORCH_DECOMPOSED = ("view_copy", "permute_copy", "narrow_copy", "as_strided_copy",
                     "unbind_copy", "addmv", "dist", "ldexp", "log_normal", "cauchy",
                     "geometric")

# Resamplings whose uint8 form Kiln imports whole (aten.upsample_separable):
# eager's uint8 kernel resamples in fixed point, one dim at a time, rounding
# to uint8 between the dims; torch's decomposition computes in float.
_WHOLE_FOR_UINT8 = ("upsample_bilinear2d", "upsample_bicubic2d")

# Train-mode batch norm: batch statistics from means and variances over the
# batch and spatial dims, and the running statistics' update as outputs
# (AOTAutograd writes them back into the module's buffers). Eval-mode batch
# norm (`_native_batch_norm_legit_no_training`) stays one op, which the
# compiler folds into convolutions.
_TRAIN_BATCH_NORM = ("_native_batch_norm_legit_functional", "_native_batch_norm_legit",
                     "_batch_norm_with_update_functional")


def _threshold_backward(grad_output: torch.Tensor, self: torch.Tensor,
                        threshold: Any) -> torch.Tensor:
    """aten.threshold_backward with eager's type promotion: torch's own
    decomposition returns grad_output's dtype (int64 for an int64 grad and a
    float32 self, where eager gives float32)."""
    dtype = torch.result_type(grad_output, self)
    return torch.where(self <= threshold, torch.zeros((), dtype=dtype),
                       grad_output.to(dtype))


def _float_only(decomposed: Any) -> Any:
    """torch's decomposition of a resampling, for floating-point inputs only:
    a uint8 one stays whole (NotImplemented tells the tracer to keep it).

    Where torch decomposes the op before it asks the table, the float
    decomposition still applies and the uint8 result is off by one in some
    elements: torch 2.5's export of ``upsample_bilinear2d.vec`` (its
    autograd kernel decomposes it). torch.compile would too
    (functionalization decomposes the composite ``.vec``), but the backend
    puts kiln::upsample_uint8 in its place first (kiln/resampling.py)."""
    def run(*args: Any, **kwargs: Any) -> Any:
        x = args[0] if args else kwargs.get("input", kwargs.get("self"))
        if isinstance(x, torch.Tensor) and x.dtype == torch.uint8:
            return NotImplemented
        return decomposed(*args, **kwargs)
    return run


def _eye(n: int, m: int | None = None, *, dtype: torch.dtype | None = None,
         layout: Any = None, device: Any = None, pin_memory: Any = None,
         requires_grad: bool = False) -> torch.Tensor:
    """aten.eye as row index == column index, over int64 aranges: newer
    torch's own decomposition picks the narrowest unsigned type that holds
    the order (uint16 from 256 on), which Kiln's graphs do not carry."""
    del layout, pin_memory, requires_grad  # strided, as eager's
    rows = torch.arange(n, dtype=torch.int64, device=device)
    cols = torch.arange(n if m is None else m, dtype=torch.int64, device=device)
    return (rows.unsqueeze(-1) == cols).to(dtype or torch.get_default_dtype())


def _nonzero_static(self: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    """aten.nonzero_static in ops of static shapes: the first ``size``
    nonzero positions in row-major order, padded with ``fill_value``. Each
    nonzero element's running count is its row; the rest, and those past
    ``size``, go to one more row that is cut off."""
    flat = self.reshape(-1) != 0
    count, rank = flat.numel(), self.dim()
    position = torch.arange(count, dtype=torch.int64, device=self.device)
    coordinates = []
    for extent in reversed(self.shape):
        coordinates.append(position % extent)
        position = torch.div(position, extent, rounding_mode="floor")
    coordinates = torch.stack(coordinates[::-1], dim=1) if rank else \
        torch.zeros(count, 0, dtype=torch.int64, device=self.device)
    row = torch.cumsum(flat.to(torch.int64), 0) - 1
    row = torch.where(flat & (row < size), row, size)
    rows = torch.full((size + 1, rank), fill_value, dtype=torch.int64, device=self.device)
    rows = rows.scatter(0, row.unsqueeze(1).expand(count, rank), coordinates)
    return rows[:size]


def _as_strided_scatter(self: torch.Tensor, src: torch.Tensor, size: Any, stride: Any,
                        storage_offset: int | None = None) -> torch.Tensor:
    """aten.as_strided_scatter as an index_put into self's row-major
    elements (what Kiln's as_strided reads): the position of each element of
    the strided view is storage_offset plus its indices times the strides.
    torch's own decomposition leaves prims.as_strided_scatter."""
    position = torch.full((), storage_offset or 0, dtype=torch.int64, device=self.device)
    for extent, step in zip(size, stride):
        steps = torch.arange(extent, dtype=torch.int64, device=self.device) * step
        position = position.unsqueeze(-1) + steps
    flat = self.reshape(-1).index_put((position.reshape(-1),), src.reshape(-1).to(self.dtype))
    return flat.reshape(self.shape)


#: addbmm of f16/bf16 batches up to this long rounds after each product,
#: as eager's loop of addmm_ does; longer ones sum in f32 and round once.
_ADDBMM_STEPWISE_BATCHES = 16


def _addbmm(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *,
            beta: Any = 1, alpha: Any = 1) -> torch.Tensor:
    """aten.addbmm as beta * self + alpha * the sum of the batch's products,
    as eager computes it: integer tensors take beta and alpha cut to
    integers and sum in their own type (int8 products wrap, where a plain
    sum would widen to int64); f16/bf16 add one product at a time in f32,
    rounding after each (eager's loop of addmm_); beta = 0 ignores self,
    NaN included."""
    dtype = batch1.dtype
    shape = torch.broadcast_shapes(self.shape, (batch1.shape[1], batch2.shape[2]))
    if not dtype.is_floating_point and not dtype.is_complex:
        beta, alpha = int(beta), int(alpha)
    if dtype in (torch.float16, torch.bfloat16) and \
            0 < batch1.shape[0] <= _ADDBMM_STEPWISE_BATCHES:
        result = (self.float() * beta).expand(shape) if beta != 0 else None
        for b in range(batch1.shape[0]):
            step = alpha * (batch1[b].float() @ batch2[b].float())
            result = (step if result is None else result.float() + step).to(dtype)
        return result
    product = torch.bmm(batch1, batch2).sum(0, dtype=dtype)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product.expand(shape).clone()
    return (self if beta == 1 else self * beta) + product


def _rrelu_with_noise_functional(self: torch.Tensor, noise: torch.Tensor,
                                 lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0,
                                 training: bool = False, generator: Any = None) -> Any:
    """aten.rrelu_with_noise_functional as eager's CPU kernel computes it: in
    training each element at or below 0 is scaled by its own slope drawn
    uniformly from [lower, upper) (Kiln's generator: the draws follow the
    distribution, not eager's values), which is also the noise, 1 elsewhere;
    in eval mode leaky_relu by the mean slope, the noise unchanged."""
    del generator  # Kiln draws with the graph's own seed (kiln.rng)
    if not training:
        return F.leaky_relu(self, (lower + upper) / 2.0), noise
    slopes = torch.rand_like(self) * (upper - lower) + lower
    scale = torch.where(self <= 0, slopes, torch.ones_like(self))
    return self * scale, scale.to(noise.dtype)


def _unique_consecutive(self: torch.Tensor, return_inverse: bool = False,
                        return_counts: bool = False, dim: int | None = None) -> Any:
    """aten.unique_consecutive with a negative dim made non-negative. torch's
    fake kernel declares a wrong shape for a negative dim ((2, u0, 2, 12)
    for a (2, 12) self along -1, torch 2.15), which the retrace then carries
    to every op after it; along the same dim counted from the front it
    declares eager's. Anything else is the op itself."""
    if dim is None or dim >= 0:
        return NotImplemented
    return torch.ops.aten.unique_consecutive.default(self, return_inverse, return_counts,
                                                     dim + self.dim())


def _half_precision_train_batch_norm(decomposed: Any) -> Any:
    """torch's decomposition of a train-mode batch norm, with eager's
    normalisation for f16/bf16 inputs. Eager's CPU kernel rounds the batch
    mean and 1/std to the input's type as it saves them, and normalises
    with the rounded values: x * a + (bias - mean * a) with a = rstd *
    weight, in f32. torch's decomposition normalises with the f32 values,
    up to 0.22 apart on bf16. Other dtypes, and eval mode (no batch
    statistics), keep the decomposition's output."""
    def run(*args: Any, **kwargs: Any) -> Any:
        results = decomposed(*args, **kwargs)
        x = args[0] if args else kwargs["input"]
        weight = args[1] if len(args) > 1 else kwargs.get("weight")
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        mean, rstd = results[1], results[2]
        if (x.dtype not in (torch.float16, torch.bfloat16) or x.dim() < 2
                or mean.numel() != x.shape[1] or mean.dtype != x.dtype):
            return results
        others = [a for a in (*args[1:5], *kwargs.values()) if isinstance(a, torch.Tensor)]
        if any(t.dtype != x.dtype for t in others):
            # Mixed types (f32 weight, bias or running statistics with a
            # half input): eager normalises with f32 statistics, as the
            # decomposition does, and returns them in f32, where the
            # decomposition rounds them to the input's type.
            eps = args[-1] if len(args) > 5 else kwargs.get("eps", 1e-5)
            dims = [0, *range(2, x.dim())]
            var, exact_mean = torch.var_mean(x.float(), dim=dims, correction=0)
            return (results[0], exact_mean, torch.rsqrt(var + eps), *results[3:])
        shape = [1, -1] + [1] * (x.dim() - 2)
        scale = rstd.float()
        if weight is not None:
            scale = scale * weight.float()
        shift = -mean.float() * scale
        if bias is not None:
            shift = shift + bias.float()
        out = (x.float() * scale.view(shape) + shift.view(shape)).to(x.dtype)
        return (out, *results[1:])
    return run


def _flash_attention_cpu_backward(grad_out: torch.Tensor, query: torch.Tensor,
                                  key: torch.Tensor, value: torch.Tensor, out: torch.Tensor,
                                  logsumexp: torch.Tensor, dropout_p: float, is_causal: bool,
                                  *, attn_mask: torch.Tensor | None = None,
                                  scale: float | None = None) -> Any:
    """The gradients of CPU attention (what autograd asks for after
    scaled_dot_product_attention in a training graph) from matmuls and a
    softmax, which Kiln lowers: with P = softmax(Q K^T * scale + mask),
    dV = P^T dO, dS = P * (dO V^T - rowsum(dO V^T * P)), dQ = dS K * scale,
    dK = dS^T Q * scale. Dropout inside attention has no such form."""
    if dropout_p != 0.0:
        return NotImplemented
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        keep = torch.ones(query.shape[-2], key.shape[-2], dtype=torch.bool,
                          device=query.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        scores = (scores.masked_fill(~attn_mask, float("-inf"))
                  if attn_mask.dtype == torch.bool else scores + attn_mask)
    p = torch.softmax(scores, dim=-1)
    grad_value = p.transpose(-2, -1) @ grad_out
    grad_p = grad_out @ value.transpose(-2, -1)
    grad_scores = p * (grad_p - (grad_p * p).sum(-1, keepdim=True))
    grad_query = grad_scores @ key * scale
    grad_key = grad_scores.transpose(-2, -1) @ query * scale
    return grad_query, grad_key, grad_value


def decomposition_table() -> dict:
    """The decompositions Kiln lowers with, the same on every supported torch:
    the core-ATen set plus the upsamplings and :data:`_TORCH_DECOMPOSED`
    (every overload torch has a decomposition for), with Kiln's own where
    torch's differs from eager.

    A new dict each call (callers may change it), copied from one made when
    the set of CompositeImplicitAutograd operators last changed: making the
    table lists every such operator, a fifth of a second per export."""
    ops = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    return dict(_decomposition_table_for(len(ops)))


@functools.lru_cache(maxsize=1)
def _decomposition_table_for(composite_ops: int) -> dict:
    """The table while ``composite_ops`` operators are CompositeImplicitAutograd
    (a custom operator registered later makes a new one)."""
    del composite_ops  # the cache key
    from torch._decomp import core_aten_decompositions, get_decompositions
    table = core_aten_decompositions()
    packets = [getattr(torch.ops.aten, name)
               for name in _ALSO_DECOMPOSED + _TORCH_DECOMPOSED + _TRAIN_BATCH_NORM
               if hasattr(torch.ops.aten, name)]
    train_batch_norm = get_decompositions([getattr(torch.ops.aten, name)
                                           for name in _TRAIN_BATCH_NORM
                                           if hasattr(torch.ops.aten, name)])
    table.update(get_decompositions(packets))
    for overload, decomposed in train_batch_norm.items():
        table[overload] = _half_precision_train_batch_norm(decomposed)
    for name in _WHOLE_FOR_UINT8:
        for overload, decomposed in get_decompositions([getattr(torch.ops.aten, name)]).items():
            table[overload] = _float_only(decomposed)
    table[torch.ops.aten.threshold_backward.default] = _threshold_backward
    table[torch.ops.aten.eye.default] = _eye
    table[torch.ops.aten.eye.m] = _eye
    table[torch.ops.aten.unique_consecutive.default] = _unique_consecutive
    table[torch.ops.aten.as_strided_scatter.default] = _as_strided_scatter
    table[torch.ops.aten.addbmm.default] = _addbmm
    if hasattr(torch.ops.aten, "rrelu_with_noise_functional"):
        table[torch.ops.aten.rrelu_with_noise_functional.default] = _rrelu_with_noise_functional
    if hasattr(torch.ops.aten, "nonzero_static"):
        table[torch.ops.aten.nonzero_static.default] = _nonzero_static
    table.update(pinv_decompositions())
    table.update(pdist_decompositions())
    table[torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default] = (
        _flash_attention_cpu_backward)
    return dict(table)  # a CustomDecompTable materialises here, once


def serialize_model(model: Any, name: str = "") -> tuple[SerializedGraph, Any, Any]:
    """A model to compile as (serialised graph, output pytree spec, input
    pytree spec): a ``torch.export.ExportedProgram`` (decomposed to core
    ATen) or a core-ATen ``torch.fx.GraphModule`` (no specs). Anything else
    is an :class:`InvalidArgumentError` that says how to get one."""
    if isinstance(model, torch.export.ExportedProgram):
        return serialize_exported(model, name)
    if isinstance(model, torch.fx.GraphModule):
        return serialize_graph_module(model, name=name or type(model).__name__), None, None
    if isinstance(model, torch.nn.Module):
        raise InvalidArgumentError(
            f"Client.compile got an nn.Module ({type(model).__name__}), which has no "
            "graph yet",
            hint="export it first: client.compile(torch.export.export(model, example_args)), "
                 "or use torch.compile(model, backend=\"kiln\")")
    raise InvalidArgumentError(
        f"Client.compile takes a torch.export.ExportedProgram, an fx.GraphModule or a "
        f"kiln.v1.Graph, not {type(model).__name__}",
        hint="export the model with torch.export.export(model, example_args)")


def run_decompositions(ep: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """``ep.run_decompositions()``, working around torch 2.5's attention bug.

    The scaled_dot_product_attention decomposition yields other strides than
    the kernel it replaces, so an ``aten.view`` after it (nn.MultiheadAttention,
    torchvision's ViT) fails to retrace with "Cannot view a tensor"
    (pytorch/pytorch#136543). The exported graph is functional, so ``reshape``
    means the same there: retry with the views as reshapes (restored after,
    the caller's program is left as it was).
    """
    try:
        return ep.run_decompositions(decomposition_table())
    except (RuntimeError, ValueError) as e:
        if "Cannot view a tensor" not in str(e):
            raise
    gm = ep.graph_module
    views = [n for n in gm.graph.nodes
             if n.op == "call_function" and n.target is torch.ops.aten.view.default]
    for n in views:
        n.target = torch.ops.aten.reshape.default
    gm.recompile()
    try:
        return ep.run_decompositions(decomposition_table())
    finally:
        for n in views:
            n.target = torch.ops.aten.view.default
        gm.recompile()


#: Effectful ops torch.export threads an effect token through that only
#: check a result and raise (``torch.linalg.inv``'s singular-matrix error).
#: Kiln drops them with their tokens: such inputs give inf or NaN, as other
#: errors eager raises at run time do (a zero integer divisor gives 0).
_DROPPED_CHECKS = ("aten._linalg_check_errors.default",)


def _drop_effect_tokens(ep: torch.export.ExportedProgram) -> None:
    """Removes the error checks torch.export calls through ``with_effects``
    from ``ep``'s graph (its own, after decomposition), rewiring each
    check's token to its input; the token placeholders and outputs are then
    unused, and :func:`serialize_exported` leaves them out. Any other
    effectful op is UnsupportedOpError naming it."""
    graph = ep.graph_module.graph
    effects = [n for n in graph.nodes if n.op == "call_function"
               and n.target is torch.ops.higher_order.with_effects]
    if not effects:
        return
    for node in effects:
        op = node.args[1]
        if str(op) not in _DROPPED_CHECKS:
            raise UnsupportedOpError(
                f"node '{node.name}' calls {op}, an op with side effects (torch.export "
                "threads an effect token through it); Kiln compiles functional graphs")
        token_in = node.args[0]
        for user in list(node.users):
            if user.target is not operator.getitem or user.args[1] != 0:
                raise UnsupportedOpError(
                    f"node '{node.name}': the result of {op} is used; Kiln drops its check")
            user.replace_all_uses_with(token_in)
            graph.erase_node(user)
        graph.erase_node(node)
    # Token placeholders now feed only the output's token entries.
    output = next(n for n in graph.nodes if n.op == "output")
    tokens = {n for n in graph.nodes if n.op == "placeholder"
              and n.name in {spec.arg.name for spec in ep.graph_signature.input_specs
                             if spec.kind.name == "TOKEN"}}
    output.args = (tuple(None if a in tokens else a for a in output.args[0]),)
    for token in tokens:
        if not token.users:
            graph.erase_node(token)
    ep.graph_module.recompile()


def serialize_exported(ep: torch.export.ExportedProgram, name: str
                        ) -> tuple[SerializedGraph, Any, Any]:
    """Decomposes an ExportedProgram to core ATen and serialises it."""
    from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

    ep = run_decompositions(ep)
    _drop_effect_tokens(ep)
    sig = ep.graph_signature
    # Buffers the program updates are inputs of every call (their values
    # change), not parameters uploaded once.
    updated = {spec.target for spec in sig.output_specs
               if spec.kind == OutputKind.BUFFER_MUTATION}
    parameters: dict[str, torch.Tensor] = {}
    state: list[torch.Tensor] = []
    state_names: list[str] = []
    state_inputs: list[str] = []  # their placeholders
    for spec in sig.input_specs:
        if spec.kind == InputKind.BUFFER and spec.target in updated:
            if spec.target not in ep.state_dict:
                raise UnsupportedOpError(f"the program updates buffer '{spec.target}', which "
                                         "is not persistent (not in its state_dict)")
            state.append(ep.state_dict[spec.target])
            state_names.append(spec.target)
            state_inputs.append(spec.arg.name)
            continue
        if spec.kind == InputKind.USER_INPUT:
            if not isinstance(spec.arg, TensorArgument):
                raise UnsupportedOpError(f"user input {spec.arg} is not a tensor; "
                                         "Kiln inputs are tensors")
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            if spec.target in ep.state_dict:
                tensor = ep.state_dict[spec.target]
            elif spec.target in ep.constants:
                tensor = ep.constants[spec.target]
            else:
                raise UnsupportedOpError(f"{spec.kind.name.lower()} '{spec.target}' is in "
                                         "neither state_dict nor constants")
            parameters[spec.arg.name] = tensor
        elif spec.kind == InputKind.TOKEN:
            continue  # _drop_effect_tokens left it unused
        else:
            raise UnsupportedOpError(f"exported input '{spec.arg}' of kind {spec.kind.name} "
                                     "is not supported")
    # Positions of the user inputs among the call's flattened arguments,
    # which the updated buffers precede.
    user_inputs = [spec.arg.name for spec in sig.input_specs
                   if spec.kind == InputKind.USER_INPUT]
    keep, input_updates = [], []
    for i, spec in enumerate(sig.output_specs):
        if spec.kind == OutputKind.BUFFER_MUTATION:
            # torch.export puts these first: the buffer's new value.
            keep.append(i)
            input_updates.append(state_names.index(spec.target))
        elif spec.kind == OutputKind.USER_INPUT_MUTATION:
            # Then the mutated inputs' new values.
            keep.append(i)
            input_updates.append(len(state) + user_inputs.index(spec.target))
        elif spec.kind == OutputKind.USER_OUTPUT:
            keep.append(i)
        elif spec.kind == OutputKind.TOKEN:
            continue
        else:
            raise UnsupportedOpError(
                f"the program has a {spec.kind.name} output ({spec.target}); Kiln runs "
                "graphs that update buffers but change no parameter (a training step's "
                "parameter update runs in eager)")
    graph_name = name or getattr(ep.module_call_graph[0], "fqn", "") or "exported"
    # The ranges the Dims declared (the ShapeEnv's own start at 2: PyTorch
    # traces as if no symbolic size were 0 or 1).
    ranges = {str(symbol): (bounds.lower, bounds.upper)
              for symbol, bounds in getattr(ep, "range_constraints", {}).items()}
    serialized = serialize_graph_module(ep.graph_module, parameters=parameters,
                                        name=graph_name, keep_outputs=keep,
                                        symbol_ranges=ranges)
    if serialized.input_names[:len(state_inputs)] != state_inputs:
        raise UnsupportedOpError("the program's updated buffers are not its first inputs; "
                                 "Kiln passes them ahead of the caller's arguments")
    serialized.convention = dataclasses.replace(serialized.convention,
                                                input_updates=tuple(input_updates),
                                                state=tuple(state))
    return serialized, ep.call_spec.out_spec, ep.call_spec.in_spec
