"""Pure helpers of the ``kiln`` CLI: size parsing, human-readable output,
and the one mapping from an error to a one-line message plus a hint.

Nothing here talks to a daemon, so the unit tests cover it directly.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from kiln.errors import KilnError
from kiln.units import format_bytes, parse_size

__all__ = ["CliError", "parse_size", "format_bytes", "format_table", "describe_error"]


class CliError(Exception):
    """An expected failure of a CLI command (a missing file, a bad input):
    printed as one line plus a hint, exit code 1, never a traceback."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns two spaces apart, as rich lays out a borderless
    table (plain text: no colour, no wrapping, stable for scripts and tests)."""
    import io

    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0),
                  header_style="", show_header=True)
    for header in headers:
        table.add_column(str(header), no_wrap=True, overflow="ignore")
    for row in rows:
        table.add_row(*(str(c) for c in row))
    console = Console(file=io.StringIO(), width=1 << 16, color_system=None,
                      force_terminal=False, highlight=False, emoji=False, markup=False)
    with console.capture() as captured:
        console.print(table)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def describe_error(err: BaseException) -> tuple[str, str]:
    """The one-line message and the hint the CLI prints for an expected error."""
    if isinstance(err, CliError):
        return err.message, err.hint
    if not isinstance(err, KilnError):
        return f"{type(err).__name__}: {err}", ""
    return err.message, err.hint
