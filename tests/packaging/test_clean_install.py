"""The kiln package built the way a user builds it (issue 11): from a clean
checkout, with nothing generated beforehand, `pip wheel ./client_py` (build
isolation on: pip fetches setuptools and grpcio-tools from PyPI) must give a
wheel that carries kiln.v1 (generated from proto/ by client_py/setup.py) and
works in a fresh venv. Also: without proto/ the build fails and says why, and
an sdist (which has no proto/) carries the generated modules itself.

The clean checkout is a copy of the files git tracks (or would track: new,
not ignored) under client_py/ and proto/, so the git-ignored generated
client_py/kiln/v1/ of the developer's tree does not come along. The fresh venv
gets torch, grpcio, protobuf, numpy and rich from this interpreter's
site-packages through a .pth file, listed after the venv's own site-packages,
so nothing is downloaded again but kiln itself must come from the wheel."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Signs in pip's output that PyPI could not be reached.
NETWORK_ERRORS = ("NewConnectionError", "Max retries exceeded", "ConnectTimeout",
                  "Temporary failure in name resolution", "Network is unreachable",
                  "No matching distribution found", "Could not find a version")


def _env() -> dict[str, str]:
    """This environment without what would leak the developer's tree or turn
    build isolation off."""
    env = dict(os.environ)
    for var in ("PYTHONPATH", "PYTHONHOME", "PIP_NO_BUILD_ISOLATION", "VIRTUAL_ENV",
                "PIP_REQUIRE_VIRTUALENV"):
        env.pop(var, None)
    return env


def _run(args, cwd: pathlib.Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=_env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)


def _check(proc: subprocess.CompletedProcess, what: str) -> str:
    if proc.returncode != 0:
        pytest.fail(f"{what} failed (exit {proc.returncode}):\n{proc.stdout[-6000:]}",
                    pytrace=False)
    return proc.stdout


def _clean_checkout(dest: pathlib.Path, dirs=("client_py", "proto")) -> pathlib.Path:
    """Copies the files git tracks, or would track (untracked, not ignored),
    under dirs into dest: what a fresh clone of this tree would hold."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *dirs],
        cwd=REPO, check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")
    copied = 0
    for rel in filter(None, listed):
        src = REPO / rel
        if not src.is_file():  # deleted in the working tree
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
        copied += 1
    assert copied, f"git ls-files listed nothing under {dirs} in {REPO}"
    assert not (dest / "client_py" / "kiln" / "v1").exists(), \
        "the clean checkout holds kiln/v1: generated files are tracked or not ignored"
    return dest


def _pip_wheel(source: pathlib.Path, out: pathlib.Path, cwd: pathlib.Path,
               isolated: bool = True) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", out]
    if not isolated:
        args.append("--no-build-isolation")
    return _run([*args, source], cwd=cwd)


def _one_wheel(out: pathlib.Path) -> pathlib.Path:
    wheels = list(out.glob("kiln-*.whl"))
    assert len(wheels) == 1, f"expected one kiln wheel in {out}, found {wheels}"
    return wheels[0]


def _assert_wheel_has_stubs(wheel: pathlib.Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    protos = sorted(p.stem for p in (REPO / "proto" / "kiln" / "v1").glob("*.proto"))
    assert protos, "no proto/kiln/v1/*.proto in the repository"
    expected = {"kiln/__init__.py", "kiln/cli.py", "kiln/py.typed", "kiln/v1/__init__.py"}
    for stem in protos:
        expected |= {f"kiln/v1/{stem}_pb2.py", f"kiln/v1/{stem}_pb2.pyi",
                     f"kiln/v1/{stem}_pb2_grpc.py"}
    missing = sorted(expected - names)
    assert not missing, f"{wheel.name} lacks {missing}"


def _outer_site_packages() -> list[str]:
    """This interpreter's site-packages (torch, grpcio, protobuf, ...)."""
    paths = []
    for p in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        if p not in paths:
            paths.append(p)
    return paths


def _fresh_venv(where: pathlib.Path) -> pathlib.Path:
    _check(_run([sys.executable, "-m", "venv", "--without-pip", where], cwd=where.parent),
           "python -m venv")
    py = where / "bin" / "python"
    site = _check(_run([py, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       cwd=where), "venv site-packages").strip()
    # A .pth line is appended to sys.path after the venv's site-packages; the
    # .pth files inside those directories (e.g. the developer's editable kiln)
    # are not processed.
    pathlib.Path(site, "zz_kiln_test_deps.pth").write_text(
        "\n".join(_outer_site_packages()) + "\n")
    return py


def test_wheel_from_clean_checkout_installs_and_imports(tmp_path):
    tree = _clean_checkout(tmp_path / "repo")
    dist = tmp_path / "dist"
    proc = _pip_wheel(tree / "client_py", dist, cwd=tmp_path)
    if proc.returncode != 0 and any(s in proc.stdout for s in NETWORK_ERRORS):
        pytest.fail("pip wheel could not fetch the build requirements (setuptools, "
                    "grpcio-tools==1.85.1) from PyPI for the isolated build; this test "
                    f"needs PyPI (or a mirror pip is configured for):\n{proc.stdout[-4000:]}",
                    pytrace=False)
    _check(proc, "pip wheel --no-deps ./client_py (build isolation on)")
    wheel = _one_wheel(dist)
    _assert_wheel_has_stubs(wheel)

    venv = tmp_path / "venv"
    py = _fresh_venv(venv)
    _check(_run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps",
                 "--no-index", wheel], cwd=tmp_path), "pip install --no-deps <wheel>")

    out = _check(_run([py, "-I", "-c", """if True:
        import json, kiln, kiln.v1, kiln.v1.compiler_pb2 as pb, kiln.v1.compiler_pb2_grpc as pbg
        print(json.dumps({"kiln": kiln.__file__, "pb2": pb.__file__,
                          "stub": hasattr(pbg, "CompilerStub"),
                          "request": pb.CompileRequest.DESCRIPTOR.full_name}))
        """], cwd=tmp_path), "importing kiln in the fresh venv")
    got = json.loads(out.strip().splitlines()[-1])
    for key in ("kiln", "pb2"):
        assert pathlib.Path(got[key]).resolve().is_relative_to(venv.resolve()), \
            f"{key} imported from {got[key]}, not from the fresh venv {venv}"
    assert got["stub"], "kiln.v1.compiler_pb2_grpc has no CompilerStub"
    assert got["request"] == "kiln.v1.CompileRequest"
    site = pathlib.Path(got["kiln"]).parent
    assert (site / "py.typed").is_file()
    assert (site / "v1" / "compiler_pb2.pyi").is_file()

    cli = _run([venv / "bin" / "kiln", "--help"], cwd=tmp_path, timeout=120)
    _check(cli, "kiln --help in the fresh venv")
    assert "usage" in cli.stdout.lower(), cli.stdout


def test_build_without_proto_fails_clearly(tmp_path):
    # Only client_py/, as in a copy taken out of the repository. No isolation:
    # this venv has setuptools and grpcio-tools (client_py/requirements.txt).
    tree = _clean_checkout(tmp_path / "repo", dirs=("client_py",))
    proc = _pip_wheel(tree / "client_py", tmp_path / "dist", cwd=tmp_path, isolated=False)
    assert proc.returncode != 0, f"built without proto/:\n{proc.stdout[-4000:]}"
    assert "no .proto files at" in proc.stdout and "no generated kiln.v1 modules" \
        in proc.stdout, proc.stdout[-4000:]
    assert not list((tmp_path / "dist").glob("*.whl"))


def test_sdist_carries_stubs_and_builds_without_proto(tmp_path):
    tree = _clean_checkout(tmp_path / "repo")
    sdists = tmp_path / "sdist"
    _check(_run([sys.executable, "-c",
                 f"from setuptools import build_meta; build_meta.build_sdist({str(sdists)!r})"],
                cwd=tree / "client_py"), "build_sdist")
    (sdist,) = sdists.glob("kiln-*.tar.gz")
    unpacked = tmp_path / "unpacked"  # no proto/ beside it
    with tarfile.open(sdist) as tar:
        # Extraction filters came in Python 3.11.4 (Debian 12's python3 is
        # 3.11.2); our own sdist is trusted either way.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(unpacked, filter="data")
        else:
            tar.extractall(unpacked)
    (source,) = unpacked.iterdir()
    assert (source / "kiln" / "v1" / "compiler_pb2.py").is_file(), "the sdist lacks kiln/v1"
    dist = tmp_path / "dist"
    _check(_pip_wheel(source, dist, cwd=tmp_path, isolated=False),
           "pip wheel of the unpacked sdist")
    _assert_wheel_has_stubs(_one_wheel(dist))
