"""Experiments at scale: the parallel grid runner, tidy records, summaries and plots."""

from ..protocols.statistics import STATISTICS, GraphStatistic, get_statistic, statistic_names
from .plots import plot_file_stem, plot_relative_rmse
from .records import COLUMNS, CellRecords, Records, read_records_csv, write_records_csv
from .runner import (
    DEFAULT_METHODS,
    ExperimentResult,
    GraphInput,
    parse_statistics,
    resolve_graph_inputs,
    run_experiment,
)
from .seeding import block_rng, block_seed, cell_key, root_entropy
from .single import MethodEstimate, SingleRun, estimate_once
from .summary import (
    SUMMARY_COLUMNS,
    SummaryRow,
    format_summary,
    read_summary_csv,
    summarize,
    write_summary_csv,
)

__all__ = [
    "COLUMNS",
    "CellRecords",
    "DEFAULT_METHODS",
    "ExperimentResult",
    "GraphInput",
    "GraphStatistic",
    "MethodEstimate",
    "Records",
    "STATISTICS",
    "SingleRun",
    "SUMMARY_COLUMNS",
    "SummaryRow",
    "block_rng",
    "block_seed",
    "cell_key",
    "estimate_once",
    "format_summary",
    "get_statistic",
    "parse_statistics",
    "plot_file_stem",
    "plot_relative_rmse",
    "read_records_csv",
    "read_summary_csv",
    "resolve_graph_inputs",
    "root_entropy",
    "run_experiment",
    "statistic_names",
    "summarize",
    "write_records_csv",
    "write_summary_csv",
]
