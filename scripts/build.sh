#!/usr/bin/env bash
# Configures and builds Kiln with clang-19 + lld, Ninja and ccache.
#   KILN_BUILD_DIR  build folder (default: build)
#   KILN_JOBS       parallel jobs (default: nproc)
# Arguments, if any, name the targets to build (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${KILN_BUILD_DIR:-build}"
JOBS="${KILN_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kiln/ccache}"
# Relative paths in cache keys: build folders and clones share entries.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld
fi
if [ $# -gt 0 ]; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "$@"
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
