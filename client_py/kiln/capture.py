"""``kiln.capture_function``: the module of the ATen ops a block of code runs.

    dev = kiln.device("localhost:50051")
    lhs, rhs = torch.rand(2, 3), torch.rand(3, 4)
    with kiln.capture_function("mm", [lhs, rhs], device=dev) as f:
        result = torch.mm(lhs, rhs)
        f.returns([result])
    print(f.module)          # the ATen-dialect module: func(lhs, rhs) -> result
    f.compiled(lhs, rhs)     # the same graph, compiled for dev's target

The block runs as usual, on the host, so its values are real. A dispatch
mode watches it: every ATen op whose arguments come from the declared inputs
(or from ops already seen) is also applied to a shadow tensor on ``device``,
where :mod:`kiln.lazy_tensor` records it. ``returns`` names the results; the
module is the graph that computes them from the inputs, compiled by the
daemon (and cached) when first asked for. A host tensor the block reads
without declaring it (a closure's weight, a constant) becomes one more
input, after the declared ones.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from kiln.errors import InvalidArgumentError
from kiln.lazy_graph import leaves, map_leaves
from kiln.lazy_tensor import KilnTensor, compile_pending, device_state, wrap_host_value

__all__ = ["capture_function", "CapturedFunction"]


class CapturedFunction(TorchDispatchMode):
    """What ``with kiln.capture_function(...) as f`` gives."""

    def __init__(self, name: str, inputs: Sequence[torch.Tensor], device: Any):
        super().__init__()
        self.name = name
        self._state = device_state(device)
        self._shadows: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._inputs = [self._shadow_of(t) for t in inputs]
        self._results: list[KilnTensor] | None = None
        self._compiled: Any = None

    def _shadow_of(self, t: torch.Tensor) -> KilnTensor:
        shadow = self._shadows.get(t)
        if shadow is None:
            shadow = wrap_host_value(t.detach().clone(), self._state)
            self._shadows[t] = shadow
        return shadow

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self._results is not None:
            return out  # after returns(): nothing more belongs to the function
        if torch.Tag.nondeterministic_seeded in func.tags:
            # Drawn once, on the host: the function takes the draw as a value
            # (a second draw for the shadow would move the generator on).
            # What it wrote (normal_'s self) and what it returned are draws;
            # the arguments it only read keep their shadows.
            written = {id(t) for i, a in enumerate(func._schema.arguments)
                       if a.alias_info is not None and a.alias_info.is_write
                       for t in leaves(args[i] if i < len(args) else kwargs.get(a.name))
                       if isinstance(t, torch.Tensor)}
            for real in leaves(out):
                if isinstance(real, torch.Tensor):
                    written.add(id(real))
            for real in [*leaves(args), *leaves(out)]:
                if isinstance(real, torch.Tensor) and id(real) in written:
                    self._shadows[real] = wrap_host_value(real.detach().clone(), self._state)
            return out
        shadow_args, shadow_kwargs = map_leaves(
            lambda x: self._shadow_of(x) if isinstance(x, torch.Tensor) else
            self._state.device if isinstance(x, torch.device) else x, (args, kwargs))
        shadow_out = func(*shadow_args, **shadow_kwargs)
        for real, shadow in zip(leaves(out), leaves(shadow_out)):
            if isinstance(real, torch.Tensor) and isinstance(shadow, KilnTensor):
                self._shadows[real] = shadow
        return out

    def returns(self, results: Sequence[torch.Tensor]) -> None:
        """Names the function's results (tensors the block computed)."""
        shadows = []
        for i, r in enumerate(results):
            shadow = self._shadows.get(r) if isinstance(r, torch.Tensor) else None
            if shadow is None:
                raise InvalidArgumentError(
                    f"result {i} of {self.name!r} was not computed inside the capture",
                    hint="return tensors that the block computed from its inputs")
            shadows.append(shadow)
        self._results = shadows

    @property
    def compiled(self) -> Any:
        """The function compiled for the device's target (a CompiledModel
        taking the declared inputs, then any undeclared ones)."""
        if self._results is None:
            raise InvalidArgumentError(f"{self.name!r} has no results yet",
                                       hint="call f.returns([...]) inside the block")
        if self._compiled is None:
            self._compiled = compile_pending(self._results, self._inputs)
            if self._compiled is None:
                raise InvalidArgumentError(f"{self.name!r} computes nothing: its results are "
                                           "its inputs")
        return self._compiled

    @property
    def module(self) -> str:
        """The ATen-dialect module of the function."""
        return self.compiled.stage_dumps()["aten"]


def capture_function(name: str, inputs: Sequence[torch.Tensor],
                     device: torch.device | str | int = "kiln:0") -> CapturedFunction:
    """A context manager that records the ATen ops of its block as a function
    of ``inputs`` (see the module docstring); ``device`` is a
    :func:`kiln.device` whose daemon and target compile it."""
    if not all(isinstance(t, torch.Tensor) for t in inputs):
        raise InvalidArgumentError(f"the inputs of {name!r} must be tensors")
    return CapturedFunction(name, inputs, device)
