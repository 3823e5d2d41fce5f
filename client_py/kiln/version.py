"""The client's version and the torch releases it supports.

``__version__`` is Kiln's release (the top CMakeLists.txt's project version,
which pyproject.toml repeats; a test keeps the three equal). TORCH_RANGE is
the oldest and newest torch the client is tested against (scripts/test.sh
runs the unit and end-to-end tests on the newest, then on the oldest through
scripts/test_torch_version.sh); pyproject's dependency bound says the same.
"""

from __future__ import annotations

__all__ = ["__version__", "TORCH_RANGE"]

__version__ = "0.2.0"

#: (oldest, newest) torch release the client supports, both tested.
TORCH_RANGE = ("2.5.1", "2.15.0")
