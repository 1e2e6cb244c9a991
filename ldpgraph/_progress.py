r"""Progress of long work on stderr: a tqdm bar on a terminal, a plain line every ~10 s otherwise.

The experiment runner (trials), ``estimate`` (methods) and the file executor (report files)
report progress through :class:`Progress`. What it prints goes to stderr only, never to stdout,
and it changes nothing the work computes. Parallel work is reported from the parent process, as
results arrive; workers print nothing.

- On a terminal (stderr is a tty), or in a Jupyter kernel writing to its own stderr: a tqdm bar
  (``tqdm.auto``: a widget in a notebook), shown after one second (tqdm's ``delay``).
- Otherwise (a log file, a pipe, a batch job): one line every ``interval`` seconds, from a
  background thread of this process, so that a line comes even while one long task runs::

      ldpgraph: trials 40/200 (20%), 1 min 05 s elapsed, about 4 min 20 s left

  and a last line when the work ends, if any line was printed. Work shorter than ``interval``
  prints nothing.

The interval is ``LDPGRAPH_PROGRESS_INTERVAL`` (seconds, default :data:`DEFAULT_INTERVAL`) or
the ``interval`` argument; ``quiet=True`` (``--quiet``) silences both forms.

Examples
--------
>>> import io
>>> err = io.StringIO()
>>> with Progress(3, unit="trial", stream=err, interval=1000.0) as bar:
...     bar.update(3)
>>> err.getvalue()  # shorter than the interval: nothing printed
''
>>> progress_line("trials", 40, 200, 65.0)
'ldpgraph: trials 40/200 (20%), 1 min 05 s elapsed, about 4 min 20 s left'
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from typing import IO, Any

__all__ = ["DEFAULT_INTERVAL", "INTERVAL_ENV", "Progress", "progress_interval", "progress_line"]

#: seconds between two progress lines when stderr is not a terminal
DEFAULT_INTERVAL = 10.0
#: the environment variable that overrides :data:`DEFAULT_INTERVAL`
INTERVAL_ENV = "LDPGRAPH_PROGRESS_INTERVAL"


def progress_interval() -> float:
    """Seconds between two progress lines: ``$LDPGRAPH_PROGRESS_INTERVAL`` or :data:`DEFAULT_INTERVAL`.

    >>> progress_interval() > 0
    True
    """
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{INTERVAL_ENV} must be a number of seconds > 0, got {text!r} (unset it for the "
                         f"default, {DEFAULT_INTERVAL:g})")
    return value


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def progress_line(desc: str, done: int, total: int | None, elapsed: float, note: str = "") -> str:
    """One progress line: what is done of what, the time elapsed and, from the rate so far, left.

    >>> progress_line("methods", 1, 4, 12.0, "running arr-triangles")
    'ldpgraph: methods 1/4 (25%), 12 s elapsed, about 36 s left; running arr-triangles'
    >>> progress_line("report files", 2, None, 3.0)
    'ldpgraph: report files 2, 3 s elapsed'
    """
    parts = [f"ldpgraph: {desc} {done:,}" + (f"/{total:,} ({done / total:.0%})" if total else ""),
             f"{_duration(elapsed)} elapsed"]
    if total and 0 < done < total:
        parts.append(f"about {_duration(elapsed * (total - done) / done)} left")
    return ", ".join(parts) + (f"; {note}" if note else "")


class Progress:
    """Progress of ``total`` units of work on stderr (see the module docstring); a context manager.

    Parameters
    ----------
    total : int or None
        Units of work in all (None: unknown).
    unit : str
        What a unit is (``"trial"``, ``"method"``, ``"file"``); ``desc`` defaults to its plural.
    desc : str, optional
        The name of the work in the line (default ``unit + "s"``).
    quiet : bool
        Print nothing.
    interval : float, optional
        Seconds between two lines when ``stream`` is not a terminal (default
        :func:`progress_interval`).
    stream : file, optional
        Where to print (default ``sys.stderr``).
    """

    def __init__(self, total: int | None, *, unit: str, desc: str | None = None, quiet: bool = False,
                 interval: float | None = None, stream: IO[str] | None = None) -> None:
        self.total = total
        self.desc = desc if desc is not None else unit + "s"
        self.done = 0
        self.note = ""
        self._stream = stream if stream is not None else sys.stderr
        self._start = time.monotonic()
        self._bar: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._printed = False
        if quiet:
            return
        notebook = "ipykernel" in sys.modules and self._stream is sys.stderr
        if notebook or getattr(self._stream, "isatty", lambda: False)():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, unit=unit, desc=self.desc, delay=1.0, file=self._stream,
                             dynamic_ncols=True)
            return
        self._interval = progress_interval() if interval is None else float(interval)
        self._thread = threading.Thread(target=self._heartbeat, name="ldpgraph-progress", daemon=True)
        self._thread.start()

    def _line(self) -> None:
        try:
            print(progress_line(self.desc, self.done, self.total, time.monotonic() - self._start, self.note),
                  file=self._stream, flush=True)
        except (OSError, ValueError):  # a closed or broken stderr: progress is not worth failing for
            self._stop.set()
            return
        self._printed = True

    def _heartbeat(self) -> None:
        while not self._stop.wait(self._interval):
            self._line()

    def update(self, n: int = 1, note: str | None = None) -> None:
        """Count ``n`` more units done (and replace the note shown after the counts)."""
        self.done += n
        if note is not None:
            self.note = note
        if self._bar is not None:
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(n)

    def set_note(self, note: str) -> None:
        """The note shown after the counts (``"running arr-triangles"``)."""
        self.update(0, note)

    def close(self, failed: bool = False) -> None:
        """Stop; on a non-terminal that printed lines, print the last one (the work done, or
        where it stopped when ``failed``)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            if self._printed:
                self.note = "stopped" if failed else "done"
                self._line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        self.close(failed=exc_type is not None)
