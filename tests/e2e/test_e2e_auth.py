"""TLS, mTLS and credentials on a real kilnd (issue 13, item 2).

One kilnd serves TLS with a server certificate made here by openssl, accepts
client certificates from a test CA and bearer tokens from a tokens file, and
runs its local cpu agent (which gets a token of its own). The tests reach it
the ways users do: kiln.Client, the kiln CLI, grpcurl, and kiln-agent-cpu."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

import grpc
import pytest
import torch

import kiln
from kiln.v1 import (agent_pb2, blobs_pb2, cache_pb2, compiler_pb2, devices_pb2,
                     executor_pb2)
from support import Agent, Kilnd, require_binaries, wait_until
from test_e2e_grpcurl import grpcurl
from tls_material import Certificate, Pki, Tokens, make_tokens

ADMIN_ONLY = {"kiln.v1.Cache/CollectGarbage", "kiln.v1.Cache/SetCacheSalt"}
AGENT_ONLY = {"kiln.v1.Agent/Connect"}


def every_rpc() -> list[str]:
    """Every method of every kiln.v1 service, from the protos themselves: an
    RPC added later is checked without anyone listing it here."""
    import importlib
    import pkgutil

    import kiln.v1
    methods = []
    for info in sorted(pkgutil.iter_modules(kiln.v1.__path__), key=lambda i: i.name):
        if not info.name.endswith("_pb2"):
            continue
        module = importlib.import_module(f"kiln.v1.{info.name}")
        for service in module.DESCRIPTOR.services_by_name.values():
            methods += [f"{service.full_name}/{m.name}" for m in service.methods]
    assert len(methods) >= 10 and "kiln.v1.Daemon/GetInfo" in methods, methods
    return methods


@dataclasses.dataclass
class Secured:
    daemon: Kilnd
    pki: Pki
    tokens: Tokens
    work: pathlib.Path
    admin_cert: Certificate
    user_cert: Certificate
    agent_cert: Certificate
    roleless_cert: Certificate

    def channel(self, cert: Certificate | None = None) -> grpc.Channel:
        creds = grpc.ssl_channel_credentials(
            root_certificates=self.pki.ca.cert.read_bytes(),
            private_key=cert.key.read_bytes() if cert else None,
            certificate_chain=cert.cert.read_bytes() if cert else None)
        return grpc.secure_channel(self.daemon.address, creds)

    def client(self, token: str | None = None, cert: Certificate | None = None) -> kiln.Client:
        return kiln.Client(self.daemon.address, timeout=120, token=token,
                           tls=kiln.TlsConfig(ca=self.pki.ca.cert,
                                              cert=cert.cert if cert else None,
                                              key=cert.key if cert else None))


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    require_binaries()
    work = tmp_path_factory.mktemp("secured")
    pki = Pki(work / "pki")
    server = pki.server()
    tokens = make_tokens(work, {"alice": "user", "root": "admin", "robot": "agent"})
    daemon = Kilnd(work, work / "cache", name="secured", extra_args=(
        "--tls-cert", str(server.cert), "--tls-key", str(server.key),
        "--tls-client-ca", str(pki.ca.cert), "--auth-tokens", str(tokens.file)),
        client_options={"tls": str(pki.ca.cert), "token": tokens.by_name["alice"]}).start()
    yield Secured(daemon, pki, tokens, work,
                  admin_cert=pki.issue("ops", "/O=kiln:admins/CN=ops"),
                  user_cert=pki.issue("bob", "/O=kiln:users/CN=bob"),
                  agent_cert=pki.issue("agent-a", "/O=kiln:agents/CN=agent-a"),
                  roleless_cert=pki.issue("nobody", "/O=elsewhere/CN=nobody"))
    daemon.assert_stops_cleanly()


def call_code(channel: grpc.Channel, method: str, metadata=()) -> grpc.StatusCode:
    """The status of `method` called with one empty message (any RPC kind)."""
    call = channel.stream_stream(f"/{method}")
    try:
        for _ in call(iter([b""]), metadata=metadata, timeout=30):
            pass
    except grpc.RpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def bearer(token: str) -> tuple:
    return (("authorization", f"Bearer {token}"),)


def assert_runs(client: kiln.Client) -> None:
    torch.manual_seed(7)
    model = kiln.testing.MLP(d_in=8, d_hidden=16, d_out=4).eval()
    x = torch.randn(3, 8)
    compiled = client.compile(torch.export.export(model, (x,)))
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_every_rpc_needs_credentials(secured):
    with secured.channel() as channel:
        for method in every_rpc():
            assert call_code(channel, method) == grpc.StatusCode.UNAUTHENTICATED, method
            assert call_code(channel, method, bearer("not-a-token")) == \
                grpc.StatusCode.UNAUTHENTICATED, method
    with pytest.raises(kiln.UnauthenticatedError, match="requires credentials"):
        secured.client().devices()


def test_a_user_token_compiles_and_runs_but_admin_and_agent_rpcs_are_denied(secured):
    with secured.client(token=secured.tokens.by_name["alice"]) as client:
        assert_runs(client)
        with pytest.raises(kiln.PermissionDeniedError, match="needs the role admin"):
            client.cache.collect_garbage()
        with pytest.raises(kiln.PermissionDeniedError, match="'alice' .token. has the role user"):
            client.cache.set_salt("s2")
        assert client.cache.stats().blob_count > 0
    with secured.channel() as channel:
        for method in ADMIN_ONLY | AGENT_ONLY:
            assert call_code(channel, method, bearer(secured.tokens.by_name["alice"])) == \
                grpc.StatusCode.PERMISSION_DENIED, method


def test_an_admin_token_may_collect_garbage(secured):
    with secured.client(token=secured.tokens.by_name["root"]) as client:
        client.cache.collect_garbage(target_bytes=1 << 40)
        assert_runs(client)


def test_an_agent_token_cannot_compile(secured):
    with secured.client(token=secured.tokens.by_name["robot"]) as client:
        with pytest.raises(kiln.PermissionDeniedError, match="needs the role user"):
            client.devices()


def test_client_certificates_carry_their_roles(secured, tmp_path):
    with secured.client(cert=secured.user_cert) as client:
        assert any(d.kind == "cpu" for d in client.devices())
        with pytest.raises(kiln.PermissionDeniedError, match="'bob' .certificate."):
            client.cache.collect_garbage()
    with secured.client(cert=secured.admin_cert) as client:
        client.cache.collect_garbage(target_bytes=1 << 40)
    with secured.client(cert=secured.roleless_cert) as client:
        with pytest.raises(kiln.PermissionDeniedError, match="carries no Kiln role"):
            client.devices()
    # A certificate from another CA fails the TLS handshake.
    stranger = Pki(tmp_path / "other-ca", name="other-ca").issue(
        "mallory", "/O=kiln:admins/CN=mallory")
    with secured.client(cert=stranger) as client:
        with pytest.raises(kiln.UnavailableError):
            client.devices()


def test_plaintext_and_unknown_servers_are_refused(secured, tmp_path):
    with kiln.Client(secured.daemon.address, timeout=10, tls=False,
                     token=secured.tokens.by_name["alice"]) as client:
        with pytest.raises(kiln.UnavailableError):
            client.devices()
    # kilnd's certificate must chain to the CA the client was given.
    other = Pki(tmp_path / "other", name="other-ca")
    with kiln.Client(secured.daemon.address, timeout=10, tls=other.ca.cert,
                     token=secured.tokens.by_name["alice"]) as client:
        with pytest.raises(kiln.UnavailableError):
            client.devices()


def test_the_environment_supplies_tls_and_token(secured, monkeypatch):
    token_file = secured.work / "alice.token"
    token_file.write_text(secured.tokens.by_name["alice"] + "\n")
    monkeypatch.setenv("KILN_TLS_CA", str(secured.pki.ca.cert))
    monkeypatch.setenv("KILN_TOKEN_FILE", str(token_file))
    with kiln.Client(secured.daemon.address, timeout=60) as client:
        assert any(d.kind == "cpu" for d in client.devices())


def test_grpcurl_with_cacert_token_and_client_certificate(secured):
    base = [grpcurl(), "-cacert", str(secured.pki.ca.cert)]
    address = secured.daemon.address

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *args], capture_output=True, text=True, timeout=60)

    listed = run("-H", f"authorization: Bearer {secured.tokens.by_name['alice']}",
                 address, "kiln.v1.Devices/ListDevices")
    assert listed.returncode == 0, listed.stderr
    assert '"kind": "cpu"' in listed.stdout
    refused = run(address, "kiln.v1.Devices/ListDevices")
    assert refused.returncode != 0 and "Unauthenticated" in refused.stderr, refused.stderr
    gc = run("-cert", str(secured.admin_cert.cert), "-key", str(secured.admin_cert.key),
             "-d", '{"target_bytes": "1099511627776"}', address,
             "kiln.v1.Cache/CollectGarbage")
    assert gc.returncode == 0, gc.stderr
    denied = run("-cert", str(secured.user_cert.cert), "-key", str(secured.user_cert.key),
                 address, "kiln.v1.Cache/CollectGarbage")
    assert denied.returncode != 0 and "PermissionDenied" in denied.stderr, denied.stderr
    plaintext = subprocess.run([grpcurl(), "-plaintext", "-max-time", "5", address,
                                "kiln.v1.Devices/ListDevices"],
                               capture_output=True, text=True, timeout=60)
    assert plaintext.returncode != 0


def test_cli_with_tls_flags(secured):
    token_file = secured.work / "cli.token"
    token_file.write_text(secured.tokens.by_name["alice"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_T")}
    base = [sys.executable, "-m", "kiln.cli", "--address", secured.daemon.address,
            "--tls-ca", str(secured.pki.ca.cert)]
    ok = subprocess.run([*base, "--token-file", str(token_file), "devices"],
                        capture_output=True, text=True, timeout=120, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "local-cpu/0" in ok.stdout
    mtls = subprocess.run([*base, "--tls-cert", str(secured.user_cert.cert), "--tls-key",
                           str(secured.user_cert.key), "devices"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert mtls.returncode == 0, mtls.stderr
    refused = subprocess.run([*base, "devices"], capture_output=True, text=True,
                             timeout=120, env=env)
    assert refused.returncode == 1
    assert "UNAUTHENTICATED" in refused.stderr and "--token-file" in refused.stderr


def test_an_agent_registers_under_its_certificates_cn(secured):
    s = secured
    tls = ("--tls-ca", str(s.pki.ca.cert), "--task-verify-key",
           str(s.daemon.cache_dir / "keys" / "task-public-key.pem"))
    agent = Agent(s.daemon, s.daemon.address, s.work, None, name="cert-agent", extra_args=(
        *tls, "--tls-cert", str(s.agent_cert.cert), "--tls-key", str(s.agent_cert.key)))
    try:
        with s.client(token=s.tokens.by_name["alice"]) as client:
            wait_until(lambda: any(d.id == "agent-a/0" for d in client.devices()),
                       "the certificate's agent to register as agent-a")
        # A token holder (role agent, name robot) may not take agent-a's id...
        robber = Agent(s.daemon, s.daemon.address, s.work, "agent-a", name="robber",
                       extra_args=tls, env={"KILN_AGENT_TOKEN": s.tokens.by_name["robot"]})
        # ...nor may an agent without credentials connect.
        anonymous = Agent(s.daemon, s.daemon.address, s.work, "anon", name="anon",
                          extra_args=tls)
        try:
            wait_until(lambda: "is not the identity 'robot'" in robber.log(),
                       "the robber's registration to be refused")
            assert "PERMISSION_DENIED" in robber.log()
            wait_until(lambda: "UNAUTHENTICATED" in anonymous.log(), "the anonymous agent refused")
            with s.client(token=s.tokens.by_name["alice"]) as client:
                ids = sorted(d.id for d in client.devices())
            assert ids == ["agent-a/0", "local-cpu/0"], ids
        finally:
            for a in (robber, anonymous):
                a.stop()
        # A token named robot registers robot-<suffix> (a DaemonSet's agents
        # share one token and add their node's name).
        node = Agent(s.daemon, s.daemon.address, s.work, "robot-node1", extra_args=tls,
                     env={"KILN_AGENT_TOKEN": s.tokens.by_name["robot"]})
        try:
            with s.client(token=s.tokens.by_name["alice"]) as client:
                wait_until(lambda: any(d.id == "robot-node1/0" for d in client.devices()),
                           "the token agent to register as robot-node1")
        finally:
            node.stop()
    finally:
        agent.stop()
    # An --agent-id other than the certificate's CN is a usage error at start.
    mismatch = subprocess.run(
        [str(s.daemon.bin_dir / "kiln-agent-cpu"), "--daemon", s.daemon.address,
         "--agent-id", "someone-else", "--cache-dir", str(s.work / "mismatch"), *tls,
         "--tls-cert", str(s.agent_cert.cert), "--tls-key", str(s.agent_cert.key)],
        capture_output=True, text=True, timeout=60)
    assert mismatch.returncode == 2
    assert "is not the identity in --tls-cert (CN=agent-a)" in mismatch.stderr
    # A certificate without O=kiln:agents (a user's) is refused at start, and
    # kilnd would refuse it too (Agent.Connect needs the role agent).
    user = subprocess.run(
        [str(s.daemon.bin_dir / "kiln-agent-cpu"), "--daemon", s.daemon.address,
         "--cache-dir", str(s.work / "user-agent"), *tls,
         "--tls-cert", str(s.user_cert.cert), "--tls-key", str(s.user_cert.key)],
        capture_output=True, text=True, timeout=60)
    assert user.returncode == 2
    assert "has no O=kiln:agents" in user.stderr
    with s.channel(s.user_cert) as channel:
        assert call_code(channel, "kiln.v1.Agent/Connect") == grpc.StatusCode.PERMISSION_DENIED


def _list_devices(secured, protocol: str) -> None:
    """Devices.ListDevices as a client speaking client protocol ``protocol``."""
    with secured.channel() as channel:
        list_devices = channel.unary_unary(
            "/kiln.v1.Devices/ListDevices",
            request_serializer=devices_pb2.ListDevicesRequest.SerializeToString,
            response_deserializer=devices_pb2.ListDevicesResponse.FromString)
        list_devices(devices_pb2.ListDevicesRequest(), timeout=30,
                     metadata=(("kiln-client-protocol", protocol),
                               *bearer(secured.tokens.by_name["alice"])))


def test_an_older_client_protocol_is_served(secured):
    """A protocol-1 client (no parameter sets) still works with this kilnd."""
    _list_devices(secured, "1")


def test_an_incompatible_client_protocol_is_refused(secured):
    for protocol in ("99", "0", "two"):
        with pytest.raises(grpc.RpcError) as err:
            _list_devices(secured, protocol)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert f"client protocol {protocol}" in err.value.details()
        assert "speaks protocols 1 to 3" in err.value.details()


# --- where kilnd may listen ---------------------------------------------------

def _run_kilnd_until_exit(tmp_path, *args: str) -> subprocess.CompletedProcess:
    bin_dir = require_binaries()
    return subprocess.run(
        [str(bin_dir / "kilnd"), "--cache-dir", str(tmp_path / "cache"), "--local-agents",
         "none", "--metrics-listen", "127.0.0.1:0", *args],
        capture_output=True, text=True, timeout=60)


def test_a_reachable_address_without_tls_and_credentials_is_refused(tmp_path):
    proc = _run_kilnd_until_exit(tmp_path, "--listen", "0.0.0.0:0")
    assert proc.returncode == 1
    assert "refusing to listen on '0.0.0.0:0'" in proc.stdout + proc.stderr
    assert "--insecure" in proc.stdout + proc.stderr


def test_tls_without_credentials_is_refused_too(tmp_path):
    pki = Pki(tmp_path / "pki")
    server = pki.server()
    proc = _run_kilnd_until_exit(tmp_path, "--listen", "0.0.0.0:0", "--tls-cert",
                                 str(server.cert), "--tls-key", str(server.key))
    assert proc.returncode == 1
    assert "without credentials" in proc.stdout + proc.stderr


def test_insecure_allows_it_with_a_warning(tmp_path):
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="insecure", listen="0.0.0.0:0",
                   extra_args=("--insecure",))
    daemon.start()
    try:
        with kiln.Client(daemon.address, timeout=120) as client:
            assert_runs(client)
        assert "--insecure: listening on 0.0.0.0:0 without TLS" in daemon.log_tail()
    finally:
        daemon.assert_stops_cleanly()


def test_tls_and_tokens_may_listen_anywhere(tmp_path):
    pki = Pki(tmp_path / "pki")
    server = pki.server()
    tokens = make_tokens(tmp_path, {"alice": "user"})
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="public", listen="0.0.0.0:0",
                   extra_args=("--tls-cert", str(server.cert), "--tls-key", str(server.key),
                               "--auth-tokens", str(tokens.file)),
                   client_options={"tls": str(pki.ca.cert),
                                   "token": tokens.by_name["alice"]})
    daemon.start()
    try:
        with kiln.Client(daemon.address, timeout=120, tls=pki.ca.cert,
                         token=tokens.by_name["alice"]) as client:
            assert_runs(client)
        assert "--insecure" not in daemon.log_tail()
    finally:
        daemon.assert_stops_cleanly()


def test_a_malformed_tokens_file_stops_kilnd_naming_the_line(tmp_path):
    bad = tmp_path / "tokens"
    bad.write_text("alice user sha256:abc\n")
    proc = _run_kilnd_until_exit(tmp_path, "--listen", "127.0.0.1:0", "--auth-tokens", str(bad))
    assert proc.returncode == 1
    assert f"{bad}:1:" in proc.stdout + proc.stderr


def test_a_users_stored_bytes_are_bounded_by_the_quota(tmp_path):
    """--blob-quota-bytes: each user keeps at most that many bytes of blobs;
    past it Blobs.Write is RESOURCE_EXHAUSTED before anything is written,
    other users are not affected, and eviction gives the room back."""
    from kiln.blobs import bytes_digest
    pki = Pki(tmp_path / "pki")
    server = pki.server()
    tokens = make_tokens(tmp_path, {"alice": "user", "bob": "user", "root": "admin"})
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="quota", wait_for_cpu=False,
                   extra_args=("--tls-cert", str(server.cert), "--tls-key", str(server.key),
                               "--auth-tokens", str(tokens.file), "--blob-quota-bytes",
                               "1MiB", "--local-agents", "none"),
                   client_options={"tls": str(pki.ca.cert), "token": tokens.by_name["alice"]})
    daemon.start()

    def client(name: str) -> kiln.Client:
        return kiln.Client(daemon.address, timeout=60, tls=pki.ca.cert,
                           token=tokens.by_name[name])

    first, second, bobs = (bytes([i]) * (600 << 10) for i in (1, 2, 3))
    try:
        with client("alice") as alice, client("bob") as bob, client("root") as root:
            alice.blobs.write(bytes_digest(first), first)
            with pytest.raises(kiln.ResourceExhaustedError,
                               match=r"'alice' keeps 614400 bytes .* quota of 1048576 bytes "
                                     r"\(--blob-quota-bytes\)"):
                alice.blobs.write(bytes_digest(second), second)
            assert alice.blobs.find_missing([bytes_digest(second)]) == \
                {bytes_digest(second).hash}, "a refused blob must not be stored"
            bob.blobs.write(bytes_digest(bobs), bobs)
            # A blob already stored costs its uploader nothing.
            alice.blobs.write(bytes_digest(bobs), bobs)
            # Admins are not counted; their GC gives alice her room back.
            root.cache.collect_garbage(target_bytes=1)
            alice.blobs.write(bytes_digest(second), second)
            assert alice.blobs.read(bytes_digest(second)) == second
    finally:
        daemon.assert_stops_cleanly()


def test_blobs_of_many_chunks_and_uploads_kilnd_names_count_in_the_quota(tmp_path):
    """A blob is charged its size whatever the number of Write messages it
    took (kilnd once charged a blob of several by its last message, which
    names no blob: nothing), and an in-transit upload kilnd named counts
    like any other."""
    from kiln.blobs import bytes_digest
    tokens = make_tokens(tmp_path, {"alice": "user"})
    daemon = Kilnd(tmp_path, tmp_path / "cache", name="quota-chunks", wait_for_cpu=False,
                   extra_args=("--auth-tokens", str(tokens.file), "--blob-quota-bytes",
                               "4MiB", "--local-agents", "none"),
                   client_options={"token": tokens.by_name["alice"]})
    daemon.start()
    durable, refused = (bytes([i]) * (3 << 19) for i in (1, 2))  # 1.5 MiB: two messages
    passing = torch.full((3 << 17,), 7.0)  # 1.5 MiB of f32
    try:
        with kiln.Client(daemon.address, timeout=60, token=tokens.by_name["alice"]) as alice:
            alice.blobs.write(bytes_digest(durable), durable)
            named = alice.blobs.send_in_transit(passing)
            assert named.size_bytes == 3 << 19
            with pytest.raises(kiln.ResourceExhaustedError,
                               match=r"'alice' keeps 3145728 bytes .* quota of 4194304 bytes"):
                alice.blobs.write(bytes_digest(refused), refused)
            # A tensor whose bytes kilnd holds costs nothing: refused as an
            # upload kilnd would name (its size is over), it goes by digest
            # and is found stored.
            same = torch.frombuffer(bytearray(durable), dtype=torch.uint8)
            assert alice.blobs.send_in_transit(same) == bytes_digest(durable)
            with pytest.raises(kiln.ResourceExhaustedError, match=r"'alice' keeps 3145728 bytes"):
                alice.blobs.write(bytes_digest(refused), refused)
    finally:
        daemon.assert_stops_cleanly()
