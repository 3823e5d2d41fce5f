"""Kiln: compile PyTorch models on a Kiln daemon and run them on its devices.

    import kiln, torch
    client = kiln.Client("localhost:50051")
    compiled = client.compile(torch.export.export(model, (x,)), target="cpu")
    y = compiled(x)

    fast = torch.compile(model, backend="kiln", options={"address": "localhost:50051"})
    fast = torch.compile(model, backend=kiln.backend("localhost:50051"))

The package's modules are layered, each importing only from layers below it
(tests/test_layering.py checks): the wire (errors, _rpc, blobs, tensors,
execution, local_execute...), export and serialisation (graph, export,
reference, placement, op_report), the compiled-model object (compiled,
session), the features (partition, verify, introspect, torchscript, bundle),
then the API (client, backend, dynamo) and the CLI.
"""

from kiln.backend import backend
from kiln.client import Client, CompiledModel, DaemonInfo, DeviceInfo
from kiln.capture import capture_function
from kiln.credentials import TlsConfig
from kiln.device import device, device_stats
from kiln.errors import (CompileError, DeadlineExceededError, FailedPreconditionError,
                         InternalError, InvalidArgumentError, KilnError, NotFoundError,
                         PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
                         UnavailableError, UnimplementedError, UnsupportedOpError,
                         VerificationError)
from kiln.graph import serialize_graph_module
from kiln.introspect import get_mlir
from kiln.op_report import LayerCost, OpReport
from kiln.placement import NodePlacement, PlacementReport
from kiln.session import Session
from kiln.version import TORCH_RANGE, __version__

__all__ = [
    "Client", "Session", "CompiledModel", "DeviceInfo", "DaemonInfo", "TORCH_RANGE",
    "TlsConfig", "backend", "serialize_graph_module",
    "get_mlir", "device", "device_stats", "capture_function", "OpReport", "LayerCost", "PlacementReport", "NodePlacement",
    "KilnError", "InvalidArgumentError", "NotFoundError", "FailedPreconditionError",
    "UnavailableError", "DeadlineExceededError", "InternalError", "CompileError",
    "UnimplementedError", "UnsupportedOpError", "VerificationError",
    "UnauthenticatedError", "PermissionDeniedError", "ResourceExhaustedError",
]
