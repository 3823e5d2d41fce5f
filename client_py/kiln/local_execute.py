"""Execute over kilnd's local socket: tensors in sealed memfds, not in messages.

A client on kilnd's machine (its network namespace) asks
``kiln.v1.Executor/OpenLocalSession`` for the socket and a ticket, connects,
presents the ticket, and then sends each Execute as one frame. An input of
:data:`FILE_THRESHOLD` bytes or more is written once into a memfd, sealed,
and passed with the frame (SCM_RIGHTS); kilnd hands that file on to the agent,
which maps it (kilnd closes its copy after replying, so that freeing the
pages is off the call's path; the memfd comes from a :class:`MemfdPool`,
whose pages for the next call are allocated while this one waits). Large
outputs come back the same way: the client maps the
agent's memfd and the returned tensor is that mapping (copy-on-write), so a
big tensor is copied once on the way in and not at all on the way out.

The frame format is kilnd's FramedSocket: a little-endian header (magic
``0x4b4c4e4b``, file count u32, length u64), then a serialized
``kiln.v1.LocalClientFrame`` (client to kilnd) or ``kiln.v1.LocalReply``.

:class:`LocalExecutor` keeps a pool of connections (one call at a time each,
so concurrent callers each get their own). When kilnd serves no local socket,
or it cannot be reached from here (another container), the client uses gRPC.

Direct channels: the second call of a model (same executable and
parameters) asks kilnd for one (``LocalExecute.open_direct``), and kilnd
passes back a socket to the agent of the device that ran it, bound to that
executable and those parameters. Later calls of the model go there with only
their inputs, in the same frames, and kilnd is out of the data path (one
process and two wake-ups fewer per call). A channel that fails before its
answer (the agent restarted, or closed it idle) is dropped and the call goes
to kilnd; calls that keep or release held tensors, or pass blobs, always do.
After a channel's first call the client asks its agent for an exchange
buffer (:mod:`kiln.exchange`), and the tensors under 8 MiB of later calls
travel through it instead of the socket or a memfd per call; a call whose
inputs all went there leaves the channel a call plan (:mod:`kiln.call_plan`),
whose frame later calls like it send.
"""

from __future__ import annotations

import array
import logging
import math
import mmap
import os
import select
import socket
import struct
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Sequence

import torch
from google.protobuf.message import DecodeError

from kiln._rpc import Rpc, new_request_id
from kiln.blobs import BlobClient
from kiln.call_plan import CallPlan
from kiln.exchange import MAX_TENSOR_BYTES as EXCHANGE_TENSOR_MAX
from kiln.exchange import ExchangeBuffer, aligned, wanted_bytes
from kiln.errors import (DeadlineExceededError, InvalidArgumentError, KilnError,
                         ResourceExhaustedError, UnauthenticatedError, UnavailableError,
                         raise_for_status_code)
from kiln.memfd_pool import MemfdPool, sealed_memfd
from kiln.tensors import (PROTO_TO_DTYPE, HeldTensor, empty_tensor_for, is_wire_dense,
                          payload_size, set_tensor_type, tensor_from_bytes, tensor_view)
from kiln.v1 import executor_pb2

__all__ = ["FILE_THRESHOLD", "INLINE_BUDGET", "LocalExecutor", "LocalResult",
           "LocalUnavailable", "StaleRequest", "sealed_memfd"]

# Inputs this size or larger travel in memfds; smaller ones inline in the frame.
# Measured (bench notes in docs/architecture.md): a fresh sealed memfd costs
# more than copying up to about this many bytes through the frame.
FILE_THRESHOLD = 128 * 1024
# Inline bytes one frame carries at most (kilnd takes frames up to 8 MiB).
INLINE_BUDGET = 4 * 1024 * 1024

_MAGIC = 0x4B4C4E4B
_HEADER = struct.Struct("<IIQ")
_MAX_FILES = 64
_MAX_REPLY_BYTES = 64 << 20
# A plain int: testing the IntFlag costs an enum operation per reply.
_MSG_CTRUNC = int(socket.MSG_CTRUNC)
# The first read takes the header and, usually, the whole reply.
_FIRST_READ = 256 * 1024
# A connection keeps its receive buffer up to this size (inline outputs
# come to 3 MiB); a larger reply is read into a buffer of its own.
_KEPT_BUFFER_BYTES = 4 << 20
# A direct channel whose agent polls (LocalReply.poll_us) is polled for its
# answer when the last run took at most this long (for longer runs the
# wake-up saved is a small part of the call)...
_POLL_MAX_RUN_US = 2000
# ... for the last run's time plus this much.
_POLL_SLACK_US = 100
# For a longer run on such a channel, receive() wakes this long before the
# answer is due (the last run's time after the send), rehearses decoding
# the last answer (so that the decode runs from warm caches), then polls
# for twice this long before it sleeps...
_REHEARSAL_LEAD_US = 600
# ... when the answer's outputs come to at most this many bytes (copying
# more, cold, could outlast the lead and delay the real answer).
_REHEARSAL_MAX_BYTES = 1 << 20
# A ticket is refreshed this long before kilnd would refuse it.
_TICKET_MARGIN_S = 30.0
# Models (executable and parameters) with direct channels kept; the least
# recently called one's channels close past it.
_DIRECT_MODELS = 16
# Direct channels one model keeps at most (one per concurrent caller).
_DIRECT_PER_MODEL = 8
# What an agent answers when a blob it must fetch (a parameter it evicted,
# the artifact) is gone from kilnd's store: NOT_FOUND, FAILED_PRECONDITION.
# The call then goes to kilnd, which checks its store and asks for uploads.
_MISSING_BLOB_CODES = (5, 9)

log = logging.getLogger("kiln")


class _TransportError(Exception):
    """The connection failed (kilnd gone, or restarted), or timed out."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


class _ChannelLost(Exception):
    """A direct channel failed before its answer came: the call goes to kilnd."""


class LocalResult:
    """An Execute's response and its outputs as tensors."""

    def __init__(self, response: executor_pb2.ExecuteResponse, outputs: list[torch.Tensor],
                 encode_s: float = 0.0, direct: bool = False):
        self.response = response
        self.outputs = outputs
        #: Seconds spent writing inputs into memfds and the frame.
        self.encode_s = encode_s
        #: It went over a direct channel to the agent, not through kilnd.
        self.direct = direct


class StaleRequest(Exception):
    """The request sent no longer matched the caller's state (its
    ``still_current`` check, run while the device worked, said so): the
    reply was read and dropped, and the caller sends a new request."""


def _tensor_from_file(fd: int, dtype: torch.dtype, shape: Sequence[int]) -> torch.Tensor:
    """The tensor in file ``fd``: a private (copy-on-write) mapping of it,
    kept alive by the tensor. Its storage cannot grow (resize_ to more
    elements fails), the price of receiving it without a copy."""
    size = os.fstat(fd).st_size
    expected = payload_size(dtype, shape)
    if size != expected:
        raise ValueError(f"the file for it holds {size} bytes, expected {expected} "
                         f"for {dtype} {list(shape)}")
    if expected == 0:
        return torch.empty([int(d) for d in shape], dtype=dtype)
    mapping = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE,
                        prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return torch.frombuffer(mapping, dtype=torch.uint8).view(dtype).reshape(
        [int(d) for d in shape])


class _Connection:
    """One connection to kilnd's local socket (authenticated by
    :meth:`open`): frames out, frames in."""

    def __init__(self, sock: socket.socket, peer: str = "kilnd"):
        self.sock = sock
        #: Who answers: kilnd, or the agent of a direct channel.
        self.peer = peer
        #: Replies are read into this, not into fresh bytes per call.
        self._buffer = bytearray(_FIRST_READ)
        #: A direct channel's exchange buffer, once the agent made one.
        self.exchange: ExchangeBuffer | None = None
        #: The frame of calls whose inputs all go through the exchange
        #: buffer (kiln.call_plan), made from the first such call.
        self.plan: CallPlan | None = None
        #: Seconds receive() polls before it sleeps (see :meth:`pace`).
        self.poll_s = 0.0
        #: Seconds after the last send at which receive() rehearses (0: it
        #: does not; see :meth:`pace`).
        self.rehearse_after_s = 0.0
        #: When the last frame was sent (time.perf_counter()).
        self.sent_at = 0.0
        #: A direct channel's last answer, when decoding it again reads
        #: only the exchange buffer and the answer itself (no files, blobs
        #: or held tensors): what a rehearsal decodes.
        self.last_answer: executor_pb2.LocalReply | None = None
        self._poller: Any = None

    @classmethod
    def adopt(cls, fd: int, timeout: float | None) -> "_Connection":
        """The direct channel kilnd passed as ``fd`` (owned from now on)."""
        os.set_inheritable(fd, False)  # SCM_RIGHTS gives it no close-on-exec
        sock = socket.socket(fileno=fd)
        sock.settimeout(timeout)
        return cls(sock, "the agent")

    @classmethod
    def open(cls, path: str, ticket: bytes, daemon_id: str,
             timeout: float | None) -> "_Connection":
        """Connects to ``path`` and presents ``ticket``; the connection is
        kilnd ``daemon_id``'s once this returns."""
        address = "\0" + path[1:] if path.startswith("@") else path
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        self = cls(sock)
        try:
            self.sock.connect(address)
            hello = executor_pb2.LocalClientFrame(hello=executor_pb2.LocalHello(ticket=ticket))
            self.send(hello.SerializeToString(), [])
            reply, files = self.receive()
            for fd in files:
                os.close(fd)
            welcome = executor_pb2.LocalReply.FromString(reply)
        except (OSError, _TransportError, DecodeError) as e:
            self.close()
            raise _TransportError(f"cannot open kilnd's local socket {path}: {e}") from None
        if welcome.code != 0:
            self.close()
            raise_for_status_code(welcome.code, welcome.message, "kiln.v1.Executor/OpenLocalSession",
                                  {"socket": path})
        if welcome.daemon_id != daemon_id:
            self.close()
            raise _TransportError(f"{path} is another kilnd ({welcome.daemon_id}, "
                                  f"expected {daemon_id})")
        return self

    def close(self) -> None:
        self.sock.close()
        self.plan = None
        if self.exchange is not None:
            self.exchange.close()
            self.exchange = None

    def send(self, payload: bytes, fds: Sequence[int]) -> None:
        self.sent_at = time.perf_counter()
        header = _HEADER.pack(_MAGIC, len(fds), len(payload))
        rights = ([(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
                  if fds else [])
        try:
            # One call for the frame (the descriptors go with its first byte).
            sent = self.sock.sendmsg([header, payload], rights)
            if sent < len(header) + len(payload):
                self.sock.sendall((header + payload)[sent:])
        except OSError as e:
            raise _TransportError(f"send: {e}") from None

    def pace(self, reply: executor_pb2.LocalReply) -> None:
        """Sets how the next receive() waits, from a direct channel's
        answer, when its agent polls too (``poll_us``: it has a CPU to
        spare beside its runs); otherwise it sleeps until the answer.

        - A run of at most :data:`_POLL_MAX_RUN_US`: it polls for the
          run's time plus :data:`_POLL_SLACK_US`. An answer read while
          polling skips the kernel's wake-up of this thread, tens of
          microseconds on a VM.
        - A longer run: it sleeps until :data:`_REHEARSAL_LEAD_US` before
          the answer is due, rehearses, then polls. A thread that slept
          through milliseconds of another core's compute finds its caches
          cold: decoding the answer then took 300-400 us more (resnet18
          and an encoder layer, 1 compute thread, docs/architecture.md)."""
        total = reply.response.timings.total_us if reply.poll_us else 0
        self.poll_s = (total + _POLL_SLACK_US) * 1e-6 if 0 < total <= _POLL_MAX_RUN_US else 0.0
        self.rehearse_after_s = ((total - _REHEARSAL_LEAD_US) * 1e-6
                                 if total > _POLL_MAX_RUN_US else 0.0)

    def _readable(self) -> Any:
        """The connection's poll object (select.poll, which takes any
        descriptor; select.select fails past FD_SETSIZE)."""
        if self._poller is None:
            self._poller = select.poll()
            self._poller.register(self.sock.fileno(), select.POLLIN)
        return self._poller

    def _poll(self, window_s: float) -> None:
        """Polls (without sleeping) for up to ``window_s`` until the
        socket has bytes to read."""
        poll = self._readable().poll
        end = time.perf_counter() + window_s
        while not poll(0) and time.perf_counter() < end:
            pass

    def _rehearse(self, rehearsal: Callable[[], None]) -> None:
        """Sleeps until ``rehearse_after_s`` after the send (poll's whole
        milliseconds, rounded down: up to 1 ms early); then, unless the
        answer came first, runs ``rehearsal`` and polls for twice
        :data:`_REHEARSAL_LEAD_US` and the millisecond the sleep may have
        cut short."""
        wait_ms = math.floor((self.sent_at + self.rehearse_after_s - time.perf_counter()) * 1e3)
        if wait_ms <= 0 or self._readable().poll(wait_ms):
            return
        rehearsal()
        self._poll(2 * _REHEARSAL_LEAD_US * 1e-6 + 1e-3)

    def receive(self, rehearsal: Callable[[], None] | None = None
                ) -> tuple[memoryview, list[int]]:
        """The next frame's payload and its files. One request is in flight
        per connection, so nothing after the frame is in the socket yet.
        ``rehearsal`` (what decoding the answer will do, with nothing kept)
        runs shortly before a long run's answer is due (:meth:`pace`).

        The payload is a view of the connection's buffer, valid until the
        connection's next receive: parse it before the connection is reused."""
        fds_room = socket.CMSG_SPACE(_MAX_FILES * array.array("i").itemsize)
        buffer = self._buffer
        try:
            if self.poll_s:
                self._poll(self.poll_s)
            elif self.rehearse_after_s and rehearsal is not None:
                self._rehearse(rehearsal)
            got, ancillary, flags, _ = self.sock.recvmsg_into([buffer], fds_room)
        except (OSError, ValueError) as e:  # ValueError: polling a closed socket
            raise _TransportError(f"receive: {e}", isinstance(e, TimeoutError)) from None
        files: list[int] = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                files.extend(fds)
        try:
            if not got:
                raise _TransportError(f"{self.peer} closed the local connection")
            if flags & _MSG_CTRUNC:
                raise _TransportError("a reply carried more files than a frame may")
            if got < _HEADER.size:
                got = self._read_into(buffer, got, _HEADER.size)
            magic, count, length = _HEADER.unpack_from(buffer)
            end = _HEADER.size + length
            if (magic != _MAGIC or count != len(files) or length > _MAX_REPLY_BYTES
                    or got > end):
                raise _TransportError(f"a malformed frame from {self.peer}")
            if end > len(buffer):
                # Kept for the next replies up to _KEPT_BUFFER_BYTES; a
                # larger one is read into a buffer of its own.
                grown = bytearray(end)
                grown[:got] = memoryview(buffer)[:got]
                if end <= _KEPT_BUFFER_BYTES:
                    self._buffer = grown
                buffer = grown
            if got < end:
                self._read_into(buffer, got, end)
            return memoryview(buffer)[_HEADER.size:end], files
        except (OSError, _TransportError) as e:
            for fd in files:
                os.close(fd)
            raise _TransportError(str(e), isinstance(e, TimeoutError) or
                                  getattr(e, "timed_out", False)) from None

    def _read_into(self, buffer: bytearray, got: int, end: int) -> int:
        """Reads until ``buffer[:end]`` holds the frame's first ``end`` bytes
        (``got`` of them are there); returns the count held."""
        with memoryview(buffer) as view:
            while got < end:
                n = self.sock.recv_into(view[got:end])
                if not n:
                    raise _TransportError(f"{self.peer} closed the local connection")
                got += n
        return got


class _DirectModel:
    """One model's direct channels: idle ones, and how many are open."""

    def __init__(self) -> None:
        self.idle: list[_Connection] = []
        self.open = 0
        self.calls = 0
        #: The agent refused an exchange buffer: its channels go without.
        self.no_exchange = False


def _model_key(request: executor_pb2.ExecuteRequest) -> tuple:
    """What a direct channel is bound to: the executable and parameters."""
    return (request.executable.hash, request.parameter_set.hash,
            tuple(d.hash for d in request.parameters[:]))


def _decodes_again(reply: executor_pb2.LocalReply) -> bool:
    """Whether decoding ``reply`` again reads only the reply and the
    exchange buffer (no output files, closed once decoded; blobs, in
    kilnd's store; or held tensors), and at most
    :data:`_REHEARSAL_MAX_BYTES` of outputs."""
    if reply.code != 0 or reply.file_outputs:
        return False
    in_exchange = {s.index for s in reply.exchange_outputs}
    total = 0
    for i, out in enumerate(reply.response.outputs):
        dtype = PROTO_TO_DTYPE.get(out.type.dtype)
        if dtype is None or not (i in in_exchange or out.WhichOneof("payload") == "data"):
            return False
        total += math.prod(out.type.shape) * dtype.itemsize
    return total <= _REHEARSAL_MAX_BYTES


def _still_current() -> bool:
    """A call whose caller has no state to check: always current."""
    return True


class LocalUnavailable(Exception):
    """kilnd's local socket cannot take this call (it is full, or gone and
    no fresh session reaches it): the caller runs it over gRPC."""


class LocalExecutor:
    """Execute over kilnd's local socket, for one :class:`kiln.Client`.

    :meth:`available` opens the session on first use; when kilnd serves no
    local socket or it cannot be reached, it says False from then on (the
    caller uses gRPC) and :attr:`unavailable_reason` says why. Later, a call
    the socket cannot take raises :class:`LocalUnavailable` and goes over
    gRPC; a stale session (kilnd restarted) is replaced once first."""

    def __init__(self, rpc: Rpc, blobs: BlobClient, direct: bool = True):
        self._rpc = rpc
        self._blobs = blobs
        self._lock = threading.Lock()
        self._idle: list[_Connection] = []
        #: Whether repeated calls ask for direct channels to the agent.
        self.direct = direct
        #: Whether a direct channel asks its agent for an exchange buffer
        #: after its first call (``KILN_DIRECT_EXCHANGE=0``: never).
        self.exchange = os.environ.get("KILN_DIRECT_EXCHANGE", "1") != "0"
        # (executable, parameter set, parameters) -> its channels; least
        # recently called first.
        self._models: OrderedDict[tuple, _DirectModel] = OrderedDict()
        self._session: executor_pb2.LocalSession | None = None
        self._session_expiry = 0.0
        self._checked = False
        self.unavailable_reason: str | None = None
        self._memfds = MemfdPool()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle + self._drop_models():
            connection.close()
        self._memfds.close()

    def _drop_models(self) -> list[_Connection]:
        """Forgets every model's channels; returns the idle ones to close
        (a busy one closes when its call ends)."""
        with self._lock:
            models, self._models = self._models, OrderedDict()
        return [c for model in models.values() for c in model.idle]

    @property
    def direct_channels(self) -> int:
        """Direct channels open to agents (idle or in a call)."""
        with self._lock:
            return sum(model.open for model in self._models.values())

    def _direct_channel(self, key: tuple) -> tuple[_Connection | None, bool]:
        """An idle channel of model ``key``, or None and whether this call
        asks kilnd for one (the model was called before and has room)."""
        closed: list[_Connection] = []
        with self._lock:
            model = self._models.get(key)
            if model is None:
                model = self._models[key] = _DirectModel()
                while len(self._models) > _DIRECT_MODELS:
                    closed += self._models.popitem(last=False)[1].idle
            else:
                self._models.move_to_end(key)
            model.calls += 1
            channel = model.idle.pop() if model.idle else None
            ask = channel is None and model.calls > 1 and model.open < _DIRECT_PER_MODEL
        for connection in closed:
            connection.close()
        return channel, ask

    def _add_direct(self, key: tuple, fd: int) -> None:
        """Keeps the channel kilnd passed for model ``key`` (a descriptor
        that is not a socket is closed: the call's answer stands)."""
        try:
            channel = _Connection.adopt(fd, self._connection_timeout())
        except OSError:
            os.close(fd)
            return
        with self._lock:
            model = self._models.get(key)
            if model is not None and model.open < _DIRECT_PER_MODEL:
                model.open += 1
                model.idle.append(channel)
                return
        channel.close()

    def _put_direct(self, key: tuple, channel: _Connection, lost: bool = False) -> None:
        """Returns a channel after its call; a ``lost`` one is closed."""
        with self._lock:
            model = self._models.get(key)
            if model is not None and not lost:
                model.idle.append(channel)
                return
            if model is not None:
                model.open -= 1
        channel.close()

    def available(self) -> bool:
        if not self._checked:
            try:
                self._put(self._connect())
            except (KilnError, _TransportError) as e:
                self.unavailable_reason = str(e)
            self._checked = True
        return self.unavailable_reason is None

    def _forget_session(self) -> None:
        """Drops the session and the pooled connections of it, and the
        direct channels to its agents (kilnd restarted, or refused a
        ticket)."""
        with self._lock:
            self._session = None
            idle, self._idle = self._idle, []
        for connection in idle + self._drop_models():
            connection.close()

    def _open_session(self) -> executor_pb2.LocalSession:
        with self._lock:
            if self._session is not None and time.monotonic() < self._session_expiry:
                return self._session
        session = self._rpc.call("kiln.v1.Executor/OpenLocalSession",
                                 self._rpc.executor.OpenLocalSession,
                                 executor_pb2.OpenLocalSessionRequest())
        with self._lock:
            self._session = session
            self._session_expiry = (time.monotonic() + session.ticket_ttl_ms / 1000.0
                                    - _TICKET_MARGIN_S)
        return session

    def _connection_timeout(self) -> float | None:
        timeout = self._rpc.timeout
        return None if timeout is None else timeout + 5.0

    def _connect(self) -> _Connection:
        session = self._open_session()
        return _Connection.open(session.socket_path, session.ticket, session.daemon_id,
                                self._connection_timeout())

    def _fresh_connection(self) -> _Connection:
        """A new connection; a failure with the cached session is retried
        once with a new one. LocalUnavailable when neither works."""
        for attempt in range(2):
            try:
                return self._connect()
            except ResourceExhaustedError as e:
                raise LocalUnavailable(str(e)) from None  # full: gRPC this time
            except (UnauthenticatedError, _TransportError) as e:
                self._forget_session()
                if attempt == 1:
                    raise LocalUnavailable(str(e)) from None
        raise AssertionError("unreachable")

    def _take(self) -> _Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._fresh_connection()

    def _put(self, connection: _Connection) -> None:
        with self._lock:
            self._idle.append(connection)

    def execute(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                context: dict, encode_input: Any,
                still_current: Callable[[], bool] | None = None,
                direct: bool = True) -> LocalResult:
        """Runs ``request`` (executable and parameters set) with ``inputs``.
        ``encode_input(msg, i, tensor)`` fills an inline input's message
        (type checks included). On a direct channel with an exchange
        buffer, inputs under its tensor limit go there while they fit.
        Others of FILE_THRESHOLD bytes or more go in memfds (at most 64);
        the rest inline up to INLINE_BUDGET in all, and past it as
        in-transit blobs (and then through kilnd).

        ``still_current()``, when given, runs once the request is sent, while
        the device works: False means the request no longer matches the
        caller's state, and the reply is dropped for :class:`StaleRequest`.

        A model called before goes over its direct channel when it has one
        (``direct`` False: through kilnd regardless)."""
        t0 = time.perf_counter()
        repeatable = (direct and self.direct and not request.keep_outputs
                      and not request.release
                      and not any(isinstance(t, HeldTensor) for t in inputs))
        key = _model_key(request) if repeatable else None
        channel, ask = self._direct_channel(key) if key is not None else (None, False)
        rid = new_request_id()
        timeout_ms = int(self._rpc.timeout * 1000) if self._rpc.timeout is not None else 0
        if channel is not None and channel.plan is not None:
            try:
                frame = channel.plan.frame(inputs, channel.exchange, timeout_ms, rid)
            except BaseException:
                self._put_direct(key, channel)  # nothing sent on it
                raise
            if frame is not None:
                return self._planned_call(request, inputs, context, encode_input,
                                          still_current, channel, key, frame, rid, t0)
        files: list[int] = []
        sizes: list[int] = []
        # Filled in place: inline inputs are not copied into a frame later.
        message = executor_pb2.LocalClientFrame()
        call = message.execute
        # Only the inputs first: a direct channel's call carries nothing else.
        sent = False
        try:
            exchange = channel.exchange if channel is not None else None
            cursor = 0  # where the next tensor may go in the exchange buffer
            inline_total = 0
            for i, t in enumerate(inputs):
                msg = call.request.inputs.add()
                nbytes = t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0
                if (exchange is not None and 0 < nbytes < EXCHANGE_TENSOR_MAX
                        and exchange.fits(nbytes, cursor)):
                    try:
                        set_tensor_type(msg.type, t.dtype, t.shape)
                    except ValueError as e:
                        raise InvalidArgumentError(f"input {i}: {e}", context=context) from None
                    offset = exchange.place(t, cursor)
                    call.exchange_inputs.add(index=i, offset=offset)
                    cursor = offset + nbytes
                elif nbytes >= FILE_THRESHOLD and len(files) < _MAX_FILES:
                    try:
                        set_tensor_type(msg.type, t.dtype, t.shape)
                    except ValueError as e:
                        raise InvalidArgumentError(f"input {i}: {e}", context=context) from None
                    files.append(self._memfds.sealed_copy(tensor_view(t)))
                    sizes.append(nbytes)
                    call.file_inputs.append(i)
                elif inline_total + nbytes <= INLINE_BUDGET:
                    encode_input(msg, i, t)
                    inline_total += nbytes
                else:
                    encode_input(msg, i, t, as_blob=True)
                    repeatable = False
            if exchange is not None and aligned(cursor) < exchange.size:
                # The rest of the buffer for outputs under the agent's limit.
                call.exchange_output_offset = aligned(cursor)
                call.exchange_output_bytes = exchange.size - aligned(cursor)
            if channel is not None and not repeatable:
                # An input went as a blob: kilnd runs the call, encoded
                # afresh (nothing of the channel's buffer in its frame).
                self._put_direct(key, channel)
                channel = None
                return self.execute(request, inputs, context, encode_input, still_current,
                                    direct=False)
            if not repeatable:
                ask = False
            if channel is None:
                call.request.MergeFrom(request)  # the executable and parameters
                call.open_direct = ask
            call.timeout_ms = timeout_ms
            if (exchange is not None and inputs and not files and not inline_total
                    and len(call.exchange_inputs) == len(inputs)
                    and all(map(is_wire_dense, inputs))):
                # Every input went through the buffer, as a plan's calls
                # copy them: later calls like this one send this frame, made
                # once. (A strided input would make a plan no call can use.)
                channel.plan = CallPlan(call, inputs)
            call.request_id = rid
            frame = message.SerializeToString()
            encode_s = time.perf_counter() - t0

            def while_waiting() -> bool:
                # Sent: the receiver holds the files now and closes them last,
                # after its reply. The next call's memfds are made meanwhile.
                for fd in files:
                    os.close(fd)
                files.clear()
                self._memfds.refill(sizes)
                return still_current() if still_current is not None else True

            if channel is not None:
                sent = True  # the round trip keeps or closes the channel
                try:
                    result = self._direct_round_trip(
                        channel, key, frame, files, context, rid, while_waiting, inputs)
                except _ChannelLost:
                    # Nothing reached the caller: kilnd runs it (and opens
                    # another channel on a later call).
                    return self.execute(request, inputs, context, encode_input, still_current,
                                        direct=False)
            else:
                result = self._round_trip(frame, files, context, rid, while_waiting,
                                          key if ask else None)
            result.encode_s = encode_s
            return result
        except BaseException:
            if channel is not None and not sent:
                self._put_direct(key, channel)  # nothing sent on it
            raise
        finally:
            for fd in files:
                os.close(fd)

    def _planned_call(self, request: executor_pb2.ExecuteRequest, inputs: Sequence[Any],
                      context: dict, encode_input: Any,
                      still_current: Callable[[], bool] | None, channel: _Connection,
                      key: tuple, frame: bytes, rid: str, t0: float) -> LocalResult:
        """A call on ``channel`` as its plan's ``frame`` (the inputs are in
        the exchange buffer); kilnd runs it when the channel is lost."""
        encode_s = time.perf_counter() - t0
        try:
            result = self._direct_round_trip(channel, key, frame, [], context, rid,
                                             still_current or _still_current, inputs)
        except _ChannelLost:
            return self.execute(request, inputs, context, encode_input, still_current,
                                direct=False)
        result.encode_s = encode_s
        return result

    def _direct_round_trip(self, channel: _Connection, key: tuple, frame: bytes,
                           files: list[int], context: dict, rid: str,
                           while_waiting: Callable[[], bool],
                           inputs: Sequence[torch.Tensor]) -> LocalResult:
        """One call on a direct channel. _ChannelLost when the channel fails
        before an answer, or the agent lacks a blob it would fetch from
        kilnd: the call has no effect a retry could repeat (it keeps and
        releases nothing), so kilnd runs it (and reports or re-uploads what
        is missing). A call past the client's timeout is
        DEADLINE_EXCEEDED, not run again."""
        try:
            channel.send(frame, files)
            current = while_waiting()
            reply_bytes, out_files = channel.receive(self._rehearsal(channel, context, rid))
        except _TransportError as e:
            self._put_direct(key, channel, lost=True)
            if e.timed_out:
                raise DeadlineExceededError(f"a direct channel to the agent: {e}",
                                            context=context, request_id=rid) from None
            raise _ChannelLost() from None
        except BaseException:
            self._put_direct(key, channel, lost=True)  # its reply is not read
            raise
        try:
            try:
                reply = executor_pb2.LocalReply.FromString(reply_bytes)
            except DecodeError as e:
                self._put_direct(key, channel, lost=True)
                raise KilnError(f"a malformed reply on a direct channel: {e}",
                                context=context, request_id=rid) from None
            if reply.code in _MISSING_BLOB_CODES:
                self._put_direct(key, channel, lost=True)
                raise _ChannelLost()
            channel.pace(reply)
            try:
                if not current:
                    raise StaleRequest()
                # Before the channel (and its exchange buffer) takes another call.
                result = self._decode(reply, out_files, context, rid, channel.exchange)
                # Kept only for a channel whose next receive rehearses (not
                # checked on the short calls' path).
                channel.last_answer = (reply if channel.rehearse_after_s and _decodes_again(reply)
                                       else None)
            except BaseException:
                self._put_direct(key, channel)
                raise
            usable = True
            if channel.exchange is None and self.exchange:
                # Once per channel: sized by this call's tensors.
                sizes = [t.numel() * t.element_size() for t in (*inputs, *result.outputs)
                         if isinstance(t, torch.Tensor)]
                usable = self._ask_exchange(key, channel,
                                            [n for n in sizes if n < EXCHANGE_TENSOR_MAX])
            self._put_direct(key, channel, lost=not usable)
            result.direct = True
            return result
        finally:
            for fd in out_files:
                os.close(fd)

    def _rehearsal(self, channel: _Connection, context: dict, rid: str
                   ) -> Callable[[], None] | None:
        """What receive() runs shortly before a long run's answer: the
        decode of the channel's last answer (same model, so the same
        outputs), its tensors dropped. It reads the exchange buffer while
        the agent may be writing there; what it reads is discarded."""
        answer = channel.last_answer
        if answer is None:
            return None

        def rehearse() -> None:
            try:
                self._decode(answer, [], context, rid, channel.exchange)
            except Exception:  # noqa: BLE001 - a rehearsal: the real decode reports its own
                pass

        return rehearse

    def _ask_exchange(self, key: tuple, channel: _Connection, sizes: list[int]) -> bool:
        """After a channel's first call: asks its agent for an exchange
        buffer that holds that call's tensors (``sizes``, inputs then
        outputs, those under the tensor limit), unless the model's agent
        refused one before. A refusal is remembered for the model. False
        when the channel can no longer be trusted to pair replies with calls
        (a transport failure or a malformed answer): the caller drops it."""
        want = wanted_bytes(sizes)
        with self._lock:
            model = self._models.get(key)
            if want == 0 or model is None or model.no_exchange:
                return True
        ask = executor_pb2.LocalClientFrame()
        ask.exchange.size_bytes = want
        try:
            channel.send(ask.SerializeToString(), [])
            reply_bytes, files = channel.receive()
        except _TransportError:
            return False
        try:
            reply = executor_pb2.LocalReply.FromString(reply_bytes)
        except DecodeError:
            for fd in files:
                os.close(fd)
            return False
        try:
            if reply.code != 0 or reply.exchange_bytes == 0 or len(files) != 1:
                raise ValueError(reply.message or "no buffer in the answer")
            channel.exchange = ExchangeBuffer(files.pop(), reply.exchange_bytes)
            channel.plan = None  # a plan names offsets in the buffer it was made for
        except (ValueError, OSError) as e:
            log.info("kiln: the agent gave no exchange buffer (%s); this model's "
                     "direct calls carry their tensors in frames and memfds", e)
            with self._lock:
                if key in self._models:
                    self._models[key].no_exchange = True
        finally:
            for fd in files:
                os.close(fd)
        return True

    def _round_trip(self, frame: bytes, files: list[int], context: dict,
                    rid: str, while_waiting: Callable[[], bool],
                    direct_key: tuple | None = None) -> LocalResult:
        """One call through kilnd; with ``direct_key`` it asked for a
        direct channel, kept for that model when kilnd passes one."""
        # A pooled connection kilnd closed meanwhile (idle, or it restarted)
        # fails on send, before anything ran: one retry on a new connection.
        for attempt in range(2):
            connection = self._take() if attempt == 0 else self._fresh_connection()
            try:
                connection.send(frame, files)
            except _TransportError as e:
                connection.close()
                if attempt == 0:
                    continue
                raise UnavailableError(f"kilnd's local socket: {e}", context=context,
                                       request_id=rid) from None
            try:
                current = while_waiting()
            except BaseException:
                connection.close()  # its reply is not read
                raise
            try:
                reply_bytes, out_files = connection.receive()
            except _TransportError as e:
                # The call may have run: not retried.
                connection.close()
                self._forget_session()
                raise UnavailableError(f"kilnd's local socket: {e}", context=context,
                                       request_id=rid) from None
            try:
                # Parsed before the connection (and the buffer the bytes are
                # in) goes back to the pool.
                try:
                    reply = executor_pb2.LocalReply.FromString(reply_bytes)
                except DecodeError as e:
                    connection.close()
                    raise KilnError(f"a malformed reply from kilnd's local socket: {e}",
                                    context=context, request_id=rid) from None
                self._put(connection)
                if reply.direct_channel and out_files:
                    # The channel comes after the output files.
                    fd = out_files.pop()
                    if direct_key is not None:
                        self._add_direct(direct_key, fd)
                    else:
                        os.close(fd)
                if not current:
                    raise StaleRequest()
                return self._decode(reply, out_files, context, rid)
            finally:
                for fd in out_files:
                    os.close(fd)
        raise AssertionError("unreachable")

    def _decode(self, reply: executor_pb2.LocalReply, out_files: list[int], context: dict,
                rid: str, exchange: ExchangeBuffer | None = None) -> LocalResult:
        if reply.code != 0:
            raise_for_status_code(reply.code, reply.message, "kiln.v1.Executor/Execute",
                                  context, request_id=rid)
        response = reply.response
        if len(reply.file_outputs) != len(out_files):
            raise KilnError(f"kilnd named {len(reply.file_outputs)} output files and passed "
                            f"{len(out_files)}", context=context, request_id=rid)
        by_index = dict(zip(reply.file_outputs, out_files)) if out_files else {}
        # [:] reads a repeated field in one call (iterating one ends on an
        # IndexError raised and caught inside protobuf).
        in_exchange = {s.index: s.offset for s in reply.exchange_outputs[:]}
        if in_exchange and exchange is None:
            raise KilnError("the agent placed outputs in an exchange buffer this channel "
                            "does not have", context=context, request_id=rid)
        outputs = []
        for i, out in enumerate(response.outputs[:]):
            dtype = PROTO_TO_DTYPE.get(out.type.dtype)
            if dtype is None:
                raise KilnError(f"output {i} has unknown dtype {out.type.dtype}", context=context)
            try:
                payload = out.WhichOneof("payload")
                # Inline first (the common case); an output with no payload
                # and no file is an empty tensor, or a size mismatch.
                if payload is None and i in in_exchange:
                    outputs.append(exchange.read(in_exchange[i], dtype, out.type.shape))
                elif payload == "data" or (payload is None and i not in by_index):
                    outputs.append(tensor_from_bytes(out.data, dtype, out.type.shape))
                elif payload == "held":
                    outputs.append(HeldTensor.from_output(out, dtype))
                elif i in by_index:
                    outputs.append(_tensor_from_file(by_index[i], dtype, out.type.shape))
                elif payload == "blob":
                    # A device that returns blobs (a remote agent): read from
                    # kilnd's store, straight into the tensor.
                    expected = payload_size(dtype, out.type.shape)
                    if expected != out.blob.size_bytes:
                        raise ValueError(f"tensor payload has {out.blob.size_bytes} bytes, "
                                         f"expected {expected} for {dtype} "
                                         f"{list(out.type.shape)}")
                    t, view = empty_tensor_for(dtype, out.type.shape)
                    self._blobs.read_into(out.blob, view, handed_out=True)
                    outputs.append(t)
            except ValueError as e:
                raise KilnError(f"output {i}: {e}", context=context, request_id=rid) from None
        return LocalResult(response, outputs)
