"""Edge-LDP degree protocol: the node-side randomizer, report ingestion, the curator's estimates."""

from . import curator, planning
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
    kstars_many,
    max_degree,
)
from .ingest import reports_from_records
from .randomizer import DegreeRandomizer, NodeReports, ReleasedValues, as_degrees, projected_kstar_counts
from .report_histogram import ReportHistogram, as_report_histogram, merge_histograms

__all__ = [
    "DegreeRandomizer",
    "Estimate",
    "NodeReports",
    "ReleasedValues",
    "ReportHistogram",
    "as_degrees",
    "as_report_histogram",
    "curator",
    "planning",
    "degree_entropy",
    "degree_histogram",
    "degree_mean",
    "degree_moment",
    "degree_variance",
    "edge_count",
    "kstars",
    "kstars_from_counts",
    "kstars_many",
    "max_degree",
    "merge_histograms",
    "projected_kstar_counts",
    "reports_from_records",
]
