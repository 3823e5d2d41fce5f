"""Compiling TorchScript archives: kilnd converts them (kiln-torchscript-import).

A TorchScript archive carries no static shapes, so the caller states the
input types with example tensors (or ``(dtype, shape)`` pairs). The daemon
reads the archive with libtorch in a child process, freezes it in eval mode,
rewrites it to core ATen, stores its weights and compiles the graph; the
response carries the converted graph, whose parameter digests the returned
:class:`kiln.CompiledModel` passes to Execute.
"""

from __future__ import annotations

import io
import os
import time
from typing import Any, Mapping, Sequence

import torch

from kiln.blobs import bytes_digest
from kiln.compiled import CompiledModel, Runner, Verifier
from kiln.errors import InvalidArgumentError
from kiln.options import compile_options
from kiln.session import Session
from kiln.tensors import tensor_type
from kiln.v1 import compiler_pb2, tensor_pb2

__all__ = ["torchscript_request", "compile_torchscript"]

# Archives above this size travel as a blob, not inside the request (whose
# size the channel caps at kiln._rpc.MAX_MESSAGE_BYTES).
INLINE_ARCHIVE_LIMIT = 3 << 20


def _archive_bytes(path_or_module: Any) -> bytes:
    if isinstance(path_or_module, torch.jit.ScriptModule):
        buffer = io.BytesIO()
        torch.jit.save(path_or_module, buffer)
        return buffer.getvalue()
    if isinstance(path_or_module, (bytes, bytearray)):
        return bytes(path_or_module)
    if isinstance(path_or_module, (str, os.PathLike)):
        with open(path_or_module, "rb") as f:
            return f.read()
    raise InvalidArgumentError("compile_torchscript takes a path, the archive's bytes or a "
                               f"torch.jit.ScriptModule, not {type(path_or_module).__name__}",
                               hint="torch.jit.script(model) or torch.jit.trace(model, args) "
                                    "makes one")


def _input_type(i: int, example: Any) -> tensor_pb2.TensorType:
    if isinstance(example, torch.Tensor):
        return tensor_type(example.dtype, list(example.shape))
    if isinstance(example, tensor_pb2.TensorType):
        return example
    if isinstance(example, tuple) and len(example) == 2 and isinstance(example[0], torch.dtype):
        return tensor_type(example[0], list(example[1]))
    raise InvalidArgumentError(f"example input {i} is a {type(example).__name__}",
                               hint="give a tensor, a kiln.v1.TensorType or a (dtype, shape) "
                                    "pair per input")


def torchscript_request(session: Session, path_or_module: Any, example_inputs: Sequence[Any],
                        target: str, options: Any, placement: Any = None
                        ) -> compiler_pb2.CompileRequest:
    """The CompileRequest for an archive (uploading it first when it is large)."""
    data = _archive_bytes(path_or_module)
    module = compiler_pb2.TorchScriptModule(
        inputs=[_input_type(i, e) for i, e in enumerate(example_inputs)])
    if len(data) > INLINE_ARCHIVE_LIMIT:
        digest = bytes_digest(data)
        session.blobs.write(digest, data)
        module.blob.CopyFrom(digest)
    else:
        module.data = data
    return compiler_pb2.CompileRequest(torchscript=module, target=target,
                                       options=compile_options(options), placement=placement)


def compile_torchscript(session: Session, path_or_module: Any, example_inputs: Sequence[Any],
                        target: str = "cpu", options: Any = None, placement: Any = None,
                        runner: Runner | None = None, verifier: Verifier | None = None
                        ) -> CompiledModel:
    """See :meth:`kiln.Client.compile_torchscript`."""
    t0 = time.perf_counter()
    request = torchscript_request(session, path_or_module, example_inputs, target, options,
                                  placement)
    upload = time.perf_counter() - t0
    return session.compile_request(request, None, upload_seconds=upload, runner=runner,
                                   verifier=verifier)
