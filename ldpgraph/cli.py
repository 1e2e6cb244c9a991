r"""The ``ldpgraph`` command line.

::

    ldpgraph estimate [GRAPH] --epsilon E [--stat kstars] [--k 2] [--json]
    ldpgraph experiment [GRAPH ...] [--epsilons E ...] [--k K ...] [--methods M ...]
                        [--stat S ...] [--trials N] [--jobs J] [--out DIR] [--scheduler ADDR]
    ldpgraph datasets list | fetch NAME | path NAME

GRAPH is a dataset name (``facebook``), a synthetic spec (``ba:n=1000,m=10``) or an
edge-list file. Without GRAPH the Facebook graph is used where it is available offline
(``LDPGRAPH_DATA`` or the cache); otherwise a seeded synthetic graph of the same size, with a
one-line notice saying how to get the real one.

Errors are reported as one line on stderr with a non-zero exit status (1 for failures, 2 for
bad usage); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser", "DEFAULT_GRAPH", "FALLBACK_GRAPH", "STUDY_EPSILONS"]

#: the default graph, when it is available offline
DEFAULT_GRAPH = "facebook"
#: the stand-in of the same size: Barabasi-Albert, 4,039 nodes, ~88k edges (seeded)
FALLBACK_GRAPH = "ba:n=4039,m=22"
#: the epsilons of the reproduction study (default of ``ldpgraph experiment``)
STUDY_EPSILONS = (0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)

_PROG = "ldpgraph"


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
        out.append(v)
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


# ------------------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ldpgraph`` (exposed for documentation and tests)."""
    from . import __version__

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback on errors")

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
        f"dataset name, synthetic spec (e.g. ba:n=1000,m=10) or edge-list file; default: {DEFAULT_GRAPH} "
        f"if available offline, else {FALLBACK_GRAPH}"
    )

    # estimate
    p = sub.add_parser(
        "estimate",
        parents=[common],
        help="one simulated run: truth and every method's estimate with its standard error",
        description="Simulate one run of the protocol on GRAPH and print the truth and every method's "
        "estimate and standard error. For k-star methods the standard error is the closed-form standard "
        "deviation of the estimate at the true degrees; for the curator statistics it is the curator's "
        "own estimate from the reports (marked *) where no closed form exists.",
    )
    p.add_argument("graph", nargs="?", metavar="GRAPH", help=graph_help)
    p.add_argument("--epsilon", "-e", type=_epsilon, required=True, help="privacy budget per node (> 0)")
    p.add_argument("--stat", default="kstars", metavar="STAT",
                   help="statistic: kstars (default), edges, degree_moment, degree_mean, degree_variance, "
                   "max_degree, degree_entropy")
    p.add_argument("--k", type=_int("k", minimum=1), default=2,
                   help="star size for kstars, power for degree_moment (default 2)")
    p.add_argument("--methods", nargs="+", type=_split, metavar="METHOD",
                   help="k-star methods (default: all registered)")
    p.add_argument("--seed", type=_int("seed", minimum=0), help="root seed (default: fresh entropy, printed)")
    p.add_argument("--graph-seed", type=_int("graph seed", minimum=0), default=0,
                   help="seed of synthetic graphs (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=_cmd_estimate)

    # experiment
    p = sub.add_parser(
        "experiment",
        parents=[common],
        help="the grid graphs x statistics x epsilons x methods x trials: CSV, summary, plots",
        description="Run the experiment grid in parallel and write records.csv (one row per trial), "
        "summary.csv and summary.txt (relative RMSE with confidence interval, bias, analytic RMSE), "
        "experiment.json and plots/ (log-log relative RMSE vs epsilon, PNG and SVG) into --out. "
        "Lists take spaces or commas: --epsilons 0.5,1,2. Results depend only on the seed, the grid and "
        "--block-size, not on --jobs or the backend.",
    )
    p.add_argument("graphs", nargs="*", metavar="GRAPH", help=graph_help)
    p.add_argument("--epsilons", nargs="+", type=_epsilon_list, metavar="E",
                   help="privacy budgets (default: " + ",".join(f"{e:g}" for e in STUDY_EPSILONS) + ")")
    p.add_argument("--k", nargs="+", type=_int_list("k", 1), metavar="K",
                   help="star sizes for kstars, powers for degree_moment (default: 2 3)")
    p.add_argument("--methods", nargs="+", type=_split, metavar="METHOD",
                   help="k-star methods, or 'all' (default: unbiased-dlap naive-dlap unbiased-laplace "
                   "naive-laplace local-lap-kstars)")
    p.add_argument("--stat", nargs="+", type=_split, metavar="STAT",
                   help="statistics, or 'all' (default: kstars); NAME:P pins a parameter")
    p.add_argument("--trials", type=_int("trials", minimum=1), default=100,
                   help="trials per cell (default 100)")
    p.add_argument("--jobs", "-j", type=_int("jobs", nonzero=True), default=-1,
                   help="parallel workers, -1 = all cores or Dask workers (default -1)")
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
    p.add_argument("--no-plots", action="store_true", help="do not draw plots")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, notices or table")
    p.set_defaults(handler=_cmd_experiment)

    # datasets
    p = sub.add_parser("datasets", parents=[common], help="list, download and locate the registered datasets",
                       description="The registered datasets: list them, download one into the cache "
                       "(checksum-verified), or print where one is found locally.")
    dsub = p.add_subparsers(dest="datasets_command", metavar="ACTION", parser_class=_Parser)
    dsub.required = True
    q = dsub.add_parser("list", parents=[common], help="registered datasets and where they are found",
                        description="List the registered datasets and where each is found locally.")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_cmd_datasets_list)
    q = dsub.add_parser("fetch", parents=[common], help="download a dataset into the cache, verified",
                        description="Download a dataset into the cache; the SHA-256 is checked before the "
                        "file is moved into place.")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--url", help="download from this URL or local file instead of the registered source")
    q.add_argument("--cache-dir", metavar="DIR", help="target folder (default: the user cache)")
    q.add_argument("--force", action="store_true", help="download even if a verified copy is cached")
    q.set_defaults(handler=_cmd_datasets_fetch)
    q = dsub.add_parser("path", parents=[common], help="print the local path of a dataset",
                        description="Print where a dataset is found (LDPGRAPH_DATA, then the cache).")
    q.add_argument("name", metavar="NAME")
    q.set_defaults(handler=_cmd_datasets_path)
    return parser


# ------------------------------------------------------------------------------ helpers


def _notice(message: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"{_PROG}: note: {message}", file=sys.stderr)


def _default_graph(quiet: bool = False) -> str:
    """``facebook`` when found offline, else the synthetic stand-in (with a one-line notice)."""
    from .datasets import locate_dataset

    if locate_dataset(DEFAULT_GRAPH) is not None:
        return DEFAULT_GRAPH
    _notice(
        f"the Facebook graph is not available offline; using the synthetic stand-in {FALLBACK_GRAPH} "
        f"(Barabasi-Albert, same size, graph seed from --graph-seed). Get the real graph with "
        f"'{_PROG} datasets fetch {DEFAULT_GRAPH}' or set LDPGRAPH_DATA to a folder holding it.",
        quiet,
    )
    return FALLBACK_GRAPH


def _methods_arg(values: list[str] | None, default: Sequence[str] | None) -> list[str] | None:
    from .baselines.methods import method_names

    if values is None:
        return None if default is None else list(default)
    if "all" in values:
        return method_names()
    known = method_names()
    for v in values:
        if v not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --methods: unknown method {v!r}; choose from {choices}, all")
    return values


def _stats_arg(values: list[str] | None) -> list[str]:
    from .experiments import statistic_names

    if values is None:
        return ["kstars"]
    if "all" in values:
        return statistic_names()
    known = statistic_names()
    for v in values:
        if v.partition(":")[0] not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --stat: unknown statistic {v!r}; choose from {choices}, all")
    return values


def _prepare_out(path: str) -> Path:
    """Create the output folder and check that it is writable (before any work is done)."""
    out = Path(path).expanduser()
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".ldpgraph-write-test-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OSError(f"cannot write to --out {path}: {reason}") from None
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


def _cmd_estimate(args: argparse.Namespace) -> int:
    from .experiments.single import estimate_once
    from .experiments.statistics import statistic_names

    stat = args.stat.strip()
    if stat not in statistic_names():
        choices = ", ".join(statistic_names())
        raise _UsageError(f"argument --stat: unknown statistic {stat!r}; choose from {choices}")
    methods = _methods_arg(_flatten(args.methods), None)
    graph = args.graph if args.graph is not None else _default_graph()
    run = estimate_once(graph, epsilon=args.epsilon, statistic=stat, k=args.k, methods=methods,
                        seed=args.seed, graph_seed=args.graph_seed)
    if args.json:
        print(json.dumps(run.to_dict(), indent=2))
        return 0
    what = run.statistic if run.k is None else f"{run.statistic}, k = {run.k}"
    print(f"graph      {run.graph} ({run.n_nodes:,} nodes, {run.n_edges:,} edges)")
    print(f"statistic  {what}")
    print(f"epsilon    {run.epsilon:g}")
    print(f"seed       {run.seed}")
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
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from .experiments import DEFAULT_METHODS, run_experiment

    epsilons = _flatten(args.epsilons) or list(STUDY_EPSILONS)
    ks = _flatten(args.k) or [2, 3]
    methods = _methods_arg(_flatten(args.methods), DEFAULT_METHODS)
    stats = _stats_arg(_flatten(args.stat))
    out = _prepare_out(args.out)
    graphs = list(dict.fromkeys(args.graphs)) or [_default_graph(args.quiet)]
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
        quiet=args.quiet,
        graph_seed=args.graph_seed,
    )
    paths = result.write(out, plots=not args.no_plots)
    if not args.quiet:
        print(result.table())
        print()
        cfg = result.config
        print(f"{cfg['n_cells']} cells x {cfg['n_trials']} trials in {cfg['total_seconds']:.1f} s "
              f"({cfg['backend']}, n_jobs={cfg['n_jobs']}); seed {cfg['seed']}")
        print(f"wrote {paths['records']} ({result.records.n_rows:,} rows)")
        for key in ("summary", "table", "config"):
            print(f"wrote {paths[key]}")
        if paths["plots"]:
            print(f"wrote {len(paths['plots'])} plots in {paths['plots'][0].parent}")
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
            "source": info.source_page,
        })
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    rows = [("name", "kind", "file", "local copy")]
    for e in entries:
        where = e["path"] or f"not found ({_PROG} datasets fetch {e['name']})"
        rows.append((e["name"], e["kind"], e["file"], where))
    print(_table(rows, right=set()))
    return 0


def _cmd_datasets_fetch(args: argparse.Namespace) -> int:
    from .datasets import fetch

    path = fetch(args.name, url=args.url, cache_dir=args.cache_dir, force=args.force)
    print(path)
    return 0


def _cmd_datasets_path(args: argparse.Namespace) -> int:
    from .datasets import dataset_path

    print(dataset_path(args.name))
    return 0


# ------------------------------------------------------------------------------ entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 success, 1 failure, 2 usage, 130 interrupt).

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    ldpgraph ...
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (already printed)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    debug = bool(getattr(args, "debug", False))
    try:
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
