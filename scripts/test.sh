#!/usr/bin/env bash
# The one test command: installs dependencies, builds, runs the C++ tests
# (ctest) and the Python tests (client unit tests, then the end-to-end tests
# against real kilnd + agents over loopback). Exits non-zero on any failure,
# including "no tests collected".
#   KILN_VENV       venv (default: ~/.cache/kiln/venv)
#   KILN_BUILD_DIR  build folder (default: build)
#   KILN_TOOLS_DIR  operations tools (default: ~/.cache/kiln/tools; its bin/ goes on PATH)
#   PYTEST_ARGS     extra pytest arguments (e.g. "-k e2e -x")
#   KILN_FUZZ_SECONDS  seconds per fuzz target in scripts/fuzz.sh (default 30;
#                   0 skips the sanitizer build and the fuzzers)
#   KILN_TORCH_OLDEST  the oldest torch the client supports, whose unit and
#                   end-to-end tests run too, in their own venv
#                   (scripts/test_torch_version.sh; default 2.5.1, the low
#                   end of kiln.TORCH_RANGE; "none" skips it)
set -euo pipefail
cd "$(dirname "$0")/.."
export KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
export KILN_BUILD_DIR="${KILN_BUILD_DIR:-build}"
# grpcurl, grpc-health-probe, helm, kubeconform (built by install_deps.sh).
export KILN_TOOLS_DIR="${KILN_TOOLS_DIR:-$HOME/.cache/kiln/tools}"
export PATH="$KILN_TOOLS_DIR/bin:$PATH"

# Each stage line carries the time since the start (CI's limit is 90 minutes).
log() { printf '[test +%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

log "dependencies"
scripts/install_deps.sh
log "build"
scripts/build.sh
log "ctest"
ctest --test-dir "$KILN_BUILD_DIR" --output-on-failure --no-tests=error
log "python package"
client_py/setup_venv.sh
log "pytest"
rc=0
# shellcheck disable=SC2086
"$KILN_VENV/bin/python" -m pytest --rootdir "$PWD" client_py/tests tests ${PYTEST_ARGS:-} || rc=$?
if [ "$rc" -eq 5 ]; then
  log "pytest collected no tests: failing"
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  log "pytest failed (exit $rc)"
  exit "$rc"
fi
oldest="${KILN_TORCH_OLDEST:-2.5.1}"
if [ "$oldest" != none ]; then
  log "the client on the oldest supported torch ($oldest)"
  scripts/test_torch_version.sh "$oldest"
fi
if [ "${KILN_FUZZ_SECONDS:-30}" != 0 ]; then
  log "sanitizer build, unit tests under it, fuzzers"
  scripts/fuzz.sh
else
  log "KILN_FUZZ_SECONDS=0: sanitizer build and fuzzers skipped"
fi
log "all tests passed"
