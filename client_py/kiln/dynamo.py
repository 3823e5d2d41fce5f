"""``backend="kiln"``: Kiln as a named torch.compile backend.

    model = torch.compile(model, backend="kiln",
                          options={"address": "localhost:50051", "target": "cpu"})

The package registers :func:`kiln_backend` under the ``torch_dynamo_backends``
entry-point group (pyproject.toml), which is how torch finds backends by
name. ``options`` are those of :func:`kiln.backend`: ``address`` (default
``$KILN_ADDRESS``, else localhost:50051), ``target``, ``mode``, ``fallback``,
``verify``, ``max_fallback_fraction``, ``timeout``, ``codegen_dir`` and
``compile_options`` (CompileOptions fields). Graphs compiled with the same
options share one :class:`kiln.Client` (one channel to the daemon).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Mapping

import torch

from kiln.backend import backend
from kiln.errors import InvalidArgumentError

__all__ = ["kiln_backend", "OPTION_NAMES", "DEFAULT_ADDRESS"]

DEFAULT_ADDRESS = "localhost:50051"

#: The keys ``options`` may hold.
OPTION_NAMES = ("address", "target", "mode", "fallback", "verify", "max_fallback_fraction",
                "timeout", "codegen_dir", "compile_options")

_BACKENDS: dict[tuple, Callable[..., Any]] = {}
_LOCK = threading.Lock()


def _key(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_key(v) for v in value)
    return value


def backend_for(options: Mapping[str, Any] | None) -> Callable[..., Any]:
    """The :func:`kiln.backend` for these options (made once per distinct
    options, so graphs share its client)."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise InvalidArgumentError(
            f"torch.compile(backend=\"kiln\") got unknown option(s) {', '.join(unknown)}",
            hint=f"the options are {', '.join(OPTION_NAMES)}")
    options.setdefault("address", os.environ.get("KILN_ADDRESS") or DEFAULT_ADDRESS)
    key = _key(options)
    with _LOCK:
        made = _BACKENDS.get(key)
        if made is None:
            made = backend(options["address"], target=options.get("target"),
                           fallback=options.get("fallback"),
                           options=options.get("compile_options"),
                           timeout=options.get("timeout", 300.0),
                           mode=options.get("mode", "execute"),
                           codegen_dir=options.get("codegen_dir"),
                           verify=bool(options.get("verify", False)),
                           max_fallback_fraction=options.get("max_fallback_fraction"))
            _BACKENDS[key] = made
    return made


def kiln_backend(gm: torch.fx.GraphModule, example_inputs: list, *,
                 options: Mapping[str, Any] | None = None, mode: str | None = None,
                 **unused: Any) -> Callable[..., Any]:
    """The ``torch_dynamo_backends`` entry point: what ``backend="kiln"`` runs
    for each Dynamo graph. torch passes ``options`` (see the module) and its
    own ``mode`` (an Inductor notion Kiln has no use for)."""
    if mode not in (None, "default"):
        raise InvalidArgumentError(
            f"torch.compile(backend=\"kiln\", mode={mode!r}): torch's modes are Inductor's",
            hint="Kiln's modes go in options={\"mode\": \"execute\"|\"simulate\"|\"compile\"|"
                 "\"codegen\"|\"trace\"|\"eager\"}")
    return backend_for(options)(gm, example_inputs)
