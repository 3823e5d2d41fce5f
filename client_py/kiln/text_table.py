"""Plain-text tables, laid out by rich: the CLI's listings and the op report.

Plain text means no colour, no wrapping and no box-drawing characters, so the
output is stable for scripts, tests and files (``--dump``).
"""

from __future__ import annotations

import io
from typing import Iterable, Sequence

__all__ = ["format_table"]


def format_table(headers: Sequence[str], rows: Iterable[Sequence[object]], *,
                 right_from: int | None = None,
                 footer: Sequence[object] | None = None) -> str:
    """Columns two spaces apart, left-aligned, or right-aligned from column
    ``right_from`` on (numbers). With ``footer`` (a totals row), a dashed rule
    separates the header and the footer from the rows."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    ruled = footer is not None
    # Rules under the header and above the footer, in ASCII; nothing else.
    rules = box.Box("    \n    \n -  \n    \n    \n -  \n    \n    \n", ascii=True)
    table = Table(box=rules if ruled else None, show_edge=False, pad_edge=False,
                  padding=(0, 2, 0, 0), header_style="", footer_style="",
                  show_header=True, show_footer=ruled)
    for i, header in enumerate(headers):
        right = right_from is not None and i >= right_from
        table.add_column(str(header), footer=str(footer[i]) if ruled else "",
                         no_wrap=True, justify="right" if right else "left")
    for row in rows:
        table.add_row(*(str(c) for c in row))
    console = Console(file=io.StringIO(), width=1 << 16, color_system=None,
                      force_terminal=False, highlight=False, emoji=False, markup=False)
    with console.capture() as captured:
        console.print(table)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())
