"""Certificates and tokens made for a test with the real openssl: a CA, a
server certificate for 127.0.0.1/localhost, and client certificates whose CN
names the caller and whose O carries its Kiln role."""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess

from kiln.credentials import new_token, token_grant_line


def _openssl(*args: str, cwd: pathlib.Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"openssl {' '.join(args)} failed:\n{proc.stderr}"


@dataclasses.dataclass
class Certificate:
    cert: pathlib.Path
    key: pathlib.Path


class Pki:
    """A CA in `directory` that issues server and client certificates."""

    def __init__(self, directory: pathlib.Path, name: str = "kiln-test-ca"):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca = Certificate(self.dir / f"{name}.pem", self.dir / f"{name}.key")
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-days", "2", "-subj", f"/CN={name}", "-keyout", str(self.ca.key),
                 "-out", str(self.ca.cert), cwd=self.dir)

    def issue(self, name: str, subject: str, san: str | None = None) -> Certificate:
        """A certificate for `subject` ("/O=kiln:agents/CN=agent-a"), signed by the CA."""
        out = Certificate(self.dir / f"{name}.pem", self.dir / f"{name}.key")
        csr = self.dir / f"{name}.csr"
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-subj", subject, "-keyout", str(out.key), "-out", str(csr), cwd=self.dir)
        ext = self.dir / f"{name}.ext"
        lines = ["basicConstraints=CA:FALSE"]
        if san:
            lines.append(f"subjectAltName={san}")
        ext.write_text("\n".join(lines) + "\n")
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(self.ca.cert), "-CAkey",
                 str(self.ca.key), "-CAcreateserial", "-days", "2", "-extfile", str(ext),
                 "-out", str(out.cert), cwd=self.dir)
        return out

    def server(self) -> Certificate:
        return self.issue("server", "/CN=localhost", san="DNS:localhost,IP:127.0.0.1")


@dataclasses.dataclass
class Tokens:
    """Tokens by name, and the --auth-tokens file granting them."""

    file: pathlib.Path
    by_name: dict[str, str]


def make_tokens(directory: pathlib.Path, grants: dict[str, str]) -> Tokens:
    """grants: name -> role. Writes the file of their hashes."""
    by_name = {name: new_token() for name in grants}
    path = directory / "tokens"
    path.write_text("# test grants\n" + "".join(
        token_grant_line(name, role, by_name[name]) + "\n" for name, role in grants.items()))
    return Tokens(path, by_name)
