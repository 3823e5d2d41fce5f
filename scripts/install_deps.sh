#!/usr/bin/env bash
# Installs everything Kiln needs on Debian 12 (bookworm). Idempotent: each step
# checks first and installs only what is missing.
#
#   KILN_VENV      Python virtual environment (default: ~/.cache/kiln/venv);
#                  reused when present, so the torch wheel and the NVIDIA
#                  libraries it pulls (~6 GB installed) download once.
#   KILN_TORCH_VERSION  torch to install (default: the newest the client
#                  supports, kiln.TORCH_RANGE[1]); torchvision follows it.
#   KILN_SKIP_APT  set to 1 to skip the Debian package step (no root).
#   KILN_TOOLS_DIR operations tools, built with `go install` through the Go
#                  module proxy into $KILN_TOOLS_DIR/bin (default:
#                  ~/.cache/kiln/tools): grpcurl, grpc-health-probe, helm,
#                  kubeconform, and bazel-remote (the REAPI cache server the
#                  shared-tier tests run). KILN_SKIP_TOOLS=1 skips them.
#                  The REAPI protos kilnd is built from always land in
#                  $KILN_TOOLS_DIR/reapi-protos (scripts/fetch_reapi_protos.sh).
set -euo pipefail

KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
# The newest and oldest torch the client supports (client_py/kiln/version.py
# TORCH_RANGE), each with the torchvision release built against it (the
# newest torchvision, 0.29.2, declares torch >= 2.14 and runs on 2.15).
TORCH_VERSION="${KILN_TORCH_VERSION:-2.15.0}"
case "$TORCH_VERSION" in
  2.15.0) TORCHVISION_VERSION=0.29.2 ;;
  2.5.1) TORCHVISION_VERSION=0.20.1 ;;
  *) echo "install_deps: no torchvision pinned for torch $TORCH_VERSION" >&2; exit 1 ;;
esac
KILN_TOOLS_DIR="${KILN_TOOLS_DIR:-$HOME/.cache/kiln/tools}"
# Each tool: "name module@version go-toolchain". "debian" builds with Debian
# 12's Go 1.19 (golang-go); these are the newest releases whose module graph
# builds with it. helm is current (v4), which needs a newer Go than bookworm
# ships: that Go comes from the Go module proxy as the golang.org/toolchain
# module (what GOTOOLCHAIN downloads do), fetched by Debian's Go, which checks
# it against the checksum database.
GO_TOOLCHAIN=go1.27.4
GO_TOOLS=(
  "grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.1 debian"
  "grpc-health-probe github.com/grpc-ecosystem/grpc-health-probe@v0.4.15 debian"
  "helm helm.sh/helm/v4/cmd/helm@v4.3.1 $GO_TOOLCHAIN"
  "kubeconform github.com/yannh/kubeconform/cmd/kubeconform@v0.6.3 debian"
)
# bazel-remote, the REAPI cache server kilnd's shared tier is tested against
# (--remote-cache). `go install` refuses its module (replace directives), so
# it builds in a scratch module: `go get` then `go build`.
BAZEL_REMOTE="github.com/buchgr/bazel-remote/v2@v2.6.2"

APT_PACKAGES=(
  # build
  build-essential cmake ninja-build ccache pkg-config git
  # https to PyPI and the Go module proxy; the googleapis protos from npm
  ca-certificates curl openssl
  # LLVM/MLIR 19 (shared libLLVM/libMLIR), clang + lld for fast builds, and
  # clang's sanitizer and libFuzzer runtimes (scripts/fuzz.sh)
  clang-19 lld-19 libclang-rt-19-dev llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  # RPC and support libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libssl-dev
  # kilnd --config FILE
  libyaml-cpp-dev
  # kilnd's metrics registry and text exposition; JSON log lines; the
  # command lines of kilnd and the agents
  prometheus-cpp-dev nlohmann-json3-dev libcli11-dev
  # oneDNN, the kernel library the cpu agent gives the artifacts it loads;
  # Debian's dnnl-config.cmake finds OpenCL (libOpenCL.so and its headers)
  libdnnl-dev ocl-icd-opencl-dev
  # ONNX protos: the mdla target writes ONNX models, the mdla agent reads them
  libonnx-dev
  # Xilinx Runtime 2.13: the acap target writes xclbin containers (xclbin.h,
  # which needs uuid.h); the acap agent reads them and drives boards (XRT)
  libxrt-dev libxrt-utils uuid-dev
  # Python
  python3 python3-venv python3-dev
  # Go 1.19, to build the operations tools (grpcurl, helm, kubeconform)
  golang-go
  # promtool + a real Prometheus server for the /metrics e2e test
  prometheus
  # riscv64: the qemu agent (qemu-riscv64 user mode, the guest runner's
  # cross compiler and sysroot) and bare-metal bundles (riscv64-unknown-elf
  # gcc + picolibc, run under qemu-system-riscv64)
  qemu-user qemu-system-misc gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
)

log() { printf '[install_deps] %s\n' "$*"; }

install_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages: all present"
    return
  fi
  log "Debian packages: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_python_env() {
  if [ ! -x "$KILN_VENV/bin/python" ]; then
    log "creating venv at $KILN_VENV"
    mkdir -p "$(dirname "$KILN_VENV")"
    python3 -m venv "$KILN_VENV"
  fi
  local py="$KILN_VENV/bin/python"
  if ! "$py" -c "import torch, torchvision, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' and torchvision.__version__.split('+')[0] == '$TORCHVISION_VERSION' else 1)" 2>/dev/null; then
    log "installing torch $TORCH_VERSION and torchvision $TORCHVISION_VERSION (large download, once)"
    "$py" -m pip install -q --upgrade pip
    "$py" -m pip install -q "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION"
  fi
  log "installing Python packages"
  "$py" -m pip install -q -r "$(dirname "$0")/../client_py/requirements.txt"
}

# Debian's Go when installed (what a fresh bookworm has), else `go` on PATH.
find_go() {
  if [ -x /usr/lib/go/bin/go ]; then echo /usr/lib/go/bin/go
  elif command -v go >/dev/null 2>&1; then command -v go
  else return 1
  fi
}

# The Go of a golang.org/toolchain release, in $KILN_TOOLS_DIR/<version>;
# prints its go binary.
go_toolchain() {
  local version="$1" dir="$KILN_TOOLS_DIR/$1" debian_go module json src
  if [ ! -x "$dir/bin/go" ]; then
    debian_go="$(find_go)" || { log "no Go toolchain (apt package golang-go)" >&2; return 1; }
    module="golang.org/toolchain@v0.0.1-$version.linux-amd64"
    log "fetching $version ($module) from the Go module proxy" >&2
    json="$(GOPATH="$KILN_TOOLS_DIR/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
      "$debian_go" mod download -json "$module")"
    src="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [ -d "$src" ] || { log "no $module: $json" >&2; return 1; }
    rm -rf "$dir.tmp"
    cp -r "$src" "$dir.tmp"
    # Module zips keep no file modes.
    chmod -R u+w "$dir.tmp"
    chmod +x "$dir.tmp"/bin/* "$dir.tmp"/pkg/tool/*/*
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir/bin/go"
}

install_go_tools() {
  local bin="$KILN_TOOLS_DIR/bin" go entry name pkg toolchain stamp
  mkdir -p "$bin"
  for entry in "${GO_TOOLS[@]}"; do
    read -r name pkg toolchain <<< "$entry"
    stamp="$bin/.$name.version"
    if [ -x "$bin/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg" ]; then
      continue
    fi
    if [ "$toolchain" = debian ]; then
      go="$(find_go)" || { log "no Go toolchain (apt package golang-go): cannot build $name"; return 1; }
    else
      go="$(go_toolchain "$toolchain")"
    fi
    log "building $name ($pkg) with $("$go" version | cut -d' ' -f3)"
    # GOTOOLCHAIN=local: never switch toolchains behind our back.
    GOBIN="$bin" GOPATH="$KILN_TOOLS_DIR/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
      "$go" install "$pkg"
    echo "$pkg" > "$stamp"
  done
  log "tools: all present in $bin"
}

install_bazel_remote() {
  local bin="$KILN_TOOLS_DIR/bin" go scratch
  if [ -x "$bin/bazel-remote" ] && [ "$(cat "$bin/.bazel-remote.version" 2>/dev/null)" = "$BAZEL_REMOTE" ]; then
    return 0
  fi
  go="$(go_toolchain "$GO_TOOLCHAIN")"
  log "building bazel-remote ($BAZEL_REMOTE) with $("$go" version | cut -d' ' -f3)"
  scratch="$(mktemp -d)"
  (
    cd "$scratch"
    export GOPATH="$KILN_TOOLS_DIR/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local
    "$go" mod init kiln.tools/bazel-remote >/dev/null 2>&1
    "$go" get "$BAZEL_REMOTE"
    "$go" build -o "$bin/bazel-remote" "${BAZEL_REMOTE%@*}"
  )
  rm -rf "$scratch"
  echo "$BAZEL_REMOTE" > "$bin/.bazel-remote.version"
}

[ "${KILN_SKIP_APT:-0}" = "1" ] || install_apt_packages
install_python_env
[ "${KILN_SKIP_TOOLS:-0}" = "1" ] || install_go_tools
[ "${KILN_SKIP_TOOLS:-0}" = "1" ] || install_bazel_remote
# The REAPI protos kilnd builds its remote cache tier from (CMake needs them).
KILN_TOOLS_DIR="$KILN_TOOLS_DIR" GO="$(find_go)" "$(dirname "$0")/fetch_reapi_protos.sh"
log "done (venv: $KILN_VENV)"
