r"""The ``ldpgraph`` command line.

::

    ldpgraph estimate [GRAPH] --epsilon E [--stat kstars] [--k K ...] [--label L]
    ldpgraph experiment [GRAPH ...] [--epsilons E ...] [--k K ...] [--methods M ...]
                        [--stat S ...] [--trials N] [--jobs J] [--out DIR] [--scheduler ADDR]
                        [--label L ...]
    ldpgraph datasets list | fetch NAME [--url FILE] [--timeout S] | path NAME

Every subcommand takes ``--json`` (machine-readable output on stdout), ``--quiet`` (nothing but
errors and ``--json`` output), ``--debug`` (tracebacks) and ``--cache-dir DIR`` (the dataset
cache, instead of ``$LDPGRAPH_CACHE`` or ``~/.cache/ldpgraph``).

GRAPH is a dataset name (``facebook``), a synthetic spec (``ba:n=1000,m=10``) or an
edge-list file. Without GRAPH the Facebook graph is used: it ships inside the package, so no
network and no ``LDPGRAPH_DATA`` are needed. A synthetic graph of the same size is an explicit
option (``FALLBACK_GRAPH``, ``ba:n=4039,m=22``), never a silent substitute.

Errors are reported as one line on stderr with a non-zero exit status (1 for failures, 2 for
bad usage); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import cli_help

__all__ = ["main", "build_parser", "DEFAULT_GRAPH", "FALLBACK_GRAPH", "STUDY_EPSILONS"]

#: the default graph (shipped with the package)
DEFAULT_GRAPH = "facebook"
#: a synthetic graph of the same size (Barabasi-Albert, 4,039 nodes, ~88k edges, seeded): an
#: explicit option only, never used in place of the default graph
FALLBACK_GRAPH = "ba:n=4039,m=22"
#: the epsilons of the reproduction study (default of ``ldpgraph experiment``)
STUDY_EPSILONS = (0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)

_PROG = "ldpgraph"
#: plot formats written by default (``experiment --plot-formats``)
_DEFAULT_PLOT_FORMATS = ("png",)


class _UsageError(Exception):
    """Bad command-line usage detected after parsing (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``ldpgraph CMD: error: MESSAGE``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _one_line(message: object) -> str:
    return " ".join(part.strip() for part in str(message).splitlines() if part.strip())


# ------------------------------------------------------------------------------ arg types


def _split(text: str) -> list[str]:
    return [t for t in (s.strip() for s in text.split(",")) if t]


def _epsilon_list(text: str) -> list[float]:
    out = []
    for tok in _split(text):
        try:
            v = float(tok)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid epsilon {tok!r}: expected a number > 0") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"invalid epsilon {tok!r}: must be finite and > 0")
        from .limits import check_smallest_epsilon

        try:
            out.append(check_smallest_epsilon(v))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    if not out:
        raise argparse.ArgumentTypeError(f"invalid epsilon list {text!r}")
    return out


def _epsilon(text: str) -> float:
    values = _epsilon_list(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one epsilon, got {text!r}")
    return values[0]


def _int_list(name: str, minimum: int):
    def parse(text: str) -> list[int]:
        out = []
        for tok in _split(text):
            try:
                v = int(tok)
            except ValueError:
                msg = f"invalid {name} {tok!r}: expected an integer >= {minimum}"
                raise argparse.ArgumentTypeError(msg) from None
            if v < minimum:
                raise argparse.ArgumentTypeError(f"invalid {name} {tok!r}: must be >= {minimum}")
            out.append(v)
        if not out:
            raise argparse.ArgumentTypeError(f"invalid {name} list {text!r}")
        return out

    return parse


def _int(name: str, minimum: int | None = None, nonzero: bool = False):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {name} {text!r}: expected an integer") from None
        if minimum is not None and v < minimum:
            raise argparse.ArgumentTypeError(f"invalid {name} {text!r}: must be >= {minimum}")
        if nonzero and v == 0:
            raise argparse.ArgumentTypeError(f"invalid {name} {text!r}: must be non-zero (-1 = all cores)")
        return v

    return parse


def _flatten(lists: Sequence[Sequence[Any]] | None) -> list[Any] | None:
    if lists is None:
        return None
    out: list[Any] = []
    for sub in lists:
        for x in sub:
            if x not in out:
                out.append(x)
    return out


def _positive_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        msg = f"invalid timeout {text!r}: expected a number of seconds > 0"
        raise argparse.ArgumentTypeError(msg) from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"invalid timeout {text!r}: must be finite and > 0")
    return v


def _default_methods() -> tuple[str, ...]:
    from .experiments.runner import DEFAULT_METHODS

    return DEFAULT_METHODS


def _default_ks() -> tuple[int, ...]:
    from .experiments.runner import DEFAULT_KS

    return DEFAULT_KS


def _output_options(p: argparse.ArgumentParser) -> None:
    """``--json`` and ``--quiet``, the same on every subcommand."""
    p.add_argument("--json", action="store_true", help="print JSON on stdout instead of text")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print nothing but errors (and the JSON with --json): no progress bar, notes "
                   "or table")


def _scheduler_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--scheduler-timeout``: the same option, default and message on experiment and curate."""
    from .dask_connect import SCHEDULER_TIMEOUT

    p.add_argument("--scheduler-timeout", type=_positive_seconds, default=SCHEDULER_TIMEOUT,
                   metavar="SECONDS",
                   help="seconds the Dask scheduler of --scheduler has to answer (default "
                   f"{SCHEDULER_TIMEOUT:g})")


# ------------------------------------------------------------------------------ graph files

_DELIMITERS = {",": ",", "comma": ",", "\t": "\t", "\\t": "\t", "tab": "\t", " ": " ", "space": " ",
               "whitespace": " "}
_FILE_OPTION_FLAGS = {"delimiter": "--delimiter", "columns": "--columns", "header": "--header/--no-header",
                      "strict": "--strict", "node_type": "--node-type", "max_bytes": "--max-bytes",
                      "max_ratio": "--max-ratio"}


def _delimiter(text: str) -> str:
    key = text if text in _DELIMITERS else text.strip().lower()
    if key not in _DELIMITERS:
        raise argparse.ArgumentTypeError(
            f"invalid delimiter {text!r}: expected ',' (or comma), tab, or space (runs of spaces and tabs)")
    return _DELIMITERS[key]


def _columns(text: str) -> tuple[int, int] | tuple[str, str]:
    parts = [t.strip() for t in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise argparse.ArgumentTypeError(
            f"invalid columns {text!r}: expected two different columns, e.g. 0,1 (0-based), or two "
            "column names of a Parquet table")
    if all(t.isdigit() for t in parts):
        return int(parts[0]), int(parts[1])
    return parts[0], parts[1]


def _max_ratio(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (v == 0 or (math.isfinite(v) and v >= 1)):
        raise argparse.ArgumentTypeError(f"invalid max ratio {text!r}: expected a number >= 1, or 0 for none")
    return v


def _graph_file_options(p: argparse.ArgumentParser) -> None:
    """How an edge-list file given as GRAPH is read (see ldpgraph.graph.read_edgelist)."""
    g = p.add_argument_group("edge-list files (when GRAPH is a file)")
    g.add_argument("--delimiter", type=_delimiter, metavar="SEP",
                   help="field separator: ',' (CSV), tab, or space (runs of spaces and tabs); default: "
                   "detected from the first edge line")
    g.add_argument("--columns", type=_columns, metavar="I,J",
                   help="the two node columns, 0-based (default: the first two, or the source/target "
                   "columns named by a header); column names for a Parquet table")
    g.add_argument("--header", dest="header", action="store_const", const=True, default=None,
                   help="the first edge line holds column names (default: detected)")
    g.add_argument("--no-header", dest="header", action="store_const", const=False,
                   help="the first edge line is an edge, whatever it looks like")
    g.add_argument("--strict", action="store_true",
                   help="refuse extra columns (weights, timestamps) instead of ignoring them with a note")
    g.add_argument("--node-type", choices=("auto", "int", "str"), default="auto",
                   help="node ids: int (non-negative integers), str (names, even where they look like "
                   "numbers), auto (default: integers if the first edge line has integer ids)")
    g.add_argument("--max-bytes", type=_int("max bytes", minimum=0), metavar="N",
                   help="refuse more than N bytes of (decompressed) text (default: no limit)")
    g.add_argument("--max-ratio", type=_max_ratio, metavar="R",
                   help="refuse compressed files that expand more than R times, a decompression bomb "
                   "(default 100; 0: no limit)")


def _file_options(args: argparse.Namespace) -> dict[str, Any]:
    """The edge-list options given on the command line, as keywords of load_graph."""
    keys = ("delimiter", "columns", "header", "max_bytes", "max_ratio")
    opts = {key: getattr(args, key, None) for key in keys}
    opts = {key: v for key, v in opts.items() if v is not None}
    if opts.get("max_ratio") == 0:
        opts["max_ratio"] = None
    if getattr(args, "strict", False):
        opts["strict"] = True
    if getattr(args, "node_type", "auto") != "auto":
        opts["node_type"] = args.node_type
    return opts


def _flags_apply(opts: dict[str, Any]) -> str:
    flags = [_FILE_OPTION_FLAGS[k] for k in opts]
    return ", ".join(flags) + (" applies" if len(flags) == 1 else " apply")


def _load_graph_arg(spec: str, args: argparse.Namespace) -> tuple[Any, str]:
    """``(Graph, origin)`` of one GRAPH argument; an edge-list file is read with the file options."""
    from .datasets import resolve_graph
    from .experiments.inputs import graph_origin

    opts = _file_options(args)
    origin = graph_origin(spec)
    if opts and origin != "file":
        what = "a registered dataset" if origin == "dataset" else "a synthetic spec"
        raise _UsageError(f"{_flags_apply(opts)} to edge-list files; GRAPH {spec!r} is {what}")
    path = Path(spec).expanduser()
    if not opts or not path.is_file():  # resolve_graph says what is wrong with a missing file
        return resolve_graph(spec, rng=args.graph_seed), origin
    from .graph import load_graph

    return load_graph(path, **opts), origin


def _graph_notes(graph: Any) -> list[str]:
    from .notes import dropped_edge_notes

    report = getattr(graph, "report", None)
    return [*getattr(report, "notes", ()), *dropped_edge_notes(report)]


def _print_graph_notes(notes: dict[str, list[str]], quiet: bool) -> None:
    for label, lines in notes.items():
        for line in lines:
            _notice(f"{label}: {line}", quiet)


def _check_labels(labels: list[str] | None, specs: list[str]) -> None:
    if labels is not None and len(labels) != len(specs):
        raise _UsageError(
            f"argument --label: {len(labels)} labels for {len(specs)} graphs; give one per GRAPH")


def _graph_input_args(specs: list[str], labels: list[str] | None, args: argparse.Namespace) -> list[Any]:
    """The GRAPH arguments as resolved graph inputs (labelled as run_experiment labels them)."""
    from .experiments.inputs import as_graph_input, file_label, resolve_graph_inputs

    _check_labels(labels, specs)
    loaded = [(spec.strip(), *_load_graph_arg(spec, args)) for spec in specs]
    names = [file_label(s) if origin == "file" else s for s, _, origin in loaded]
    inputs = []
    for (spec, graph, origin), name in zip(loaded, names, strict=True):
        if origin == "file" and names.count(name) > 1:  # two files of one name: labelled by their paths
            name = spec
        inputs.append(as_graph_input(name, graph, args.graph_seed, origin=origin))
    if labels is not None:
        return resolve_graph_inputs(dict(zip(labels, inputs, strict=True)))
    return resolve_graph_inputs(inputs)


#: options whose value may start with '-' (a negative number is then an error about the value,
#: not "expected one argument")
_VALUE_OPTIONS = ("--epsilons", "--epsilon", "-e", "--k", "--trials", "--jobs", "-j", "--seed",
                  "--graph-seed", "--block-size", "--timeout", "--scheduler-timeout")


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--epsilons -1,1`` -> ``--epsilons=-1,1`` so that argparse hands the value to its check."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if (a in _VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-")
                and len(argv[i + 1]) > 1 and (argv[i + 1][1].isdigit() or argv[i + 1][1] == ".")):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


# ------------------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ldpgraph`` (exposed for documentation and tests)."""
    from ._version import __version__

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback on errors")
    common.add_argument("--cache-dir", metavar="DIR", default=argparse.SUPPRESS,
                        help="dataset cache folder (default: $LDPGRAPH_CACHE or ~/.cache/ldpgraph)")

    parser = _Parser(
        prog=_PROG,
        description="Graph analytics under local differential privacy: simulate the protocols, "
        "compare the estimators, manage datasets.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    graph_help = (
        f"dataset name, synthetic spec (e.g. ba:n=1000,m=10 or {FALLBACK_GRAPH}, a stand-in of the "
        f"Facebook graph's size) or edge-list file; default: {DEFAULT_GRAPH} (shipped with ldpgraph)"
    )

    # estimate
    p = sub.add_parser(
        "estimate",
        parents=[common],
        help="one simulated run: truth and every method's estimate with its standard error",
        description="Simulate one run of the protocol on GRAPH and print the truth and every method's "
        "estimate and standard error: the closed-form standard deviation of the estimate at the true graph, "
        "or, where no closed form exists, the curator's own estimate from the reports (marked *). Notes "
        "follow every estimate outside the statistic's range, without a standard error (and why), or with "
        "a relative standard error above 1 (with the epsilon that would be needed). " + _OPTIONS_NOTE,
    )
    p.add_argument("graph", nargs="?", metavar="GRAPH", help=graph_help)
    p.add_argument("--epsilon", "-e", type=_epsilon, required=True, help="privacy budget per node (> 0)")
    p.add_argument("--stat", default="kstars", metavar="STAT", help=cli_help.stat_help(many=False))
    p.add_argument("--k", nargs="+", type=_int_list("k", 1), metavar="K", default=[[2]],
                   help="star sizes for kstars, powers for degree_moment; several give one run each "
                   "(default 2)")
    p.add_argument("--methods", nargs="+", type=_split, metavar="METHOD", help=cli_help.methods_help())
    p.add_argument("--label", metavar="LABEL",
                   help="name of the graph in the output; the random streams then follow the label "
                   "(default: they follow the graph's content, whatever its name or path)")
    p.add_argument("--seed", type=_int("seed", minimum=0), help="root seed (default: fresh entropy, printed)")
    p.add_argument("--graph-seed", type=_int("graph seed", minimum=0), default=0,
                   help="seed of synthetic graphs (default 0)")
    _add_protocol_options(p, ())
    _output_options(p)
    _graph_file_options(p)
    p.set_defaults(handler=_cmd_estimate)

    # experiment
    p = sub.add_parser(
        "experiment",
        parents=[common],
        help="the grid graphs x statistics x epsilons x methods x trials: CSV, summary, plots",
        description="Run the experiment grid in parallel and write records.csv (one row per trial), "
        "summary.csv and summary.txt (relative RMSE with confidence interval, bias, analytic RMSE), "
        "experiment.json and plots/ (log-log relative RMSE vs epsilon, one file per statistic and k in "
        f"each --plot-formats, {'/'.join(_DEFAULT_PLOT_FORMATS).upper()} by default) into --out. "
        "Lists take spaces or commas: --epsilons 0.5,1,2. Results depend only on the seed, the grid and "
        "--block-size, not on --jobs or the backend. " + _OPTIONS_NOTE,
    )
    p.add_argument("graphs", nargs="*", metavar="GRAPH", help=graph_help)
    p.add_argument("--epsilons", nargs="+", type=_epsilon_list, metavar="E", default=[list(STUDY_EPSILONS)],
                   help="privacy budgets (default: " + ",".join(f"{e:g}" for e in STUDY_EPSILONS) + ")")
    p.add_argument("--k", nargs="+", type=_int_list("k", 1), metavar="K", default=[list(_default_ks())],
                   help="star sizes for kstars, powers for degree_moment (default: "
                   + " ".join(map(str, _default_ks())) + ")")
    p.add_argument("--methods", nargs="+", type=_split, metavar="METHOD",
                   help=cli_help.methods_help(", plus every triangle or clustering protocol when --stat "
                                              "names one; each statistic uses the listed methods that "
                                              "estimate it"))
    p.add_argument("--stat", nargs="+", type=_split, metavar="STAT", help=cli_help.stat_help(many=True))
    p.add_argument("--trials", type=_int("trials", minimum=1), default=100,
                   help="trials per cell (default 100)")
    p.add_argument("--jobs", "-j", type=_int("jobs", nonzero=True), default=None,
                   help="parallel workers, -1 = all cores or Dask workers (default: automatic, all cores "
                   "when the grid is large enough; results do not depend on it)")
    p.add_argument("--block-size", type=_int("block size", minimum=1), default=100,
                   help="trials per random stream and per task (default 100)")
    p.add_argument("--seed", type=_int("seed", minimum=0),
                   help="root seed (default: fresh entropy, recorded)")
    p.add_argument("--graph-seed", type=_int("graph seed", minimum=0), default=0,
                   help="seed of synthetic graphs (default 0)")
    p.add_argument("--out", "-o", default="ldpgraph-results", metavar="DIR",
                   help="output folder (default ./ldpgraph-results)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="run on a Dask cluster, e.g. tcp://10.0.0.1:8786 (needs ldpgraph[distributed])")
    _scheduler_timeout_option(p)
    p.add_argument("--label", nargs="+", type=_split, metavar="LABEL",
                   help="names of the graphs in the outputs, one per GRAPH in order; the random streams "
                   "then follow the labels (default: they follow each graph's content)")
    p.add_argument("--no-plots", action="store_true", help="do not draw plots")
    p.add_argument("--plot-formats", type=_split, default=list(_DEFAULT_PLOT_FORMATS), metavar="FMT",
                   help="plot file formats, e.g. png,svg,pdf (default " + ",".join(_DEFAULT_PLOT_FORMATS)
                   + "; each costs one rendering)")
    _add_protocol_options(p, ())
    _output_options(p)
    _graph_file_options(p)
    p.set_defaults(handler=_cmd_experiment)

    # datasets
    p = sub.add_parser("datasets", parents=[common], help="list, download and locate the registered datasets",
                       description="The registered datasets: list them, download one into the cache "
                       "(checksum-verified), or print where one is found locally.")
    dsub = p.add_subparsers(dest="datasets_command", metavar="ACTION", parser_class=_Parser)
    dsub.required = True
    q = dsub.add_parser("list", parents=[common], help="registered datasets and where they are found",
                        description="List the registered datasets and where each is found locally.")
    _output_options(q)
    q.set_defaults(handler=_cmd_datasets_list)
    q = dsub.add_parser("fetch", parents=[common], help="download a dataset into the cache, verified",
                        description="Download a dataset into the cache; the SHA-256 is checked before the "
                        "file is moved into place.")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--url", help="install from this URL or local file instead of the registered source "
                   "(offline: a copy brought by hand)")
    q.add_argument("--force", action="store_true", help="download even if a verified copy is present")
    q.add_argument("--timeout", type=_positive_seconds, default=60.0, metavar="SECONDS",
                   help="overall deadline of the download (default 60)")
    _output_options(q)
    q.set_defaults(handler=_cmd_datasets_fetch)
    q = dsub.add_parser("path", parents=[common], help="print the local path of a dataset",
                        description="Print where a dataset is found (LDPGRAPH_DATA, then the cache).")
    q.add_argument("name", metavar="NAME")
    _output_options(q)
    q.set_defaults(handler=_cmd_datasets_path)
    _add_deployment_commands(sub, common, graph_help)
    _add_shuffle_command(sub, common)

    # methods
    p = sub.add_parser("methods", parents=[common], help="every method: statistics, rounds and budget split, "
                       "whether and how it deploys, its reference",
                       description="List every method of the registry: the statistics it estimates, its "
                       "rounds with their share of the budget at --epsilon, how 'ldpgraph node'/'curate' run "
                       "it (or why they cannot), and the reference it follows.")
    p.add_argument("--stat", metavar="STAT", help="only the methods estimating STAT")
    p.add_argument("--epsilon", "-e", type=_epsilon, default=1.0,
                   help="total budget per node at which to show the split (default 1)")
    _output_options(p)
    p.set_defaults(handler=_cmd_methods)
    return parser


# ------------------------------------------------------------------------------ helpers


def _notice(message: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"{_PROG}: note: {message}", file=sys.stderr)


def _default_graph(quiet: bool = False) -> str:
    """The default graph, ``facebook``: it ships with the package, so it is always found."""
    return DEFAULT_GRAPH


def _methods_arg(
    values: list[str] | None, default: Sequence[str] | None, graph_stats: Sequence[str] = ()
) -> list[str] | None:
    """Method names; the triangle protocols join the defaults and 'all' for adjacency statistics."""
    from .baselines.methods import method_names
    from .registry import method_names as all_method_names

    extra = [m for st in graph_stats for m in all_method_names(st) if m not in method_names()]
    extra = list(dict.fromkeys(extra))
    if values is None:
        return None if default is None else [*default, *extra]
    if "all" in values:
        return [*method_names(), *extra]
    known = [*method_names(), *(m for m in all_method_names() if m not in method_names())]
    for v in values:
        if v not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --methods: unknown method {v!r}; choose from {choices}, all")
    return values


def _stats_arg(values: list[str] | None) -> list[str]:
    from .experiments import statistic_names
    from .experiments.statistics import GRAPH_STATISTICS

    if values is None:
        return ["kstars"]
    if "all" in values:
        return statistic_names()
    known = [*statistic_names(), *GRAPH_STATISTICS]
    for v in values:
        if v.partition(":")[0] not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --stat: unknown statistic {v!r}; choose from {choices}, all")
    return values


def _prepare_out(path: str) -> Path:
    """Create the output folder, check that it is writable and lock it (before any work is done)."""
    out = Path(path).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".ldpgraph-write-test-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OSError(f"cannot write to --out {path}: {reason}") from None
    from .experiments.outputs import claim_output

    claim_output(out)  # another run writing --out: refused now, before any work
    return out


def _fmt_num(x: float | None, digits: int = 6) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 100:
        return f"{x:,.1f}"
    return f"{x:.{digits}g}"


def _table(rows: list[tuple[str, ...]], right: set[int]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


# ------------------------------------------------------------------------------ commands


def _print_single_run(run: Any, notes: Sequence[str] = ()) -> None:
    what = run.statistic if run.k is None else f"{run.statistic}, k = {run.k}"
    print(f"graph      {run.graph} ({run.n_nodes:,} nodes, {run.n_edges:,} edges)")
    print(f"statistic  {what}")
    print(f"epsilon    {run.epsilon:g}")
    print(f"seed       {run.seed}")
    if run.options:
        print(f"options    {_options_text(run.options)}")
    print(f"truth      {_fmt_num(run.truth)}")
    print()
    rows = [("method", "estimate", "std_error", "error", "rel_error")]
    starred = False
    for e in run.estimates:
        overflow = e.std_error is not None and math.isinf(e.std_error)
        se = "overflow" if overflow else _fmt_num(e.std_error)  # "-": no closed form exists
        if e.std_error_kind == "estimated":
            se += "*"
            starred = True
        rel = abs(e.estimate - run.truth) / abs(run.truth) if run.truth else math.nan
        rows.append((e.method, _fmt_num(e.estimate), se, _fmt_num(e.estimate - run.truth),
                     "-" if not math.isfinite(rel) else f"{rel:.3%}"))
    print(_table(rows, right={1, 2, 3, 4}))
    print()
    note = "std_error: closed-form standard deviation of the estimate at the true degrees"
    if starred:
        note += "; * estimated by the curator from the reports"
    print(note + "; '-' where none exists, 'overflow' where it exceeds the float range.")
    if notes:
        print()
        print("\n".join(notes))


def _cmd_estimate(args: argparse.Namespace) -> int:
    from .experiments.single import estimate_once
    from .experiments.statistics import GRAPH_STATISTICS, statistic_names

    stat = args.stat.strip()
    if stat not in statistic_names() and stat not in GRAPH_STATISTICS:
        choices = ", ".join([*statistic_names(), *GRAPH_STATISTICS])
        raise _UsageError(f"argument --stat: unknown statistic {stat!r}; choose from {choices}")
    if stat in GRAPH_STATISTICS:  # default: the protocols of the statistic (estimate_once)
        methods = _methods_arg(_flatten(args.methods), None, [stat])
    else:
        methods = _methods_arg(_flatten(args.methods), _default_methods())
    from .registry import method_names

    if methods is not None and not set(methods) & set(method_names(stat)):
        raise _UsageError(_no_method_for(stat, methods))  # (both ways: k-star and triangle methods)
    other = [m for m in methods or () if m not in method_names(stat)]
    if other:
        verb = "does" if len(other) == 1 else "do"
        quiet = args.quiet or args.json
        _notice(f"--methods: {', '.join(other)} {verb} not estimate {stat}: left out", quiet)
    ks = _flatten(args.k) or [2]
    spec = args.graph if args.graph is not None else _default_graph()
    graph = _graph_input_args([spec], None if args.label is None else [args.label], args)[0]
    graph_notes = _graph_notes(graph.graph)
    _print_graph_notes({graph.label: graph_notes}, args.quiet or args.json)
    runs = []
    seed = args.seed
    for k in ks:
        run = estimate_once(graph, epsilon=args.epsilon, statistic=stat, k=k, methods=methods,
                            seed=seed, graph_seed=args.graph_seed, options=_simulation_options(args))
        seed = run.seed  # one root seed for all k (drawn once when not given)
        runs.append(run)
        if run.k is None:  # the statistic takes no parameter: one run
            break
    from .notes import single_run_notes

    data = graph.graph if stat in GRAPH_STATISTICS else graph.degrees
    notes = [single_run_notes(r, data) for r in runs]
    if args.json:
        docs = [{**r.to_dict(), "graph_notes": graph_notes, "notes": n}
                for r, n in zip(runs, notes, strict=True)]
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
        return 0
    if args.quiet:
        return 0
    for i, run in enumerate(runs):
        if i:
            print()
        _print_single_run(run, notes[i])
    return 0


def _no_method_for(stat: str, methods: Sequence[str] | None) -> str:
    """The refusal of an estimate none of whose methods estimates ``stat``."""
    from .registry import method_names

    return (f"statistic {stat!r} is estimated by {', '.join(method_names(stat))}; none is among "
            f"--methods {' '.join(methods or ())}")


_PLOT_FORMATS = {"png", "svg", "svgz", "pdf", "ps", "eps", "jpg", "jpeg", "tif", "tiff", "webp"}


def _cmd_experiment(args: argparse.Namespace) -> int:
    from .experiments.runner import check_scheduler_address

    epsilons = _flatten(args.epsilons) or list(STUDY_EPSILONS)
    ks = _flatten(args.k) or list(_default_ks())
    from .experiments.statistics import GRAPH_STATISTICS

    stats = _stats_arg(_flatten(args.stat))
    graph_stats = [st for st in GRAPH_STATISTICS if st in stats]
    methods = _methods_arg(_flatten(args.methods), _default_methods(), graph_stats)
    if args.scheduler is not None:
        try:
            check_scheduler_address(args.scheduler)
        except ValueError as exc:
            raise _UsageError(f"argument --scheduler: {exc}") from None
    specs = list(dict.fromkeys(args.graphs)) or [_default_graph(args.quiet)]
    labels = _flatten(args.label)
    _check_labels(labels, specs)
    bad = [f for f in args.plot_formats if f.lower() not in _PLOT_FORMATS]
    if bad:
        raise _UsageError(f"argument --plot-formats: unknown format {bad[0]!r}; choose from "
                          + ", ".join(sorted(_PLOT_FORMATS)))
    created = not Path(args.out).expanduser().exists()
    out = _prepare_out(args.out)
    with _removed_if_left_empty(out, created):  # a failed run leaves no empty --out behind
        return _run_experiment_cmd(args, out, specs, labels, epsilons, ks, methods, stats)


@contextlib.contextmanager
def _removed_if_left_empty(folder: Path, created: bool):
    """Remove ``folder`` (made by this command) when the command fails and leaves it empty."""
    try:
        yield
    except BaseException:
        if created:
            try:
                folder.rmdir()  # only an empty folder: never anything written
            except OSError:
                pass
        raise


def _run_experiment_cmd(
    args: argparse.Namespace, out: Path, specs: list[str], labels: list[str] | None, epsilons: list[float],
    ks: list[int], methods: list[str] | None, stats: list[str],
) -> int:
    from .experiments import run_experiment

    graphs = _graph_input_args(specs, labels, args)
    graph_notes = {g.label: _graph_notes(g.graph) for g in graphs if _graph_notes(g.graph)}
    _print_graph_notes(graph_notes, args.quiet or args.json)
    result = run_experiment(
        graphs,
        epsilons=epsilons,
        ks=ks,
        methods=methods,
        statistics=stats,
        n_trials=args.trials,
        seed=args.seed,
        block_size=args.block_size,
        n_jobs=args.jobs,
        scheduler=args.scheduler,
        quiet=args.quiet or args.json,
        graph_seed=args.graph_seed,
        preload_plots=not args.no_plots,
        options=_simulation_options(args),
    )
    paths = result.write(out, plots=not args.no_plots, plot_formats=args.plot_formats)
    cfg = result.config
    from .notes import experiment_notes

    accuracy_notes = experiment_notes(result, graphs)
    if args.json:
        doc = {
            "config": cfg,
            "files": {k: [str(p) for p in v] if isinstance(v, list) else str(v) for k, v in paths.items()},
            "notes": result.notes,
            "accuracy_notes": accuracy_notes,
            "graph_notes": graph_notes,
            "summary": [r.to_dict() if hasattr(r, "to_dict") else _row_dict(r) for r in result.summary],
        }
        print(json.dumps(doc, indent=2, default=str))
        return 0
    if args.quiet:
        return 0
    print(result.table())
    if accuracy_notes:
        print()
        print("\n".join(accuracy_notes))
    print()
    print(f"{cfg['n_cells']} cells x {cfg['n_trials']} trials in {cfg['total_seconds']:.1f} s "
          f"({cfg['backend']}, n_jobs={cfg['n_jobs']}); seed {cfg['seed']}")
    if cfg.get("options"):
        print(f"options {_options_text(cfg['options'])}")
    print(f"wrote {paths['records']} ({result.records.n_rows:,} rows)")
    for key in ("summary", "table", "costs", "config", "manifest"):
        if key in paths:
            print(f"wrote {paths[key]}")
    if paths["plots"]:
        print(f"wrote {len(paths['plots'])} plots in {paths['plots'][0].parent}")
    return 0


def _row_dict(row: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(row).items()}


def _deploy_text(deployed_as: tuple[str, dict[str, Any]] | None) -> str:
    """``--protocol NAME --flag V`` for a method's deployment."""
    if deployed_as is None:
        return ""
    name, options = deployed_as
    flags = []
    for key, value in options.items():  # a bool option: --name or --no-name
        flag = "--" + ("no-" if value is False else "") + key.replace("_", "-")
        flags.append(flag if isinstance(value, bool) else f"{flag} {value}")
    return " ".join([f"--protocol {name}", *flags])


def _cmd_methods(args: argparse.Namespace) -> int:
    from .registry import get_method, method_names

    rows = []
    for name in method_names(args.stat):
        m = get_method(name)
        rows.append({"method": name, "statistics": list(m.statistics), "rounds": len(m.budget(args.epsilon)),
                     "budget": m.budget(args.epsilon), "unbiased": bool(m.unbiased), "needs": m.needs,
                     "deployable": m.deployed_as is not None, "deploy": _deploy_text(m.deployed_as),
                     "not_deployable": m.not_deployable or None, "reference": m.reference})
    if args.json:
        print(json.dumps({"epsilon": args.epsilon, "methods": rows}, indent=2))
        return 0
    table = [("method", "statistics", f"budget at epsilon {args.epsilon:g}",
              "deployment (ldpgraph node/curate)")]
    for r in rows:
        split = " + ".join(f"{k} {v:.4g}" for k, v in r["budget"].items())
        deploy = r["deploy"] or f"no: {r['not_deployable']}"
        table.append((r["method"], ",".join(r["statistics"]), split, deploy))
    print(_table(table, right=set()))
    if not args.quiet:
        print("\nreferences:")
        for r in rows:
            print(f"  {r['method']}: {r['reference']}")
    return 0


def _cmd_datasets_list(args: argparse.Namespace) -> int:
    from .datasets import dataset_info, list_datasets, locate_dataset

    entries = []
    for name in list_datasets():
        info = dataset_info(name)
        found = locate_dataset(name)
        entries.append({
            "name": name,
            "kind": info.kind,
            "file": info.filename,
            "size": info.size_gz,
            "path": None if found is None else str(found),
            "bundled": info.bundled,
            "source": info.source_page,
        })
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    if args.quiet:
        return 0
    rows = [("name", "kind", "file", "local copy")]
    for e in entries:
        where = e["path"] or f"not found ({_PROG} datasets fetch {e['name']})"
        rows.append((e["name"], e["kind"], e["file"], where))
    print(_table(rows, right=set()))
    return 0


def _cmd_datasets_fetch(args: argparse.Namespace) -> int:
    from .datasets import default_cache_dir, fetch

    cache = default_cache_dir()
    target = cache / _dataset_filename(args.name)
    before = target.stat().st_mtime_ns if target.is_file() else None
    path = fetch(args.name, url=args.url, force=args.force, timeout=args.timeout,
                 progress=None if not (args.quiet or args.json) else False)
    downloaded = path == target and (before is None or target.stat().st_mtime_ns != before)
    if args.json:
        print(json.dumps({"name": args.name, "path": str(path), "downloaded": downloaded}, indent=2))
        return 0
    if not downloaded:
        where = "in the cache" if path.parent == cache else f"in {path.parent}"
        _notice(f"{args.name}: a verified copy is already present {where}; nothing was downloaded",
                args.quiet)
    if not args.quiet:
        print(path)
    return 0


def _dataset_filename(name: str) -> str:
    from .datasets import dataset_info

    return dataset_info(name).filename


def _cmd_datasets_path(args: argparse.Namespace) -> int:
    from .datasets import dataset_path

    path = dataset_path(args.name)
    if args.json:
        print(json.dumps({"name": args.name, "path": str(path)}, indent=2))
    elif not args.quiet:
        print(path)
    return 0


# ------------------------------------------------------------------------------ deployment: node, curate


def _add_deployment_commands(sub: Any, common: argparse.ArgumentParser, graph_help: str) -> None:
    """The ``node`` and ``curate`` subcommands (report files: see ldpgraph.protocols.reports)."""
    p = sub.add_parser(
        "node",
        parents=[common],
        help="release a node's noisy report rows (secure sampler) into a report file",
        description="Run the node-side randomizer of the degree protocol and write its report rows "
        "(CSV, JSON Lines or Parquet, from the --out suffix). A node passes its own neighbour list "
        "(--node-id with --neighbors or --neighbors-file); --graph simulates every node of a graph. "
        "Noise is drawn with the exact integer sampler on the OS CSPRNG unless --simulate is given "
        "(the fast seeded sampler, for tests and experiments). --protocol "
        f"{cli_help.or_list(_registered_protocols())} releases that protocol's rows instead, round by round "
        "(a later round against the curator's --broadcast; 'ldpgraph methods' shows their plans).",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--neighbors", "--neighbours", metavar="IDS",
                     help="this node's neighbour ids, comma separated ('' for none)")
    src.add_argument("--neighbors-file", "--neighbours-file", metavar="FILE",
                     help="file of this node's neighbour ids (whitespace or comma separated)")
    src.add_argument("--graph", metavar="GRAPH", help="simulate every node of GRAPH: "
                     + graph_help.split("; default:")[0] + " (no default: give one of --neighbors, "
                     "--neighbors-file, --graph)")
    p.add_argument("--node-id", metavar="ID",
                   help="this node's id (with --neighbors*): its number, or its label with --roster")
    p.add_argument("--roster", metavar="FILE",
                   help="the public roster (CSV 'node,label', as node --graph writes beside the rows of "
                   "a graph with named nodes): --node-id and --neighbors may then be labels")
    p.add_argument("--epsilon", "-e", type=_epsilon, required=True,
                   help="this round's privacy budget per node (> 0)")
    p.add_argument("--kstar-counts", type=_int_list("k", 1), metavar="K",
                   help="also release projected local k-star counts for these k "
                   "(needs --d-max or --broadcast)")
    p.add_argument("--d-max", type=_int("d_max", minimum=1), help="public degree bound for the k-star counts")
    p.add_argument("--shares", metavar="Q=F,...",
                   help="budget split, e.g. degree=0.5,kstar_2=0.5 (default equal)")
    p.add_argument("--no-degree", action="store_true", help="do not release the degree")
    p.add_argument("--round", type=_int("round", minimum=1), default=1, help="protocol round (default 1)")
    p.add_argument("--broadcast", metavar="FILE",
                   help="the curator's broadcast after the previous round (gives d_max for round 2)")
    p.add_argument("--state", metavar="FILE",
                   help="the node's private state between the runs of a repeating round (kcore-svt: its "
                   "threshold noise, drawn once); created with mode 0600, never sent: keep it on the node")
    p.add_argument("--protocol", choices=_DEPLOYED_PROTOCOLS, default="degree",
                   help="protocol (default degree); the others (see 'ldpgraph methods') take --epsilon as "
                   "each node's total budget, split by their plan, and the same options in node and curate")
    _add_protocol_options(p, ("--d-max", "--shares"))
    p.add_argument("--simulate", action="store_true",
                   help="fast seeded sampler (simulation, not deployment)")
    p.add_argument("--seed", type=_int("seed", minimum=0),
                   help="seed for --simulate (default: fresh, printed)")
    p.add_argument("--graph-seed", type=_int("graph seed", minimum=0), default=0,
                   help="seed of synthetic graphs (default 0)")
    p.add_argument("--out", "-o", required=True, metavar="FILE",
                   help="report file (.csv, .jsonl or .parquet)")
    _graph_file_options(p)
    p.set_defaults(handler=_cmd_node)

    p = sub.add_parser(
        "curate",
        parents=[common],
        help="validate report files and estimate statistics from them (streaming or Dask)",
        description="Validate one or many report files as one report set (duplicates, missing rows and "
        "nodes, mixed epsilon, wrong sensitivity, non-integers, protocol version; errors name file and "
        "row) in one streaming pass with memory independent of the number of rows, and print the "
        "unbiased estimates with standard errors. With --n-nodes or --degree-bound, reports outside "
        "the range a truthful node sends except with probability 1e-12 are clipped or rejected, and "
        "the output says how many and how far one node could have moved each estimate. "
        "--broadcast-out writes the broadcast file that nodes read for the next round. Rows of "
        f"{cli_help.or_list(_registered_protocols(), 'and')} (detected from the first row) are "
        "curated into the noisy graph (round 1: the estimate, or the broadcast edge list) and checked "
        "against the broadcast's run id (round 2); their rows are screened likewise (--outliers; the "
        "ranges need only the public n, D and node ids, --n-nodes / --degree-bound tighten them).",
    )
    p.add_argument("reports", nargs="+", metavar="REPORTS", help="report files (.csv, .jsonl, .parquet)")
    p.add_argument("--stat", nargs="+", type=_split, metavar="STAT", help=cli_help.curate_stat_help())
    p.add_argument("--k", type=_int("k", minimum=0), default=2,
                   help="k for kstars / kstars_from_counts, power for degree_moment (default 2)")
    p.add_argument("--d-max", type=_int("d_max", minimum=1), help="public degree bound of k-star count rows")
    p.add_argument("--broadcast", metavar="FILE", help="broadcast of the previous round (gives d_max)")
    p.add_argument("--round", type=_int("round", minimum=1), help="round to curate (default: the rows' one)")
    p.add_argument("--n-nodes", type=_int("n_nodes", minimum=1),
                   help="public number of nodes (poisoning bound)")
    p.add_argument("--degree-bound", type=_int("degree bound", minimum=0),
                   help="public degree bound (poisoning)")
    p.add_argument("--outliers", choices=("clip", "reject", "raise"), default="clip",
                   help="reports outside the admissible range: clip (default), reject or raise")
    p.add_argument("--expected-nodes", type=_int("expected nodes", minimum=1), metavar="N",
                   help="nodes 0..N-1 must all report (and no other)")
    p.add_argument("--roster", metavar="FILE",
                   help="the public roster of participants (CSV 'node,label'): its nodes 0..n-1 must all "
                   "report, and no other (as --expected-nodes n)")
    p.add_argument("--curator-key", metavar="FILE",
                   help="the curator's secret key, which signs each broadcast (HMAC-SHA-256, in "
                   "<broadcast>.hmac beside it) and checks it before the next round (default: "
                   "$LDPGRAPH_CURATOR_KEY or ~/.config/ldpgraph/curator.key, created on first use)")
    p.add_argument("--chunk-rows", type=_int("chunk rows", minimum=1), default=1 << 20,
                   help="rows per streaming chunk (default 1048576; results do not depend on it)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="curate on Dask: a scheduler address, or threads / processes / sync")
    _scheduler_timeout_option(p)
    p.add_argument("--broadcast-out", metavar="FILE", help="write the broadcast for the next round")
    p.add_argument("--protocol", choices=_DEPLOYED_PROTOCOLS,
                   help="protocol of the rows (default: the first row's); round 1 of the two-round ones "
                   "writes the broadcast: needs --broadcast-out, and the public bound --d-max (on lower "
                   "degrees; on degrees for avg-clustering) unless the rows carry lower_degree "
                   "(--private-bound), whose noisy maximum is the bound")
    p.add_argument("--epsilon", "-e", type=_epsilon,
                   help="the nodes' total budget per node (the plan of the protocols listed by "
                   "'ldpgraph methods'; the degree protocol takes it from the rows)")
    _add_protocol_options(p, ("--d-max",))
    p.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=_cmd_curate)


def _registered_protocols() -> list[str]:
    from .core import registry

    return registry.names()


_DEPLOYED_PROTOCOLS = ("degree", *_registered_protocols())


def _add_protocol_options(p: argparse.ArgumentParser, have: Sequence[str]) -> None:
    """The registered protocols' public options but the flags in ``have`` (already on ``p``)."""
    from .core import registry

    done: set[str] = set()
    for proto in registry.protocols():
        for o in proto.options:
            if o.flag in have or o.flag in done:
                continue
            done.add(o.flag)
            users = ", ".join(q.name for q in registry.protocols() if o.name in {x.name for x in q.options})
            text = f"{o.help} ({users})"
            if o.type is bool:
                p.add_argument(o.flag, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{text}; default {'yes' if o.default else 'no'}")
            elif o.type is int:
                p.add_argument(o.flag, type=_int(o.name, minimum=1), help=text)
            elif o.type is float:
                p.add_argument(o.flag, type=float, metavar="F", help=text)
            elif o.type is str:
                p.add_argument(o.flag, type=str, help=text)
            else:
                p.add_argument(o.flag, metavar="Q=F,..." if o.type is dict else o.name.upper(), help=text)


#: what estimate / experiment say of the protocol options they share with node / curate
_OPTIONS_NOTE = ("The protocol options (--d-max, --shares, --mu, ...) are those of node and curate, with the "
                 "same meaning: each applies to the listed methods whose simulation takes it (one no listed "
                 "method takes is refused, naming those that do), and the run records them, so that a "
                 "simulated configuration reruns as a deployment ('ldpgraph methods' shows how).")


def _simulation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The protocol options given on the command line (``estimate`` / ``experiment``)."""
    from .core import registry

    names = {o.name for p in registry.protocols() for o in p.options}
    out = {n: getattr(args, n) for n in sorted(names) if getattr(args, n, None) is not None}
    if "shares" in out:
        out["shares"] = _shares_arg(out["shares"])
    return out


def _options_text(options: dict[str, Any]) -> str:
    """``--d-max 8 --shares rr=0.3,local_count=0.7``: the flags that rerun them (node / curate)."""
    parts = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, dict):
            parts.append(f"{flag} " + ",".join(f"{k}={v:g}" for k, v in value.items()))
        else:
            parts.append(f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
    return " ".join(parts)


def _read_id_list(text: str, what: str) -> list[int]:
    out = []
    for tok in text.replace(",", " ").split():
        try:
            v = int(tok)
        except ValueError:
            raise _UsageError(f"{what}: invalid node id {tok!r} (expected an integer)") from None
        if v < 0 or str(v) != tok:
            raise _UsageError(f"{what}: node id {tok!r} must be a canonical non-negative integer")
        out.append(v)
    return out


def _shares_arg(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    out = {}
    for tok in _split(text):
        name, sep, val = tok.partition("=")
        try:
            out[name.strip()] = float(val)
        except ValueError:
            msg = f"argument --shares: invalid entry {tok!r} (expected QUANTITY=FRACTION)"
            raise _UsageError(msg) from None
        if not sep:
            raise _UsageError(f"argument --shares: invalid entry {tok!r} (expected QUANTITY=FRACTION)")
    return out


def _cmd_node(args: argparse.Namespace) -> int:
    import numpy as np

    from .protocols import DegreeRandomizer
    from .reportfiles import read_broadcast, write_reports

    _check_report_suffix(args.out, "--out")  # refuse a bad suffix before any noise is drawn
    _resolve_labels(args)
    if args.protocol != "degree":
        return _cmd_node_protocol(args)
    d_max = args.d_max
    if args.broadcast is not None:
        b = read_broadcast(args.broadcast, next_round=args.round)
        if d_max is not None and d_max != b["values"]["d_max"]:
            raise _UsageError(f"--d-max {d_max} contradicts the broadcast's d_max {b['values']['d_max']}")
        d_max = b["values"]["d_max"]
    if args.graph is not None:
        if args.node_id is not None:
            raise _UsageError("--node-id goes with --neighbors; --graph simulates every node")
        g = _load_graph_arg(args.graph, args)[0]
        _print_graph_notes({args.graph: _graph_notes(g)}, False)
        degrees = g.degrees
        ids = np.asarray(g.node_ids)
        node_ids = ids if ids.dtype.kind in "iu" and (ids.size == 0 or ids.min() >= 0) else None
        labels = None if node_ids is not None else g.node_ids  # text names: rows say 0..n-1
    else:
        neighbours = _own_neighbours(args)
        degrees = np.array([len(neighbours)], dtype=np.int64)
        node_ids = [args.node_id]
        labels = None
    rand = DegreeRandomizer(epsilon=args.epsilon, kstar_counts=args.kstar_counts or (), d_max=d_max,
                            shares=_shares_arg(args.shares), release_degree=not args.no_degree)
    seed = None
    if args.simulate:
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        reports = rand.randomize(degrees, rng=seed)
    else:
        if args.seed is not None:
            raise _UsageError("--seed needs --simulate (the secure sampler cannot be seeded)")
        reports = rand.randomize(degrees)
    path = write_reports(args.out, reports, node_ids=node_ids, round=args.round)
    shares = ", ".join(f"{q} {rel.epsilon:g}" for q, rel in reports.released.items())
    sampler = f"simulation, seed {seed}" if args.simulate else "secure exact sampler, OS CSPRNG"
    n_rows = reports.n_nodes * len(reports.released)
    print(f"wrote {path} ({n_rows:,} row{'' if n_rows == 1 else 's'}: {reports.n_nodes:,} node(s), "
          f"round {args.round}; epsilon {shares}; {sampler})")
    _report_node_labels(path, labels)
    return 0


def _report_node_labels(path: Path, labels: Any) -> None:
    """Write (and name) the node-label table of a simulated graph whose rows number its nodes."""
    if labels is None:
        return
    from .reportfiles import write_node_labels

    table = write_node_labels(path, labels)
    print(f"wrote {table} (the graph's node labels: {path.name} numbers its nodes 0..n-1, "
          "and this table gives each number's label)")


def _curate_stats(values: list[str] | None, k: int) -> list[tuple[str, int | None]]:
    from .protocols.reportset import STATISTICS

    out = []
    for v in values or ["kstars"]:
        name, _, pinned = v.partition(":")
        if name not in STATISTICS:
            choices = ", ".join(STATISTICS)
            raise _UsageError(f"argument --stat: unknown statistic {v!r}; choose from {choices}")
        kk = None
        if STATISTICS[name]:
            try:
                kk = int(pinned) if pinned else k
            except ValueError:
                raise _UsageError(f"argument --stat: invalid k in {v!r}") from None
        elif pinned:
            raise _UsageError(f"argument --stat: {name} takes no parameter, got {v!r}")
        out.append((name, kk))
    return out


def _interval_or_none(est: Any, level: float) -> tuple[float, float] | None:
    interval = getattr(est, "interval", None)
    if interval is None or est.std_error is None:
        return None
    try:
        return tuple(float(x) for x in interval(level))
    except (ValueError, TypeError):
        return None


def _files_protocol(paths: Sequence[str], given: str | None) -> str | None:
    """The protocol of the report files' first rows; an error when they mix or contradict ``given``."""
    from .trianglefiles import report_protocol

    found: dict[str, str] = {}
    for path in paths:
        if Path(path).is_file():  # else the curator reports the missing file
            name = report_protocol(path)
            if name:
                found.setdefault(name, path)
    if len(found) > 1:
        shown = ", ".join(f"{f} holds protocol {p!r} rows" for p, f in found.items())
        raise _UsageError(f"the report files mix protocols ({shown}): curate each protocol's files "
                          "separately, with --protocol")
    if found:
        (name, path), = found.items()
        if given is not None and name != given:
            raise _UsageError(f"{path} holds protocol {name!r} rows, not {given!r}: pass --protocol {name}")
        return name
    return given


def _check_report_suffix(path: str, what: str) -> None:
    """A report file's format comes from its suffix: a usage error in CLI words otherwise."""
    from .reportfiles import FORMATS

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise _UsageError(f"{what} {path}: cannot tell the report format from the suffix "
                          f"{suffix or '(none)'!r}; name the file {', '.join(sorted(FORMATS))}")


def _cmd_curate(args: argparse.Namespace) -> int:
    for path in args.reports:
        _check_report_suffix(path, "report file")
    if args.roster is not None:
        from .run.roster import read_roster

        n = len(read_roster(args.roster))
        if args.expected_nodes not in (None, n):
            raise _UsageError(f"--expected-nodes {args.expected_nodes} contradicts the roster's {n} "
                              "participants")
        args.expected_nodes = n
    from .protocols.poisoning import PublicBounds
    from .protocols.reports import degree_bound_broadcast
    from .reportfiles import curate_files, read_broadcast, write_broadcast

    protocol = _files_protocol(args.reports, args.protocol)
    if protocol in _DEPLOYED_PROTOCOLS[1:]:
        return _cmd_curate_protocol(args, protocol)
    stats = _curate_stats(_flatten(args.stat), args.k)
    d_max = args.d_max
    if args.broadcast is not None:
        if args.round is None:
            raise _UsageError("--broadcast needs --round (the round the broadcast was made for)")
        b = read_broadcast(args.broadcast, next_round=args.round)
        if d_max is not None and d_max != b["values"]["d_max"]:
            raise _UsageError(f"--d-max {d_max} contradicts the broadcast's d_max {b['values']['d_max']}")
        d_max = b["values"]["d_max"]
    bounds = None
    if args.n_nodes is not None or args.degree_bound is not None:
        bounds = PublicBounds(n_nodes=args.n_nodes, degree_bound=args.degree_bound)
    result = curate_files(
        args.reports, stats, bounds=bounds, scheduler=args.scheduler, d_max=d_max, round=args.round,
        outliers=args.outliers, expected_nodes=args.expected_nodes, chunk_rows=args.chunk_rows,
    )
    s = result.summary
    if args.broadcast_out is not None:
        if "degree" not in s.quantities:
            raise ValueError("the broadcast of the degree protocol needs the round's degree reports")
        q = s.quantities["degree"]
        top = int(q.histogram.values[-1]) if q.histogram.n else 1
        broadcast = degree_bound_broadcast(top, n_nodes=s.n_nodes, epsilon=q.epsilon)
        bpath = write_broadcast(args.broadcast_out, broadcast)
    if not 0 < args.level < 1:
        raise _UsageError(f"argument --level: must be in (0, 1), got {args.level!r}")
    intervals = [_interval_or_none(est, args.level) for _, _, est, _ in result.estimates]
    from .notes import estimate_notes

    eps = {name: q.epsilon for name, q in s.quantities.items()}
    notes = [estimate_notes(est.statistic, est.value, est.std_error, level=args.level,
                            epsilon=eps.get("degree", next(iter(eps.values()), None)),
                            needed_epsilon=_curate_planned(s, stat, k, abs(est.value), d_max))
             for stat, k, est, _ in result.estimates]
    if args.json:
        out = result.to_dict()
        out["n_nodes_inferred"] = args.expected_nodes is None
        for entry, ci, n in zip(out["estimates"], intervals, notes, strict=True):
            entry["interval"] = None if ci is None else list(ci)
            entry["level"] = args.level
            entry["notes"] = n
        if args.broadcast_out is not None:
            out["broadcast"] = str(bpath)
        print(json.dumps(out, indent=2))
        return 0
    print(f"files      {len(result.files)} ({s.n_rows:,} rows, {s.n_nodes:,} nodes; protocol {s.protocol}, "
          f"round {s.round})")
    if args.expected_nodes is None:
        print(_INFERRED_N)
    for name, q in s.quantities.items():
        line = f"{name:<10} epsilon {q.epsilon:g}, sensitivity {q.sensitivity:g}"
        if q.admissible is not None:
            verb = "clipped" if s.outliers == "clip" else "rejected"
            line += f"; {q.n_outside:,} outside [{q.admissible[0]:,}, {q.admissible[1]:,}] {verb}"
        print(line)
    print()
    rows = [("statistic", "estimate", "std_error", f"{args.level:.0%} interval", "one-node bound")]
    for (_, _, est, bound), ci in zip(result.estimates, intervals, strict=True):
        shown = "-" if ci is None else f"[{_fmt_num(ci[0])}, {_fmt_num(ci[1])}]"
        rows.append((est.statistic, _fmt_num(est.value), _fmt_num(est.std_error), shown,
                     "-" if bound is None else _fmt_num(bound)))
    print(_table(rows, right={1, 2, 3, 4}))
    if any(notes):
        print("\n" + "\n".join(line for n in notes for line in n))
    if bounds is None:
        print("\nno public bound given (--n-nodes / --degree-bound): reports were not screened for poisoning")
    if args.broadcast_out is not None:
        print(f"\nwrote {bpath} (d_max {broadcast['values']['d_max']} for round {s.round + 1})")
    return 0


def _curate_planned(summary: Any, stat: str, k: int | None, rmse: float, d_max: int | None) -> Any:
    """The planner's ε for an RMSE of ``rmse``, under the noisy degrees (a callable: computed
    only when a warning needs it)."""

    def need() -> float | None:
        from .notes import planned_epsilon

        q = summary.quantities.get("degree")
        if q is None or not q.histogram.n:
            return None
        import numpy as np

        degrees = np.repeat(np.asarray(q.histogram.values), np.asarray(q.histogram.counts))
        return planned_epsilon(stat, k, degrees, rmse, d_max)

    return need


def _node_neighbours(args: argparse.Namespace) -> tuple[list[int], list[Any], Any]:
    """(nodes, neighbour lists, labels): one node (--node-id, --neighbors*) or every node of
    --graph, numbered 0..n-1 as the triangle protocols need (labels: the graph's own node
    labels where they are not those numbers, else None)."""
    import numpy as np

    if args.graph is not None:
        if args.node_id is not None:
            raise _UsageError("--node-id goes with --neighbors; --graph simulates every node")
        g = _load_graph_arg(args.graph, args)[0]
        _print_graph_notes({args.graph: _graph_notes(g)}, False)
        n = g.n_nodes
        ids = np.asarray(g.node_ids)
        numbered = ids.dtype.kind in "iu" and np.array_equal(ids, np.arange(n))
        return (list(range(n)), [g.indices[g.indptr[v]:g.indptr[v + 1]] for v in range(n)],
                None if numbered else g.node_ids)
    return [args.node_id], [_own_neighbours(args)], None


def _resolve_labels(args: argparse.Namespace) -> None:
    """``--node-id`` (and, with ``--roster``, ``--neighbors``) as node numbers, in place."""
    if args.node_id is None:
        return
    if args.roster is None:
        try:
            args.node_id = _int("node id", minimum=0)(args.node_id)
        except argparse.ArgumentTypeError as exc:
            raise _UsageError(f"argument --node-id: {exc} (or pass the roster, --roster FILE, to use "
                              "labels)") from None
        return
    from .run.roster import read_roster

    roster = read_roster(args.roster)
    args.node_id = roster.index(args.node_id)
    if args.neighbors is not None:
        args.neighbors = ",".join(str(i) for i in roster.indices(_split(args.neighbors)))
    elif args.neighbors_file is not None:
        try:
            text = Path(args.neighbors_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise OSError(f"cannot read --neighbors-file {args.neighbors_file}: {exc.strerror}") from None
        args.neighbors_file, args.neighbors = None, ",".join(str(i) for i in roster.indices(text.split()))


def _own_neighbours(args: argparse.Namespace) -> list[int]:
    """This node's distinct neighbours from --neighbors / --neighbors-file (itself dropped)."""
    if args.node_id is None:
        raise _UsageError("--node-id is required with --neighbors / --neighbors-file")
    if _file_options(args):
        raise _UsageError(f"{_flags_apply(_file_options(args))} to --graph FILE, not to --neighbors")
    if args.neighbors is not None:
        nbrs = _read_id_list(args.neighbors, "--neighbors")
    else:
        try:
            text = Path(args.neighbors_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise OSError(f"cannot read --neighbors-file {args.neighbors_file}: {exc.strerror}") from None
        nbrs = _read_id_list(text, args.neighbors_file)
    own = sorted(set(nbrs) - {args.node_id})
    dropped = []
    if args.node_id in nbrs:
        dropped.append(f"the node itself ({args.node_id}, a self-loop)")
    if len(set(nbrs)) < len(nbrs):
        reps = len(nbrs) - len(set(nbrs))
        dropped.append(f"{reps} repeated id{'' if reps == 1 else 's'}")
    if dropped:
        _notice(f"--neighbors: {' and '.join(dropped)} dropped: node {args.node_id} releases degree "
                f"{len(own)}")
    return own


def _protocol_public(proto: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The protocol's public options from the command line; a flag of another protocol is refused."""
    from .core import registry

    own = {o.name for o in proto.options}
    flags = {o.name: o.flag for p in registry.protocols() for o in p.options}
    flags.update(kstar_counts="--kstar-counts", no_degree="--no-degree")
    for name, flag in flags.items():
        if name not in own and getattr(args, name, None) not in (None, False):
            raise _UsageError(f"{flag} is not an option of {proto.name} (its options: "
                              f"{', '.join(o.flag for o in proto.options) or 'none'})")
    out = {name: getattr(args, name, None) for name in own}
    if "shares" in out:
        out["shares"] = _shares_arg(out["shares"])
    return {k: v for k, v in out.items() if v is not None}


def _protocol_plan(proto: Any, args: argparse.Namespace) -> Any:
    """The plan of ``--epsilon`` and the options; contradictory options are a usage error."""
    try:
        return proto.plan(args.epsilon, **_protocol_public(proto, args))
    except ValueError as exc:
        raise _UsageError(str(exc)) from None


#: what the curator says when it has to take the node count from the rows
_INFERRED_N = ("note       the number of nodes is inferred from the rows: a missing node, or a file cut at a "
               "row boundary, can go unseen; pass the roster (--roster FILE) or --expected-nodes N to "
               "check the participants")


def _budget_lines(plan: Any, rnd: int) -> str:
    return (f"budget     {plan.describe()} per node (total); round {rnd} spends "
            f"{plan.round(rnd).epsilon:.6g}")


def _cmd_node_protocol(args: argparse.Namespace) -> int:
    """``ldpgraph node --protocol NAME``: one round's rows of a registered protocol."""
    import numpy as np

    from .core import Secure, Seeded, registry
    from .run.files import release_to_file

    proto = registry.get(args.protocol)
    plan = _protocol_plan(proto, args)
    rounds = proto.rounds()
    if not 1 <= args.round <= len(rounds):
        raise _UsageError(f"{proto.name} has no round {args.round}")
    repeating = rounds[args.round - 1].repeating  # reads the broadcast from its second run on
    if (args.round > 1 and args.broadcast is None) or (args.round == 1 and args.broadcast is not None
                                                       and not repeating):
        raise _UsageError(f"round {args.round} of {proto.name} "
                          + ("needs --broadcast (the curator's broadcast of the previous round)"
                             if args.round > 1 else "takes no --broadcast"))
    if args.seed is not None and not args.simulate:
        raise _UsageError("--seed needs --simulate (the secure sampler cannot be seeded)")
    if rounds[args.round - 1].repeating and not args.simulate and args.state is None:
        raise _UsageError(f"round {args.round} of {proto.name} repeats and the node keeps a secret between "
                          "its runs: pass --state FILE (the same file at every step; it stays on the node)")
    sampler: Any = Secure(state=args.state)
    if args.simulate:
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        sampler = Seeded(seed)
    broadcast = proto.read_broadcast(args.broadcast, plan) if args.broadcast is not None else None
    nodes, lists, labels = _node_neighbours(args)
    rnd = rounds[args.round - 1]
    path, n_rows = release_to_file(args.out, rnd, plan, nodes, [np.asarray(x, dtype=np.int64) for x in lists],
                                   broadcast, sampler)
    extra = f"run id {broadcast.run_id}; " if getattr(broadcast, "run_id", None) is not None else ""
    print(f"wrote {path} ({n_rows:,} row{'' if n_rows == 1 else 's'}: {len(nodes):,} node(s), "
          f"{proto.name} round {args.round}; {extra}{sampler.describe()})")
    print(_budget_lines(plan, args.round))
    down = 0 if args.broadcast is None else Path(args.broadcast).stat().st_size
    print(f"traffic    upload {path.stat().st_size / max(len(nodes), 1):,.0f} bytes per node (mean), "
          f"download {down:,} bytes per node")
    _report_node_labels(path, labels)
    return 0


def _cmd_curate_protocol(args: argparse.Namespace, name: str) -> int:
    """``ldpgraph curate`` of a registered protocol's rows: a round's broadcast, or the estimate."""
    from .core import registry
    from .protocols.poisoning import PublicBounds
    from .run.files import accumulate_files

    proto = registry.get(name)
    if args.epsilon is None:
        raise _UsageError(f"curating {name} needs the plan: --epsilon (each node's total budget) and the "
                          "nodes' protocol options")
    plan = _protocol_plan(proto, args)
    stats = _flatten(args.stat) or [proto.statistics[0]]
    if len(stats) != 1 or stats[0] not in proto.statistics:
        raise _UsageError(f"{name} reports estimate --stat {' or '.join(proto.statistics)}, got "
                          f"{' '.join(stats)}")
    if not 0 < args.level < 1:
        raise _UsageError(f"argument --level: must be in (0, 1), got {args.level!r}")
    rounds = proto.rounds()
    second = args.broadcast is not None and len(rounds) > 1
    rnd = args.round if args.round is not None else (2 if second else 1)
    if not 1 <= rnd <= len(rounds):
        raise _UsageError(f"{name} has no round {rnd}")
    repeating = rounds[rnd - 1].repeating  # its own broadcast says whether it runs again
    last = rnd == len(rounds) and not repeating
    if (rnd > 1 and args.broadcast is None) or (rnd == 1 and args.broadcast is not None and not repeating):
        raise _UsageError(f"round {rnd} of {name} " + ("needs --broadcast (the previous round's broadcast)"
                                                       if rnd > 1 else "takes no --broadcast (round 1 writes "
                                                       "it: --broadcast-out)"))
    if rnd < len(rounds) and args.broadcast_out is None:
        raise _UsageError(f"round {rnd} of {name} writes the broadcast of round {rnd + 1}: pass "
                          "--broadcast-out FILE")
    if last and args.broadcast_out is not None:
        raise _UsageError(f"round {rnd} is the last round of {name}: no broadcast")
    bounds = None  # the ranges need none (n, D and the node ids are public); these tighten them
    if args.n_nodes is not None or args.degree_bound is not None:
        bounds = PublicBounds(n_nodes=args.n_nodes, degree_bound=args.degree_bound)
    options: dict[str, Any] = {"outliers": args.outliers, "bounds": bounds}
    if rnd == 1:
        options["expected_nodes"] = args.expected_nodes
    from .run.authenticate import curator_key, sign_broadcast, verify_broadcast

    key = curator_key(args.curator_key)
    broadcast = None
    if args.broadcast is not None:  # the curator's own, signed output of the previous round
        verify_broadcast(args.broadcast, key)
        broadcast = proto.read_broadcast(args.broadcast, plan)
    step = rounds[rnd - 1]
    result = accumulate_files(args.reports, step, plan, broadcast, chunk_rows=args.chunk_rows,
                              scheduler=args.scheduler, **options)
    acc = getattr(result, "acc", result)
    n_rows = getattr(result, "n_rows", None) or getattr(acc, "n_rows", 0)
    n_nodes = getattr(result, "n_nodes", None) or broadcast.n_nodes
    out: dict[str, Any] = {"files": list(args.reports), "protocol": name, "round": rnd, "n_rows": n_rows,
                           "n_nodes": n_nodes, "epsilon": plan.epsilon, "budget": plan.budget(),
                           "round_epsilon": plan.round(rnd).epsilon, "plan": plan.to_dict()}
    lines = [f"files      {len(args.reports)} ({n_rows:,} rows, {n_nodes:,} nodes; protocol {name}, "
             f"round {rnd}" + (f"; run id {broadcast.run_id})" if broadcast is not None else ")"),
             _budget_lines(plan, rnd), *proto.describe_result(result, step)]
    if rnd == 1 and hasattr(result, "index"):
        out["noisy_edges"] = int(result.index.size)
    if rnd == 1:  # (later rounds take n from the curator's signed broadcast)
        out["n_nodes_inferred"] = args.expected_nodes is None
        if args.expected_nodes is None:
            lines.append(_INFERRED_N)
    verb = {"clip": "clipped", "reject": "rejected", "raise": "refused"}[args.outliers]
    screened = proto.screening(result, step)
    lines += [f"{q:<12} {sc.n_outside:,} outside [{sc.lo:,}, {sc.hi:,}] {verb}" for q, sc in screened.items()]
    if screened:
        out["screening"] = {
            q: {"lo": int(sc.lo), "hi": int(sc.hi), "mode": sc.mode, "n_outside": sc.n_outside}
            for q, sc in screened.items()
        }
    bounds_out = proto.one_node_bounds(result, plan, step)
    if broadcast is not None:
        out.update(run_id=broadcast.run_id, bound=getattr(broadcast, "bound", None))
    b = step.broadcast(result, plan) if repeating else None
    if repeating:  # a data-dependent number of rounds: the new broadcast says whether it runs again
        again = step.again(b)
        last = rnd == len(rounds) and not again
        out["step"] = getattr(b, "step", None)
        if again and args.broadcast_out is None:
            raise _UsageError(f"round {rnd} of {name} runs again: pass --broadcast-out FILE (the broadcast "
                              "of its next run)")
        if last and args.broadcast_out is not None:
            lines.append(f"note       the run is over (no node runs round {rnd} again): no broadcast written")
    if not last:
        b = step.broadcast(result, plan) if b is None else b
        bpath = proto.write_broadcast(args.broadcast_out, b)
        sig = sign_broadcast(bpath, key)
        out.update(broadcast=str(bpath), signature=str(sig), run_id=b.run_id, bound=getattr(b, "bound", None))
        if bounds_out:
            out["one_node_bound"] = bounds_out
        down = Path(bpath).stat().st_size
        nxt = f"round {rnd} again (step {b.step})" if repeating else f"round {rnd + 1}"
        what = "the levels" if repeating else getattr(b, "what", f"noisy graph and bound D = {b.bound}")
        lines.append(f"\nwrote {bpath} ({what} for {nxt}; run id {b.run_id}); every node downloads {down:,} "
                     "bytes")
        lines.append(f"signed {sig.name} with the curator key ({nxt} of curate accepts only it)")
        if args.json:
            print(json.dumps(out, indent=2))
        else:
            print("\n".join(lines))
        return 0
    est = proto.estimate(result, plan, broadcast, stats[0])
    one_node = bounds_out.get("one_node_bound")
    if "one_node_round1_bound" in bounds_out:
        out["one_node_round1_bound"] = bounds_out["one_node_round1_bound"]
    negative = est.variance_estimate is not None and est.variance_estimate <= 0
    ci = None if negative else _interval_or_none(est, args.level)
    why = _no_std_error_reason(est, negative, n_nodes)
    from .notes import estimate_notes

    notes = estimate_notes(est.statistic, est.value, None if negative else est.std_error,
                           epsilon=plan.epsilon, level=args.level, no_std_error=why)
    per_node = getattr(est, "core_numbers", None)  # a vector statistic: every node's value too
    if per_node is not None:
        out.update(core_numbers=per_node.tolist(), rounds=est.rounds)
        lines.append(f"rounds     {est.rounds} (the run is over); every node's core number: --json")
    if args.json:
        out["estimates"] = [{"statistic": est.statistic, "value": est.value, "std_error": est.std_error,
                             "variance_estimate": est.variance_estimate,
                             "interval": None if ci is None else list(ci), "level": args.level,
                             "one_node_bound": one_node, "no_std_error_reason": why, "notes": notes}]
        print(json.dumps(out, indent=2))
        return 0
    print("\n".join(lines))
    shown = "-" if ci is None else f"[{_fmt_num(ci[0])}, {_fmt_num(ci[1])}]"
    se = "-" if est.std_error is None or negative else _fmt_num(est.std_error)
    rows = [("statistic", "estimate", "std_error", f"{args.level:.0%} interval", "one-node bound"),
            (est.statistic, _fmt_num(est.value), se, shown, "-" if one_node is None else _fmt_num(one_node))]
    print()
    print(_table(rows, right={1, 2, 3, 4}))
    if "one_node_round1_bound" in out:
        moved = _fmt_num(out["one_node_round1_bound"])
        print(f"\none node's round-1 bits can move it by at most {moved} more, through the other nodes' "
              "local counts")
    if notes:
        print("\n" + "\n".join(notes))
    return 0


def _no_std_error_reason(est: Any, negative: bool, n_nodes: int) -> str | None:
    """Why an estimate has no standard error (None when it has one)."""
    if getattr(est, "no_std_error_reason", None):
        return str(est.no_std_error_reason)
    if negative:
        return (f"the unbiased variance estimate is {est.variance_estimate:.3g} <= 0 (the noise dominates): "
                "no standard error or interval")
    if est.std_error is None and getattr(est, "note", None):
        return est.note
    if est.std_error is None:
        return (f"the variance estimate is dense in the nodes and is not computed for {n_nodes:,} nodes "
                "(beyond 8,192)")
    return None


# ------------------------------------------------------------------------------ deployment: shuffle


def _add_shuffle_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """``ldpgraph shuffle IN... --out OUT``: the shuffler between the nodes and the curator."""
    p = sub.add_parser(
        "shuffle",
        parents=[common],
        help="the shuffler: drop the node ids of report rows and permute them (OS CSPRNG)",
        description="Read the report rows of every IN file (CSV, JSON Lines or Parquet), set every node id "
        "to 0, permute the rows uniformly at random with the OS CSPRNG (a Fisher-Yates shuffle on "
        "random.SystemRandom) and write them to OUT, for 'ldpgraph curate'. The shuffle-model protocols "
        "(wshuffle-*) refuse rows that did not pass through it. --seed (with --simulate) seeds the "
        "permutation instead: tests and simulations only.",
    )
    p.add_argument("inputs", nargs="+", metavar="IN", help="report files of the nodes")
    p.add_argument("--out", required=True, metavar="OUT",
                   help="the shuffled report file (.csv, .jsonl, .parquet)")
    p.add_argument("--simulate", action="store_true", help="seeded permutation (simulation, not deployment)")
    p.add_argument("--seed", type=_int("seed", minimum=0), help="seed of the simulated permutation")
    p.set_defaults(handler=_cmd_shuffle)


def _cmd_shuffle(args: argparse.Namespace) -> int:
    from .run.shuffler import shuffle_files

    if args.seed is not None and not args.simulate:
        raise _UsageError("--seed needs --simulate (the deployed shuffler cannot be seeded)")
    rng = (args.seed if args.seed is not None else None) if args.simulate else None
    if args.simulate and rng is None:
        import numpy as np

        rng = np.random.SeedSequence()
    path, n_rows = shuffle_files(args.inputs, args.out, rng=rng)
    how = "seeded permutation (simulation)" if args.simulate else "OS CSPRNG permutation"
    print(f"wrote {path} ({n_rows:,} rows from {len(args.inputs)} file(s); node ids dropped; {how})")
    return 0


# ------------------------------------------------------------------------------ entry point


@contextlib.contextmanager
def _scheduler_timeout(seconds: float | None):
    """``--scheduler-timeout`` for this command (the module default is restored after it)."""
    from . import dask_connect

    saved = dask_connect.SCHEDULER_TIMEOUT
    if seconds is not None:
        dask_connect.SCHEDULER_TIMEOUT = seconds
    try:
        yield
    finally:
        dask_connect.SCHEDULER_TIMEOUT = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 failure, 2 usage, 130 interrupt).

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    ldpgraph ...
    0
    """
    argv = _join_negative_values(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (already printed)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    debug = bool(getattr(args, "debug", False))
    cache_dir = getattr(args, "cache_dir", None)
    saved_cache = os.environ.get("LDPGRAPH_CACHE")
    try:
        if cache_dir is not None:  # honoured by every command (lookup, fetch, verified marks)
            os.environ["LDPGRAPH_CACHE"] = str(Path(cache_dir).expanduser())
        with _scheduler_timeout(getattr(args, "scheduler_timeout", None)):
            return int(args.handler(args) or 0)
    except _UsageError as exc:
        if debug:
            raise
        prog = f"{_PROG} {args.command}"
        print(f"{prog}: error: {_one_line(exc)} (see '{prog} --help')", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # e.g. `ldpgraph datasets list | head`: stop quietly
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - the CLI turns every failure into one line
        if debug:
            raise
        print(f"{_PROG}: error: {_one_line(exc) or type(exc).__name__}", file=sys.stderr)
        return 1
    finally:
        if cache_dir is not None:
            if saved_cache is None:
                os.environ.pop("LDPGRAPH_CACHE", None)
            else:
                os.environ["LDPGRAPH_CACHE"] = saved_cache
