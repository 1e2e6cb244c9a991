"""Edge-LDP protocols: the degree randomizer, report ingestion, the curator's estimates, randomized
response and every protocol of the layer (:class:`ldpgraph.core.Protocol`; the registry,
:mod:`ldpgraph.protocols.registry`, imports each module of this package)."""

from . import curator, randomized_response
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
from .randomized_response import randomized_response_graph
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
    "randomized_response_graph",
    "reports_from_records",
    "randomized_response",
]

# deployment: the report wire format, streaming validation, poisoning screening and bounds
from . import reports, reportset, screening  # noqa: E402
from .curator import influence_bound  # noqa: E402
from .randomizer import randomized_response_bits, randomized_response_keep  # noqa: E402
from .reports import canonical_node_id, report_columns  # noqa: E402
from .reportset import ReportAccumulator  # noqa: E402
from .screening import PublicBounds, admissible_range, noise_quantile, screen_reports  # noqa: E402

__all__ += [
    "PublicBounds",
    "ReportAccumulator",
    "admissible_range",
    "canonical_node_id",
    "influence_bound",
    "noise_quantile",
    "randomized_response_bits",
    "randomized_response_keep",
    "report_columns",
    "reports",
    "reportset",
    "screen_reports",
    "screening",
]
