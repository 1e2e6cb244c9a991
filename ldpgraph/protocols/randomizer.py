r"""Node side of the edge-LDP degree protocol: what every node releases, and at what budget.

Each node v knows its own neighbour list, hence its degree d_v. Under edge-LDP two graphs are
neighbours when they differ in one edge, which moves d_v by at most 1 and the projected k-star
count C(min(d_v, d_max), k) by at most C(d_max, k-1).

A node releases, with the discrete Laplace mechanism,

* its degree: d_v + DLap(exp(-eps_deg)) — sensitivity 1, no degree bound needed;
* optionally, for each requested k, its projected local k-star count
  C(min(d_v, d_max), k) + DLap(exp(-eps_k / C(d_max, k-1))).

**Privacy (sequential composition).** Each release is eps_q-edge-LDP for its own share eps_q,
so the tuple is (sum_q eps_q)-edge-LDP; the shares are user-given (default: equal) and always
sum to the epsilon asked for, which :attr:`NodeReports.total_epsilon` reports.

**Secure by default.** :meth:`DegreeRandomizer.randomize` without an ``rng`` draws every noise
value with the exact integer-arithmetic sampler on the operating system's CSPRNG
(:func:`~ldpgraph.mechanisms.secure.sample_dlap_exact`, Canonne-Kamath-Steinke), which cannot be
seeded: that is the node-side path of a deployment. Passing ``rng`` (a seed or Generator) selects
the fast, seedable floating-point sampler of :class:`~ldpgraph.mechanisms.DiscreteLaplace` for
simulation and experiments (same law up to rounding).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.degrees import check_degrees
from ..graph.load import graph_kind, load_graph
from ..mechanisms import DiscreteLaplace

__all__ = [
    "ReleasedValues",
    "NodeReports",
    "DegreeRandomizer",
    "as_degrees",
    "projected_kstar_counts",
    "randomized_response_keep",
    "randomized_response_bits",
]


def as_degrees(source: Any, name: str = "degrees") -> NDArray[np.int64]:
    """True degrees from a graph (an ldpgraph :class:`~ldpgraph.graph.Graph` or
    :class:`~ldpgraph.graph.Degrees`, anything with a ``degrees`` attribute, or a networkx,
    igraph, scipy.sparse or DataFrame graph, read by :func:`~ldpgraph.graph.load_graph`) or an
    integer array of degrees.

    Degrees must be non-negative integers.

    >>> as_degrees([3, 0, 2])
    array([3, 0, 2])
    >>> import networkx as nx
    >>> as_degrees(nx.path_graph(3)).tolist()
    [1, 2, 1]
    """
    if not hasattr(source, "degrees") and graph_kind(source) not in (None, "array", "path"):
        source = load_graph(source)
    return check_degrees(getattr(source, "degrees", source), name)


def projected_kstar_counts(degrees: ArrayLike, k: int, d_max: int) -> NDArray[np.int64]:
    """Each node's k-star count after projecting its degree to ``d_max``: C(min(d, d_max), k).

    Returned as int64; refuses parameters whose counts would overflow int64.

    >>> projected_kstar_counts([1, 3, 10], k=2, d_max=4)
    array([0, 3, 6])
    """
    d = as_degrees(degrees)
    k = check_nonnegative_int(k, "k")
    d_max = check_nonnegative_int(d_max, "d_max")
    if math.comb(d_max, k) >= 2**62:
        raise ValueError(f"C(d_max, k) = C({d_max}, {k}) overflows int64; lower d_max or k")
    proj = np.minimum(d, d_max)
    out = np.ones_like(proj)
    for j in range(k):  # exact: each partial product C(d, j+1) is an integer
        out = out * (proj - j) // (j + 1)
    return np.where(proj >= k, out, 0)


@dataclass(frozen=True)
class ReleasedValues:
    """One quantity released by every node.

    Attributes
    ----------
    name : str
        ``"degree"`` or ``"kstar_<k>"``.
    values : ndarray of int64
        The noisy integers, one per node.
    epsilon : float
        Budget spent on this quantity by every node.
    sensitivity : float
        Sensitivity of the released integer (1 for degrees, C(d_max, k-1) for k-star counts).
    """

    name: str
    values: NDArray[np.int64]
    epsilon: float
    sensitivity: float

    @property
    def mechanism(self) -> DiscreteLaplace:
        """The mechanism the values were released with."""
        return DiscreteLaplace(epsilon=self.epsilon, sensitivity=self.sensitivity)


@dataclass(frozen=True)
class NodeReports:
    """Everything the curator receives: released quantities and the budget each used."""

    released: Mapping[str, ReleasedValues]
    d_max: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total_epsilon(self) -> float:
        """Total budget spent per node (sequential composition over released quantities)."""
        return math.fsum(r.epsilon for r in self.released.values())

    @property
    def n_nodes(self) -> int:
        return len(next(iter(self.released.values())).values)

    @property
    def degrees(self) -> ReleasedValues:
        """The noisy degree release."""
        if "degree" not in self.released:
            raise KeyError("these reports hold no degree release")
        return self.released["degree"]

    def kstar_counts(self, k: int) -> ReleasedValues:
        """The noisy projected local k-star counts, if released."""
        key = f"kstar_{k}"
        if key not in self.released:
            raise KeyError(f"these reports hold no local {k}-star counts; released: {sorted(self.released)}")
        return self.released[key]


class DegreeRandomizer:
    r"""The local randomizer run by every node: noisy degree, optionally noisy local k-stars.

    Parameters
    ----------
    epsilon : float
        Total privacy budget per node. Must be in (0, inf).
    kstar_counts : sequence of int, default ()
        Values of k >= 1 for which each node also releases its projected k-star count.
    d_max : int, optional
        Public degree bound for the projection; required when ``kstar_counts`` is given.
        (Taking it from the private graph leaks; in experiments the true maximum is used, as in
        Imola et al. 2021 — say so when you do.)
    shares : mapping, optional
        Fraction of ``epsilon`` per released quantity, keys ``"degree"`` and ``"kstar_<k>"``;
        must be positive and sum to 1. Default: equal shares.
    release_degree : bool, default True
        Whether to release the degree at all.

    Notes
    -----
    The degree release is eps_deg-edge-LDP (sensitivity 1); the k-star release is eps_k-edge-LDP
    because C(min(d, d_max), k) moves by at most C(d_max, k-1) when one edge changes. By
    sequential composition the node's full release is (eps_deg + sum_k eps_k) = epsilon-edge-LDP.

    Examples
    --------
    >>> rand = DegreeRandomizer(epsilon=1.0, kstar_counts=[2], d_max=50)
    >>> rand.shares
    {'degree': 0.5, 'kstar_2': 0.5}
    >>> reports = rand.randomize([3, 7, 50], rng=0)
    >>> reports.total_epsilon, sorted(reports.released)
    (1.0, ['degree', 'kstar_2'])
    """

    def __init__(
        self,
        *,
        epsilon: float,
        kstar_counts: Sequence[int] = (),
        d_max: int | None = None,
        shares: Mapping[str, float] | None = None,
        release_degree: bool = True,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        ks = [check_nonnegative_int(k, "kstar_counts entry", minimum=1) for k in kstar_counts]
        if len(set(ks)) != len(ks):
            raise ValueError(f"kstar_counts must not repeat a k, got {list(kstar_counts)}")
        if ks and d_max is None:
            raise ValueError("d_max (a public degree bound) is required to release local k-star counts")
        self.d_max = None if d_max is None else check_nonnegative_int(d_max, "d_max", minimum=1)
        self.kstar_ks = ks
        names = (["degree"] if release_degree else []) + [f"kstar_{k}" for k in ks]
        if not names:
            raise ValueError("nothing to release: set release_degree=True or give kstar_counts")
        self.shares = _check_shares(shares, names)

    def __repr__(self) -> str:
        return (
            f"DegreeRandomizer(epsilon={self.epsilon!r}, kstar_counts={self.kstar_ks!r}, "
            f"d_max={self.d_max!r}, shares={self.shares!r})"
        )

    def sensitivity(self, name: str) -> float:
        """Sensitivity of a released quantity: 1 for the degree, C(d_max, k-1) for k-stars."""
        if name == "degree":
            return 1.0
        if name not in self.shares:
            raise ValueError(
                f"unknown released quantity {name!r}; this randomizer releases {list(self.shares)}"
            )
        k = int(name.split("_")[1])
        return float(max(math.comb(self.d_max, k - 1), 1))

    def randomize(self, degrees: ArrayLike, *, rng=None, secure: bool | None = None) -> NodeReports:
        """Release every node's noisy values (one node, or a vectorized simulation of many).

        Parameters
        ----------
        degrees : array_like of int or a graph
            The true degrees (a node on its own device passes its one degree, ``[d_v]``).
        rng : Generator, seed or None
            Only for simulation: a seed or Generator selects the fast seedable sampler.
        secure : bool, optional
            True: exact integer-arithmetic sampling on the OS CSPRNG (unseedable; ``rng`` must
            then be None). False: the fast floating-point sampler (simulation). Default: secure
            exactly when no ``rng`` is given, so a deployment that passes nothing is secure.

        Notes
        -----
        The secure sampler's guarantee is for the exact binary value of each float share
        ``epsilon * share`` (as :class:`~ldpgraph.mechanisms.DiscreteLaplace` documents).
        """
        d = as_degrees(degrees)
        if secure is None:
            secure = rng is None
        elif not isinstance(secure, (bool, np.bool_)):
            raise TypeError(f"secure must be a bool or None, got {type(secure).__name__} {secure!r}")
        if secure and rng is not None:
            raise ValueError(
                "secure=True draws from the OS CSPRNG and cannot be seeded; pass rng=None "
                "(or secure=False with rng for a seeded simulation)"
            )
        gen = None if secure else check_rng(rng)
        released = {}
        for name, share in self.shares.items():
            if name == "degree":
                truth = d
            else:
                truth = projected_kstar_counts(d, int(name.split("_")[1]), self.d_max)
            eps_q = self.epsilon * share
            sens = self.sensitivity(name)
            mech = DiscreteLaplace(epsilon=eps_q, sensitivity=sens)
            noisy = mech.randomize(truth, secure=True) if secure else mech.randomize(truth, rng=gen)
            released[name] = ReleasedValues(name=name, values=noisy, epsilon=eps_q, sensitivity=sens)
        sampler = "secure-exact" if secure else "simulation"
        return NodeReports(released=released, d_max=self.d_max, metadata={"sampler": sampler})


def _check_shares(shares: Mapping[str, float] | None, names: list[str]) -> dict[str, float]:
    if shares is None:
        return {name: 1.0 / len(names) for name in names}
    if not isinstance(shares, Mapping):
        raise TypeError(
            f"shares must be a mapping from released quantity to fraction, got {type(shares).__name__}"
        )
    unknown = sorted(set(shares) - set(names))
    missing = sorted(set(names) - set(shares))
    if unknown or missing:
        raise ValueError(
            f"shares must have exactly the keys {names}; unknown {unknown}, missing {missing}"
        )
    out = {}
    for name in names:
        v = float(shares[name])
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"shares[{name!r}] must be finite and > 0, got {shares[name]!r}")
        out[name] = v
    total = math.fsum(out.values())
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"shares must sum to 1 (the whole epsilon), got {total!r}")
    return out


def randomized_response_keep(
    epsilon: float, size: int, *, rng=None, secure: bool | None = None
) -> NDArray[np.bool_]:
    r"""``size`` independent Bernoulli(e^eps / (1 + e^eps)) draws: whether each RR bit is kept.

    Parameters
    ----------
    epsilon : float
        Must be in (0, inf). With ``secure`` the guarantee is for its exact binary value.
    size : int
    rng : Generator, seed or None
        Simulation only (fast float sampler).
    secure : bool, optional
        Exact integer-arithmetic sampling on the OS CSPRNG (unseedable). Default: secure
        exactly when no ``rng`` is given, as :meth:`DegreeRandomizer.randomize`.

    Notes
    -----
    With q = e^{-eps}, the keep probability is e^eps/(1+e^eps) = 1/(1+q). Let X be the number
    of successes of i.i.d. Bernoulli(q) trials before the first failure, P[X = k] = q^k (1-q);
    then

    .. math::

        P[X \text{ even}] = (1-q) \sum_{k \ge 0} q^{2k} = \frac{1-q}{1-q^2} = \frac{1}{1+q}.

    Every Bernoulli(q) trial is the exact Canonne-Kamath-Steinke Bernoulli(exp(-gamma))
    sampler (:func:`~ldpgraph.mechanisms.sample_bernoulli_exp`) on the exact rational value of
    ``epsilon``: no floating-point number decides an outcome (Mironov 2012), and the keep bit
    has exactly the law of Warner's randomized response at epsilon. Expected trials per bit:
    1/(1-q) (about 1/epsilon for small epsilon).

    Examples
    --------
    >>> keep = randomized_response_keep(1.0, 8)     # secure: OS randomness
    >>> keep.dtype, keep.shape
    (dtype('bool'), (8,))
    >>> randomized_response_keep(1.0, 4, rng=0).tolist()  # seeded simulation
    [True, True, True, True]
    """
    from ..core.sampling import Secure

    eps = check_epsilon(epsilon)
    n = check_nonnegative_int(size, "size")
    if secure is None:
        secure = rng is None
    if secure and rng is not None:
        raise ValueError("secure=True draws from the OS CSPRNG and cannot be seeded; pass rng=None")
    if not secure:
        gen = check_rng(rng)
        return gen.random(n) < 1.0 / (1.0 + math.exp(-eps))
    return Secure().stream(1, 0).keep(eps, n)


def randomized_response_bits(
    bits: ArrayLike, epsilon: float, *, rng=None, secure: bool | None = None
) -> NDArray[np.bool_]:
    """Warner's randomized response: each bit kept with probability e^eps/(1+e^eps), else flipped.

    eps-edge-LDP for one adjacency bit: the likelihood ratio of any output under the two values
    of the bit is e^eps. Secure by default (see :func:`randomized_response_keep`).

    >>> randomized_response_bits([True, False, True], 2.0, rng=1).dtype
    dtype('bool')
    """
    b = np.asarray(bits)
    if b.dtype.kind != "b":
        if b.dtype.kind not in "iu" or (b.size and not np.isin(b, (0, 1)).all()):
            raise TypeError(f"bits must be booleans or 0/1 integers, got dtype {b.dtype}")
        b = b.astype(np.bool_)
    keep = randomized_response_keep(epsilon, b.size, rng=rng, secure=secure).reshape(b.shape)
    return b == keep
