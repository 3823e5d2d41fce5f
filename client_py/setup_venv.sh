#!/usr/bin/env bash
# Generates the kiln.v1 Python modules from proto/ into client_py/kiln/v1/
# (generate_protos.py, every run: a .proto may have changed) and installs the
# kiln package (editable) into the venv. Idempotent and quiet; needs no network:
# --no-build-isolation builds with the venv's setuptools and grpcio-tools
# (client_py/requirements.txt, installed by scripts/install_deps.sh).
#   KILN_VENV  the venv (default: ~/.cache/kiln/venv)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
PY="$KILN_VENV/bin/python"
if [ ! -x "$PY" ]; then
  echo "setup_venv: no venv at $KILN_VENV; run scripts/install_deps.sh first" >&2
  exit 1
fi
"$PY" "$HERE/generate_protos.py" >/dev/null
installed="$("$PY" - <<PYEOF 2>/dev/null || true
import importlib.util, pathlib
spec = importlib.util.find_spec("kiln")
print(pathlib.Path(spec.origin).resolve().parent.parent if spec and spec.origin else "")
PYEOF
)"
# Reinstall too when pyproject.toml changed since the last install (its
# console script, entry points and dependencies live in the install's metadata).
stamp="$KILN_VENV/.kiln-pyproject.sha256"
want="$(sha256sum "$HERE/pyproject.toml" | cut -d' ' -f1)"
if [ "$installed" != "$HERE" ] || [ ! -x "$KILN_VENV/bin/kiln" ] || \
   [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$PY" -m pip install -q --no-build-isolation -e "$HERE"
  echo "$want" > "$stamp"
fi
"$PY" -c "import kiln, kiln.v1.compiler_pb2_grpc" || {
  echo "setup_venv: kiln does not import from $KILN_VENV" >&2; exit 1; }
