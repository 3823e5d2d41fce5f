"""The local socket's framing on the client side (kiln/local_execute.py),
against a peer on a socketpair or a listening abstract socket: replies read
into the connection's kept buffer, whole however the peer splits them, and
a malformed hello refused as a transport error, not a protobuf exception."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from kiln import local_execute


def frame(payload: bytes, files: int = 0) -> bytes:
    return local_execute._HEADER.pack(local_execute._MAGIC, files, len(payload)) + payload


def send_in_pieces(sock: socket.socket, data: bytes, piece: int) -> None:
    for at in range(0, len(data), piece):
        sock.sendall(data[at:at + piece])


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(10)
    yield local_execute._Connection(ours), theirs
    ours.close()
    theirs.close()


def test_a_reply_larger_than_the_first_read_arrives_whole(pair):
    connection, peer = pair
    payload = os.urandom(3 * local_execute._FIRST_READ + 17)
    sender = threading.Thread(target=send_in_pieces, args=(peer, frame(payload), 4093))
    sender.start()
    body, files = connection.receive()
    sender.join()
    assert files == [] and bytes(body) == payload
    # Kept for the next reply: no new buffer for one of the same size.
    kept = connection._buffer
    assert len(kept) >= len(payload)
    second = os.urandom(len(payload))
    sender = threading.Thread(target=peer.sendall, args=(frame(second),))
    sender.start()
    body, _ = connection.receive()
    sender.join()
    assert bytes(body) == second and connection._buffer is kept


def test_a_reply_past_the_kept_size_gets_a_buffer_of_its_own(pair):
    connection, peer = pair
    before = connection._buffer
    payload = os.urandom(local_execute._KEPT_BUFFER_BYTES + 1)
    sender = threading.Thread(target=peer.sendall, args=(frame(payload),))
    sender.start()
    body, _ = connection.receive()
    sender.join()
    assert bytes(body) == payload
    assert connection._buffer is before


def test_a_frame_longer_than_it_says_is_refused(pair):
    connection, peer = pair
    peer.sendall(local_execute._HEADER.pack(local_execute._MAGIC, 0, 4) + b"12345678")
    with pytest.raises(local_execute._TransportError, match="malformed frame"):
        connection.receive()


def test_a_hello_reply_that_is_not_a_local_reply_is_a_transport_error():
    name = f"kiln-test-frames-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(1)

    def answer_garbage() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)  # the hello
            conn.sendall(frame(b"\xff\xff\xff\xff not a LocalReply"))

    peer = threading.Thread(target=answer_garbage)
    peer.start()
    try:
        with pytest.raises(local_execute._TransportError, match="cannot open"):
            local_execute._Connection.open("@" + name, b"ticket", "daemon", 10)
    finally:
        peer.join()
        server.close()
