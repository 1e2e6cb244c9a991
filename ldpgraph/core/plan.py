r"""The public plan of a protocol run: what every node releases, at which budget, against which bounds.

A :class:`Plan` is fixed before any node runs and is public. It is the privacy map of the
protocol made visible: for every round the releases (:class:`Release`: the quantities of the
report rows, the mechanism, ε and sensitivity), and the public bounds (n, D, d_max, projection,
...). A node's total budget is the sum of the ε of its releases over all rounds (sequential
composition; quantities of one release, such as ``rr_count`` and ``rr_edge`` of one
randomized-response bit vector, share its ε once), and :class:`Plan` checks that it equals
the ε the user asked for. Everything printed (CLI, records, JSON) is read from here.

Bounds that the curator derives during the run (a private bound D from round-1 releases) are
not in the plan: they travel in the broadcast, a post-processing of earlier rounds.

Examples
--------
>>> plan = Plan("toy", 1, 1.0, (RoundPlan(1, "count", (Release(("count",), "dlap", 1.0, 1.0),)),))
>>> plan.budget()
{'count': 1.0}
>>> plan.release("count").sensitivity_of("count")
1.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

__all__ = ["Release", "RoundPlan", "ShuffleGuarantee", "Plan", "split_budget", "named_releases"]


@dataclass(frozen=True)
class Release:
    """One mechanism run by each node in a round.

    Attributes
    ----------
    quantities : tuple of str
        The ``quantity`` names of the rows it produces (several for one mechanism, e.g. the
        ``rr_count`` and ``rr_edge`` rows of one randomized-response bit vector).
    mechanism : str
        ``"dlap"``, ``"randomized-response"``, ``"laplace"``, or ``"none"`` (a row that spends
        nothing, such as a run id).
    epsilon : float
        Its ε (0 for ``"none"``).
    sensitivity : float or mapping
        What the noise is calibrated to (the value written in the rows' ``sensitivity``); a
        mapping gives it per quantity (e.g. 0 for a run-id row that rides along a release).
    row_epsilon : float, mapping or None
        The ε the node's randomizer runs at, written in the rows' ``epsilon``, where it is not
        the ε the plan accounts: a shuffled release runs at the local ε₀ that the shuffler's
        amplification makes worth ``epsilon`` centrally (a mapping gives it per quantity). None:
        ``epsilon``. A curator compares the rows' ε with it, so that rows released under another
        δ, n or accounting (another ε₀) are refused.
    name : str
        Its name in the budget (:meth:`Plan.release_budget`: the name ``ldpgraph methods`` gives
        the same release); "" for the round's name where it is the round's only release.
    """

    quantities: tuple[str, ...]
    mechanism: str
    epsilon: float
    sensitivity: float | Mapping[str, float] = 1.0
    row_epsilon: float | Mapping[str, float] | None = None
    name: str = field(default="", compare=False)  # a label: plans equal as privacy maps whatever the names

    def sensitivity_of(self, quantity: str) -> float:
        """The sensitivity written in the rows of ``quantity``."""
        if isinstance(self.sensitivity, Mapping):
            return float(self.sensitivity[quantity])
        return float(self.sensitivity)

    def epsilon_of(self, quantity: str) -> float:
        """The ε written in the rows of ``quantity`` (:attr:`row_epsilon`, else :attr:`epsilon`)."""
        if self.row_epsilon is None:
            return float(self.epsilon)
        if isinstance(self.row_epsilon, Mapping):
            return float(self.row_epsilon[quantity])
        return float(self.row_epsilon)

    def __post_init__(self) -> None:
        if not self.quantities or not all(isinstance(q, str) and q for q in self.quantities):
            raise ValueError(f"a release names at least one quantity, got {self.quantities!r}")
        eps = float(self.epsilon)
        if self.mechanism == "none":
            if eps != 0.0:
                raise ValueError(f"a release of mechanism 'none' spends nothing, got epsilon {eps!r}")
        elif not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"epsilon of {self.quantities[0]!r} must be finite and > 0, got {eps!r}")


@dataclass(frozen=True)
class RoundPlan:
    """The releases of round ``number`` (1-based).

    ``repeats``: for a round whose releases repeat within it (the reference k-core algorithm's
    level moves), how they compose to its ε (printed by :meth:`Plan.describe`); empty otherwise.
    """

    number: int
    name: str
    releases: tuple[Release, ...]
    repeats: str = ""

    @property
    def epsilon(self) -> float:
        """The ε a node spends in this round (sum of its releases)."""
        return math.fsum(r.epsilon for r in self.releases)


@dataclass(frozen=True)
class ShuffleGuarantee:
    """The central guarantee of a plan whose releases a shuffler amplifies (the shuffle model).

    ``(epsilon, delta)``-DP centrally **if the rows of all ``users`` users pass the shuffler**;
    each node's own rows are ``local_epsilon``-LDP (ε₀, what a node's upload alone, or a shuffler
    that does not shuffle, reveals); ``accounting`` names the amplification bound. Every budget
    line of such a plan prints it (:meth:`Plan.describe`).

    >>> ShuffleGuarantee(1.0, 1e-8, 2.37, 500, "numerical").describe().split("; ")
    ['central (epsilon 1, delta 1e-08) if all 500 users are shuffled (numerical amplification)',
     "a node's shuffled rows are epsilon0 2.37-LDP"]
    """

    epsilon: float
    delta: float
    local_epsilon: float
    users: int
    accounting: str

    def describe(self) -> str:
        return (f"central (epsilon {self.epsilon:.6g}, delta {self.delta:.3g}) if all {self.users:,} users "
                f"are shuffled ({self.accounting} amplification); a node's shuffled rows are epsilon0 "
                f"{self.local_epsilon:.6g}-LDP")


@dataclass(frozen=True)
class Plan:
    """Protocol name and version, the node's total ε, the rounds, the public bounds.

    ``shuffle``: the shuffle model's central guarantee where a shuffler amplifies the releases
    (:class:`ShuffleGuarantee`), else None.

    Raises ``ValueError`` when the releases do not add up to ``epsilon`` (relative 1e-12): the
    printed budget is then always what a node spends.
    """

    protocol: str
    version: int
    epsilon: float
    rounds: tuple[RoundPlan, ...]
    public: Mapping[str, Any] = field(default_factory=dict)
    shuffle: ShuffleGuarantee | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "public", MappingProxyType(dict(self.public)))
        spent = math.fsum(r.epsilon for r in self.rounds)
        if not math.isclose(spent, self.epsilon, rel_tol=1e-12, abs_tol=0.0):
            raise ValueError(
                f"plan of {self.protocol!r}: the releases spend {spent!r}, not the total {self.epsilon!r}"
            )
        numbers = [r.number for r in self.rounds]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"rounds must be numbered 1..R, got {numbers}")
        seen: set[str] = set()
        for r in self.rounds:
            for rel in r.releases:
                for q in rel.quantities:
                    if q in seen:
                        raise ValueError(f"quantity {q!r} is released twice in the plan of {self.protocol!r}")
                    seen.add(q)

    def round(self, number: int) -> RoundPlan:
        """Round ``number`` (1-based), or ValueError naming the rounds."""
        if not 1 <= int(number) <= len(self.rounds):
            raise ValueError(f"{self.protocol} has rounds 1..{len(self.rounds)}, not round {number}")
        return self.rounds[int(number) - 1]

    def release(self, quantity: str) -> Release:
        """The release that produces rows of ``quantity``."""
        for r in self.rounds:
            for rel in r.releases:
                if quantity in rel.quantities:
                    return rel
        raise KeyError(f"{self.protocol} releases no quantity {quantity!r}")

    def check_broadcast_epsilon(self, quantity: str, epsilon: float) -> None:
        """ValueError unless ``epsilon`` (a broadcast's record of its round's releases) is this plan's ε
        of ``quantity``: a broadcast made under another --epsilon or split is refused.

        >>> plan = Plan("toy", 1, 1.0, (RoundPlan(1, "count", (Release(("count",), "dlap", 1.0),)),))
        >>> plan.check_broadcast_epsilon("count", 1.0)
        >>> plan.check_broadcast_epsilon("count", 0.5)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        ValueError: the broadcast was made for round-1 epsilon 0.5, the plan (epsilon 1 = count 1) has ...
        """
        want = self.release(quantity).epsilon
        if epsilon != want:
            raise ValueError(f"the broadcast was made for round-1 epsilon {epsilon!r}, the plan "
                             f"({self.describe()}) has {want!r}: use the --epsilon and options of round 1")

    def budget(self) -> dict[str, float]:
        """``{round name: ε}``; the values sum to :attr:`epsilon`."""
        return {r.name: r.epsilon for r in self.rounds}

    def release_budget(self) -> dict[str, float]:
        """``{release name: ε}`` for every release that spends (the names and split of ``ldpgraph
        methods``); the values sum to :attr:`epsilon`.

        >>> two = RoundPlan(1, "local", (Release(("degree",), "dlap", 0.4), Release(("count",), "dlap", 0.6,
        ...                                                                       name="local-count")))
        >>> Plan("toy", 1, 1.0, (two,)).release_budget()
        {'degree': 0.4, 'local-count': 0.6}
        """
        out: dict[str, float] = {}
        for r in self.rounds:
            for name, rel in named_releases(r):
                out[name] = out.get(name, 0.0) + rel.epsilon
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: protocol, version, total ε and every round's releases, public bounds."""
        return {
            "protocol": self.protocol,
            "protocol_version": self.version,
            "epsilon": self.epsilon,
            "rounds": [
                {
                    "round": r.number,
                    "name": r.name,
                    "epsilon": r.epsilon,
                    **({"repeats": r.repeats} if r.repeats else {}),
                    "releases": [
                        {"quantities": list(x.quantities), "mechanism": x.mechanism, "epsilon": x.epsilon,
                         "sensitivity": {q: _json_number(x.sensitivity_of(q)) for q in x.quantities},
                         **({} if x.row_epsilon is None else
                            {"row_epsilon": {q: x.epsilon_of(q) for q in x.quantities}})}
                        for x in r.releases
                    ],
                }
                for r in self.rounds
            ],
            "public": dict(self.public),
            **({} if self.shuffle is None else {"shuffle": asdict(self.shuffle)}),
        }

    def describe(self, guarantee: bool = True) -> str:
        """One line: the total and every release's share (:meth:`release_budget`), e.g. ``epsilon 1 =
        rr 0.5 + local-count 0.5``; a round that repeats says how its releases compose; and (unless
        ``guarantee`` is False) the shuffle model's guarantee, if any (:class:`ShuffleGuarantee`)."""
        parts = [" + ".join(f"{n} {rel.epsilon:.6g}" for n, rel in named_releases(r))
                 + (f" ({r.repeats})" if r.repeats else "") for r in self.rounds]
        shuffled = "" if self.shuffle is None or not guarantee else f"; {self.shuffle.describe()}"
        return f"epsilon {self.epsilon:.6g} = {' + '.join(parts)}{shuffled}"


def named_releases(r: RoundPlan) -> list[tuple[str, Release]]:
    """``(name, release)`` of each release of round ``r`` that spends (a nameless one: the round's
    name where it is the only one, else its quantities): the names of :meth:`Plan.release_budget`."""
    spending = [rel for rel in r.releases if rel.mechanism != "none"]
    return [(rel.name or (r.name if len(spending) == 1 else "+".join(rel.quantities)), rel)
            for rel in spending]


def _json_number(x: float) -> float | None:
    """None for a sensitivity the broadcast sets (NaN in the plan): strict JSON has no NaN."""
    return None if math.isnan(x) else x


def _short_decimal(x: float) -> float:
    """``x`` as the decimal of at most 12 significant digits within 4 ulps of it, if there is one."""
    short = float(f"{x:.12g}")
    return short if abs(short - x) <= 4 * math.ulp(x) else x


def split_budget(epsilon: float, shares: Mapping[str, float]) -> dict[str, float]:
    """``epsilon`` split by ``shares`` (positive, summing to 1); the parts sum to ``epsilon`` exactly.

    Each part is ``epsilon * share``, read as the decimal of at most 12 significant digits within
    a few units in the last place of it where there is one: 2 x 0.45 is 0.9, the value the rows
    carry and the plan prints, not 0.8999999999999999. The parts then add up to ``epsilon`` as
    the decimals they print as (0.03 + 0.135 + 0.135 = 0.3); where they do not, the last share
    takes the remainder (``fsum`` of the parts is then ``epsilon``).

    >>> split_budget(1.0, {"rr": 0.5, "local_count": 0.5})
    {'rr': 0.5, 'local_count': 0.5}
    >>> split_budget(2.0, {"degree": 0.1, "rr": 0.45, "local_count": 0.45})
    {'degree': 0.2, 'rr': 0.9, 'local_count': 0.9}
    >>> split_budget(1.0, {"rr": 2 / 3, "local_count": 1 / 3})  # no short decimal: epsilon * share
    {'rr': 0.6666666666666666, 'local_count': 0.3333333333333333}
    >>> split_budget(0.3, {"degree": 0.1, "rr": 0.45, "local_count": 0.45})
    {'degree': 0.03, 'rr': 0.135, 'local_count': 0.135}
    >>> split_budget(1.0, {"a": 0.7, "b": 0.4})
    Traceback (most recent call last):
        ...
    ValueError: budget shares must be > 0 and sum to 1, got {'a': 0.7, 'b': 0.4}
    """
    vals = {k: float(v) for k, v in shares.items()}
    if not vals or any(not (v > 0) for v in vals.values()) or not math.isclose(math.fsum(vals.values()), 1.0,
                                                                               rel_tol=1e-9):
        raise ValueError(f"budget shares must be > 0 and sum to 1, got {dict(shares)}")
    names = list(vals)
    out = {k: _short_decimal(epsilon * vals[k]) for k in names}
    if sum(Decimal(repr(v)) for v in out.values()) != Decimal(repr(float(epsilon))):
        out[names[-1]] = epsilon - math.fsum(out[k] for k in names[:-1])
    return out
