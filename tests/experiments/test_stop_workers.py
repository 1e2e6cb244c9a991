"""``stop_workers`` returns once loky has finished with the pool.

The command line calls it once its files are written. It used to return while loky's executor
manager thread was still releasing the pool's queues and semaphores; now it joins that thread
(~0.01 s), so nothing of the pool is left running when the program goes on to exit.
"""

from __future__ import annotations

import threading

from ldpgraph.experiments import runner


def _manager_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if type(t).__name__ == "_ExecutorManagerThread" and t.is_alive()]


def test_stop_workers_waits_for_loky_cleanup() -> None:
    runner.stop_workers()  # a pool of an earlier test, if any
    pool = runner._start_pool(1, plots=False)
    assert pool.submit(sum, [1, 2]).result() == 3
    assert _manager_threads(), "the pool's manager thread was not found: the test cannot check it"
    runner.stop_workers()
    assert _manager_threads() == []
    assert runner._live_pool() is None
    runner.stop_workers()  # harmless a second time
