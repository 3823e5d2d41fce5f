# kiln-agent-acap: the Xilinx Versal AI Engine (ACAP) device agent. It reads
# the acap target's xclbins with XRT (Debian's libxrt1, in this image) and
# serves the Versal boards XRT enumerates; the board's XRT driver and device
# nodes come from the host. Kiln builds no AI Engine kernels (that needs an
# AI Engine toolchain), so a board refuses executables that lack them
# (docs/devices/acap.md). With --simulate it serves one simulated array
# (Kiln's functional model: bf16 operands, f32 accumulation, on host
# threads; its properties say simulated=true) and runs the host code on the
# node's CPU. It dials kilnd (it serves no port):
#
#   docker build -f docker/kiln-agent-acap.Dockerfile -t kiln/kiln-agent-acap .
#   docker run kiln/kiln-agent-acap --daemon=KILND_HOST:50051 --simulate
#
# HEALTHCHECK asks the daemon it dials through grpc.health.v1, so the
# container is unhealthy while its daemon is unreachable.

ARG DEBIAN_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# --- build ----------------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS build
# Keep in step with APT_PACKAGES in scripts/install_deps.sh (tests/docker checks it).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build ccache pkg-config git \
      clang-19 lld-19 llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libssl-dev \
      libyaml-cpp-dev libdnnl-dev ocl-icd-opencl-dev libonnx-dev libxrt-dev uuid-dev prometheus-cpp-dev nlohmann-json3-dev libcli11-dev python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN KILN_BUILD_DIR=/build scripts/build.sh kiln-agent-acap \
 && strip /build/bin/kiln-agent-acap

# --- health probe -----------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS probe
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      golang-go ca-certificates git \
 && rm -rf /var/lib/apt/lists/*
RUN GOBIN=/out CGO_ENABLED=0 go install github.com/grpc-ecosystem/grpc-health-probe@v0.4.15

# --- runtime ----------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
# Runtime libraries of the agent (from ldd); libxrt1 reads xclbins and
# drives boards, libllvm19 names the host CPU.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libspdlog1.10 libfmt9 libabsl20220623 libssl3 \
      libllvm19 libxrt1 libuuid1 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 kiln \
 && useradd --system --uid 10001 --gid kiln --home-dir /var/cache/kiln-agent \
      --shell /usr/sbin/nologin kiln \
 && mkdir -p /var/cache/kiln-agent \
 && chown kiln:kiln /var/cache/kiln-agent
COPY --from=build /build/bin/kiln-agent-acap /usr/local/bin/
COPY --from=probe /out/grpc-health-probe /usr/local/bin/grpc-health-probe
COPY docker/agent-healthcheck.sh /usr/local/bin/agent-healthcheck
USER 10001:10001
ENV KILN_DAEMON=""
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/agent-healthcheck"]
ENTRYPOINT ["/usr/local/bin/kiln-agent-acap", "--cache-dir=/var/cache/kiln-agent"]
