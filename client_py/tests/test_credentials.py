"""kiln.credentials: token grant lines kilnd can parse, and TLS settings from
arguments and the environment (no daemon needed)."""

from __future__ import annotations

import hashlib

import pytest

import kiln
from kiln.credentials import (is_loopback, new_token, resolve_tls, resolve_token,
                              token_grant_line)


def test_grant_lines_hold_only_the_hash():
    token = new_token()
    assert len(token) == 64 and int(token, 16) >= 0
    line = token_grant_line("alice", "admin", token)
    assert line == f"alice admin sha256:{hashlib.sha256(token.encode()).hexdigest()}"
    assert token not in line
    assert new_token() != token


@pytest.mark.parametrize("name,role", [("al ice", "user"), ("", "user"), ("a/b", "user"),
                                       ("alice", "root")])
def test_bad_grants_are_refused(name, role):
    with pytest.raises(kiln.InvalidArgumentError):
        token_grant_line(name, role, "t")


def test_tls_from_arguments(tmp_path):
    assert resolve_tls(False) is None
    assert resolve_tls(True) == kiln.TlsConfig()
    assert resolve_tls(str(tmp_path / "ca.pem")) == kiln.TlsConfig(ca=str(tmp_path / "ca.pem"))
    config = kiln.TlsConfig(ca="a", cert="b", key="c")
    assert resolve_tls(config) is config


def test_tls_and_token_from_the_environment(monkeypatch, tmp_path):
    for name in ("KILN_TLS_CA", "KILN_TLS_CERT", "KILN_TLS_KEY", "KILN_TOKEN",
                 "KILN_TOKEN_FILE", "KILN_TLS_SERVER_NAME"):
        monkeypatch.delenv(name, raising=False)
    assert resolve_tls(None) is None
    assert resolve_token(None) is None
    monkeypatch.setenv("KILN_TLS_CERT", "c.pem")
    with pytest.raises(kiln.InvalidArgumentError, match="KILN_TLS_CA"):
        resolve_tls(None)
    monkeypatch.setenv("KILN_TLS_CA", "ca.pem")
    monkeypatch.setenv("KILN_TLS_KEY", "k.pem")
    assert resolve_tls(None) == kiln.TlsConfig(ca="ca.pem", cert="c.pem", key="k.pem")
    token_file = tmp_path / "token"
    token_file.write_text("secret\n")
    monkeypatch.setenv("KILN_TOKEN_FILE", str(token_file))
    assert resolve_token(None) == "secret"
    monkeypatch.setenv("KILN_TOKEN", "direct")
    assert resolve_token(None) == "direct"
    assert resolve_token("given") == "given"
    token_file.write_text("")
    monkeypatch.delenv("KILN_TOKEN")
    with pytest.raises(kiln.InvalidArgumentError, match="is empty"):
        resolve_token(None)


def test_unreadable_tls_files_are_typed_errors(tmp_path):
    with pytest.raises(kiln.InvalidArgumentError, match="cannot read the TLS CA bundle"):
        kiln.Client("127.0.0.1:1", tls=tmp_path / "missing.pem")
    with pytest.raises(kiln.InvalidArgumentError, match="cert and key go together"):
        kiln.Client("127.0.0.1:1", tls=kiln.TlsConfig(ca=None, cert="c.pem"))


def test_cli_token_new_prints_a_token_and_its_line(capsys):
    from kiln.cli import main
    assert main(["token", "new", "--name", "ci-bot", "--role", "user"]) == 0
    out = capsys.readouterr().out.splitlines()
    token = out[0].removeprefix("token: ")
    assert out[1] == "--auth-tokens line: " + token_grant_line("ci-bot", "user", token)


def test_a_token_never_travels_in_the_clear_off_the_machine():
    assert is_loopback("127.0.0.1:5") and is_loopback("[::1]:5") and is_loopback("localhost:5")
    assert not is_loopback("10.0.0.1:5") and not is_loopback("kiln.example.com:443")
    with pytest.raises(kiln.InvalidArgumentError, match="in the clear"):
        kiln.Client("10.0.0.1:50051", token="secret", tls=False)
    kiln.Client("127.0.0.1:50051", token="secret", tls=False).close()
