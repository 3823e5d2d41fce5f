"""Direct channels: a model called again on kilnd's machine gets a socket to
the agent of its device, and its later calls go there past kilnd. Checked
against a real kilnd and kiln-agent-cpu: the numbers, which calls kilnd
still sees, falling back when the agent goes, and what a client that
misuses its channel gets (the agent checks every frame; the channel runs
nothing but the executable and parameters kilnd bound it to), and the
exchange buffer a channel's calls carry their tensors in."""

from __future__ import annotations

import fcntl
import mmap
import os
import signal
import struct
import socket
import time

import pytest
import torch

import kiln
from kiln import exchange, local_execute
from kiln.v1 import executor_pb2, tensor_pb2
from test_e2e_local_execute import (ALL_SEALS, BIG, AffineAndSum, execute_frame, inputs,
                                    memfd, metric, raw_connect, read_reply, send_frame,
                                    session)
from test_e2e_resilience import agent_pids
from support import Kilnd

TOL = dict(rtol=1e-6, atol=1e-5)


def test_a_model_called_again_runs_over_its_channel_and_matches_eager(kilnd, client):
    """The first call goes through kilnd, the second asks for a channel and
    the rest use it: kilnd counts two executions and one channel, and every
    answer (an 8 MiB input and output in memfds, a small one inline) is
    eager's."""
    model = AffineAndSum().eval()
    compiled = client.compile(torch.export.export(model, inputs()))
    executions = metric(kilnd, "kiln_executions_total")
    channels = metric(kilnd, "kiln_direct_channels_total")
    transports = []
    for seed in range(5):
        x, s = inputs(seed)
        big, small = compiled(x, s)
        transports.append(compiled.last_transport)
        want_big, want_small = model(x, s)
        torch.testing.assert_close(big, want_big, **TOL)
        torch.testing.assert_close(small, want_small, **TOL)
    assert transports == ["local", "local", "direct", "direct", "direct"]
    assert metric(kilnd, "kiln_executions_total") - executions == 2
    assert metric(kilnd, "kiln_direct_channels_total") - channels == 1
    assert client.executor.local_executor.direct_channels == 1
    # After its first call the channel got an exchange buffer for the small
    # input and output (a page); the 8 MiB ones stay in memfds.
    assert exchange_sizes(client) == [mmap.PAGESIZE]
    # The agent's timings come back as kilnd's would.
    assert compiled.last_timings["run"] > 0 and compiled.last_timings["total"] > 0
    assert compiled.last_device_id.startswith("local-cpu")


def test_weights_changed_in_place_get_their_own_channel(client):
    """A channel is bound to the parameters of the call that opened it:
    after the weights change, the call checked while the device ran is
    dropped and runs again through kilnd, with the new weights, and the
    model later gets a channel for them."""
    from kiln.testing import MLP

    torch.manual_seed(3)
    model = MLP(d_in=12, d_hidden=20, d_out=6).eval()
    x = torch.randn(3, 12)
    compiled = client.compile(torch.export.export(model, (x,)))
    for _ in range(3):
        torch.testing.assert_close(compiled(x), model(x), **TOL)
    assert compiled.last_transport == "direct"
    with torch.no_grad():
        for p in compiled.parameters.values():
            p.mul_(-0.5)
        expected = torch.export.export(model, (x,)).module()(x)
    got = [compiled(x) for _ in range(4)]
    for out in got:
        torch.testing.assert_close(out, expected, **TOL)
    assert compiled.last_transport == "direct"
    assert client.executor.local_executor.direct_channels == 2  # one per set of weights


def test_held_tensors_go_through_kilnd(client):
    """Calls that keep or read held tensors never take a channel."""
    x = torch.randn(16)
    compiled = client.compile(torch.export.export(AddOne(), (x,)))
    for _ in range(3):
        kept = compiled.run([x], keep_outputs=[0])[0]
        assert compiled.last_transport == "local"
        torch.testing.assert_close(compiled.run([kept])[0], x + 2)
        assert compiled.last_transport == "local"
        compiled.run([x], release=[kept.handle])
        assert compiled.last_transport == "local"
    assert client.executor.local_executor.direct_channels == 0


def test_a_variable_size_executable_gets_no_channel(client):
    """Channels serve static manifests only: kilnd does not ask the agent."""
    x = torch.randn(4, 8)
    batch = torch.export.Dim("batch", min=1, max=64)
    compiled = client.compile(torch.export.export(AddOne(), (x,),
                                                  dynamic_shapes=({0: batch},)))
    for n in (4, 4, 4, 7):
        y = torch.randn(n, 8)
        torch.testing.assert_close(compiled(y), y + 1)
        assert compiled.last_transport == "local"
    assert client.executor.local_executor.direct_channels == 0


def test_without_direct_every_call_goes_through_kilnd(kilnd):
    with kiln.Client(kilnd.address, timeout=300, direct=False) as client:
        x = torch.randn(16)
        compiled = client.compile(torch.export.export(AddOne(), (x,)))
        for _ in range(3):
            torch.testing.assert_close(compiled(x), x + 1)
            assert compiled.last_transport == "local"
        assert client.executor.local_executor.direct_channels == 0


def test_a_lost_agent_sends_the_call_to_kilnd(start_kilnd):
    """The agent dies: its channel fails before an answer, the call runs
    through kilnd on the restarted agent, and a later call opens a channel
    to that one."""
    daemon = start_kilnd()
    model = AffineAndSum().eval()
    with kiln.Client(daemon.address, timeout=120) as client:
        compiled = client.compile(torch.export.export(model, inputs()))
        for _ in range(3):
            compiled(*inputs())
        assert compiled.last_transport == "direct"
        [agent] = agent_pids(daemon.proc.pid)
        os.kill(agent, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not [
                p for p in agent_pids(daemon.proc.pid) if p != agent]:
            time.sleep(0.05)
        x, s = inputs(7)
        big, small = compiled(x, s)
        assert compiled.last_transport == "local"
        torch.testing.assert_close(big, model(x, s)[0], **TOL)
        for _ in range(2):
            big, _ = compiled(x, s)
        assert compiled.last_transport == "direct"
        torch.testing.assert_close(big, model(x, s)[0], **TOL)


@pytest.mark.parametrize("poll_us", [300, 0])
def test_the_agent_polls_as_told_and_the_client_polls_for_short_answers(tmp_path, poll_us):
    """--direct-poll-us (through KILN_AGENT_DIRECT_POLL_US, which a local
    agent inherits from kilnd): every answer on a channel says how long the
    agent polls, and the client polls for its next answer only when the
    agent does and the last run was short. The answers are eager's either
    way, from calls read while polling and after a pause (the agent
    asleep)."""
    daemon = Kilnd(tmp_path, tmp_path / "cache",
                   env={"KILN_AGENT_DIRECT_POLL_US": str(poll_us)}).start()
    try:
        with kiln.Client(daemon.address, timeout=120) as client:
            x = torch.randn(16)
            compiled = client.compile(torch.export.export(AddOne(), (x,)))
            for pause in (0, 0, 0, 0.05, 0):
                time.sleep(pause)
                x = torch.randn(16)
                torch.testing.assert_close(compiled(x), x + 1)
            assert compiled.last_transport == "direct"
            executor = client.executor.local_executor
            with executor._lock:
                [channel] = [c for m in executor._models.values() for c in m.idle]
            total_s = compiled.last_timings["total"]
            assert total_s > 0
            if poll_us and total_s <= local_execute._POLL_MAX_RUN_US * 1e-6:
                assert channel.poll_s == pytest.approx(
                    total_s + local_execute._POLL_SLACK_US * 1e-6, rel=1e-3)
            elif not poll_us:
                assert channel.poll_s == 0.0
    finally:
        daemon.assert_stops_cleanly()
    assert f"direct channels poll {poll_us} us" in daemon.log_path.read_text()


def exchange_sizes(client) -> list[int]:
    """The exchange buffers of the client's idle direct channels, in bytes."""
    executor = client.executor.local_executor
    with executor._lock:
        return [c.exchange.size for m in executor._models.values() for c in m.idle
                if c.exchange is not None]


class Product(torch.nn.Module):
    """1.6 GFLOP a call; its 512 KiB output fits a rehearsal."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.randn(1536, 1536, generator=g) / 40)
        self.w2 = torch.nn.Parameter(torch.randn(1536, 512, generator=g) / 40)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a @ self.w1) @ self.w2


def test_a_long_run_on_a_polling_agent_is_paced_for_a_rehearsal_and_answers_eagers_values(
        tmp_path, monkeypatch):
    """A 1-thread agent on this machine leaves a CPU free and polls; after a
    run of more than _POLL_MAX_RUN_US the client's channel is set to wake
    _REHEARSAL_LEAD_US before the next answer is due and decode the last
    answer again (its exchange-buffer outputs) before the real one. Every
    answer is still eager's, through the exchange buffer, whether the
    rehearsal ran or the answer came first (a loaded machine delays the
    client's wake-up past the answer). The lead is 3 ms here (600 us in
    use). That the rehearsal runs is checked against a fake agent's
    answer time in client_py/tests/test_direct_channels.py."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("a 1-thread agent polls only with a second CPU")
    monkeypatch.setattr(local_execute, "_REHEARSAL_LEAD_US", 3000)
    daemon = Kilnd(tmp_path, tmp_path / "cache",
                   env={"KILN_AGENT_DIRECT_POLL_US": "300",
                        "KILN_AGENT_COMPUTE_THREADS": "1"}).start()
    try:
        with kiln.Client(daemon.address, timeout=120) as client:
            model = Product().eval()
            compiled = client.compile(torch.export.export(model, (torch.randn(256, 1536),)))
            executor = client.executor.local_executor
            paced = 0
            for _ in range(6):
                a = torch.randn(256, 1536)
                with torch.no_grad():
                    expected = model(a)
                torch.testing.assert_close(compiled(a), expected, rtol=1e-4, atol=1e-4)
                total_us = compiled.last_timings["total"] * 1e6
                if compiled.last_transport != "direct":
                    continue
                with executor._lock:
                    [channel] = [c for m in executor._models.values() for c in m.idle]
                assert channel.poll_s == 0.0
                if total_us > local_execute._POLL_MAX_RUN_US:
                    paced += 1
                    assert channel.rehearse_after_s == pytest.approx(
                        (total_us - local_execute._REHEARSAL_LEAD_US) * 1e-6, rel=1e-3)
                    # From the channel's second call on, its output is in the
                    # exchange buffer (the first call's came in a memfd).
                    assert (channel.last_answer is not None) == (paced > 1)
            assert compiled.last_transport == "direct"
            assert paced >= 3  # 1.6 GFLOP on one thread: milliseconds everywhere
    finally:
        daemon.assert_stops_cleanly()

class Mixed(torch.nn.Module):
    """Small tensors of several dtypes in and out."""

    def forward(self, x, n, mask):
        return x * 2.0 + n.to(torch.float32), (x > 0) & mask, n * 3


def mixed_inputs(seed: int):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(64, 256, generator=g),
            torch.randint(-100, 100, (64, 256), generator=g, dtype=torch.int32),
            torch.rand(64, 256, generator=g) > 0.5)


def test_small_tensors_travel_in_the_exchange_buffer_and_match_eager(client, monkeypatch):
    """Every input goes in the channel's exchange buffer from the channel's
    second call on, every output comes back through it, and each answer is
    eager's, call after call (the buffer is reused). The second call places
    the inputs and makes the channel's call plan; later calls put them at
    the plan's offsets and send its frame."""
    placed, put = [], []
    real_place, real_put = exchange.ExchangeBuffer.place, exchange.ExchangeBuffer.put

    def spy_place(self, t, cursor):
        placed.append(real_place(self, t, cursor))
        return placed[-1]

    def spy_put(self, t, offset):
        put.append(offset)
        real_put(self, t, offset)

    monkeypatch.setattr(exchange.ExchangeBuffer, "place", spy_place)
    monkeypatch.setattr(exchange.ExchangeBuffer, "put", spy_put)
    model = Mixed().eval()
    compiled = client.compile(torch.export.export(model, mixed_inputs(0)))
    for seed in range(6):
        got = compiled(*mixed_inputs(seed))
        for g, want in zip(got, model(*mixed_inputs(seed))):
            torch.testing.assert_close(g, want, rtol=0, atol=0)
        if seed == 3:
            open_fds = len(os.listdir("/proc/self/fd"))
    assert len(os.listdir("/proc/self/fd")) == open_fds  # no file per call
    assert compiled.last_transport == "direct"
    # Call 4 places three inputs (3 is the channel's first); 5 and 6 put them.
    assert placed == [0, 65536, 131072]
    assert put == [0, 65536, 131072] * 2
    # 64 KiB + 64 KiB + 16 KiB in, 64 KiB + 16 KiB + 64 KiB out.
    assert exchange_sizes(client) == [(64 + 64 + 16 + 64 + 16 + 64) << 10]


class TwiceAndOne(torch.nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def test_mid_size_tensors_travel_in_the_exchange_buffer_and_larger_ones_in_memfds(
        client, monkeypatch):
    """A 2 MiB input and output go through the buffer (under the 8 MiB
    tensor limit, which the client and the agent share); tensors at the
    limit keep their memfds and ask for no buffer. Eager's numbers either
    way, call after call."""
    placed, read = [], []
    real_place, real_read = exchange.ExchangeBuffer.place, exchange.ExchangeBuffer.read
    real_put = exchange.ExchangeBuffer.put

    def spy_place(self, t, cursor):
        placed.append(real_place(self, t, cursor))
        return placed[-1]

    def spy_put(self, t, offset):
        placed.append(offset)
        real_put(self, t, offset)

    def spy_read(self, offset, dtype, shape):
        read.append(offset)
        return real_read(self, offset, dtype, shape)

    monkeypatch.setattr(exchange.ExchangeBuffer, "place", spy_place)
    monkeypatch.setattr(exchange.ExchangeBuffer, "put", spy_put)
    monkeypatch.setattr(exchange.ExchangeBuffer, "read", spy_read)
    model = TwiceAndOne()
    mid = torch.randn(2 << 18, generator=torch.Generator().manual_seed(0))  # 2 MiB
    compiled = client.compile(torch.export.export(model, (mid,)))
    for k in range(5):
        x = mid + k
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
    assert compiled.last_transport == "direct"
    assert placed == [0, 0]  # calls 4 and 5 (3 is the channel's first)
    assert read == [2 << 20, 2 << 20]  # the agent wrote the outputs there too
    assert exchange_sizes(client) == [(2 + 2) << 20]

    placed.clear()
    read.clear()
    big = torch.randn(exchange.MAX_TENSOR_BYTES // 4,
                      generator=torch.Generator().manual_seed(1))
    compiled = client.compile(torch.export.export(model, (big,)))
    for k in range(4):
        x = big + k
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
    assert compiled.last_transport == "direct"
    assert placed == [] and read == []
    assert exchange_sizes(client) == [(2 + 2) << 20]  # the 2 MiB model's only


def test_without_the_exchange_a_channel_carries_tensors_in_frames(client):
    client.executor.local_executor.exchange = False
    model = Mixed().eval()
    compiled = client.compile(torch.export.export(model, mixed_inputs(0)))
    for seed in range(4):
        torch.testing.assert_close(compiled(*mixed_inputs(seed))[0],
                                   model(*mixed_inputs(seed))[0], rtol=0, atol=0)
    assert compiled.last_transport == "direct"
    assert exchange_sizes(client) == []


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


# --- what a client that misuses its channel gets -------------------------------

def admitted_socket(client) -> socket.socket:
    """A raw connection to kilnd's local socket, past its hello."""
    granted = session(client)
    sock = raw_connect(granted.socket_path)
    send_frame(sock, executor_pb2.LocalClientFrame(
        hello=executor_pb2.LocalHello(ticket=granted.ticket)).SerializeToString())
    assert read_reply(sock).code == 0
    return sock


@pytest.fixture
def channel(client):
    """A channel opened the way the client opens one (a raw LocalExecute
    with open_direct), and the executable it is bound to."""
    sock = admitted_socket(client)
    compiled = client.compile(torch.export.export(AffineAndSum().eval(), inputs()))
    big = local_execute.sealed_memfd(memoryview(bytes(BIG * 4)))
    frame = executor_pb2.LocalClientFrame.FromString(execute_frame(compiled, big))
    frame.execute.open_direct = True
    try:
        send_frame(sock, frame.SerializeToString(), [big])
    finally:
        os.close(big)
    body, files = local_execute._Connection(sock).receive()
    reply = executor_pb2.LocalReply.FromString(body)
    assert reply.code == 0, reply.message
    assert reply.direct_channel and len(files) == len(reply.file_outputs) + 1
    for fd in files[:-1]:
        os.close(fd)
    direct = socket.socket(fileno=files[-1])
    direct.settimeout(60)
    yield direct, compiled
    direct.close()
    sock.close()


def inputs_only(compiled, big_fd=None) -> executor_pb2.LocalClientFrame:
    """A good call on a channel: the inputs, nothing else."""
    frame = executor_pb2.LocalClientFrame.FromString(execute_frame(compiled, big_fd))
    request = frame.execute.request
    request.ClearField("executable")
    request.ClearField("parameters")
    return frame


def answer(direct: socket.socket, frame: executor_pb2.LocalClientFrame, fds=()):
    send_frame(direct, frame.SerializeToString(), fds)
    body, files = local_execute._Connection(direct).receive()
    return executor_pb2.LocalReply.FromString(body), files


def assert_serves_on(direct, compiled):
    """The channel (or a fresh one) still answers a good call correctly."""
    x = torch.randn(BIG)
    good = local_execute.sealed_memfd(memoryview(x.numpy()).cast("B"))
    try:
        reply, files = answer(direct, inputs_only(compiled, good), [good])
    finally:
        os.close(good)
    assert reply.code == 0, reply.message
    assert list(reply.file_outputs) == [0] and len(files) == 1
    out = local_execute._tensor_from_file(files[0], torch.float32, [BIG])
    os.close(files[0])
    torch.testing.assert_close(out, x * 2.0, **TOL)


def test_a_good_call_on_a_raw_channel(channel):
    assert_serves_on(*channel)


def other_executable(frame, compiled):
    frame.execute.request.executable.hash = "0" * 64
    frame.execute.request.executable.size_bytes = 1


def with_parameters(frame, compiled):
    weight = frame.execute.request.parameters.add()
    weight.hash = "3" * 64
    weight.size_bytes = 32


def with_parameter_set(frame, compiled):
    frame.execute.request.parameter_set.hash = "1" * 64


def keeping(frame, compiled):
    frame.execute.request.keep_outputs.append(0)


def blob_input(frame, compiled):
    small = frame.execute.request.inputs[1]
    small.blob.hash = "2" * 64
    small.blob.size_bytes = 32


def held_input(frame, compiled):
    frame.execute.request.inputs[1].held = "held-" + "0" * 32


def wrong_size(frame, compiled):
    frame.execute.request.inputs[1].data = bytes(12)


def wrong_type(frame, compiled):
    frame.execute.request.inputs[1].type.dtype = tensor_pb2.DTYPE_F64
    frame.execute.request.inputs[1].data = bytes(64)


def stray_file_index(frame, compiled):
    frame.execute.file_inputs.append(5)


def file_for_an_inline_input(frame, compiled):
    frame.execute.file_inputs[:] = [1]


@pytest.mark.parametrize("change, says", [
    (other_executable, "names only its inputs"),
    (with_parameters, "names only its inputs"),
    (with_parameter_set, "names only its inputs"),
    (keeping, "names only its inputs"),
    (blob_input, "not blobs or held tensors"),
    (held_input, "not blobs or held tensors"),
    (wrong_size, "input 1 ('"),
    (wrong_type, "input 1 ('"),
    (stray_file_index, "names 2 file inputs and carries 1 files"),
    (file_for_an_inline_input, "input 1: a file was passed for it, and it has a payload"),
])
def test_a_call_naming_more_than_inputs_is_invalid_argument(channel, change, says):
    direct, compiled = channel
    big = local_execute.sealed_memfd(memoryview(bytes(BIG * 4)))
    frame = inputs_only(compiled, big)
    change(frame, compiled)
    try:
        reply, files = answer(direct, frame, [big])
    finally:
        os.close(big)
    assert not files
    assert reply.code == 3, reply  # INVALID_ARGUMENT
    assert says in reply.message, reply.message
    assert_serves_on(direct, compiled)


@pytest.mark.parametrize("make_fd, says", [
    (lambda: memfd(BIG * 4, 0), "not a memfd sealed"),
    (lambda: memfd(BIG * 4, ALL_SEALS ^ fcntl.F_SEAL_WRITE), "not a memfd sealed"),
    (lambda: memfd(1000, ALL_SEALS), "holds 1000"),
    (lambda: os.pipe()[0], "not a regular file"),
])
def test_a_bad_input_file_on_a_channel_is_invalid_argument(channel, make_fd, says):
    direct, compiled = channel
    fd = make_fd()
    try:
        reply, files = answer(direct, inputs_only(compiled, fd), [fd])
    finally:
        os.close(fd)
    assert not files
    assert reply.code == 3, reply
    assert "input 0 ('" in reply.message and says in reply.message, reply.message
    assert_serves_on(direct, compiled)


def test_garbage_on_a_channel_ends_only_that_channel(channel, client):
    """Bytes that are not a LocalClientFrame: an INVALID_ARGUMENT reply, the
    channel closes, and the agent serves kilnd and other channels on."""
    direct, compiled = channel
    send_frame(direct, b"\xff\xfe not a frame")
    body, files = local_execute._Connection(direct).receive()
    reply = executor_pb2.LocalReply.FromString(body)
    assert reply.code == 3 and "LocalExecute frames" in reply.message, reply
    assert direct.recv(1) == b""  # closed by the agent
    # The agent runs on: through kilnd, and over the client's own channel.
    model = AffineAndSum().eval()
    for _ in range(3):
        x, s = inputs(1)
        torch.testing.assert_close(compiled(x, s)[0], model(x, s)[0], **TOL)
    assert compiled.last_transport == "direct"


def test_a_frame_past_the_size_limit_closes_the_channel(channel):
    direct, compiled = channel
    header_only = (9 << 20)  # announces 9 MiB, past the 8 MiB a call may take
    direct.sendall(struct.pack("<IIQ", 0x4B4C4E4B, 0, header_only))
    assert direct.recv(1) == b""


# --- exchange buffers on a raw channel ---------------------------------------

def ask_exchange(direct, size: int):
    frame = executor_pb2.LocalClientFrame(exchange=executor_pb2.LocalExchange(size_bytes=size))
    return answer(direct, frame)


def test_a_raw_channel_exchange_buffer_carries_the_small_tensors(channel):
    """The small input goes in the buffer, the small output comes back in
    it; the 8 MiB ones stay in memfds. A slice outside the buffer is
    INVALID_ARGUMENT, and the channel serves on."""
    direct, compiled = channel
    reply, files = ask_exchange(direct, 64 << 10)
    assert reply.code == 0 and reply.exchange_bytes == 64 << 10 and len(files) == 1
    shared = mmap.mmap(files[0], 64 << 10)
    os.close(files[0])
    x, s = torch.randn(BIG), torch.randn(8)
    shared[0:32] = s.numpy().tobytes()
    big = local_execute.sealed_memfd(memoryview(x.numpy()).cast("B"))
    frame = inputs_only(compiled, big)
    frame.execute.request.inputs[1].ClearField("data")
    frame.execute.exchange_inputs.add(index=1, offset=0)
    frame.execute.exchange_output_offset = 100
    frame.execute.exchange_output_bytes = (64 << 10) - 100
    try:
        reply, files = answer(direct, frame, [big])
    finally:
        os.close(big)
    assert reply.code == 0, reply.message
    assert list(reply.file_outputs) == [0] and len(files) == 1
    assert [(e.index, e.offset) for e in reply.exchange_outputs] == [(1, 128)]
    out = local_execute._tensor_from_file(files[0], torch.float32, [BIG])
    os.close(files[0])
    torch.testing.assert_close(out, x * 2.0 + s.sum(), **TOL)
    small = torch.frombuffer(bytearray(shared[128:160]), dtype=torch.float32)
    torch.testing.assert_close(small, torch.tanh(s), **TOL)

    frame.execute.exchange_inputs[0].offset = (64 << 10) - 16  # 32 bytes past
    big = local_execute.sealed_memfd(memoryview(x.numpy()).cast("B"))
    try:
        reply, files = answer(direct, frame, [big])
    finally:
        os.close(big)
    assert reply.code == 3 and "input 1: 32 bytes at offset" in reply.message, reply
    assert not files
    assert_serves_on(direct, compiled)
    shared.close()


def test_kilnds_socket_refuses_exchange_slices(client):
    sock = admitted_socket(client)
    compiled = client.compile(torch.export.export(AffineAndSum().eval(), inputs()))
    big = local_execute.sealed_memfd(memoryview(bytes(BIG * 4)))
    frame = executor_pb2.LocalClientFrame.FromString(execute_frame(compiled, big))
    frame.execute.exchange_output_bytes = 64
    try:
        send_frame(sock, frame.SerializeToString(), [big])
    finally:
        os.close(big)
    reply = read_reply(sock)
    assert reply.code == 3 and "belong to direct channels" in reply.message, reply
    sock.close()


def test_overlapping_slices_and_an_input_in_a_file_too_are_invalid_argument(channel):
    """Slices ascend without overlap (what the agent copies never exceeds
    its buffer), and an input is in the buffer or in a file, not both."""
    direct, compiled = channel
    reply, files = ask_exchange(direct, 16 << 20)
    assert reply.code == 0, reply.message
    os.close(files[0])
    overlapping = inputs_only(compiled)
    for index, offset in ((0, 0), (1, 100)):  # the small one inside the big one
        overlapping.execute.request.inputs[index].ClearField("data")
        overlapping.execute.exchange_inputs.add(index=index, offset=offset)
    reply, files = answer(direct, overlapping)
    assert reply.code == 3 and "input 1: it starts at offset 100" in reply.message, reply
    assert not files

    big = local_execute.sealed_memfd(memoryview(bytes(BIG * 4)))
    twice = inputs_only(compiled, big)
    twice.execute.exchange_inputs.add(index=0, offset=0)
    try:
        reply, files = answer(direct, twice, [big])
    finally:
        os.close(big)
    assert reply.code == 3 and "in a file too" in reply.message, reply
    assert not files
    assert_serves_on(direct, compiled)
