"""``kiln.device``: a Kiln daemon's target as a PyTorch device.

    dev = kiln.device("localhost:50051", target="cpu")     # torch.device("kiln:0")
    a = torch.randn(1, 2, 3).to(dev); model = Adder().to(dev)
    r = model(a, a) + torch.randn(1, 2, 3, device=dev)    # recorded, not run
    print(kiln.get_mlir(r))                               # the pending graph's ATen module
    r.cpu()                                               # compiled by kilnd, run by an agent

PyTorch's PrivateUse1 device is renamed ``kiln``, with the device guard,
hooks and backend module it needs registered from Python; the tensors are
:class:`kiln.lazy_tensor.KilnTensor`, a ``__torch_dispatch__`` wrapper
subclass. docs/architecture.md ("The device") says why both.

Each call of :func:`device` takes the next index: ``kiln:0`` may be the cpu
target of one daemon and ``kiln:1`` riscv64 on another. Autograd records on
``kiln:0`` only: PyTorch's engine counts one device for a device guard
written in Python, so an op it would record on a later device raises
:class:`kiln.UnimplementedError` (inference there works).
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import Any

import torch

from kiln.errors import UnimplementedError
from kiln.lazy_tensor import DEVICES, DeviceState, device_state, zeros_tensor

__all__ = ["device", "device_stats"]

log = logging.getLogger("kiln.device")
_lock = threading.Lock()
_registered = False


class _BackendModule:
    """``torch.kiln``: what PyTorch asks a backend module."""

    @staticmethod
    def is_available() -> bool:
        return bool(DEVICES)

    @staticmethod
    def is_initialized() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return max(len(DEVICES), 1)

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def _is_in_bad_fork() -> bool:
        return False

    @staticmethod
    def manual_seed_all(seed: int) -> None:
        # Random ops run on the host generator (the RNG contract).
        return None

    @staticmethod
    def get_amp_supported_dtype() -> list[torch.dtype]:
        return [torch.bfloat16, torch.float16]


def _empty(size: Any, dtype: torch.dtype | None = None, layout: Any = None,
           device: Any = None, pin_memory: Any = None, memory_format: Any = None) -> Any:
    return zeros_tensor(size, dtype or torch.get_default_dtype(), device_state(device))


def _empty_strided(size: Any, stride: Any, dtype: torch.dtype | None = None,
                   layout: Any = None, device: Any = None, pin_memory: Any = None) -> Any:
    # Device tensors are row-major whatever strides were asked for.
    return zeros_tensor(size, dtype or torch.get_default_dtype(), device_state(device))


def _register() -> None:
    """Makes PrivateUse1 the ``kiln`` device, once per process."""
    global _registered
    with _lock:
        if _registered:
            return
        if not hasattr(torch._C, "_acc"):
            raise UnimplementedError(
                f"torch {torch.__version__} cannot host a device written in Python "
                "(it lacks torch._C._acc, the PrivateUse1 device guard and hooks)",
                hint="kiln.device needs a newer torch; torch.compile(backend=kiln.backend(...)) "
                     "and Client.compile work on this one")
        name = torch._C._get_privateuse1_backend_name()
        if name not in ("privateuseone", "kiln"):
            raise UnimplementedError(f"PyTorch's PrivateUse1 device is {name!r} in this process "
                                     "already; kiln.device needs it")
        from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
        if name == "kiln":  # renamed by an earlier import of another copy: finish setting up
            _setup_privateuseone_for_python_backend(backend_module=_BackendModule())
        else:
            _setup_privateuseone_for_python_backend("kiln", backend_module=_BackendModule())
        library = torch.library.Library("aten", "IMPL")
        library.impl("empty.memory_format", _empty, "PrivateUse1")
        library.impl("empty_strided", _empty_strided, "PrivateUse1")
        _register.library = library  # type: ignore[attr-defined]  # kept alive
        _registered = True


def device(address: str | Any = "localhost:50051", target: str = "cpu",
           fallback: str | None = None, options: Any = None,
           random: str = "host") -> torch.device:
    """A new ``kiln:N`` device backed by ``target`` on the daemon at ``address``
    (or a :class:`kiln.Client`).

    Args:
        fallback: ``"cpu"`` lets ops the target lacks, and ops whose output
            shape depends on values, run on the host; each is reported on the
            ``kiln.placement`` logger. None (default): they raise
            :class:`kiln.UnsupportedOpError`.
        options: CompileOptions for every graph.
        random: where random ops (``randn``, ``dropout``...) draw. ``"host"``
            (default): on the host with torch's generator, eager's numbers.
            ``"device"``: recorded into the graphs like any op, drawing
            Kiln's numbers on the agent (docs/architecture.md, "Random
            numbers"), so train-mode dropout moves no activations.
    """
    if fallback not in (None, "cpu"):
        raise ValueError(f"fallback must be None or 'cpu'; got {fallback!r}")
    if random not in ("host", "device"):
        raise ValueError(f"random must be 'host' or 'device'; got {random!r}")
    _register()
    from kiln.client import Client
    client = address if not isinstance(address, str) else Client(address)
    with _lock:
        index = len(DEVICES)
        state = DeviceState(index, client, target, fallback, options, random)
        DEVICES[index] = state
    atexit.register(_release_at_exit, state)
    return torch.device("kiln", index)


def _release_at_exit(state: DeviceState) -> None:
    """What the device still holds for this process is nobody's after it
    ends: released, so that the agents' --held-tensor-bytes does not fill up
    over many runs."""
    try:
        state.release_all()
    except Exception as e:  # the daemon may be gone already
        log.debug("kiln: releasing the tensors %s held at exit failed: %s", state.device, e)


def device_stats(dev: torch.device | str | int = 0) -> dict[str, Any]:
    """What a device did so far: graphs compiled and run, bytes sent and
    received, and the ops that ran on the host (by name)."""
    return device_state(dev).stats.as_dict()
