#!/usr/bin/env bash
# The sanitizer build and the fuzzers (issue 13): builds Kiln's own code with
# AddressSanitizer and UndefinedBehaviorSanitizer into build-sanitize, runs the
# C++ unit tests there, replays every input in tests/fuzz/regressions/<target>/
# (crashes found earlier, now regression tests), then runs each libFuzzer
# target from its seed corpus (tests/fuzz/corpus/<target>/) for a bounded time.
# Exits non-zero on any test failure, sanitizer report or crash; a crash's
# input is kept under $KILN_FUZZ_OUT for a regression test.
#   KILN_SANITIZE_BUILD_DIR  build folder (default: build-sanitize)
#   KILN_FUZZ_SECONDS        seconds per fuzz target (default: 30)
#   KILN_FUZZ_SEED           libFuzzer's seed (default: 1, so that a run, and
#                            a crash it finds, repeats on the same commit;
#                            0 picks a new seed each run, for longer campaigns)
#   KILN_FUZZ_OUT            crash inputs and logs (default: $build/fuzz-out)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${KILN_SANITIZE_BUILD_DIR:-build-sanitize}"
SECONDS_EACH="${KILN_FUZZ_SECONDS:-30}"
SEED="${KILN_FUZZ_SEED:-1}"
JOBS="${KILN_JOBS:-$(nproc)}"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kiln/ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# This build has line tables (-g1), and ccache would otherwise key each object
# on the folder it was built in, so a clone in another folder (CI's) missed
# every entry. The tables then name the first build's folder.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
OUT="${KILN_FUZZ_OUT:-$BUILD_DIR/fuzz-out}"

log() { printf '[fuzz] %s\n' "$*"; }

# Not HeapPolicyTest: it tunes glibc's malloc (mallopt), which ASan replaces.
UNIT_TESTS=(KilnServerTests AgentMainTest AgentSessionTest BlobCacheTest TaskRunnerTest
            ComputePoolTest CpuBackendTest KernelLibraryTest MdlaModelTest MdlaBackendTest
            MicronDlaDriverTest AcapTest NullBackendTest DirectChannelsTest)
FUZZERS=(fuzz_graph_import fuzz_executable_record fuzz_agent_task fuzz_rpc_requests
         fuzz_mdla_model fuzz_acap_artifact fuzz_direct_channel)

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1 with line tables: sanitizer reports name lines, builds stay quick;
  # asserts stay on.
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DKILN_SANITIZE=address,undefined -DKILN_FUZZ=ON
fi
log "build (address,undefined sanitizers)"
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${UNIT_TESTS[@]}" "${FUZZERS[@]}"

# Leaks count; a report stops the process with a non-zero status.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

log "unit tests under the sanitizers"
for t in "${UNIT_TESTS[@]}"; do
  log "  $t"
  "$BUILD_DIR/bin/$t" --gtest_brief=1 > "$BUILD_DIR/$t.sanitized.log" 2>&1 || {
    tail -n 80 "$BUILD_DIR/$t.sanitized.log"
    log "$t failed under the sanitizers (log: $BUILD_DIR/$t.sanitized.log)"
    exit 1
  }
done

# The fuzzers check for leaks after every input (libFuzzer's -detect_leaks),
# not once more at exit: fuzz_rpc_requests leaves its in-process kilnd and
# gRPC's threads running when the process ends, and LeakSanitizer's exit
# check then races with threads still starting or stopping (seen: the
# sanitizer's own thread start-up, OpenSSL's per-thread state): 2 of 7
# runs of 30 s failed that way, with no leak in Kiln's code.
FUZZ_ASAN_OPTIONS="$ASAN_OPTIONS:leak_check_at_exit=0"

mkdir -p "$OUT"
log "regressions"
for f in "${FUZZERS[@]}"; do
  dir="tests/fuzz/regressions/$f"
  if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    ASAN_OPTIONS="$FUZZ_ASAN_OPTIONS" \
      "$BUILD_DIR/bin/$f" -runs=0 "$dir"/* > "$OUT/$f.regressions.log" 2>&1 || {
      tail -n 60 "$OUT/$f.regressions.log"
      log "$f: a regression input fails again"
      exit 1
    }
    log "  $f: $(ls "$dir" | wc -l) input(s) pass"
  fi
done

log "fuzzing, ${SECONDS_EACH}s per target, seed $SEED"
summary=()
for f in "${FUZZERS[@]}"; do
  work="$OUT/$f.corpus"
  rm -rf "$work"
  mkdir -p "$work"
  set +e
  ASAN_OPTIONS="$FUZZ_ASAN_OPTIONS" \
    "$BUILD_DIR/bin/$f" -max_total_time="$SECONDS_EACH" -seed="$SEED" -print_final_stats=1 \
    -timeout=30 -rss_limit_mb=4096 -artifact_prefix="$OUT/$f-" \
    "$work" "tests/fuzz/corpus/$f" > "$OUT/$f.log" 2>&1
  rc=$?
  set -e
  runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$OUT/$f.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -ao 'cov: [0-9]*' "$OUT/$f.log" | tail -1 | grep -o '[0-9]*' || echo "?")
  summary+=("$f: $runs executions, coverage $cov, exit $rc")
  if [ "$rc" -ne 0 ]; then
    tail -n 80 "$OUT/$f.log"
    log "$f found a crash: its input is $(ls "$OUT/$f"-* 2>/dev/null | head -1);" \
        "fix it and add the input to tests/fuzz/regressions/$f/"
    exit 1
  fi
done
for line in "${summary[@]}"; do log "  $line"; done
log "no crash, no sanitizer report"
