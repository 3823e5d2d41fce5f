#!/usr/bin/env bash
# Runs the client's unit tests and the end-to-end tests with another torch
# release than the default venv's: the other end of the range the client
# supports (client_py/kiln/version.py TORCH_RANGE; scripts/test.sh runs it
# for the oldest). kilnd, the agents and kiln-torchscript-import are the
# ones already built; only the Python side changes.
#   scripts/test_torch_version.sh VERSION   (e.g. 2.5.1)
#   KILN_TORCH_VENV  its venv (default: ~/.cache/kiln/venv-torch-VERSION);
#                    made and filled by install_deps.sh, reused after
#   PYTEST_ARGS      extra pytest arguments
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/test_torch_version.sh TORCH_VERSION}"
venv="${KILN_TORCH_VENV:-$HOME/.cache/kiln/venv-torch-$version}"
log() { printf '[torch %s] %s\n' "$version" "$*"; }

log "venv $venv"
KILN_VENV="$venv" KILN_TORCH_VERSION="$version" KILN_SKIP_APT=1 KILN_SKIP_TOOLS=1 \
  scripts/install_deps.sh
KILN_VENV="$venv" client_py/setup_venv.sh
got="$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])')"
if [ "$got" != "$version" ]; then
  log "the venv has torch $got, not $version"; exit 1
fi
log "pytest (client unit tests and end-to-end tests)"
rc=0
# shellcheck disable=SC2086
"$venv/bin/python" -m pytest --rootdir "$PWD" -p no:cacheprovider client_py/tests tests/e2e \
  ${PYTEST_ARGS:-} || rc=$?
if [ "$rc" -eq 5 ]; then
  log "pytest collected no tests: failing"; exit 1
fi
exit "$rc"
