"""Edge-LDP protocols: the degree randomizer, report ingestion, the curator's estimates; the protocol
layer (:mod:`.base`), randomized response and the triangle / transitivity protocols."""

from . import curator, randomized_response, transitivity, triangles
from .base import Protocol, Round, require_graph
from .curator import (
    Estimate,
    degree_entropy,
    degree_histogram,
    degree_mean,
    degree_moment,
    degree_variance,
    edge_count,
    kstars,
    kstars_from_counts,
    max_degree,
)
from .ingest import reports_from_records
from .randomized_response import randomized_response_graph
from .randomizer import DegreeRandomizer, NodeReports, ReleasedValues, as_degrees, projected_kstar_counts

__all__ = [
    "DegreeRandomizer",
    "Protocol",
    "Round",
    "Estimate",
    "NodeReports",
    "ReleasedValues",
    "as_degrees",
    "curator",
    "degree_entropy",
    "degree_histogram",
    "degree_mean",
    "degree_moment",
    "degree_variance",
    "edge_count",
    "kstars",
    "kstars_from_counts",
    "max_degree",
    "projected_kstar_counts",
    "randomized_response_graph",
    "reports_from_records",
    "require_graph",
    "randomized_response",
    "transitivity",
    "triangles",
]
