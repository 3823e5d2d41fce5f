#!/usr/bin/env bash
# Speed benchmark (issue 12): Kiln vs eager PyTorch, torch.compile (Inductor)
# and ONNX Runtime on five models, plus matmul GFLOP/s against a measured FMA
# peak, per-call overhead and big-tensor throughput. One table, one run, every
# baseline measured in the same run. See bench/README.md.
#
# Usage: bench/run.sh [--quick] [--models mlp,resnet18_b1,...] [--threads 1,2]
#                     [--address HOST:PORT] [--build-dir build] [--rounds N]
# Environment:
#   KILN_VENV   the project venv (default: ~/.cache/kiln/venv, made by
#               scripts/install_deps.sh); the baselines' extras go into it.
set -euo pipefail
cd "$(dirname "$0")/.."

KILN_VENV="${KILN_VENV:-$HOME/.cache/kiln/venv}"
PY="$KILN_VENV/bin/python"
if [ ! -x "$PY" ]; then
  echo "bench/run.sh: no Python venv at $KILN_VENV; run scripts/install_deps.sh first" >&2
  exit 1
fi

# ONNX Runtime baseline extras, installed only when missing. Pinned so runs
# compare; client_py/requirements.txt constrains what they pull in (numpy,
# protobuf stay at the project's versions).
ORT_SPEC="onnxruntime==1.32.0"
ONNX_SPEC="onnx==1.22.0"
ONNXSCRIPT_SPEC="onnxscript==0.7.2" # torch.onnx.export's exporter since torch 2.9
missing=()
"$PY" -c "import onnxruntime" 2>/dev/null || missing+=("$ORT_SPEC")
"$PY" -c "import onnx" 2>/dev/null || missing+=("$ONNX_SPEC")
"$PY" -c "import onnxscript" 2>/dev/null || missing+=("$ONNXSCRIPT_SPEC")
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bench/run.sh: installing ${missing[*]} into $KILN_VENV" >&2
  "$PY" -m pip install -q -c client_py/requirements.txt "${missing[@]}"
fi

# The kiln package from this checkout (a venv another checkout installed
# into, or none, would import the wrong one or fail).
KILN_VENV="$KILN_VENV" client_py/setup_venv.sh
exec "$PY" bench/bench_speed.py "$@"
