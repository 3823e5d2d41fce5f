"""Symbolic sizes: PyTorch's SymInts as kiln.v1 size expressions.

A graph exported with ``torch.export`` ``Dim``s (or traced with dynamic
shapes) carries sizes that are symbols of its ShapeEnv. Kiln's wire format
writes each such size as a product of symbol names and at most one positive
integer ("s0", "4*s0*s1"), beside the size it was traced at, and declares
every symbol with the range PyTorch gives it (``Graph.symbols``). One
executable then serves every size in the range (docs/architecture.md,
"Variable sizes").
"""

from __future__ import annotations

from typing import Any

import torch

from kiln.errors import UnsupportedOpError
from kiln.v1 import graph_pb2, tensor_pb2

__all__ = ["MAX_SYMBOL_VALUE", "SymbolTable", "is_symbolic"]

#: The largest value a symbol may take (the compiler's element bound, 2^40);
#: an unbounded range ends here.
MAX_SYMBOL_VALUE = 1 << 40


def is_symbolic(value: Any) -> bool:
    """True for a SymInt that is not a constant."""
    return isinstance(value, torch.SymInt) and not _expr(value).is_Integer


def _expr(value: torch.SymInt) -> Any:
    return value.node.expr


def _bound(value: Any, fallback: int) -> int:
    try:
        number = int(value)
    except Exception:  # int_oo, sympy.oo: no integer
        return fallback
    return min(max(number, 1), MAX_SYMBOL_VALUE)


def _is_data_dependent(symbol: Any) -> bool:
    """True for an unbacked symbol: a size the values decide (u0, u1...)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    return bool(free_unbacked_symbols(symbol))


def _bound_or(value: Any, fallback: int) -> int:
    try:
        return int(value)
    except Exception:  # int_oo, -int_oo, None
        return fallback


class SymbolTable:
    """The symbols one graph's sizes use, with their ranges."""

    def __init__(self, known: Any = None) -> None:
        self._ranges: dict[str, tuple[int, int]] = {}
        #: Ranges the caller knows (name → (min, max)), ahead of the ShapeEnv's.
        self._known = dict(known or {})
        #: The symbols whose values the run computes (torch's unbacked u0...).
        self._data_dependent: set[str] = set()

    def expression(self, value: Any, where: str) -> str | None:
        """The size expression of ``value`` (None for a plain int or a
        constant SymInt); UnsupportedOpError for a size that is not a
        product of symbols."""
        if not isinstance(value, torch.SymInt):
            return None
        expr = _expr(value)
        if expr.is_Integer:
            return None
        coefficient, names = 1, []
        factors = expr.args if expr.is_Mul else (expr,)
        for factor in factors:
            if factor.is_Integer and int(factor) > 0:
                coefficient *= int(factor)
            elif factor.is_Symbol:
                names.append(str(factor))
            elif factor.is_Pow and factor.base.is_Symbol and factor.exp.is_Integer \
                    and int(factor.exp) > 0:
                names.extend([str(factor.base)] * int(factor.exp))
            else:
                raise UnsupportedOpError(
                    f"{where} has size {expr}; Kiln's symbolic sizes are products of "
                    "symbols (a sum or a division, as a strided window makes, needs a "
                    "static size)")
        for symbol in expr.free_symbols:
            self._declare(value, symbol, where)
        names.sort()
        return "*".join(([str(coefficient)] if coefficient != 1 else []) + names)

    def _declare(self, value: torch.SymInt, symbol: Any, where: str) -> None:
        name = str(symbol)
        if name in self._ranges:
            return
        if _is_data_dependent(symbol):
            # The run computes it (nonzero, masked_select, x[mask]). The
            # compiler allocates at what the selection can give, so torch's
            # upper bound is advice (it has none for a masked_select of 2
            # elements); its lower bound is what the program asserts.
            ranges = value.node.shape_env.var_to_range.get(symbol)
            high = min(_bound_or(getattr(ranges, "upper", None), MAX_SYMBOL_VALUE),
                       MAX_SYMBOL_VALUE)
            low = min(max(_bound_or(getattr(ranges, "lower", 0), 0), 0), high)
            self._ranges[name] = (low, high)
            self._data_dependent.add(name)
            return
        if name in self._known:
            lower, upper = self._known[name]
        else:
            ranges = value.node.shape_env.var_to_range.get(symbol)
            lower = getattr(ranges, "lower", 1)
            upper = getattr(ranges, "upper", MAX_SYMBOL_VALUE)
        low = _bound(lower, 1)
        high = _bound(upper, MAX_SYMBOL_VALUE)
        self._ranges[name] = (low, max(low, high))

    def hint(self, value: Any) -> int:
        """The size ``value`` had when traced; for a data-dependent size,
        which has none, its upper bound (1 when torch knows none)."""
        if not isinstance(value, torch.SymInt):
            return int(value)
        expr = _expr(value)
        unbacked = [s for s in expr.free_symbols if _is_data_dependent(s)]
        if unbacked:
            return int(expr.subs({s: self._ranges[str(s)][1]
                                  if self._ranges[str(s)][1] < MAX_SYMBOL_VALUE else 1
                                  for s in unbacked}))
        hint = value.node.hint
        if hint is None:
            hint = value.node.shape_env.size_hint(expr)
        return int(hint)

    def tensor_type(self, dtype_code: int, shape: Any, where: str
                    ) -> tensor_pb2.TensorType:
        """A TensorType whose symbolic extents carry their expressions."""
        symbols = [self.expression(d, where) or "" for d in shape]
        ttype = tensor_pb2.TensorType(dtype=dtype_code, shape=[self.hint(d) for d in shape])
        if any(symbols):
            ttype.symbols.extend(symbols)
        return ttype

    def int_list(self, values: list[Any], attr: graph_pb2.Attribute, where: str) -> None:
        """An int list whose symbolic entries carry their expressions."""
        symbols = [self.expression(v, where) or "" for v in values]
        attr.ints.values.extend(self.hint(v) for v in values)
        if any(symbols):
            attr.ints.symbols.extend(symbols)

    def declare(self, graph: graph_pb2.Graph) -> None:
        """Graph.symbols: every symbol a size used, in name order."""
        for name in sorted(self._ranges, key=lambda n: (len(n), n)):
            low, high = self._ranges[name]
            graph.symbols.add(name=name, min=low, max=high,
                              data_dependent=name in self._data_dependent)

    def __bool__(self) -> bool:
        return bool(self._ranges)
