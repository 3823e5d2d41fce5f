"""Ops Kiln lacks, for the tests of what happens then: UNIMPLEMENTED naming
the node, CPU fallback and placement, in exported programs, torch.compile
graphs, the device API, saved .pt2 files and TorchScript archives.

``lacked`` is a custom op this module registers, ``kiln_test::lacked``
(x * 2**y): no Kiln target will ever have it, whatever ATen ops Kiln gains
(igamma and igammac played this part until Kiln gained them). Its kernel is
registered for the CPU only, so that on a ``kiln`` device tensor the device
records the op itself rather than running the kernel's own ops. A process
that loads a .pt2 holding it must import this module first (the CLI's
``--import lacked_ops``).

TorchScript archives may call only ATen ops (kilnd's TorchScript importer
runs no other namespace), so their tests use ``lacked_aten``,
``torch.ldexp``: the importer converts it as it is, and no Kiln target
lowers it. (torch.export and torch.compile decompose ldexp into ops Kiln
has, so it cannot stand in for ``lacked`` there.)
"""

from __future__ import annotations

import torch

#: The node's op, as placement and errors name it.
LACKED_OP = "kiln_test.lacked.default"
#: The op's name as a message mentions it.
LACKED_NAME = "kiln_test.lacked"


@torch.library.custom_op("kiln_test::lacked", mutates_args=(), device_types="cpu")
def lacked(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x * 2**y, broadcast, by an op Kiln lacks."""
    return torch.ldexp(x, y)


@lacked.register_fake
def _lacked_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.new_empty(torch.broadcast_shapes(x.shape, y.shape),
                       dtype=torch.promote_types(x.dtype, y.dtype))


#: The TorchScript stand-in: an ATen op (torch's builtin, so that
#: torch.jit.script sees aten::ldexp rather than a call of a Python
#: function, which the importer refuses).
LACKED_ATEN_OP = "aten.ldexp.Tensor"
lacked_aten = torch.ldexp
