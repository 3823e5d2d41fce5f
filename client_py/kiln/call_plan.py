"""A direct channel's call plan: the frame of its calls, made once.

On a direct channel with an exchange buffer (:mod:`kiln.local_execute`,
:mod:`kiln.exchange`), a model's calls differ from one another only in
their inputs' bytes and their request ids when every input goes through the
buffer: the frame names the same dtypes, shapes, offsets and output region
every time. A :class:`CallPlan`, made from the first such call's frame,
keeps that frame serialized without its request id. A later call whose
inputs have the same dtypes and shapes copies each input's memory to its
offset and sends the kept bytes with its own id appended, instead of
building and serializing a LocalClientFrame again (measured with callgrind
in docs/architecture.md).

The id goes last in the ``execute`` message, as field 3 of LocalExecute:
field order on the wire is free, so the agent parses the same message as
the one the plan was made from, with that id.
"""

from __future__ import annotations

from typing import Sequence

import torch

from kiln.exchange import ExchangeBuffer
from kiln.inline_request import varint
from kiln.tensors import is_wire_dense
from kiln.v1 import executor_pb2

__all__ = ["CallPlan", "REQUEST_ID_CHARS"]

#: Request ids are this many ASCII characters (kiln._rpc.new_request_id).
REQUEST_ID_CHARS = 32
# LocalClientFrame.execute (field 2) and LocalExecute.request_id (field 3),
# both length-delimited (wire type 2): the tags are (field << 3) | 2.
_EXECUTE_TAG = (2 << 3) | 2
_REQUEST_ID_TAG = (3 << 3) | 2


class CallPlan:
    """The frame of calls on one channel whose inputs, all in its exchange
    buffer, have these dtypes and shapes (see the module's doc)."""

    __slots__ = ("slots", "timeout_ms", "prefix")

    def __init__(self, call: executor_pb2.LocalExecute, inputs: Sequence[torch.Tensor]):
        """The plan of ``call``, built (without a request id) for ``inputs``,
        each of which it placed in the exchange buffer."""
        if call.request_id or call.file_inputs or call.open_direct:
            raise ValueError("a call plan is made from a call with only exchange inputs "
                             "and no request id")
        offsets = {s.index: s.offset for s in call.exchange_inputs}
        if sorted(offsets) != list(range(len(inputs))):
            raise ValueError("a call plan needs every input in the exchange buffer")
        #: (dtype, shape, offset) of each input, in order.
        self.slots = tuple((t.dtype, t.shape, offsets[i]) for i, t in enumerate(inputs))
        self.timeout_ms = call.timeout_ms
        body = call.SerializeToString()
        self.prefix = (bytes([_EXECUTE_TAG]) + varint(len(body) + 2 + REQUEST_ID_CHARS)
                       + body + bytes([_REQUEST_ID_TAG, REQUEST_ID_CHARS]))

    def frame(self, inputs: Sequence[object], exchange: ExchangeBuffer, timeout_ms: int,
              request_id: str) -> bytes | None:
        """The frame of a call with ``inputs``, each copied to its offset in
        ``exchange``; None (perhaps some copied, nothing sent) when an
        input's dtype or shape differs from the plan's, it is not a plain
        dense CPU tensor, or the call's timeout differs."""
        if timeout_ms != self.timeout_ms or len(inputs) != len(self.slots):
            return None
        for t, (dtype, shape, offset) in zip(inputs, self.slots):
            if not (is_wire_dense(t) and t.dtype is dtype and t.shape == shape):
                return None
            exchange.put(t, offset)
        rid = request_id.encode("ascii")
        if len(rid) != REQUEST_ID_CHARS:
            raise ValueError(f"a request id of {len(rid)} characters, "
                             f"expected {REQUEST_ID_CHARS}")
        return self.prefix + rid
