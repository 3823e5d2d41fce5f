# kilnd: the Kiln daemon (gRPC :50051, Prometheus metrics :9464), with
# kiln-agent-cpu beside it so that `docker run` alone gives a working service
# (kilnd starts a local CPU agent unless --local-agents=none; the Helm chart
# runs agents as DaemonSets instead).
#
#   docker build -f docker/kilnd.Dockerfile -t kiln/kilnd .      (from the repo root)
#   docker run -p 50051:50051 -p 9464:9464 kiln/kilnd
#
# The default CMD serves plaintext without credentials (--insecure, logged as
# a warning): for a private network only. Otherwise pass --tls-cert,
# --tls-key and --auth-tokens (docs/security.md) instead of --insecure.
#
# Stage 1 builds with the Debian packages scripts/install_deps.sh installs;
# stage 2 builds grpc-health-probe for HEALTHCHECK; the final stage is
# bookworm-slim with runtime libraries only.

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
      golang-go ca-certificates curl openssl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The REAPI protos kilnd's shared cache tier is built from (pinned; from the
# Go module proxy and npm), where CMake looks for them.
ENV KILN_TOOLS_DIR=/tools
RUN scripts/fetch_reapi_protos.sh \
 && KILN_BUILD_DIR=/build scripts/build.sh kilnd kiln-compile-worker kiln-agent-cpu \
 && strip /build/bin/kilnd /build/bin/kiln-compile-worker /build/bin/kiln-agent-cpu

# --- health probe -----------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS probe
# Debian 12's Go 1.19; v0.4.15 is the newest grpc-health-probe it builds.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      golang-go ca-certificates git \
 && rm -rf /var/lib/apt/lists/*
RUN GOBIN=/out CGO_ENABLED=0 go install github.com/grpc-ecosystem/grpc-health-probe@v0.4.15

# --- runtime ----------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
# Runtime libraries of kilnd and the agent (from ldd), plus lld-19: the
# compiler links each executable into a shared object with ld.lld-19 at run
# time, against libc/libm, whose link-time files (libc.so, libm.so,
# libc_nonshared.a) only libc6-dev ships.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libllvm19 libmlir-19 lld-19 libc6-dev \
      libspdlog1.10 libfmt9 libabsl20220623 libssl3 libyaml-cpp0.7 libdnnl2 libonnx1 \
      libprometheus-cpp-core1.0 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 kiln \
 && useradd --system --uid 10001 --gid kiln --home-dir /var/cache/kiln \
      --shell /usr/sbin/nologin kiln \
 && mkdir -p /var/cache/kiln \
 && chown kiln:kiln /var/cache/kiln
COPY --from=build /build/bin/kilnd /build/bin/kiln-compile-worker /build/bin/kiln-agent-cpu /usr/local/bin/
COPY --from=probe /out/grpc-health-probe /usr/local/bin/grpc-health-probe
USER 10001:10001
VOLUME ["/var/cache/kiln"]
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["grpc-health-probe", "-addr=127.0.0.1:50051", "-connect-timeout=2s", "-rpc-timeout=3s"]
ENTRYPOINT ["/usr/local/bin/kilnd"]
CMD ["--listen=0.0.0.0:50051", "--insecure", "--cache-dir=/var/cache/kiln", "--metrics-listen=0.0.0.0:9464", "--log-format=json"]
