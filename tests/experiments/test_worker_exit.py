"""Killed or interrupted runner -> its loky workers exit promptly (issue 13: they ran for minutes).

loky workers do not watch their parent; the initializer the runner gives joblib's loky backend
does (``ldpgraph.experiments.runner._exit_with_parent``). Linux only: the workers are found in
/proc. ``n_jobs=3`` is two loky worker processes beside the calling one (a grid this large goes parallel
after its first block).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the workers in /proc")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as in a terminal, whatever was inherited
import numpy as np
from ldpgraph.experiments import run_experiment
from ldpgraph.graph import Degrees
run_experiment({"toy": Degrees(np.arange(2000) % 50)}, epsilons=[0.5, 1.0], ks=[2, 3], methods=["unbiased-dlap"],
               n_trials=10**7, block_size=100, seed=0, n_jobs=3, quiet=True)
"""


def _loky_children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and b"popen_loky_posix" in cmd:
            out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has exited


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_workers_exit_when_the_runner_is_killed(sig):
    """SIGKILL: the workers' parent watch ends them; SIGINT (Ctrl-C): joblib stops them."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            workers = _loky_children(proc.pid)
        assert len(workers) == 2, "the runner did not start two loky workers"
        time.sleep(0.5)  # let them start their tasks
        assert all(_alive(w) for w in workers)
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5  # they poll every 0.25 s; loky's own timeout is 300 s
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [w for w in workers if _alive(w)]
        for w in left:  # do not leave them running if the test fails
            os.kill(w, signal.SIGKILL)
        assert left == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
