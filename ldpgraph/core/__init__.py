"""The protocol abstraction (no numerics): plans, samplers, rounds, accumulators, presets.

See :mod:`ldpgraph.core.protocol` for the design; the registry of protocols and method names is
:mod:`ldpgraph.protocols.registry`, the executors are in :mod:`ldpgraph.run`.
"""

from .plan import Plan, Release, RoundPlan, ShuffleGuarantee, split_budget
from .protocol import Accumulator, Option, Preset, Protocol, Round, Senders
from .sampling import ExactSeeded, NodeStream, Sampler, Secure, Seeded, as_sampler

__all__ = [
    "Accumulator",
    "ExactSeeded",
    "NodeStream",
    "Option",
    "Plan",
    "Preset",
    "Protocol",
    "Release",
    "Round",
    "RoundPlan",
    "Sampler",
    "Secure",
    "Seeded",
    "Senders",
    "ShuffleGuarantee",
    "as_sampler",
    "split_budget",
]
