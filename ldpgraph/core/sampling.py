r"""Where a node's randomness comes from: one interface, a seeded and a secure implementation.

A round's release is written once against :class:`Sampler`; only the sampler differs between
an experiment, ``ldpgraph node --simulate`` and a deployment:

- :class:`Seeded` (simulation, tests): node ``v`` in round ``r`` draws from its own stream
  ``SeedSequence(seed, spawn_key=(r, v))``, so a node's rows do not depend on which other
  nodes run, in which order, in which batch or process.
- :class:`Secure` (deployment, the default): exact integer-arithmetic samplers on the OS CSPRNG
  (discrete Laplace by :func:`~ldpgraph.mechanisms.secure.sample_dlap_exact`, randomized
  response by exact Bernoulli(exp(-ε)) trials); uniform numbers from 53 random bits;
  subsets from :class:`secrets.SystemRandom`. It cannot be seeded; :class:`ExactSeeded` runs
  the same exact samplers on seeded streams, for tests and audits of that code path.

Both hand out a :class:`NodeStream` per (round, node), with the draws a release needs:
``dlap``, ``keep`` (randomized response), ``uniform`` and ``subset``.

Examples
--------
>>> s = Seeded(7)
>>> bool(s.stream(1, 5).uniform(3)[0] == Seeded(7).stream(1, 5).uniform(3)[0])
True
>>> Secure().stream(1, 5).dlap(1.0, 1.0, 4).shape
(4,)
"""

from __future__ import annotations

import functools
import math
import secrets
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_nonnegative_int

__all__ = ["Sampler", "NodeStream", "Seeded", "Secure", "ExactSeeded", "as_sampler"]


class NodeStream(ABC):
    """The draws of one node in one round."""

    @abstractmethod
    def dlap(self, epsilon: float, sensitivity: float, size: int) -> NDArray[np.int64]:
        """``size`` draws of DLap(exp(-ε/Δ))."""

    @abstractmethod
    def keep(self, epsilon: float, size: int) -> NDArray[np.bool_]:
        """``size`` Bernoulli(e^ε / (1 + e^ε)) draws: whether each randomized-response bit is kept."""

    @abstractmethod
    def uniform(self, size: int) -> NDArray[np.float64]:
        """``size`` uniform numbers in [0, 1)."""

    @abstractmethod
    def subset(self, items: NDArray[np.int64], k: int) -> NDArray[np.int64]:
        """A uniformly random ``k``-subset of ``items`` (distinct), sorted."""


class Sampler(ABC):
    """A source of node streams (see the module docstring)."""

    #: whether the draws are the deployment's exact samplers on the OS CSPRNG
    secure: bool = False

    @abstractmethod
    def stream(self, round: int, node: int) -> NodeStream:
        """The stream of ``node`` in ``round``."""

    def describe(self) -> str:
        """One phrase for output lines."""
        raise NotImplementedError


class _SeededStream(NodeStream):
    def __init__(self, gen: np.random.Generator) -> None:
        self.gen = gen

    def dlap(self, epsilon: float, sensitivity: float, size: int) -> NDArray[np.int64]:
        mech = _mechanism(float(epsilon), float(sensitivity))
        if mech.fast_noise_bound < _FAST_LIMIT:
            return mech.sample(int(size), rng=self.gen)
        # noise beyond the integers of float64 (a huge sensitivity, a tiny epsilon): the exact sampler
        # on the same generator, the same law
        return _ExactStream(self.gen).dlap(epsilon, sensitivity, size)

    def keep(self, epsilon: float, size: int) -> NDArray[np.bool_]:
        return self.gen.random(int(size)) < 1.0 / (1.0 + math.exp(-epsilon))

    def uniform(self, size: int) -> NDArray[np.float64]:
        return self.gen.random(int(size))

    def subset(self, items: NDArray[np.int64], k: int) -> NDArray[np.int64]:
        return np.sort(self.gen.choice(np.asarray(items, dtype=np.int64), size=int(k), replace=False))


#: the fast sampler's noise must stay below this (float64 holds every integer up to 2**53)
_FAST_LIMIT = 2**52


@functools.lru_cache(maxsize=64)
def _mechanism(epsilon: float, sensitivity: float) -> Any:
    """One DiscreteLaplace object per (ε, Δ): a release draws from the same few, node after node."""
    from ..mechanisms import DiscreteLaplace

    return DiscreteLaplace(epsilon=epsilon, sensitivity=sensitivity)


class Seeded(Sampler):
    """Simulation: node ``v`` of round ``r`` draws from ``SeedSequence(seed, spawn_key=(r, v))``."""

    secure = False

    def __init__(self, seed: int) -> None:
        self.seed = check_nonnegative_int(seed, "seed")

    def __repr__(self) -> str:
        return f"Seeded({self.seed})"

    def stream(self, round: int, node: int) -> NodeStream:
        seq = np.random.SeedSequence(self.seed, spawn_key=(int(round), int(node)))
        return _SeededStream(np.random.default_rng(seq))

    def describe(self) -> str:
        return f"simulation, seed {self.seed}"


class _ExactStream(NodeStream):
    """The exact integer-arithmetic samplers, on the OS CSPRNG (``gen`` None) or a seeded generator."""

    def __init__(self, gen: np.random.Generator | None = None) -> None:
        self.gen = gen

    def dlap(self, epsilon: float, sensitivity: float, size: int) -> NDArray[np.int64]:
        from ..mechanisms.secure import sample_dlap_exact

        scale = Fraction(sensitivity) / Fraction(epsilon)
        return np.asarray(sample_dlap_exact(scale.numerator, scale.denominator, int(size), rng=self.gen),
                          dtype=np.int64)

    def keep(self, epsilon: float, size: int) -> NDArray[np.bool_]:
        r"""Exact: with q = e^-ε, the number X of Bernoulli(q) successes before the first failure is
        even with probability (1 - q) / (1 - q^2) = 1 / (1 + q) = e^ε / (1 + e^ε); every trial is the
        exact Bernoulli(exp(-γ)) sampler on the rational value of ε (no float decides an outcome)."""
        from ..mechanisms import sample_bernoulli_exp

        gamma = Fraction(epsilon)
        even = np.ones(int(size), dtype=np.bool_)
        alive = np.arange(int(size))
        while alive.size:  # one more Bernoulli(q) trial for every lane still running
            alive = alive[sample_bernoulli_exp(gamma, alive.size, rng=self.gen)]
            even[alive] = ~even[alive]
        return even

    def uniform(self, size: int) -> NDArray[np.float64]:
        if self.gen is not None:
            return self.gen.integers(0, 2**53, int(size), dtype=np.int64).astype(np.float64) / 2.0**53
        return np.array([secrets.randbits(53) for _ in range(int(size))], dtype=np.float64) / 2.0**53

    def subset(self, items: NDArray[np.int64], k: int) -> NDArray[np.int64]:
        pool = np.asarray(items, dtype=np.int64)
        if self.gen is not None:
            return np.sort(self.gen.choice(pool, size=int(k), replace=False))
        return np.sort(np.array(secrets.SystemRandom().sample(pool.tolist(), int(k)), dtype=np.int64))


class Secure(Sampler):
    """Deployment: the exact samplers on the OS CSPRNG (unseedable)."""

    secure = True
    _stream = _ExactStream()

    def __repr__(self) -> str:
        return "Secure()"

    def stream(self, round: int, node: int) -> NodeStream:
        return self._stream

    def describe(self) -> str:
        return "secure exact sampler, OS CSPRNG"


class ExactSeeded(Sampler):
    """The deployment's exact samplers driven by the seeded streams of :class:`Seeded` (not secure).

    For tests and audits: the secure code path (exact discrete Laplace, exact randomized
    response) with reproducible draws, so that it can be compared across executors.
    """

    secure = False

    def __init__(self, seed: int) -> None:
        self.seed = check_nonnegative_int(seed, "seed")

    def __repr__(self) -> str:
        return f"ExactSeeded({self.seed})"

    def stream(self, round: int, node: int) -> NodeStream:
        seq = np.random.SeedSequence(self.seed, spawn_key=(int(round), int(node)))
        return _ExactStream(np.random.default_rng(seq))

    def describe(self) -> str:
        return f"exact samplers on a seeded stream (a test, not secure), seed {self.seed}"


def as_sampler(sampler: Any) -> Sampler:
    """A :class:`Sampler` from a Sampler, a seed (int: :class:`Seeded`) or None (:class:`Secure`).

    >>> as_sampler(3), as_sampler(None)
    (Seeded(3), Secure())
    """
    if sampler is None:
        return Secure()
    if isinstance(sampler, Sampler):
        return sampler
    if isinstance(sampler, (int, np.integer)) and not isinstance(sampler, bool):
        return Seeded(int(sampler))
    raise TypeError(f"sampler must be a Sampler, a seed (int) or None (secure), got {type(sampler).__name__}")
