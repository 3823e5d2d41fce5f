# kiln-agent-cpu: the CPU device agent. It dials kilnd (it serves no port):
#
#   docker build -f docker/kiln-agent-cpu.Dockerfile -t kiln/kiln-agent-cpu .
#   docker run kiln/kiln-agent-cpu --daemon=KILND_HOST:50051
#
# Its health is the daemon's view of its devices (`kiln devices`, READY or
# UNHEALTHY after missed heartbeats); HEALTHCHECK asks that through
# grpc.health.v1 on the daemon it dials, so the container is unhealthy while
# its daemon is unreachable.

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
RUN KILN_BUILD_DIR=/build scripts/build.sh kiln-agent-cpu \
 && strip /build/bin/kiln-agent-cpu

# --- health probe -----------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS probe
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      golang-go ca-certificates git \
 && rm -rf /var/lib/apt/lists/*
RUN GOBIN=/out CGO_ENABLED=0 go install github.com/grpc-ecosystem/grpc-health-probe@v0.4.15

# --- runtime ----------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
# Runtime libraries of the agent (from ldd; libllvm19 describes the host CPU
# in LLVM's names, as kilnd compiles for it; libdnnl2 is the oneDNN it
# installs in the artifacts that call it). The executables it loads are
# shared objects needing only libc and libm.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libspdlog1.10 libfmt9 libabsl20220623 libssl3 \
      libllvm19 libdnnl2 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 kiln \
 && useradd --system --uid 10001 --gid kiln --home-dir /var/cache/kiln-agent \
      --shell /usr/sbin/nologin kiln \
 && mkdir -p /var/cache/kiln-agent \
 && chown kiln:kiln /var/cache/kiln-agent
COPY --from=build /build/bin/kiln-agent-cpu /usr/local/bin/
COPY --from=probe /out/grpc-health-probe /usr/local/bin/grpc-health-probe
COPY docker/agent-healthcheck.sh /usr/local/bin/agent-healthcheck
USER 10001:10001
ENV KILN_DAEMON=""
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/agent-healthcheck"]
ENTRYPOINT ["/usr/local/bin/kiln-agent-cpu", "--cache-dir=/var/cache/kiln-agent"]
