"""CompileOptions as callers give them: a message, a dict of its fields, or
None (what Client.compile, the torch.compile backend and Cache.explain_miss
accept)."""

from __future__ import annotations

from typing import Any, Mapping

from kiln.v1 import compiler_pb2

__all__ = ["compile_options"]


def compile_options(options: compiler_pb2.CompileOptions | Mapping[str, Any] | None
                    ) -> compiler_pb2.CompileOptions | None:
    """A CompileOptions message from a message, a dict of its fields, or None."""
    if isinstance(options, Mapping):
        return compiler_pb2.CompileOptions(**options)
    return options
