#!/usr/bin/env bash
# Fetches the Remote Execution API (REAPI v2) protos kilnd's shared cache
# tier speaks (--remote-cache), at pinned versions, into DIR (default
# $KILN_TOOLS_DIR/reapi-protos). They are dependencies, not Kiln sources:
#   - build/bazel/{remote/execution/v2,semver}: the bazelbuild/remote-apis
#     repository, from the Go module proxy (checked against the Go checksum
#     database by `go mod download`);
#   - google/{api,longrunning,rpc,bytestream}: googleapis, from the npm
#     package google-proto-files (checked against its pinned sha512).
# CMake reads DIR as KILN_REAPI_PROTO_DIR. Needs go, curl, tar and openssl.
set -euo pipefail

REMOTE_APIS="github.com/bazelbuild/remote-apis@v0.0.0-20260908115904-76ddd98e1f92"
GOOGLEAPIS_TGZ="https://registry.npmjs.org/google-proto-files/-/google-proto-files-6.0.1.tgz"
GOOGLEAPIS_SHA512="fbvUWVNh3rKGlVFWwlUNF7Sk1Tah0a89q02rLTXsWjbKKHGeuURAa8tl9rvu5TyWny1YiSIo5eDqF260Tai6vQ=="
GOOGLEAPIS_FILES=(
  google/api/annotations.proto google/api/http.proto google/api/client.proto
  google/api/launch_stage.proto google/api/field_behavior.proto
  google/longrunning/operations.proto google/rpc/status.proto
  google/bytestream/bytestream.proto
)

TOOLS_DIR="${KILN_TOOLS_DIR:-$HOME/.cache/kiln/tools}"
DEST="${1:-$TOOLS_DIR/reapi-protos}"
STAMP="$REMOTE_APIS $GOOGLEAPIS_TGZ"
log() { echo "[fetch_reapi_protos] $*" >&2; }

if [ "$(cat "$DEST/.version" 2>/dev/null)" = "$STAMP" ]; then
  exit 0
fi

go_bin="${GO:-}"
if [ -z "$go_bin" ]; then
  if [ -x /usr/lib/go/bin/go ]; then go_bin=/usr/lib/go/bin/go
  else go_bin="$(command -v go)" || { log "no Go toolchain (apt package golang-go)"; exit 1; }
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"

log "fetching $REMOTE_APIS from the Go module proxy"
json="$(cd "$work" && GOPATH="$TOOLS_DIR/gopath" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
  "$go_bin" mod download -json "$REMOTE_APIS")"
src="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -f "$src/build/bazel/remote/execution/v2/remote_execution.proto" ] \
  || { log "no remote_execution.proto in $REMOTE_APIS: $json"; exit 1; }
mkdir -p "$work/out/build/bazel/remote/execution/v2" "$work/out/build/bazel/semver"
cp "$src/build/bazel/remote/execution/v2/remote_execution.proto" \
  "$work/out/build/bazel/remote/execution/v2/"
cp "$src/build/bazel/semver/semver.proto" "$work/out/build/bazel/semver/"
cp "$src/LICENSE" "$work/out/LICENSE.remote-apis"

log "fetching googleapis protos ($GOOGLEAPIS_TGZ)"
curl -fsSL --retry 3 -o "$work/googleapis.tgz" "$GOOGLEAPIS_TGZ"
got="$(openssl dgst -sha512 -binary "$work/googleapis.tgz" | base64 -w0)"
[ "$got" = "$GOOGLEAPIS_SHA512" ] \
  || { log "google-proto-files: sha512 $got, expected $GOOGLEAPIS_SHA512"; exit 1; }
tar xzf "$work/googleapis.tgz" -C "$work" "${GOOGLEAPIS_FILES[@]/#/package/}" package/LICENSE
for f in "${GOOGLEAPIS_FILES[@]}"; do
  mkdir -p "$work/out/$(dirname "$f")"
  cp "$work/package/$f" "$work/out/$f"
done
cp "$work/package/LICENSE" "$work/out/LICENSE.googleapis"

echo "$STAMP" > "$work/out/.version"
rm -rf "$DEST.tmp"
mkdir -p "$(dirname "$DEST")"
cp -r "$work/out" "$DEST.tmp"
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
log "REAPI protos in $DEST"
