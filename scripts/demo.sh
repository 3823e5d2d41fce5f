#!/usr/bin/env bash
# The one demo command: installs dependencies, builds, starts kilnd (which
# starts its local CPU agent and a qemu agent with one simulated riscv64
# device) on a free loopback port, runs
# client_py/examples/demo.py twice (the second run is served from the compile
# cache and says so), and stops the daemon on exit.
#   KILN_DEMO_CACHE  the daemon's cache dir (default: ~/.cache/kiln/demo-cache)
#   KILN_VENV, KILN_BUILD_DIR as in scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
export KILN_BUILD_DIR="${KILN_BUILD_DIR:-build}"
CACHE_DIR="${KILN_DEMO_CACHE:-$HOME/.cache/kiln/demo-cache}"

log() { printf '[demo] %s\n' "$*"; }

scripts/install_deps.sh
scripts/build.sh
client_py/setup_venv.sh

KILND="$KILN_BUILD_DIR/bin/kilnd"
[ -x "$KILND" ] || { log "no $KILND after the build"; exit 1; }
mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d)"
PID=""
cleanup() {
  local rc=$?
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
    log "stopping kilnd (pid $PID)"
    kill -TERM "$PID"
    wait "$PID" || { local code=$?; log "kilnd exited with code $code"; [ "$rc" -ne 0 ] || rc=$code; }
  fi
  if [ "$rc" -ne 0 ] && [ -f "$WORK/kilnd.log" ]; then
    log "kilnd log (last 40 lines):"
    tail -n 40 "$WORK/kilnd.log" >&2
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

log "starting kilnd (cache: $CACHE_DIR)"
"$KILND" --listen 127.0.0.1:0 --port-file "$WORK/port" --cache-dir "$CACHE_DIR" \
  --local-agents cpu,qemu >"$WORK/kilnd.log" 2>&1 &
PID=$!
for _ in $(seq 1 600); do
  [ -s "$WORK/port" ] && break
  kill -0 "$PID" 2>/dev/null || { log "kilnd exited during startup"; exit 1; }
  sleep 0.1
done
[ -s "$WORK/port" ] || { log "kilnd wrote no port file in 60 s"; exit 1; }
PORT="$(tr -d '[:space:]' <"$WORK/port")"
ADDRESS="127.0.0.1:${PORT##*:}"
log "kilnd listening on $ADDRESS"

PY="$KILN_VENV/bin/python"
log "run 1"
"$PY" client_py/examples/demo.py --address "$ADDRESS" --riscv64
log "run 2 (same models again: expect compile-cache hits)"
"$PY" client_py/examples/demo.py --address "$ADDRESS" --riscv64 --expect-cache-hits
