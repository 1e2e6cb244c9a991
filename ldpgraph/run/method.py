r"""A registered method: a protocol with its preset options, as the experiments and the CLI run it.

A *method* (``unbiased-dlap``, ``two-round-triangles-dlap-private``, ``adaptive-clustering-best``)
is a :class:`~ldpgraph.protocols.registry.Preset`: a protocol of :mod:`ldpgraph.core` plus options.
:class:`Method` binds one to a simulation. Every number it gives is read from the protocol's
:class:`~ldpgraph.core.plan.Plan`, built from the preset's options, the options the user adds
(:meth:`Method.with_options`) and, for a simulation, the public bounds the protocol takes from
the true graph (:meth:`~ldpgraph.core.protocol.Protocol.default_public`):

- a trial is the protocol's fast simulator (:meth:`~ldpgraph.core.protocol.Protocol.simulate`)
  where it has one, else one :func:`~ldpgraph.run.memory.run_in_memory` run with a seeded
  sampler: the code a deployment runs;
- the closed forms are its :meth:`~ldpgraph.core.protocol.Protocol.moments`; the truth its
  :meth:`~ldpgraph.core.protocol.Protocol.truth`; the bits a node sends and fetches its
  :meth:`~ldpgraph.core.protocol.Protocol.communication`.

Examples
--------
>>> m = get_method("two-round-triangles-dlap")
>>> m.budget(1.0), m.deployed_as
({'rr': 0.5, 'local-count': 0.5}, ('two-round-triangles-dlap', {}))
>>> "rr-triangles" in method_names("triangles")
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..core.protocol import Protocol
from ..protocols import registry

__all__ = ["Method", "get_method", "method_names", "methods_for", "recommended_methods",
           "did_you_mean", "statistic_names", "FLOAT_BITS", "MODELS"]

#: Bits of one released real number (float64) or integer report on the wire.
FLOAT_BITS = 64

#: the models a method runs in (:attr:`Method.model`): local differential privacy with one round,
#: two rounds or more (the curator publishes something between rounds), or the shuffle model
MODELS = ("local, one round", "local, two rounds", "local, multi-round", "shuffle")


def get_method(name: str) -> Method:
    """The method registered under ``name`` (ValueError with a suggestion and the choices otherwise).

    >>> get_method("unbiased-dlap").budget(2.0)
    {'degree': 2.0}
    """
    return Method(registry.preset(name))


def method_names(statistic: str | None = None) -> list[str]:
    """The registered method names, or those estimating ``statistic`` (ValueError on an unknown one).

    >>> "local-lap-kstars" in method_names("kstars"), "local-lap-kstars" in method_names("edges")
    (True, False)
    """
    return registry.method_names(statistic)


def methods_for(statistic: str) -> list[Method]:
    """The methods that estimate ``statistic``."""
    return [get_method(n) for n in registry.method_names(statistic)]


did_you_mean = registry.did_you_mean
statistic_names = registry.statistic_names


def recommended_methods(statistic: str) -> dict[str, str]:
    """``{name: model}`` of the recommended method of each model for ``statistic`` (see
    :func:`ldpgraph.protocols.registry.recommended_methods`)."""
    return registry.recommended_methods(statistic)


class Method:
    """A preset bound to a simulation (see the module docstring).

    Attributes
    ----------
    name, statistics, model, recommended, unbiased, reference : from the preset
    protocol : Protocol
        Its protocol (one instance per method object: what it caches per graph stays its own).
    public : dict
        The options every plan takes (the preset's, then :meth:`with_options`').
    """

    def __init__(self, preset: registry.Preset, public: Mapping[str, Any] | None = None) -> None:
        self.preset = preset
        self.protocol: Protocol = registry.get(preset.protocol)
        self.name = preset.name
        self.public = {**preset.options, **(public or {})}
        self.statistics = preset.statistics
        self.model = preset.model
        self.recommended = preset.recommended
        self.unbiased = preset.unbiased
        self.reference = preset.reference
        self.needs = self.protocol.needs
        self.vectorized = bool(self.protocol.vectorized)
        #: the options a user may add (``--d-max``, ``--shares``, ...: the protocol's, less those its
        #: simulation draws itself or its preset makes unused: :meth:`Protocol.simulation_options`)
        self.option_names = self.protocol.simulation_options(preset.options)

    def __repr__(self) -> str:
        return f"<method {self.name}: {', '.join(self.statistics)}>"

    # ------------------------------------------------------------------ deployment

    @property
    def deployed_as(self) -> tuple[str, dict[str, Any]] | None:
        """How ``ldpgraph node`` / ``curate`` run it: ``(--protocol name, its options)``, or None."""
        if not self.protocol.deployable or self.preset.not_deployable:
            return None
        opts = {k: (",".join(f"{q}={float(f)!r}" for q, f in v.items()) if isinstance(v, Mapping) else v)
                for k, v in self.public.items()}
        return (self.protocol.name, opts)

    @property
    def not_deployable(self) -> str:
        """Why it cannot be deployed ("" where it can)."""
        if self.preset.not_deployable:
            return self.preset.not_deployable
        if not self.protocol.deployable:
            return self.protocol.not_deployable or "its releases are not integer report rows"
        return ""

    def with_options(self, **public: Any) -> Method:
        """This method with more options (those of the same name on ``ldpgraph node``/``curate``).

        ValueError on an option its simulation does not take, or a value its plan refuses.

        >>> get_method("arr-triangles").with_options(mu=0.5).public["mu"]
        0.5
        >>> get_method("rr-triangles").with_options(mu=0.5)
        Traceback (most recent call last):
            ...
        ValueError: rr-triangles's simulation does not take --mu (it takes no option)
        """
        if not public:
            return self
        other = [k for k in public if k not in self.option_names]
        if other:
            takes = ", ".join("--" + k.replace("_", "-") for k in self.option_names) or "no option"
            flags = ", ".join("--" + k.replace("_", "-") for k in other)
            raise ValueError(f"{self.name}'s simulation does not take {flags} (it takes {takes})")
        out = Method(self.preset, {**self.public, **public})
        out._check_plan()
        return out

    def _check_plan(self) -> None:
        """Build a plan with placeholder bounds: an option value the plan refuses raises here."""
        self.protocol.plan(1.0, **self._placeholders(self.public))

    # ------------------------------------------------------------------ the plan

    def _placeholders(self, public: Mapping[str, Any]) -> dict[str, Any]:
        given = {k: v for k, v in public.items() if v is not None}
        return {**self.protocol.placeholder_public(given), **given}

    def plan(self, epsilon: float, graph: Any = None, statistic: str | None = None) -> Any:
        """The plan a simulation on ``graph`` runs (public bounds it leaves open taken from the graph;
        without a graph, placeholders that do not change the split)."""
        eps = check_epsilon(epsilon)
        public = dict(self.public)
        if statistic is not None:
            for name, value in self.protocol.statistic_public(statistic).items():
                if public.get(name) is None:
                    public[name] = value
        if graph is None:
            return self.protocol.plan(eps, **self._placeholders(public))
        from .memory import resolve_public

        return self.protocol.plan(eps, **resolve_public(self.protocol, graph, public))

    def budget(self, epsilon: float, statistic: str | None = None) -> dict[str, float]:
        """``{release name: epsilon}`` of its plan (:meth:`~ldpgraph.core.plan.Plan.release_budget`); the
        values sum to ``epsilon``."""
        return self.plan(epsilon, statistic=statistic).release_budget()

    def edge_budget(self, epsilon: float, statistic: str | None = None) -> str:
        """The node budget in the per-edge convention where the method's literature counts it so
        (``ldpgraph methods`` prints it beside the node's total); "" where it does not."""
        return self.protocol.edge_budget(check_epsilon(epsilon), self.public)

    def guarantee(self, epsilon: float, n_users: int) -> Any:
        """The shuffle-model guarantee of its plan for ``n_users`` users (None outside the shuffle model)."""
        if "n_users" not in {o.name for o in self.protocol.options}:
            return None
        return self.protocol.plan(check_epsilon(epsilon), **{**self._placeholders(self.public),
                                                             "n_users": n_users}).shuffle

    def privacy(self, data: Any, epsilon: float) -> dict[str, Any] | None:
        """Its guarantee beyond the per-node ε on ``data`` (``costs.csv``'s ``privacy``), or None."""
        plan = self.plan(epsilon, self._graph(data))
        keys = ("central_epsilon", "central_delta", "edge_dp_epsilon", "edge_dp_delta", "local_epsilon",
                "accounting", "shuffled_users")
        if plan.shuffle is None and "accounting" not in plan.public:
            return None
        return {k: plan.public.get(k) for k in keys}

    # ------------------------------------------------------------------ simulation

    def supports(self, statistic: str) -> bool:
        return statistic in self.statistics

    def _check_statistic(self, statistic: str) -> None:
        if statistic not in self.statistics:
            raise ValueError(
                f"method {self.name!r} estimates {', '.join(self.statistics)}, not statistic {statistic!r}"
            )

    def _graph(self, data: Any) -> Any:
        """``data`` as the protocol needs it: a Graph, or degrees for a degree protocol."""
        return self.protocol.simulation_input(data, self.name)

    def prepare(self, data: Any) -> None:
        """Precompute what every trial on ``data`` reuses (before timed trials)."""
        self.protocol.prepare(self._graph(data))

    def estimate_trials(self, data: Any, statistic: str, param: int | None, epsilon: float,
                        n_trials: int = 1, *, rng: Any = None) -> NDArray[np.float64]:
        """``n_trials`` estimates of ``statistic`` (parameter ``param``: k of the k-stars, j of a
        moment) at total budget ``epsilon``: the protocol's fast simulator, else in-memory runs."""
        self._check_statistic(statistic)
        graph = self._graph(data)
        gen = check_rng(rng)
        n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
        plan = self.plan(epsilon, graph, statistic)
        if self.protocol.has_simulator:
            out = self.protocol.simulate(graph, plan, statistic, n_trials, gen, param=param)
            return np.asarray(out, dtype=np.float64).reshape(n_trials)
        from ..core.sampling import Seeded
        from .memory import run_in_memory

        seeds = gen.integers(0, 2**63 - 1, size=n_trials)
        out = np.empty(n_trials)
        for t, seed in enumerate(seeds.tolist()):
            run = run_in_memory(self.protocol, graph, epsilon, sampler=Seeded(seed), statistic=statistic,
                                **self.public)
            out[t] = float(run.estimate.value)
        return out

    @property
    def trial_details(self) -> Any:
        """For a vector statistic, ``details(data, epsilon, *, rng)``: one run's summary from the
        protocol's ``trial_details(graph, plan, rng)`` hook (the k-core protocols); None without one."""
        hook = getattr(self.protocol, "trial_details", None)
        if hook is None:
            return None

        def details(data: Any, epsilon: float, *, rng: Any = None) -> dict[str, Any]:
            graph = self._graph(data)
            return hook(graph, self.plan(epsilon, graph, self.statistics[0]), check_rng(rng))

        return details

    def truth(self, data: Any, statistic: str, param: int | None = None) -> float:
        """The exact value of ``statistic`` on ``data``."""
        self._check_statistic(statistic)
        if type(self.protocol).truth is Protocol.truth:
            from ..protocols.statistics import statistic_truth

            return statistic_truth(self._graph(data), statistic, param)
        return float(self.protocol.truth(self._graph(data), statistic, param))

    def _moments(self, data: Any, statistic: str, param: int | None, epsilon: float):
        self._check_statistic(statistic)
        graph = self._graph(data)
        return self.protocol.moments(graph, self.plan(epsilon, graph, statistic), statistic, param)

    def analytic_mean(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        """The estimate's exact mean, or None where there is no closed form."""
        return self._moments(data, statistic, param, epsilon)[0]

    def analytic_variance(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        """The estimate's exact variance, or None."""
        return self._moments(data, statistic, param, epsilon)[1]

    def analytic_rmse(self, data: Any, statistic: str, param: int | None, epsilon: float) -> float | None:
        """``sqrt(bias² + variance)`` in closed form, or None."""
        mean, var = self._moments(data, statistic, param, epsilon)
        if mean is None or var is None:
            return None
        bias = mean - self.truth(data, statistic, param)
        out = math.sqrt(bias * bias + var)
        return out if math.isfinite(out) else None

    def communication(self, data: Any, epsilon: float, statistic: str | None = None) -> tuple[float, float]:
        """Mean bits a node uploads and downloads, ``(upload, download)``."""
        graph = self._graph(data)
        up, down = self.protocol.communication(self.plan(epsilon, graph, statistic), graph)
        return 8.0 * float(up), 8.0 * float(down)
