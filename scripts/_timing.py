"""Timing helpers shared by the benchmark scripts (best of several runs).

``best_of`` / ``best_time`` give wall-clock times. ``measure`` and ``run_command`` also give the
user and system CPU time of the best run (``resource.getrusage``: this process plus its
waited-for children), so that time spent in the kernel (page faults of fresh allocations,
process start-up) is visible next to the wall time. The machine may be shared: ``load_note``
reports the load average, and a figure measured under load is a bound, not a value.
"""

from __future__ import annotations

import math
import os
import resource
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def best_of(func: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Shortest wall time of ``repeat`` calls of ``func``, and the last call's result."""
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


def best_time(func: Callable[[], Any], repeat: int = 3) -> float:
    """Shortest wall time of ``repeat`` calls of ``func``."""
    return best_of(func, repeat)[0]


@dataclass(frozen=True)
class Timing:
    """Wall, user and system seconds of the best (shortest wall) of ``runs`` runs; minor page faults."""

    wall: float
    user: float
    sys: float
    minflt: int
    runs: int
    result: Any = None

    @property
    def cpu(self) -> float:
        return self.user + self.sys

    def __str__(self) -> str:
        return (f"wall {self.wall:6.2f} s  user {self.user:6.2f} s  sys {self.sys:5.2f} s "
                f"(sys/wall {self.sys / self.wall:4.0%})  minflt {self.minflt:>9,}  [best of {self.runs}]")


def _usage() -> tuple[float, float, float, int]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (time.perf_counter(), me.ru_utime + kids.ru_utime, me.ru_stime + kids.ru_stime,
            me.ru_minflt + kids.ru_minflt)


def measure(func: Callable[[], Any], repeat: int = 3) -> Timing:
    """Best of ``repeat`` calls of ``func`` with its user/sys time (self + waited-for children).

    CPU time of child processes that are still alive (a reusable worker pool) is not included:
    time those through :func:`run_command`.
    """
    best: Timing | None = None
    for _ in range(repeat):
        w0, u0, s0, f0 = _usage()
        out = func()
        w1, u1, s1, f1 = _usage()
        t = Timing(w1 - w0, u1 - u0, s1 - s0, f1 - f0, repeat, out)
        if best is None or t.wall < best.wall:
            best = t
    assert best is not None
    return best


def installed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus ``env``, with Python's bytecode caches on.

    An installed package runs from compiled bytecode (pip compiles it at install). Without
    caches (``PYTHONDONTWRITEBYTECODE`` set, as on these machines) every fresh process compiles
    all of ldpgraph's modules again, ~0.2 s of CPU per process, which a user never pays: the
    commands timed here write and then read ``__pycache__`` (ignored by git).
    """
    full = {**os.environ, **(env or {})}
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    return full


def run_command(cmd: Sequence[str], repeat: int = 3, *, env: Mapping[str, str] | None = None,
                cwd: str | None = None, warm: bool = True) -> Timing:
    """Best of ``repeat`` runs of a command, with the CPU time of its whole process tree.

    The command runs with bytecode caches on (:func:`installed_env`), after one untimed run
    that writes them (``warm=False`` skips it).
    """
    full_env = installed_env(env)
    if warm:
        subprocess.run(cmd, env=full_env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return measure(lambda: subprocess.run(cmd, env=full_env, cwd=cwd, check=True,
                                          stdout=subprocess.DEVNULL), repeat)


def run_alternating(commands: Mapping[str, Sequence[str]], repeat: int = 3, *,
                    env: Mapping[str, str] | None = None, cwd: str | None = None) -> dict[str, Timing]:
    """Best (shortest wall) of ``repeat`` runs of each command, the commands taking turns.

    Taking turns (A, B, A, B, ...) exposes every command to the same changes of load on a shared
    machine, so their ratio is fairer than that of two series timed one after the other.
    """
    best: dict[str, Timing] = {}
    for cmd in commands.values():  # untimed: writes the bytecode caches
        subprocess.run(cmd, env=installed_env(env), cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    for _ in range(repeat):
        for name, cmd in commands.items():
            t = run_command(cmd, 1, env=env, cwd=cwd, warm=False)
            if name not in best or t.wall < best[name].wall:
                best[name] = t
    return {name: Timing(t.wall, t.user, t.sys, t.minflt, repeat) for name, t in best.items()}


def load_note() -> str:
    """The 1/5/15-minute load average and the number of cores, for the benchmark's header."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def verdict(ok: bool) -> str:
    """``"met"`` or ``"missed"``: every stated target is measured and judged."""
    return "met" if ok else "missed"
