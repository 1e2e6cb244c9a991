"""Edge-LDP degree protocol: the node-side randomizer, report ingestion, the curator's estimates."""

from . import curator
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
]
