"""Timing helpers shared by the benchmark scripts (best of several runs; wall clock)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
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
