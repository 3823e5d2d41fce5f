#!/bin/sh
# HEALTHCHECK of an agent image: the agent serves no port, so check the
# daemon it dials (grpc.health.v1 on $KILN_DAEMON, or the --daemon= argument
# of the running agent).
set -eu
addr="${KILN_DAEMON:-}"
if [ -z "$addr" ]; then
  addr="$(tr '\0' '\n' < /proc/1/cmdline | sed -n 's/^--daemon=//p' | head -n1)"
fi
[ -n "$addr" ] || { echo "agent-healthcheck: no daemon address (--daemon=HOST:PORT)" >&2; exit 1; }
exec grpc-health-probe -addr="$addr" -connect-timeout=2s -rpc-timeout=3s
