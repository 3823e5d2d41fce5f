"""Progress display of the ``kiln`` CLI (rich, on stderr, only on a terminal:
piped output and tests see plain lines only)."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn, TransferSpeedColumn)

__all__ = ["Reporter"]


class Reporter:
    """Upload bars and compile spinners; ``enabled=False`` shows nothing."""

    def __init__(self, enabled: bool | None = None):
        self.console = Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled

    @contextlib.contextmanager
    def upload(self, what: str) -> Iterator[Callable[[int, int], None]]:
        """Yields a ``progress(sent, total)`` callback for BlobClient.ensure_tensors."""
        with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                      TransferSpeedColumn(), console=self.console, transient=True,
                      disable=not self.enabled) as bar:
            task = bar.add_task(what, total=None)

            def update(sent: int, total: int) -> None:
                bar.update(task, completed=sent, total=total)

            yield update

    @contextlib.contextmanager
    def spinner(self, what: str) -> Iterator[None]:
        """A spinner with elapsed time around a call that reports no progress."""
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=self.console, transient=True, disable=not self.enabled) as bar:
            bar.add_task(what, total=None)
            yield
