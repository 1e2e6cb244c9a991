"""The protocol abstraction (no numerics): plans, samplers, rounds, accumulators, the registry.

See :mod:`ldpgraph.core.protocol` for the design; the executors are in :mod:`ldpgraph.run`.
"""

from .plan import Plan, Release, RoundPlan, ShuffleGuarantee, split_budget
from .protocol import Accumulator, Option, Protocol, Round, Senders
from .sampling import ExactSeeded, NodeStream, Sampler, Secure, Seeded, as_sampler

__all__ = [
    "Accumulator",
    "ExactSeeded",
    "NodeStream",
    "Option",
    "Plan",
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
