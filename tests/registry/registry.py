"""The op-level test registry: named small modules, their inputs and tolerances.

A case is a ``torch.nn.Module`` factory, the inputs to call it with (made from
a generator seeded by the case name, so every run sees the same numbers) and
the tolerances its outputs are compared with against eager PyTorch.

Cases are registered with the :func:`case` decorator on a module class (or a
plain function, wrapped in a module), once per variant::

    @case("relu_f32", randn(3, 4))
    @case("relu_f16", randn(3, 4, dtype=torch.float16))
    class Relu(nn.Module):
        def forward(self, x):
            return torch.relu(x)

or in a loop with :func:`register`. Input specs (:func:`randn`, :func:`randint`,
...) are lazy: they say what the input is and make it from the case's generator.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
import zlib
from typing import Any, Callable, Sequence

import torch
import torch.nn as nn

__all__ = ["Case", "TOLERANCES", "all_cases", "case", "register", "tolerance_for",
           "randn", "rand", "randint", "randbool", "randperm_values", "positive",
           "arange_input", "const", "DTYPE_NAMES"]

#: Default (rtol, atol) per floating dtype, used unless a case overrides them.
#: Integer and bool outputs are always compared exactly.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-9, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.complex128: (1e-9, 1e-9),  # as their parts' type
    torch.complex64: (1e-4, 1e-5),
    torch.float16: (2e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}

DTYPE_NAMES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int8: "i8", torch.int16: "i16", torch.int32: "i32",
    torch.int64: "i64", torch.uint8: "u8", torch.bool: "bool",
    torch.complex64: "c64", torch.complex128: "c128",
}


def tolerance_for(dtype: torch.dtype, rtol: float | None, atol: float | None
                  ) -> tuple[float, float]:
    """(rtol, atol) for an output of ``dtype``: exact for integers and bool."""
    if not dtype.is_floating_point and not dtype.is_complex:
        return 0.0, 0.0
    d_rtol, d_atol = TOLERANCES[dtype]
    return (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol)


# --- input specs -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class InputSpec:
    """One input: a description (for listings) and how to make it."""

    text: str
    make: Callable[[torch.Generator], torch.Tensor]

    def __repr__(self) -> str:
        return self.text


def _shape_text(shape: Sequence[int], dtype: torch.dtype) -> str:
    return f"{DTYPE_NAMES[dtype]}[{','.join(map(str, shape))}]"


def randn(*shape: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> InputSpec:
    """Normal samples (times ``scale``); complex dtypes get independent
    real and imaginary parts."""
    if dtype.is_complex:
        return InputSpec(f"randn {_shape_text(shape, dtype)}",
                         lambda g: torch.view_as_complex(
                             torch.randn((*shape, 2), generator=g, dtype=torch.float64) * scale
                         ).to(dtype))
    return InputSpec(f"randn {_shape_text(shape, dtype)}",
                     lambda g: (torch.randn(shape, generator=g, dtype=torch.float64) * scale
                                ).to(dtype))


def rand(*shape: int, dtype: torch.dtype = torch.float32, low: float = 0.0,
         high: float = 1.0) -> InputSpec:
    """Uniform samples in [low, high)."""
    return InputSpec(f"uniform[{low},{high}) {_shape_text(shape, dtype)}",
                     lambda g: (torch.rand(shape, generator=g, dtype=torch.float64)
                                * (high - low) + low).to(dtype))


def positive(*shape: int, dtype: torch.dtype = torch.float32) -> InputSpec:
    """Uniform samples in [0.1, 4): for log, sqrt, rsqrt, pow bases."""
    return rand(*shape, dtype=dtype, low=0.1, high=4.0)


def randint(low: int, high: int, *shape: int, dtype: torch.dtype = torch.int64,
            nonzero: bool = False) -> InputSpec:
    """Integers in [low, high) (zeros replaced by ``high - 1`` when ``nonzero``)."""
    def make(g: torch.Generator) -> torch.Tensor:
        t = torch.randint(low, high, shape, generator=g, dtype=torch.int64)
        if nonzero:
            t = torch.where(t == 0, torch.full_like(t, high - 1), t)
        return t.to(dtype)
    return InputSpec(f"randint[{low},{high}){' nonzero' if nonzero else ''} "
                     f"{_shape_text(shape, dtype)}", make)


def randbool(*shape: int) -> InputSpec:
    return InputSpec(f"randbool {_shape_text(shape, torch.bool)}",
                     lambda g: torch.rand(shape, generator=g) < 0.5)


def randperm_values(*shape: int, dtype: torch.dtype = torch.float32) -> InputSpec:
    """Distinct values (a shuffled, scaled arange): no ties for sort/topk/argmax."""
    def make(g: torch.Generator) -> torch.Tensor:
        n = 1
        for d in shape:
            n *= d
        perm = torch.randperm(n, generator=g, dtype=torch.int64)
        vals = perm.to(torch.float64) - n / 2
        if dtype.is_floating_point:
            vals = vals * 0.25
        return vals.reshape(shape).to(dtype)
    return InputSpec(f"distinct {_shape_text(shape, dtype)}", make)


def arange_input(*shape: int, dtype: torch.dtype = torch.float32) -> InputSpec:
    def make(g: torch.Generator) -> torch.Tensor:
        n = 1
        for d in shape:
            n *= d
        return torch.arange(n, dtype=torch.float64).reshape(shape).to(dtype)
    return InputSpec(f"arange {_shape_text(shape, dtype)}", make)


def const(value: torch.Tensor, text: str = "") -> InputSpec:
    """A fixed tensor (e.g. indices with a chosen pattern)."""
    return InputSpec(text or f"const {_shape_text(value.shape, value.dtype)}",
                     lambda g: value.clone())


# --- cases -------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class IndexTies:
    """Output ``output`` indexes input ``input`` along ``dim`` and may order
    equal values any way: Kiln's indices pass when they pick, element for
    element, the values eager's pick (NaN equal to NaN) and no row names
    an index twice."""

    output: int
    input: int
    dim: int


@dataclasses.dataclass(frozen=True)
class SignFree:
    """Output ``output`` holds unit vectors along ``dim`` (eigenvectors,
    singular vectors), each defined only up to its sign (a complex vector:
    up to a unit complex factor, its phase), which PyTorch leaves
    unspecified: Kiln's pass when, each turned to agree with eager's (by the
    sign, or the phase, of their dot product), they match eager's within the
    tolerances."""

    output: int
    dim: int = -2


@dataclasses.dataclass(frozen=True)
class Unordered:
    """Output ``output`` holds values along ``dim`` in an order PyTorch
    leaves unspecified (``linalg.eig``'s eigenvalues, whose order is
    LAPACK's convergence order and differs between LAPACK builds): Kiln's
    pass when, each of eager's values paired with the nearest Kiln value not
    yet paired (in eager's order), they match eager's within the
    tolerances."""

    output: int
    dim: int = -1


@dataclasses.dataclass(frozen=True)
class Case:
    """One registered test case."""

    name: str
    family: str
    make_module: Callable[[], nn.Module]
    inputs: tuple[InputSpec, ...]
    rtol: float | None = None
    atol: float | None = None
    #: Outputs that hold indices into an input along a dim where the op leaves
    #: the order among equal values unspecified (topk, an unstable sort):
    #: compared by what they pick, not element by element.
    index_ties: "IndexTies | None" = None
    #: Outputs of vectors whose signs are unspecified (see :class:`SignFree`).
    sign_free: tuple[SignFree, ...] = ()
    #: Outputs of values in an unspecified order (see :class:`Unordered`).
    unordered: tuple[Unordered, ...] = ()

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def build(self) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
        """The module (weights seeded by the name, eval mode) and its inputs."""
        torch.manual_seed(self.seed)
        module = self.make_module().eval()
        g = torch.Generator().manual_seed(self.seed)
        return module, tuple(spec.make(g) for spec in self.inputs)

    def describe(self) -> str:
        tol = "" if self.rtol is None and self.atol is None else \
            f" rtol={self.rtol} atol={self.atol}"
        return f"{self.name} ({', '.join(map(repr, self.inputs))}){tol}"


class FunctionModule(nn.Module):
    """A module whose forward is a plain function of its inputs."""

    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


_CASES: dict[str, Case] = {}


def _calling_family() -> str:
    """The op family of the ``cases_<family>`` module that is registering."""
    frame = sys._getframe(1)
    while frame is not None:
        tail = frame.f_globals.get("__name__", "").rsplit(".", 1)[-1]
        if tail.startswith("cases_"):
            return tail[len("cases_"):]
        frame = frame.f_back
    return "misc"


def register(name: str, factory: Callable[[], nn.Module] | type | Callable[..., Any],
             *inputs: InputSpec, rtol: float | None = None, atol: float | None = None,
             family: str | None = None, sign_free: tuple[SignFree, ...] = (),
             unordered: tuple[Unordered, ...] = (), **kwargs: Any) -> None:
    """Registers one case. ``factory`` is a Module class (called with
    ``kwargs``), a zero-argument module factory, or a plain function of the
    inputs (wrapped in a :class:`FunctionModule`). ``sign_free`` names the
    outputs of vectors with unspecified signs, ``unordered`` those of values
    in an unspecified order."""
    if name in _CASES:
        raise ValueError(f"registry: case {name!r} is registered twice")
    if not name.replace("_", "").isalnum():
        raise ValueError(f"registry: case name {name!r} must be [A-Za-z0-9_]")
    if isinstance(factory, type) and issubclass(factory, nn.Module):
        cls = factory

        def make() -> nn.Module:
            return cls(**kwargs)
    elif kwargs:
        raise ValueError(f"registry: {name}: keyword arguments need a Module class")
    else:
        fn = factory

        def make() -> nn.Module:
            return FunctionModule(fn)
    _CASES[name] = Case(name, family or _calling_family(), make, tuple(inputs), rtol, atol,
                        sign_free=tuple(sign_free), unordered=tuple(unordered))


def case(name: str, *inputs: InputSpec, rtol: float | None = None,
         atol: float | None = None, **kwargs: Any) -> Callable[[Any], Any]:
    """Decorator form of :func:`register`; stack it once per variant."""
    def decorate(obj: Any) -> Any:
        register(name, obj, *inputs, rtol=rtol, atol=atol, **kwargs)
        return obj
    return decorate


def all_cases() -> list[Case]:
    """Every case of every ``cases_*`` module, in name order."""
    from tests.registry import __path__ as pkg_path  # noqa: F401 (namespace package)
    for info in pkgutil.iter_modules(pkg_path):
        if info.name.startswith("cases_"):
            importlib.import_module(f"tests.registry.{info.name}")
    return sorted(_CASES.values(), key=lambda c: c.name)
