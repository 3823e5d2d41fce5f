"""The client's side of direct channels (kiln/local_execute.py), against a
fake agent on a socketpair: what a call sends there (its inputs only), what
an answer, a missing blob, a closed channel and a timeout each do to the
call and to the model's pool of channels, the least recently called
model's channels closing, and the exchange buffer a channel asks for after
its first call (tensors through it; a refusal remembered), and polling for
the answer when the agent says it polls (rehearsing the decode before a
long run's answer). The real kilnd and agent are in
tests/e2e/test_e2e_direct_channels.py."""

from __future__ import annotations

import array
import fcntl
import mmap
import os
import socket
import threading
import time
from typing import Any

import pytest
import torch

from kiln import DeadlineExceededError, local_execute
from kiln.tensors import set_tensor_type
from kiln.v1 import executor_pb2


class _Rpc:
    timeout = 10.0


def encode(msg, i: int, t: torch.Tensor, as_blob: bool = False) -> None:
    set_tensor_type(msg.type, t.dtype, t.shape)
    msg.data = t.numpy().tobytes()


def request(executable: str = "e" * 64) -> executor_pb2.ExecuteRequest:
    r = executor_pb2.ExecuteRequest()
    r.executable.hash = executable
    r.executable.size_bytes = 10
    weight = r.parameters.add()
    weight.hash = "w" * 64
    weight.size_bytes = 16
    return r


class Agent:
    """The agent's end of one channel, answering each frame with `answer`."""

    def __init__(self, sock: socket.socket, answer):
        self.sock = sock
        self.frames: list[executor_pb2.LocalClientFrame] = []
        self.answer = answer
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection = local_execute._Connection(self.sock, "the client")
        while True:
            try:
                body, _ = connection.receive()
            except local_execute._TransportError:
                return
            frame = executor_pb2.LocalClientFrame.FromString(body)
            self.frames.append(frame)
            reply = self.answer(frame)
            if reply is None:
                return  # never answers
            if reply == "close":
                self.sock.close()
                return
            files: list[int] = []
            if isinstance(reply, tuple):
                reply, files = reply
            payload = reply.SerializeToString()
            header = local_execute._HEADER.pack(local_execute._MAGIC, len(files), len(payload))
            rights = ([(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", files))]
                      if files else [])
            self.sock.sendmsg([header + payload], rights)
            for fd in files:
                os.close(fd)


def plus_one(frame: executor_pb2.LocalClientFrame) -> executor_pb2.LocalReply:
    x = torch.frombuffer(bytearray(frame.execute.request.inputs[0].data), dtype=torch.float32)
    reply = executor_pb2.LocalReply()
    out = reply.response.outputs.add()
    set_tensor_type(out.type, torch.float32, x.shape)
    out.data = (x + 1).numpy().tobytes()
    reply.response.device_id = "local-cpu/0"
    return reply


@pytest.fixture
def executor(monkeypatch):
    ex = local_execute.LocalExecutor(_Rpc(), None, direct=True)
    through_kilnd: list[Any] = []

    def round_trip(frame, files, context, rid, while_waiting, direct_key=None):
        # kilnd's path: recorded, answered as x + 2 so the tests tell them apart.
        through_kilnd.append(executor_pb2.LocalClientFrame.FromString(frame))
        while_waiting()
        x = torch.frombuffer(bytearray(through_kilnd[-1].execute.request.inputs[0].data),
                             dtype=torch.float32)
        return local_execute.LocalResult(executor_pb2.ExecuteResponse(), [x + 2])

    monkeypatch.setattr(ex, "_round_trip", round_trip)
    ex.through_kilnd = through_kilnd
    ex.exchange = False  # the exchange tests below turn it on
    yield ex
    ex.close()


def give_channel(ex, answer, key_request=None, timeout: float = 10.0) -> Agent:
    """A channel for the model of `key_request`, served by a fake agent."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    key = local_execute._model_key(key_request or request())
    ex._direct_channel(key)  # the model's first call
    ex._add_direct(key, ours.detach())
    with ex._lock:
        ex._models[key].idle[-1].sock.settimeout(timeout)
    return Agent(theirs, answer)


def run(ex, r=None, x=None):
    x = torch.arange(4, dtype=torch.float32) if x is None else x
    return ex.execute(r or request(), [x], {}, encode)


def test_a_call_sends_only_its_inputs_and_keeps_its_channel(executor):
    agent = give_channel(executor, plus_one)
    result = run(executor)
    assert result.direct
    torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 1)
    [frame] = agent.frames
    sent = frame.execute.request
    assert not sent.HasField("executable") and not sent.parameters
    assert not frame.execute.open_direct and len(sent.inputs) == 1
    assert executor.direct_channels == 1 and not executor.through_kilnd
    assert run(executor).direct  # the same channel again


def test_a_missing_blob_sends_the_call_to_kilnd_and_drops_the_channel(executor):
    give_channel(executor, lambda f: executor_pb2.LocalReply(code=9, message="blob gone"))
    result = run(executor)
    assert not result.direct
    torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 2)
    [sent] = executor.through_kilnd
    assert sent.execute.request.executable.hash == "e" * 64  # a full call
    assert executor.direct_channels == 0


def test_other_errors_from_the_agent_are_the_callers(executor):
    give_channel(executor, lambda f: executor_pb2.LocalReply(code=3, message="input 0: bad"))
    with pytest.raises(local_execute.InvalidArgumentError, match="input 0: bad"):
        run(executor)
    assert not executor.through_kilnd
    assert executor.direct_channels == 1  # the channel serves on


def test_a_closed_channel_sends_the_call_to_kilnd(executor):
    give_channel(executor, lambda f: "close")
    result = run(executor)
    assert not result.direct and len(executor.through_kilnd) == 1
    assert executor.direct_channels == 0


def test_a_call_past_the_timeout_is_deadline_exceeded_and_not_run_again(executor):
    agent = give_channel(executor, lambda f: None, timeout=0.2)  # held: its end stays open
    with pytest.raises(DeadlineExceededError, match="direct channel"):
        run(executor)
    assert len(agent.frames) == 1
    assert not executor.through_kilnd
    assert executor.direct_channels == 0


def test_the_least_recently_called_models_channels_close(executor):
    first = give_channel(executor, plus_one, request("a" * 64))
    for i in range(local_execute._DIRECT_MODELS):
        run(executor, request(f"{i:064x}"))
    assert first.sock.recv(1) == b""  # our end was closed
    assert executor.direct_channels == 0


def test_a_model_asks_for_a_channel_on_its_second_call(executor):
    for expected in (False, True, True):
        run(executor)
        assert executor.through_kilnd[-1].execute.open_direct == expected


def paced(poll_us: int, total_us: int, delay_s: float = 0.0):
    """plus_one, answered after ``delay_s`` by an agent that says it polls
    ``poll_us`` and ran for ``total_us``."""
    def answer(frame):
        time.sleep(delay_s)
        reply = plus_one(frame)
        reply.poll_us = poll_us
        reply.response.timings.total_us = total_us
        return reply
    return answer


def idle_channel(ex) -> local_execute._Connection:
    with ex._lock:
        [channel] = [c for m in ex._models.values() for c in m.idle]
    return channel


@pytest.mark.parametrize("poll_us,total_us,poll_s,rehearse_after_s", [
    (100, 40, 140e-6, 0.0),     # the agent polls and the run was short: run + slack
    (250, 2000, 2100e-6, 0.0),  # the longest run still polled for
    (100, 2001, 0.0, 1401e-6),  # longer runs: a rehearsal 600 us before the answer
    (100, 50000, 0.0, 49.4e-3),
    (0, 40, 0.0, 0.0),          # the agent sleeps at once: no CPU to spare
    (0, 50000, 0.0, 0.0),
    (100, 0, 0.0, 0.0),         # no timing: nothing to pace by
])
def test_a_channel_polls_for_short_answers_when_its_agent_polls(executor, poll_us, total_us,
                                                                 poll_s, rehearse_after_s):
    give_channel(executor, paced(poll_us, total_us))
    for _ in range(3):  # from the second call on, receive() polls first
        result = run(executor)
        assert result.direct
        torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 1)
        assert idle_channel(executor).poll_s == pytest.approx(poll_s)
        assert idle_channel(executor).rehearse_after_s == pytest.approx(rehearse_after_s)


def counting_decodes(executor, monkeypatch) -> list[int]:
    """Counts the executor's decodes of answers (rehearsals included)."""
    decodes = [0]
    decode = executor._decode

    def counted(*args, **kwargs):
        decodes[0] += 1
        return decode(*args, **kwargs)

    monkeypatch.setattr(executor, "_decode", counted)
    return decodes


def test_a_long_run_answer_is_rehearsed_before_it_comes(executor, monkeypatch):
    """An agent with a CPU to spare that ran 60 ms: from the second call on,
    the client wakes 600 us before the answer is due and decodes the last
    answer again (warming its caches), then reads the real answer, which is
    the caller's. This agent answers 120 ms after the send, so that a loaded
    host's late wake-up (tens of ms under CI) still comes before it."""
    give_channel(executor, paced(100, 60000, delay_s=0.12))
    decodes = counting_decodes(executor, monkeypatch)
    run(executor)
    assert decodes[0] == 1  # nothing to rehearse yet
    for i in range(3):
        x = torch.arange(4, dtype=torch.float32) * (i + 2)
        result = run(executor, x=x)
        torch.testing.assert_close(result.outputs[0], x + 1)
    assert decodes[0] == 1 + 3 * 2


def test_an_answer_before_its_rehearsal_is_read_without_one(executor, monkeypatch):
    """The agent says its run took 30 ms but answers at once: the answer is
    there before the rehearsal's time, and no rehearsal runs."""
    give_channel(executor, paced(100, 30000))
    decodes = counting_decodes(executor, monkeypatch)
    for _ in range(3):
        start = time.perf_counter()
        torch.testing.assert_close(run(executor).outputs[0], torch.arange(4.0) + 1)
        assert time.perf_counter() - start < 0.025
    assert decodes[0] == 3


def test_only_answers_read_from_the_reply_and_the_exchange_buffer_are_rehearsed():
    inline = executor_pb2.LocalReply()
    out = inline.response.outputs.add()
    set_tensor_type(out.type, torch.float32, [1])
    out.data = b"1234"
    assert local_execute._decodes_again(inline)
    exchanged = executor_pb2.LocalReply()
    set_tensor_type(exchanged.response.outputs.add().type, torch.float32, [512, 512])
    exchanged.exchange_outputs.add(index=0, offset=64)
    assert local_execute._decodes_again(exchanged)  # 1 MiB
    set_tensor_type(exchanged.response.outputs[0].type, torch.float32, [512, 513])
    assert not local_execute._decodes_again(exchanged)  # past 1 MiB: a long cold copy
    in_file = executor_pb2.LocalReply(file_outputs=[0])
    set_tensor_type(in_file.response.outputs.add().type, torch.float32, [4])
    assert not local_execute._decodes_again(in_file)  # the file is closed once decoded
    in_blob = executor_pb2.LocalReply()
    blob = in_blob.response.outputs.add()
    set_tensor_type(blob.type, torch.float32, [4])
    blob.blob.hash = "b" * 64
    assert not local_execute._decodes_again(in_blob)  # a read from kilnd's store
    held = executor_pb2.LocalReply()
    kept = held.response.outputs.add()
    set_tensor_type(kept.type, torch.float32, [4])
    kept.held = "h"
    assert not local_execute._decodes_again(held)
    assert not local_execute._decodes_again(executor_pb2.LocalReply(code=3))


def test_an_answer_later_than_the_poll_is_read_by_the_sleeping_receive(executor):
    """The poll gives up after its window (140 us here), and the answer,
    50 ms late, is read all the same."""
    give_channel(executor, paced(100, 40, delay_s=0.05))
    for _ in range(3):
        start = time.perf_counter()
        result = run(executor)
        assert time.perf_counter() - start >= 0.05
        torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 1)
    assert idle_channel(executor).poll_s == pytest.approx(140e-6)


def test_an_agent_that_hangs_up_while_the_client_polls_sends_the_call_to_kilnd(executor):
    answers = iter([paced(100, 40), lambda f: "close"])
    give_channel(executor, lambda f: next(answers)(f))
    assert run(executor).direct
    assert idle_channel(executor).poll_s == pytest.approx(140e-6)
    result = run(executor)  # polled, then the hang-up: kilnd runs it
    assert not result.direct and len(executor.through_kilnd) == 1
    torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 2)
    assert executor.direct_channels == 0


class ExchangingAgent:
    """Answers like the real agent with an exchange buffer: makes a sealed
    memfd on LocalExchange, and for a call that names one reads its input
    there and writes x + 1 at the region's first aligned offset."""

    def __init__(self, refuse: bool = False):
        self.refuse = refuse
        self.mapping: mmap.mmap | None = None

    def __call__(self, frame: executor_pb2.LocalClientFrame):
        if frame.HasField("exchange"):
            if self.refuse:
                return executor_pb2.LocalReply(code=3, message="no buffers here")
            size = frame.exchange.size_bytes
            fd = os.memfd_create("exchange", os.MFD_ALLOW_SEALING)
            os.ftruncate(fd, size)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                        fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
            self.mapping = mmap.mmap(fd, size)
            return executor_pb2.LocalReply(exchange_bytes=size), [fd]
        call = frame.execute
        if not call.exchange_inputs:
            return plus_one(frame)
        [where] = call.exchange_inputs
        x = torch.frombuffer(bytearray(self.mapping[where.offset:where.offset + 16]),
                             dtype=torch.float32)
        reply = executor_pb2.LocalReply()
        out = reply.response.outputs.add()
        set_tensor_type(out.type, torch.float32, x.shape)
        offset = -(-call.exchange_output_offset // 64) * 64
        self.mapping[offset:offset + 16] = (x + 1).numpy().tobytes()
        placed = reply.exchange_outputs.add()
        placed.index, placed.offset = 0, offset
        return reply


def test_a_channel_carries_tensors_in_an_exchange_buffer_after_its_first_call(executor):
    executor.exchange = True
    fake = ExchangingAgent()
    agent = give_channel(executor, fake)
    first = run(executor)
    torch.testing.assert_close(first.outputs[0], torch.arange(4.0) + 1)
    # After the first call's answer: a buffer for its 16 bytes in and out.
    assert [f.WhichOneof("frame") for f in agent.frames] == ["execute", "exchange"]
    assert agent.frames[1].exchange.size_bytes == mmap.PAGESIZE
    x = torch.tensor([10.0, 20.0, 30.0, 40.0])
    second = run(executor, x=x)
    assert second.direct
    torch.testing.assert_close(second.outputs[0], x + 1)
    call = agent.frames[2].execute
    assert [(s.index, s.offset) for s in call.exchange_inputs] == [(0, 0)]
    assert not call.request.inputs[0].data  # the bytes went through the buffer
    assert call.request.inputs[0].type.shape == [4]
    assert (call.exchange_output_offset, call.exchange_output_bytes) == (
        64, mmap.PAGESIZE - 64)
    # The output is the caller's copy: the channel's next call reuses the buffer.
    fake.mapping[64:80] = bytes(16)
    torch.testing.assert_close(second.outputs[0], x + 1)
    assert executor.direct_channels == 1 and not executor.through_kilnd


def test_later_calls_send_the_channels_call_plan(executor, monkeypatch):
    """From the channel's second call (its first with the buffer), calls
    like it send the plan's frame: the same message with their own request
    ids. A strided input of the same shape goes through the full encoding
    and makes no plan (no call could use it); each answer is its own
    input's."""
    executor.exchange = True
    fake = ExchangingAgent()
    agent = give_channel(executor, fake)
    encoded = []
    real = local_execute.CallPlan.__init__

    def spy(self, call, inputs):
        encoded.append(call.request_id)
        real(self, call, inputs)

    monkeypatch.setattr(local_execute.CallPlan, "__init__", spy)
    xs = [torch.arange(4.0) * k for k in range(1, 4)]
    for x in xs:
        torch.testing.assert_close(run(executor, x=x).outputs[0], x + 1)
    strided = torch.arange(8.0)[::2]
    torch.testing.assert_close(run(executor, x=strided).outputs[0], strided + 1)
    calls = [f.execute for f in agent.frames if f.HasField("execute")]
    assert len(calls) == 4 and len(encoded) == 1  # call 2 made the plan
    planned, placed = calls[2], calls[1]
    assert planned.request_id and planned.request_id != placed.request_id
    placed.request_id = planned.request_id
    assert planned == placed
    assert not executor.through_kilnd


def test_a_refused_exchange_buffer_is_not_asked_for_again(executor):
    executor.exchange = True
    agent = give_channel(executor, ExchangingAgent(refuse=True))
    for _ in range(3):
        result = run(executor)
        assert result.direct
        torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 1)
    kinds = [f.WhichOneof("frame") for f in agent.frames]
    assert kinds == ["execute", "exchange", "execute", "execute"]
    assert all(f.execute.request.inputs[0].data for f in agent.frames if f.HasField("execute"))


def test_inputs_from_the_tensor_limit_on_go_in_memfds_beside_the_buffer(executor):
    executor.exchange = True
    fake = ExchangingAgent()
    agent = give_channel(executor, fake)
    run(executor)  # the channel's first call, then its buffer
    big = torch.zeros(local_execute.EXCHANGE_TENSOR_MAX // 4)
    small = torch.arange(4, dtype=torch.float32)
    reply = executor_pb2.LocalReply()
    out = reply.response.outputs.add()
    set_tensor_type(out.type, torch.float32, [1])
    out.data = torch.ones(1).numpy().tobytes()
    agent.answer = lambda frame: reply
    executor.execute(request(), [big, small], {}, encode)
    call = agent.frames[-1].execute
    assert list(call.file_inputs) == [0]
    assert [(e.index, e.offset) for e in call.exchange_inputs] == [(1, 0)]
    assert call.exchange_output_offset == 64


def test_a_call_whose_inputs_outgrow_the_frame_goes_to_kilnd_without_the_buffer(executor):
    """Inputs the buffer cannot hold, past the frame's inline budget: the
    call is encoded afresh for kilnd, with nothing of the channel's buffer
    in it, and the channel stays for the model."""
    executor.exchange = True
    give_channel(executor, ExchangingAgent())
    run(executor)  # the channel's first call, then its (one-page) buffer
    small = torch.arange(4, dtype=torch.float32)
    many = [torch.zeros(120 * 1024 // 4) for _ in range(40)]  # 4.7 MiB in all
    result = executor.execute(request(), [small] + many, {}, encode)
    assert not result.direct
    sent = executor.through_kilnd[-1].execute
    assert not sent.exchange_inputs and not sent.exchange_output_bytes
    assert sent.request.inputs[0].data  # inline, not in the buffer
    torch.testing.assert_close(result.outputs[0], small + 2)
    assert executor.direct_channels == 1


def test_a_channel_that_fails_while_asking_for_a_buffer_is_dropped(executor):
    executor.exchange = True

    def close_on_exchange(frame):
        return "close" if frame.HasField("exchange") else plus_one(frame)

    give_channel(executor, close_on_exchange)
    result = run(executor)
    assert result.direct  # the call itself was answered
    torch.testing.assert_close(result.outputs[0], torch.arange(4.0) + 1)
    assert executor.direct_channels == 0
