"""One version of Kiln and one supported torch range, stated the same way
everywhere: the top CMakeLists.txt, pyproject.toml, kiln.__version__, the
install script's default torch and the test script's oldest."""

import pathlib
import re

import torch

import kiln
from kiln.version import TORCH_RANGE

REPO = pathlib.Path(__file__).resolve().parents[2]


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("+")[0].split(".")[:3])


def test_one_kiln_version():
    cmake = re.search(r"project\(Kiln VERSION (\S+)", (REPO / "CMakeLists.txt").read_text())
    pyproject = re.search(r'^version = "(.+)"$', (REPO / "client_py/pyproject.toml").read_text(),
                          re.M)
    assert cmake and pyproject
    assert cmake.group(1) == pyproject.group(1) == kiln.__version__


def test_one_torch_range():
    oldest, newest = TORCH_RANGE
    pyproject = (REPO / "client_py/pyproject.toml").read_text()
    bound = re.search(r'"torch>=([\d.]+),<([\d.]+)"', pyproject)
    assert bound and bound.group(1) == oldest
    assert _version_tuple(newest) < _version_tuple(bound.group(2) + ".0")
    install = (REPO / "scripts/install_deps.sh").read_text()
    assert f'TORCH_VERSION="${{KILN_TORCH_VERSION:-{newest}}}"' in install
    assert f"  {oldest}) TORCHVISION_VERSION=" in install
    assert f'oldest="${{KILN_TORCH_OLDEST:-{oldest}}}"' in (REPO / "scripts/test.sh").read_text()


def test_this_torch_is_in_the_range():
    oldest, newest = TORCH_RANGE
    assert _version_tuple(oldest) <= _version_tuple(torch.__version__) <= _version_tuple(newest)
