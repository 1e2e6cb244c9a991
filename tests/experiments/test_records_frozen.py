"""Records stay byte-identical to the pre-optimisation simulation (issue 15).

The reference here is a *frozen copy of the old algorithm* (the code of commit 2a89037, before
the scratch buffers and cache-sized row chunks): the DLap and Laplace samplers, the methods'
vectorized ``_simulate`` and ``estimate_trials``' split into sub-blocks of at most 4,000,000
noisy values, copied verbatim and using only numpy. It draws from the same per-block streams
(:func:`~ldpgraph.experiments.seeding.block_rng`), so the test stays valid when the seeding or
the output format changes elsewhere; it fails if the fast path consumes a stream differently,
evaluates an element differently or sums a trial in another order. The curator estimators
(``binomial``) are shared with the code under test: their numerics are not what is pinned.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.estimators.polynomials import binomial
from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.seeding import block_rng, cell_key
from ldpgraph.graph import Degrees
from ldpgraph.protocols.randomizer import projected_kstar_counts
from ldpgraph.run.method import get_method, method_names

# ------------------------------------------------------------------ frozen copy (old algorithm)

_OLD_BLOCK_VALUES = 4_000_000


def _old_sample_dlap(gen, shape, t, p):
    e = gen.standard_exponential(shape)
    e -= math.log1p(p) - math.log(2.0)
    e *= 1.0 / t
    out = e.astype(np.int64)
    n = out.size
    signs = np.unpackbits(np.frombuffer(gen.bytes((n + 7) // 8), dtype=np.uint8), count=n)
    signs = signs.view(np.int8).reshape(out.shape)
    signs *= np.int8(2)
    signs -= np.int8(1)
    np.multiply(out, signs, out=out)
    return out


def _old_laplace(gen, shape, scale):
    e = gen.standard_exponential(shape)
    e *= scale
    n = math.prod(shape)
    bits = np.unpackbits(np.frombuffer(gen.bytes((n + 7) // 8), dtype=np.uint8), count=n)
    signs = bits.astype(np.float64)
    signs -= 0.5
    np.copysign(e, signs.reshape(shape), out=e)
    return e


def _old_binomial_poly(y, k):
    y = np.asarray(y, dtype=np.float64)
    out = np.ones_like(y)
    for j in range(k):
        out *= (y - j) / (j + 1)
    return out


def _old_simulate(name, d, k, eps, runs, gen):
    if name in ("unbiased-dlap", "naive-dlap"):
        y = d[None, :] + _old_sample_dlap(gen, (runs, d.size), eps, math.exp(-eps))
    elif name in ("unbiased-laplace", "naive-laplace"):
        y = d[None, :] + _old_laplace(gen, (runs, d.size), 1.0 / eps)
    elif name == "local-lap-kstars":
        d_max = int(d.max())
        counts = projected_kstar_counts(d, k, d_max).astype(np.float64)
        return (counts[None, :] + _old_laplace(gen, (runs, d.size), max(math.comb(d_max, k - 1), 1) / eps)).sum(
            axis=-1, dtype=np.float64)
    elif name == "local-dlap-kstars":
        d_max = int(d.max())
        t = eps / max(math.comb(d_max, k - 1), 1)
        counts = np.broadcast_to(projected_kstar_counts(d, k, d_max), (runs, d.size))
        return (counts + _old_sample_dlap(gen, (runs, d.size), t, math.exp(-t))).sum(axis=-1)
    else:
        raise AssertionError(name)
    if name == "unbiased-dlap":
        return binomial(y, k, eps).sum(axis=-1)
    if name == "unbiased-laplace":
        return binomial(y, k, eps, noise="laplace").sum(axis=-1)
    return _old_binomial_poly(y, k).sum(axis=-1)


def _old_estimate_trials(name, d, k, eps, n_trials, gen):
    block = max(1, _OLD_BLOCK_VALUES // max(1, d.size))
    out = np.empty(n_trials, dtype=np.float64)
    for start in range(0, n_trials, block):
        stop = min(n_trials, start + block)
        out[start:stop] = _old_simulate(name, d, k, eps, stop - start, gen)
    return out


# ------------------------------------------------------------------------------------ tests

# degrees with zeros, ones and a heavy tail (k-star counts of every size, negative noisy degrees)
DEG = np.concatenate([[0, 0, 1, 1, 2], np.random.default_rng(7).zipf(1.8, size=995).clip(max=3000)]).astype(np.int64)
# the private-bound methods have no frozen copy: local-lap-kstars-private is unchanged code, and
# local-dlap-kstars-private is newer than the optimisation (tested in law against its protocol)
FROZEN_METHODS = [m for m in method_names("kstars") if not m.endswith("-private")]


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


@pytest.mark.parametrize("name", FROZEN_METHODS)
@pytest.mark.parametrize(("k", "eps"), [(1, 0.3), (2, 0.1), (3, 1.0), (4, 5.0)])
def test_estimate_trials_bitwise_equal_to_old_algorithm(name, k, eps):
    new = get_method(name).estimate_trials(DEG, "kstars", k, eps, 37, rng=block_rng(5, 99, 3))
    old = _old_estimate_trials(name, DEG, k, eps, 37, block_rng(5, 99, 3))
    assert _bits(new) == _bits(old)


def test_sub_blocks_of_estimate_trials_unchanged():
    # 4,000,000 // 50,000 = 80 trials per sub-block: 170 trials are 80 + 80 + 10, one stream
    d = np.random.default_rng(1).geometric(0.02, size=50_000).astype(np.int64)
    new = get_method("unbiased-dlap").estimate_trials(d, "kstars", 2, 0.5, 170, rng=4)
    old = _old_estimate_trials("unbiased-dlap", d, 2, 0.5, 170, np.random.default_rng(4))
    assert _bits(new) == _bits(old)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_runner_records_bitwise_equal_to_old_algorithm(n_jobs):
    grid = dict(epsilons=[0.2, 2.0], ks=[2, 3], methods=FROZEN_METHODS, n_trials=23, block_size=10, seed=17)
    res = run_experiment({"zipf": Degrees(DEG)}, n_jobs=n_jobs, quiet=True, **grid)
    assert len(res.records) == 2 * 2 * len(FROZEN_METHODS)
    for cell in res.records:
        key = cell_key("kstars", "zipf", cell.k, cell.epsilon, cell.method)
        old = np.concatenate([
            _old_estimate_trials(cell.method, DEG, cell.k, cell.epsilon, min(10, 23 - start),
                                 block_rng(17, key, b))
            for b, start in enumerate(range(0, 23, 10))
        ])
        assert _bits(cell.estimates) == _bits(old), cell.key
        assert cell.spawn_keys == tuple(f"{key}/{t // 10}" for t in range(23))
