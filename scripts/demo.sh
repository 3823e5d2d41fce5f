#!/usr/bin/env bash
# The one demo command: installs dependencies, builds, starts kilnd (which
# starts its local CPU agent and a qemu agent with one simulated riscv64
# device) on free loopback ports, runs client_py/examples/demo.py twice (the
# second run is served from the compile cache and says so), and stops what it
# started on exit.
#
# The terminal shows each phase with its time, then the results; install and
# build output goes to a log file whose path is printed first.
#   KILN_DEMO_CACHE  the daemon's cache dir (default: ~/.cache/kiln/demo-cache)
#   KILN_DEMO_LOG    the log file (default: ~/.cache/kiln/logs/demo-<time>.log)
#   KILN_VENV, KILN_BUILD_DIR as in scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
export KILN_BUILD_DIR="${KILN_BUILD_DIR:-build}"
CACHE_DIR="${KILN_DEMO_CACHE:-$HOME/.cache/kiln/demo-cache}"
LOG="${KILN_DEMO_LOG:-$HOME/.cache/kiln/logs/demo-$(date +%Y%m%d-%H%M%S).log}"
mkdir -p "$(dirname "$LOG")" "$CACHE_DIR"
: >"$LOG"

log() { printf '[demo] %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# phase NAME COMMAND...: runs COMMAND with its output in the log, and prints
# the phase's time; on failure, the log's last lines and the log's path.
phase() {
  local name="$1" start rc=0
  shift
  start="$(now)"
  printf '[demo] %-34s' "$name"
  printf '\n==== %s: %s\n' "$name" "$*" >>"$LOG"
  "$@" >>"$LOG" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'FAILED after %s (exit %d)\n' "$(since "$start")" "$rc"
    tail -n 30 "$LOG" >&2
    log "full log: $LOG"
    exit "$rc"
  fi
  printf '%s\n' "$(since "$start")"
}

log "install and build output goes to $LOG"
phase "install dependencies" scripts/install_deps.sh
phase "build (cmake + ninja)" scripts/build.sh
phase "install the Python client" client_py/setup_venv.sh

KILND="$KILN_BUILD_DIR/bin/kilnd"
WORK="$(mktemp -d)"
PID=""
cleanup() {
  local rc=$?
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID"
    wait "$PID" || { local code=$?; log "kilnd exited with code $code"; [ "$rc" -ne 0 ] || rc=$code; }
  fi
  if [ -f "$WORK/kilnd.log" ]; then
    cat "$WORK/kilnd.log" >>"$LOG"
    if [ "$rc" -ne 0 ]; then
      log "kilnd log (last 40 lines):"
      tail -n 40 "$WORK/kilnd.log" >&2
    fi
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# kilnd and its agents on ports the kernel picks (gRPC and /metrics), so the
# demo runs beside any other kilnd.
start_kilnd() {
  "$KILND" --listen 127.0.0.1:0 --port-file "$WORK/port" --cache-dir "$CACHE_DIR" \
    --metrics-listen 127.0.0.1:0 --metrics-port-file "$WORK/metrics-port" \
    --local-agents cpu,qemu >"$WORK/kilnd.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 600); do
    [ -s "$WORK/port" ] && return 0
    kill -0 "$PID" 2>/dev/null || { echo "kilnd exited during startup"; return 1; }
    sleep 0.1
  done
  echo "kilnd wrote no port file in 60 s"
  return 1
}
start_start="$(now)"
printf '[demo] %-34s' "start kilnd + cpu and qemu agents"
start_kilnd >>"$LOG" 2>&1 || { echo FAILED; exit 1; }
PORT="$(tr -d '[:space:]' <"$WORK/port")"
ADDRESS="127.0.0.1:${PORT##*:}"
PY="$KILN_VENV/bin/python"
"$PY" - "$ADDRESS" >>"$LOG" 2>&1 <<'PYEOF' || { echo FAILED; exit 1; }
import sys, time, kiln
client = kiln.Client(sys.argv[1], timeout=5)
deadline = time.monotonic() + 120
while {"cpu", "riscv64"} - {d.kind for d in client.devices()}:
    if time.monotonic() > deadline:
        sys.exit("the cpu and riscv64 agents did not register in 120 s")
    time.sleep(0.1)
PYEOF
printf '%s (gRPC %s, metrics port %s)\n' "$(since "$start_start")" "$ADDRESS" \
  "$(tr -d '[:space:]' <"$WORK/metrics-port")"

run_demo() {
  local title="$1" start rc=0
  shift
  printf '\n[demo] %s\n' "$title"
  start="$(now)"
  "$PY" client_py/examples/demo.py --address "$ADDRESS" --riscv64 "$@" || rc=$?
  printf '[demo] %s: %s\n' "$title" "$(since "$start")"
  return "$rc"
}
run_demo "run 1: compile and run (cold cache)"
run_demo "run 2: the same models again (expect compile-cache hits)" --expect-cache-hits
log "done; kilnd's log and the build output are in $LOG"
