"""Execute over kilnd's local socket (issue 12, the data path): a client on
kilnd's machine passes big inputs as sealed memfds and maps big outputs
from the agent's memfds, so no tensor byte goes through gRPC or kilnd's
store. The client finds the socket through OpenLocalSession and falls back
to gRPC when kilnd serves none.

Every malformed thing a local client can send (an unsealed or wrong-sized
memfd, a pipe, a bad ticket, frames out of protocol) gets a clear status and
leaves kilnd serving."""

from __future__ import annotations

import array
import concurrent.futures
import fcntl
import os
import re
import socket
import stat
import struct
import threading
import time

import pytest
import torch

import kiln
from kiln import local_execute
from kiln.v1 import executor_pb2, tensor_pb2
from support import Kilnd, metric

# Over kilnd's local socket, or (a model called again) a direct channel to
# its agent: tensors in memfds either way.
LOCAL = ("local", "direct")

BIG = 2 * 1024 * 1024  # 8 MiB of f32: a memfd input and a memfd output


class AffineAndSum(torch.nn.Module):
    """A big output (in a file) and a small one (inline), from a big input
    and a small one."""

    def forward(self, x, s):
        return x * 2.0 + s.sum(), torch.tanh(s)


def inputs(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(BIG, generator=g), torch.randn(8, generator=g)


@pytest.fixture(scope="module")
def exported():
    x, s = inputs()
    return torch.export.export(AffineAndSum().eval(), (x, s))


def test_big_tensors_travel_in_memfds_and_match_eager(kilnd, exported):
    model = AffineAndSum().eval()
    with kiln.Client(kilnd.address, timeout=300) as client:
        assert client.local_execute, client.executor.local_executor.unavailable_reason
        compiled = client.compile(exported)
        compiled(*inputs())  # the agent fetches and loads the artifact
        for seed in range(3):
            x, s = inputs(seed)
            before = (metric(kilnd, "kiln_blob_bytes_in_total"),
                      metric(kilnd, "kiln_blob_bytes_out_total"))
            big, small = compiled(x, s)
            assert compiled.last_transport in LOCAL
            expected_big, expected_small = model(x, s)
            torch.testing.assert_close(big, expected_big, rtol=1e-6, atol=1e-5)
            torch.testing.assert_close(small, expected_small, rtol=1e-6, atol=1e-6)
            # Nothing went through Blobs: 16 MiB moved without kilnd's store.
            assert (metric(kilnd, "kiln_blob_bytes_in_total"),
                    metric(kilnd, "kiln_blob_bytes_out_total")) == before
        # The big output is a private mapping: writing it changes nothing else.
        big.add_(1.0)
        torch.testing.assert_close(compiled(x, s)[0], expected_big, rtol=1e-6, atol=1e-5)


def in_agent_memfd(t: torch.Tensor) -> bool:
    """Whether ``t``'s memory is a mapping of an agent's output memfd (the
    agent names them kiln-tensor)."""
    address = t.data_ptr()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(a, 16) for a in fields[0].split("-"))
            if start <= address < end:
                return len(fields) > 5 and "memfd:kiln-tensor" in fields[5]
    return False


def test_inline_replies_larger_than_a_read_are_whole_and_not_shared(kilnd):
    # 64 KiB in (inline in the frame, under FILE_THRESHOLD) and eight 64 KiB
    # outputs out: each under the agent's 128 KiB threshold for memfds, so
    # all inline in one 512 KiB reply, twice the client's first read. The
    # client reads replies into one buffer per connection: each output must
    # still own its bytes, unchanged by the calls after it.
    class Spread(torch.nn.Module):
        def forward(self, x):
            return tuple(x * float(k) - 1.0 for k in range(1, 9))

    g = torch.Generator().manual_seed(3)
    xs = [torch.randn(16 * 1024, generator=g) for _ in range(3)]
    assert xs[0].numel() * 4 < local_execute.FILE_THRESHOLD
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(torch.export.export(Spread(), (xs[0],)))
        outs = [compiled(x) for x in xs]
        assert compiled.last_transport in LOCAL
    for x, out in zip(xs, outs):
        assert sum(t.numel() * 4 for t in out) >= 2 * local_execute._FIRST_READ
        assert not any(in_agent_memfd(t) for t in out)
        for got, expected in zip(out, Spread()(x)):
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
    for t in outs[0]:
        t.zero_()  # writable, and its own memory
    for got, expected in zip(outs[1], Spread()(xs[1])):
        torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)


def test_mid_size_outputs_come_in_memfds_locally_and_inline_over_grpc(kilnd):
    # A 256 KiB output: under the 3 MiB inline limit, over the 128 KiB from
    # which the agent writes a local-socket client's outputs into memfds. A
    # gRPC caller gets it inline: kilnd does not store it as a blob for the
    # client to read.
    class Widen(torch.nn.Module):
        def forward(self, x):
            return (x * 3.0 - 1.0).repeat(4), x.sum()

    g = torch.Generator().manual_seed(5)
    x = torch.randn(16 * 1024, generator=g)
    expected = Widen()(x)
    exported = torch.export.export(Widen(), (x,))
    with kiln.Client(kilnd.address, timeout=300, local=True) as local, \
            kiln.Client(kilnd.address, timeout=300, local=False) as remote:
        mapped = local.compile(exported)
        wide, total = mapped(x)
        assert mapped.last_transport in LOCAL
        assert in_agent_memfd(wide) and not in_agent_memfd(total)
        torch.testing.assert_close(wide, expected[0], rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(total, expected[1], rtol=1e-5, atol=1e-4)

        inline = remote.compile(exported)
        inline(x)  # the agent has the executable
        before = metric(kilnd, "kiln_blob_bytes_out_total")
        wide, total = inline(x)
        assert inline.last_transport == "grpc"
        # Not stored as a blob for the client to read.
        assert metric(kilnd, "kiln_blob_bytes_out_total") == before
        assert not in_agent_memfd(wide)
        torch.testing.assert_close(wide, expected[0], rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(total, expected[1], rtol=1e-5, atol=1e-4)


def test_grpc_gives_the_same_numbers(kilnd, exported):
    x, s = inputs(7)
    with kiln.Client(kilnd.address, timeout=300, local=True) as local, \
            kiln.Client(kilnd.address, timeout=300, local=False) as remote:
        via_local = local.compile(exported)(x, s)
        compiled = remote.compile(exported)
        via_grpc = compiled(x, s)
        assert compiled.last_transport == "grpc"
    for a, b in zip(via_local, via_grpc):
        assert torch.equal(a, b)


def test_input_memfds_are_spares_made_during_the_last_call_and_none_stays_open(kilnd, exported):
    """A call's big input goes in a memfd whose pages were allocated while
    the previous call waited (a spare of its size), holding this call's
    bytes; the client closes it once sent (kilnd closes the last descriptor
    after replying), so descriptors do not pile up (the second call opens
    the model's direct channel: one descriptor, kept). Without an exchange
    buffer, which would carry the channel's inputs instead of memfds."""
    model = AffineAndSum().eval()
    size = BIG * 4
    with kiln.Client(kilnd.address, timeout=300) as client:
        client.executor.local_executor.exchange = False
        compiled = client.compile(exported)
        compiled(*inputs())
        compiled(*inputs())
        assert client.executor.local_executor.direct_channels == 1
        pool = client.executor.local_executor._memfds
        open_fds = len(os.listdir("/proc/self/fd"))
        for seed in range(1, 5):
            spare = os.fstat(pool._spares[size][0]).st_ino
            x, s = inputs(seed)
            big, _ = compiled(x, s)
            torch.testing.assert_close(big, model(x, s)[0], rtol=1e-6, atol=1e-5)
            # Used and replaced by the next call's.
            assert [os.fstat(fd).st_ino for fd in pool._spares[size]] != [spare]
            assert len(pool._spares[size]) == 1
            del big
            assert len(os.listdir("/proc/self/fd")) == open_fds


def test_weights_are_checked_while_the_device_runs_and_a_change_costs_one_dropped_run(kilnd):
    """A call sends the last call's request and checks its weights while
    the device runs it. Weights changed in place: that run is dropped and
    the call runs again with them; from then on calls check first (one run
    each, also when every call brings other weights) until the weights are
    unchanged again. (Through kilnd, which counts the runs: see the direct
    channel's test for the same over a channel.)"""
    from kiln.testing import MLP

    torch.manual_seed(21)
    model = MLP(d_in=12, d_hidden=20, d_out=6).eval()
    x = torch.randn(3, 12)
    with kiln.Client(kilnd.address, timeout=300, direct=False) as client:
        compiled = client.compile(torch.export.export(model, (x,)))
        compiled(x)

        def runs_of(call):
            before = metric(kilnd, "kiln_executions_total")
            out = call()
            return out, metric(kilnd, "kiln_executions_total") - before

        out, runs = runs_of(lambda: compiled(x))
        assert runs == 1
        torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)
        first = out
        original = {n: p.clone() for n, p in compiled.parameters.items()}
        with torch.no_grad():
            for p in compiled.parameters.values():
                p.mul_(-0.5)
        with torch.no_grad():
            expected = torch.export.export(model, (x,)).module()(x)
        out, runs = runs_of(lambda: compiled(x))
        assert runs == 2  # the stale run, dropped, and this one
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
        changed = {n: p.clone() for n, p in compiled.parameters.items()}
        # Other weights on every call: checked first, one run each.
        answers = {id(original): first, id(changed): out}
        assert not torch.allclose(first, out)
        for weights in (original, changed, original, changed):
            got, runs = runs_of(lambda: compiled.run([x], parameters=weights)[0])
            assert runs == 1
            torch.testing.assert_close(got, answers[id(weights)], rtol=1e-5, atol=1e-5)
        assert not compiled._defer_weight_check
        # Unchanged again: checked first once more, then while running.
        for _ in range(2):
            got, runs = runs_of(lambda: compiled.run([x], parameters=changed)[0])
            assert runs == 1
            torch.testing.assert_close(got, out, rtol=1e-5, atol=1e-5)
        assert compiled._defer_weight_check


def test_concurrent_callers_each_get_their_own_answer(kilnd, exported):
    model = AffineAndSum().eval()
    with kiln.Client(kilnd.address, timeout=300) as client:
        compiled = client.compile(exported)

        # The first four calls start together (a loaded machine could
        # otherwise run the threads one after another).
        together = threading.Barrier(4)

        def call(seed):
            x, s = inputs(seed)
            if seed < 4:
                together.wait(timeout=60)
            return compiled(x, s)[0], model(x, s)[0]

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            for got, expected in pool.map(call, range(8)):
                torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-5)
        assert len(client.executor.local_executor._idle) >= 2  # the callers overlapped


def test_without_a_local_socket_the_client_uses_grpc(tmp_path, exported):
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--local-socket", "none")).start()
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            assert not client.local_execute
            assert "no local socket" in client.executor.local_executor.unavailable_reason
            x, s = inputs()
            compiled = client.compile(exported)
            torch.testing.assert_close(compiled(x, s)[0], AffineAndSum()(x, s)[0],
                                       rtol=1e-6, atol=1e-5)
            assert compiled.last_transport == "grpc"
    finally:
        daemon.assert_stops_cleanly()


def test_a_socket_path_is_a_file_anyone_may_open(tmp_path, exported):
    path = tmp_path / "kilnd.sock"
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--local-socket", str(path))).start()
    try:
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o666  # tickets admit callers
        with kiln.Client(daemon.address, timeout=300) as client:
            x, s = inputs()
            compiled = client.compile(exported)
            compiled(x, s)
            assert compiled.last_transport in LOCAL
    finally:
        daemon.assert_stops_cleanly()
    assert not path.exists()  # removed on exit


# --- what a misbehaving local client gets --------------------------------------

def session(client: kiln.Client) -> executor_pb2.LocalSession:
    return client._rpc.executor.OpenLocalSession(executor_pb2.OpenLocalSessionRequest(),
                                                 metadata=client._rpc.metadata("test"))


def raw_connect(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect("\0" + path[1:] if path.startswith("@") else path)
    return sock


def send_frame(sock: socket.socket, payload: bytes, fds=()) -> None:
    header = struct.pack("<IIQ", 0x4B4C4E4B, len(fds), len(payload))
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sock.sendmsg([header, payload], rights)


def read_reply(sock: socket.socket) -> executor_pb2.LocalReply:
    body, files = local_execute._Connection(sock).receive()
    for fd in files:
        os.close(fd)
    return executor_pb2.LocalReply.FromString(body)


@pytest.fixture
def admitted(client):
    """A raw connection that presented a good ticket, and the executable."""
    granted = session(client)
    sock = raw_connect(granted.socket_path)
    send_frame(sock, executor_pb2.LocalClientFrame(
        hello=executor_pb2.LocalHello(ticket=granted.ticket)).SerializeToString())
    welcome = read_reply(sock)
    assert welcome.code == 0 and welcome.daemon_id == granted.daemon_id
    x = torch.randn(BIG)
    compiled = client.compile(torch.export.export(AffineAndSum().eval(), (x, torch.randn(8))))
    yield sock, compiled
    sock.close()


def execute_frame(compiled, big_fd=None, s=None) -> bytes:
    call = executor_pb2.LocalExecute(request_id="raw-client")
    call.request.executable.CopyFrom(compiled.executable)
    call.request.parameters.extend(compiled._param_digests)
    big = call.request.inputs.add()
    big.type.CopyFrom(tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_F32, shape=[BIG]))
    if big_fd is not None:
        call.file_inputs.append(0)
    small = call.request.inputs.add()
    small.type.CopyFrom(tensor_pb2.TensorType(dtype=tensor_pb2.DTYPE_F32, shape=[8]))
    small.data = (s if s is not None else torch.zeros(8)).numpy().tobytes()
    return executor_pb2.LocalClientFrame(execute=call).SerializeToString()


def memfd(nbytes: int, seals: int) -> int:
    fd = os.memfd_create("t", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, bytes(nbytes))
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


ALL_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK


@pytest.mark.parametrize("make_fd, says", [
    (lambda: memfd(BIG * 4, 0), "not a memfd sealed against writing"),
    (lambda: memfd(BIG * 4, fcntl.F_SEAL_SHRINK), "not a memfd sealed against writing"),
    (lambda: memfd(1000, ALL_SEALS), "holds 1000"),
    (lambda: os.pipe()[0], "not a regular file"),
])
def test_a_bad_input_file_is_invalid_argument_and_kilnd_serves_on(admitted, make_fd, says):
    sock, compiled = admitted
    fd = make_fd()
    try:
        send_frame(sock, execute_frame(compiled, fd), [fd])
    finally:
        os.close(fd)
    reply = read_reply(sock)
    assert reply.code == 3, reply  # INVALID_ARGUMENT
    assert "input 0 ('" in reply.message and says in reply.message, reply.message
    assert "(request raw-client)" in reply.message
    # The same connection then runs a good call.
    x = torch.randn(BIG)
    good = local_execute.sealed_memfd(memoryview(x.numpy()).cast("B"))
    try:
        send_frame(sock, execute_frame(compiled, good), [good])
    finally:
        os.close(good)
    reply = read_reply(sock)
    assert reply.code == 0, reply.message
    assert list(reply.file_outputs) == [0]  # the 32-byte output is inline


def test_a_client_that_sends_before_reading_its_reply_is_answered_in_order(admitted):
    """kilnd takes the next frame once the last reply was read: a client
    that pipelines two calls gets both answers, each for its own inputs."""
    sock, compiled = admitted
    x = torch.randn(BIG)
    smalls = [torch.full((8,), 1.0), torch.full((8,), -3.0)]
    for s in smalls:
        fd = local_execute.sealed_memfd(memoryview(x.numpy()).cast("B"))
        try:
            send_frame(sock, execute_frame(compiled, fd, s), [fd])
        finally:
            os.close(fd)
    time.sleep(0.05)  # both frames wait in the socket, the first reply unread
    for s in smalls:
        body, files = local_execute._Connection(sock).receive()
        reply = executor_pb2.LocalReply.FromString(body)
        try:
            assert reply.code == 0, reply.message
            assert list(reply.file_outputs) == [0]
            big = local_execute._tensor_from_file(files[0], torch.float32, [BIG])
        finally:
            for fd in files:
                os.close(fd)
        torch.testing.assert_close(big, x * 2.0 + s.sum(), rtol=1e-6, atol=1e-5)
        tanh = torch.frombuffer(bytearray(reply.response.outputs[1].data), dtype=torch.float32)
        torch.testing.assert_close(tanh, torch.tanh(s), rtol=1e-6, atol=1e-6)


def test_out_of_protocol_frames_are_refused(admitted):
    sock, compiled = admitted
    # Announces a file input and carries none.
    send_frame(sock, execute_frame(compiled, big_fd=0))
    reply = read_reply(sock)
    assert reply.code == 3 and "names 1 file inputs and carries 0 files" in reply.message
    # A second hello is not an Execute: the connection ends.
    send_frame(sock, executor_pb2.LocalClientFrame(
        hello=executor_pb2.LocalHello(ticket=b"x")).SerializeToString())
    reply = read_reply(sock)
    assert reply.code == 3 and "takes LocalExecute frames" in reply.message
    assert sock.recv(1) == b""


@pytest.mark.parametrize("first_frame, code, says", [
    (executor_pb2.LocalClientFrame(hello=executor_pb2.LocalHello(ticket=b"guessed")),
     16, "needs a live ticket"),  # UNAUTHENTICATED
    (executor_pb2.LocalClientFrame(execute=executor_pb2.LocalExecute()),
     3, "first frame must be a LocalHello"),
])
def test_a_connection_without_a_ticket_runs_nothing(client, first_frame, code, says):
    sock = raw_connect(session(client).socket_path)
    try:
        send_frame(sock, first_frame.SerializeToString())
        reply = read_reply(sock)
        assert reply.code == code and says in reply.message, reply
        assert sock.recv(1) == b""  # and kilnd hangs up
    finally:
        sock.close()


def test_garbage_on_the_socket_ends_only_that_connection(client, exported):
    sock = raw_connect(session(client).socket_path)
    sock.sendall(b"GET / HTTP/1.1\r\n\r\n" + bytes(64))
    assert sock.recv(1) == b""
    sock.close()
    x, s = inputs()
    compiled = client.compile(exported)
    compiled(x, s)
    assert compiled.last_transport in LOCAL


# --- the review's cases: hardening ------------------------------------------

def test_a_file_with_holes_or_opened_write_only_is_refused(admitted):
    sock, compiled = admitted
    sparse = os.memfd_create("t", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(sparse, BIG * 4)  # no byte written: pages kilnd would pay for
    fcntl.fcntl(sparse, fcntl.F_ADD_SEALS, ALL_SEALS)
    write_only = os.open(f"/proc/self/fd/{memfd(BIG * 4, ALL_SEALS)}", os.O_WRONLY)
    for fd, says in ((sparse, "has holes"), (write_only, "not open for reading")):
        try:
            send_frame(sock, execute_frame(compiled, fd), [fd])
        finally:
            os.close(fd)
        reply = read_reply(sock)
        assert reply.code == 3 and says in reply.message, reply.message


def test_a_request_id_that_could_forge_log_lines_is_replaced(admitted):
    sock, compiled = admitted
    call = executor_pb2.LocalClientFrame.FromString(execute_frame(compiled, big_fd=0))
    call.execute.request_id = "x\nFAKE log line"
    send_frame(sock, call.SerializeToString())  # announces a file it lacks
    reply = read_reply(sock)
    assert reply.code == 3
    assert "FAKE" not in reply.message
    assert re.search(r"\(request [0-9a-f]{32}\)$", reply.message), reply.message


def test_a_hello_carrying_files_runs_nothing(client):
    sock = raw_connect(session(client).socket_path)
    fd = memfd(16, ALL_SEALS)
    try:
        hello = executor_pb2.LocalClientFrame(hello=executor_pb2.LocalHello(
            ticket=session(client).ticket)).SerializeToString()
        send_frame(sock, hello, [fd])
        assert sock.recv(1) == b""  # no welcome: the connection ends
    finally:
        os.close(fd)
        sock.close()


def test_blob_outputs_from_an_agent_without_a_local_link_still_come_back(tmp_path, exported):
    """With --local-link false the agent uploads big outputs as blobs: a
    local client reads those from kilnd's store."""
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--local-link", "false")).start()
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            compiled = client.compile(exported)
            x, s = inputs(3)
            big, small = compiled(x, s)
            assert compiled.last_transport in LOCAL
            expected_big, expected_small = AffineAndSum()(x, s)
            torch.testing.assert_close(big, expected_big, rtol=1e-6, atol=1e-5)
            torch.testing.assert_close(small, expected_small, rtol=1e-6, atol=1e-6)
    finally:
        daemon.assert_stops_cleanly()


def test_the_client_follows_kilnd_across_a_restart(tmp_path, exported):
    cache = tmp_path / "cache"
    daemon = Kilnd(tmp_path, cache).start()
    try:
        address = daemon.address
        with kiln.Client(address, timeout=300) as client:
            compiled = client.compile(exported)
            compiled(*inputs())
            assert compiled.last_transport in LOCAL
            daemon.stop()
            daemon.listen = address  # the same port: the client's channel reconnects
            daemon.start()
            x, s = inputs(4)
            torch.testing.assert_close(compiled(x, s)[0], AffineAndSum()(x, s)[0],
                                       rtol=1e-6, atol=1e-5)
            assert compiled.last_transport in LOCAL  # a new session, a new socket
    finally:
        daemon.assert_stops_cleanly()


def test_a_full_socket_sends_calls_over_grpc(tmp_path, exported):
    daemon = Kilnd(tmp_path, tmp_path / "cache").start()
    held = []
    try:
        with kiln.Client(daemon.address, timeout=300) as client:
            compiled = client.compile(exported)
            compiled(*inputs())
            assert compiled.last_transport in LOCAL
            client.executor.local_executor.close()  # its pooled connection goes
            granted = session(client)
            for _ in range(128):  # kilnd's limit, all admitted
                sock = raw_connect(granted.socket_path)
                send_frame(sock, executor_pb2.LocalClientFrame(
                    hello=executor_pb2.LocalHello(ticket=granted.ticket)).SerializeToString())
                assert read_reply(sock).code == 0
                held.append(sock)
            x, s = inputs(5)
            torch.testing.assert_close(compiled(x, s)[0], AffineAndSum()(x, s)[0],
                                       rtol=1e-6, atol=1e-5)
            assert compiled.last_transport == "grpc"
    finally:
        for sock in held:
            sock.close()
        daemon.assert_stops_cleanly()


def test_kilnd_will_not_replace_a_file_with_its_socket(tmp_path):
    precious = tmp_path / "notes.txt"
    precious.write_text("keep me")
    daemon = Kilnd(tmp_path, tmp_path / "cache", extra_args=("--local-socket", str(precious)))
    with pytest.raises(BaseException):
        daemon.start()
    assert precious.read_text() == "keep me"
    assert "exists and is not a socket" in daemon.log_path.read_text()
