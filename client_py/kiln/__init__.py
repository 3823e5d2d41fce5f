"""Kiln: compile PyTorch models on a Kiln daemon and run them on its devices.

    import kiln, torch
    client = kiln.Client("localhost:50051")
    compiled = client.compile(torch.export.export(model, (x,)), target="cpu")
    y = compiled(x)

    fast = torch.compile(model, backend=kiln.backend("localhost:50051"))
"""

from kiln.backend import backend
from kiln.client import Client, CompiledModel, DeviceInfo
from kiln.credentials import TlsConfig
from kiln.errors import (CompileError, DeadlineExceededError, FailedPreconditionError,
                         InternalError, InvalidArgumentError, KilnError, NotFoundError,
                         PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
                         UnavailableError, UnimplementedError, UnsupportedOpError,
                         VerificationError)
from kiln.graph import serialize_graph_module
from kiln.introspect import get_mlir
from kiln.op_report import LayerCost, OpReport
from kiln.placement import NodePlacement, PlacementReport

__all__ = [
    "Client", "CompiledModel", "DeviceInfo", "TlsConfig", "backend", "serialize_graph_module",
    "get_mlir", "OpReport", "LayerCost", "PlacementReport", "NodePlacement",
    "KilnError", "InvalidArgumentError", "NotFoundError", "FailedPreconditionError",
    "UnavailableError", "DeadlineExceededError", "InternalError", "CompileError",
    "UnimplementedError", "UnsupportedOpError", "VerificationError",
    "UnauthenticatedError", "PermissionDeniedError", "ResourceExhaustedError",
]
__version__ = "0.1.0"
