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

The package holds one module per command group: :mod:`.experiment` (``estimate``,
``experiment``, ``methods``), :mod:`.deploy` (``node``, ``curate``, ``shuffle``) and
:mod:`.datasets`; what they share is in :mod:`.common`, the help texts generated from the
registries in :mod:`.help`. This module builds the parser and runs a command (:func:`main`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import help as cli_help
from .common import (
    _PROG,
    DEFAULT_GRAPH,
    FALLBACK_GRAPH,
    STUDY_EPSILONS,
    _add_protocol_options,
    _epsilon,
    _epsilon_list,
    _graph_file_options,
    _int,
    _int_list,
    _one_line,
    _output_options,
    _Parser,
    _positive_seconds,
    _scheduler_timeout_option,
    _split,
    _UsageError,
)
from .datasets import _cmd_datasets_fetch, _cmd_datasets_list, _cmd_datasets_path
from .deploy import _add_deployment_commands, _add_shuffle_command
from .experiment import (
    _DEFAULT_PLOT_FORMATS,
    _OPTIONS_NOTE,
    _cmd_estimate,
    _cmd_experiment,
    _cmd_methods,
    _default_ks,
)

__all__ = ["main", "build_parser", "DEFAULT_GRAPH", "FALLBACK_GRAPH", "STUDY_EPSILONS"]


# ------------------------------------------------------------------------------ parser


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ldpgraph`` (exposed for documentation and tests)."""
    from .._version import __version__

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
        help="one simulated run: truth and each method's estimate with its standard error",
        description="Simulate one run of the protocol on GRAPH and print the truth and each method's "
        "estimate and standard error (by default, for a statistic with many methods, the recommended method "
        "of each model; the output says which ran, and --methods all runs every one): the curator's "
        "standard error, from the reports and public values only (as 'ldpgraph curate' computes it; se_kind "
        "says how, or why there is none), beside the closed-form standard deviation at the true graph "
        "(sd_at_truth, which only a simulation knows). A vector statistic (core_numbers) prints each "
        "method's summary instead (approximation factors, degeneracy). Notes "
        "follow every estimate outside the statistic's range, without a standard error (and why), or with "
        "a relative standard error above 1 (with the epsilon that would be needed). " + _OPTIONS_NOTE,
    )
    p.add_argument("graph", nargs="?", metavar="GRAPH", help=graph_help)
    p.add_argument("--epsilon", "-e", type=_epsilon, required=True, help="privacy budget per node (> 0)")
    p.add_argument("--stat", default="kstars", metavar="STAT", help=cli_help.stat_help(many=False))
    p.add_argument("--k", nargs="+", type=_int_list("k", 1), metavar="K", default=[[2]],
                   help="star sizes for kstars, powers for degree_moment; several give one run each "
                   "(default 2)")
    p.add_argument("--methods", nargs="+", type=_split, metavar="METHOD",
                   help=cli_help.methods_help("; for a statistic of the graph's adjacency, the recommended "
                                              "method of each model, 'all' every one"))
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
                   help=cli_help.methods_help(", plus the recommended method of each model for each --stat "
                                              "of the graph's adjacency, 'all' every one; each statistic "
                                              "uses the listed methods that estimate it"))
    p.add_argument("--stat", nargs="+", type=_split, metavar="STAT", help=cli_help.stat_help(many=True))
    p.add_argument("--trials", type=_int("trials", minimum=1), default=100,
                   help="trials per cell (default 100)")
    p.add_argument("--jobs", "-j", type=_int("jobs", nonzero=True), default=None,
                   help="parallel processes at most, -1 = all cores or Dask workers (default: all cores); "
                   "the run goes parallel only when its measured first blocks say worker start-up pays; "
                   "results do not depend on it")
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
    p.add_argument("--n-users", type=_int("n_users", minimum=4), default=10_000,
                   help="number of users at which to show the shuffle model's guarantee and local epsilon0 "
                   "(default 10000)")
    _output_options(p)
    p.set_defaults(handler=_cmd_methods)
    return parser


# ------------------------------------------------------------------------------ entry point


@contextlib.contextmanager
def _scheduler_timeout(seconds: float | None):
    """``--scheduler-timeout`` for this command (the module default is restored after it)."""
    from .. import dask_connect

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
