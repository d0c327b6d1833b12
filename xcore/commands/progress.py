"""Progress of a command on stderr: a tqdm bar on a terminal, plain lines otherwise, nothing if quiet."""

from __future__ import annotations

import shutil
import sys
from typing import Any, TextIO

from xcore.optional_deps import import_optional


class StderrProgress:
    """A progress callback for stderr: a tqdm bar (rate, ETA) on a terminal, plain lines otherwise,
    nothing if quiet."""

    STEPS = 1000
    """The bar counts thousandths of the run, so tqdm's rate and ETA follow the reported fraction."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, tty: bool | None = None,
                 width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self._last: tuple[int, str] | None = None
        self._bar: Any = None

    def __call__(self, fraction: float, message: str) -> None:
        if self.quiet:
            return
        f = min(max(float(fraction), 0.0), 1.0)
        if self.tty:
            self._draw(f, message)
            return
        pct = int(round(100 * f))
        # plain lines: a new line when the message changes or every 10 points
        if self._last is not None and self._last[1] == message and pct // 10 == self._last[0] // 10:
            return
        self.stream.write(f"{pct:3d}% {message}\n")
        self._last = (pct, message)
        self.stream.flush()

    def _draw(self, fraction: float, message: str) -> None:
        """Move the terminal bar to `fraction`, its description to `message`."""
        if self._bar is None:
            tqdm = import_optional("tqdm").tqdm  # only a terminal run draws a bar: listing and --help stay light
            # the terminal's size, with a fallback where it reports none (a fresh pty says 0 x 0, and tqdm
            # then hides a bar whose row is outside the screen); width capped for readability
            size = shutil.get_terminal_size((self.width + 80, 24))
            self._bar = tqdm(total=self.STEPS, file=self.stream, ncols=min(size.columns, 160), nrows=size.lines,
                             leave=True, mininterval=0.1,
                             bar_format="{percentage:3.0f}%|{bar}| {desc} [{elapsed}<{remaining}]")
        self._bar.set_description_str(message[:60], refresh=False)
        self._bar.n = int(round(self.STEPS * fraction))
        self._bar.refresh()

    def note(self, message: str) -> None:
        """One status line (a stage such as loading or writing)."""
        if self.quiet:
            return
        self.done()
        self.stream.write(f"{message}\n")
        self.stream.flush()

    def done(self) -> None:
        """Close a drawn bar (its line stays)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
