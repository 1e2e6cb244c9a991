"""One way to reach a Dask scheduler: one timeout, one message (``experiment`` and ``curate``).

:func:`connect` opens a ``dask.distributed.Client`` with :data:`SCHEDULER_TIMEOUT` seconds to
answer (or the ``timeout`` given; the command line's ``--scheduler-timeout``) and turns a failure
into one ``ConnectionError`` that names the address, the time waited and the option that
changes it.

Examples
--------
>>> SCHEDULER_TIMEOUT
10.0
>>> unreachable_message("tcp://10.0.0.1:8786", 10.0, "timed out")[:80]
'cannot connect to the Dask scheduler at tcp://10.0.0.1:8786 within 10 s (timed o'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

__all__ = ["SCHEDULER_TIMEOUT", "connect", "unreachable_message", "check_timeout"]

#: seconds a Dask scheduler has to answer (``--scheduler-timeout`` of experiment and curate)
SCHEDULER_TIMEOUT = 10.0


def check_timeout(timeout: float | None) -> float:
    """``timeout`` (seconds, finite and > 0), or :data:`SCHEDULER_TIMEOUT` for None."""
    if timeout is None:
        return SCHEDULER_TIMEOUT
    t = float(timeout)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"scheduler timeout must be a number of seconds > 0, got {timeout!r}")
    return t


def unreachable_message(address: str, timeout: float, reason: str) -> str:
    """The one message of an unreachable scheduler."""
    return (f"cannot connect to the Dask scheduler at {address} within {timeout:g} s ({reason}): check that "
            "it runs and that the address is the one it printed at start-up, or wait longer with "
            "--scheduler-timeout SECONDS")


def connect(address: str, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address`` (not set as the default client).

    Raises
    ------
    ImportError
        Without dask.distributed (with the install hint).
    ConnectionError
        When the scheduler does not answer within ``timeout`` seconds (default
        :data:`SCHEDULER_TIMEOUT`): :func:`unreachable_message`.
    """
    t = check_timeout(timeout)
    try:
        from distributed import Client
    except ImportError:

        raise ImportError(f"the Dask backend needs dask.distributed; {dask_install_hint()}") from None
    try:
        return Client(address, set_as_default=False, timeout=t)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(unreachable_message(address, t, str(exc) or type(exc).__name__)) from None


def dask_install_hint() -> str:
    """How to install the Dask extra: from PyPI, or from a source checkout when running from one."""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").is_file() and (root / "ldpgraph").is_dir():
        return (f"install it with: pip install -e '{root}[distributed]' (this source checkout), "
                "or pip install 'dask[distributed]'")
    return "install it with: pip install 'ldpgraph[distributed]' (or pip install 'dask[distributed]')"
