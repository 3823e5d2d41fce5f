"""Pure helpers of the ``kiln`` CLI: size parsing, human-readable output,
and the one mapping from an error to a one-line message plus a hint.

Nothing here talks to a daemon, so the unit tests cover it directly.
"""

from __future__ import annotations

from kiln.errors import KilnError
from kiln.text_table import format_table
from kiln.units import format_bytes, parse_size

__all__ = ["CliError", "parse_size", "format_bytes", "format_table", "describe_error"]


class CliError(Exception):
    """An expected failure of a CLI command (a missing file, a bad input):
    printed as one line plus a hint, exit code 1, never a traceback."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


def describe_error(err: BaseException) -> tuple[str, str]:
    """The one-line message and the hint the CLI prints for an expected error."""
    if isinstance(err, CliError):
        return err.message, err.hint
    if not isinstance(err, KilnError):
        return f"{type(err).__name__}: {err}", ""
    return err.message, err.hint
