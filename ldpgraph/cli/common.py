"""What the command groups of the command line share: the parser class and its usage error,
the argument types, the edge-list file options and graph loading, the registered protocols'
options, notices and tables.

Examples
--------
>>> _split("0.5, 1,,2")
['0.5', '1', '2']
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the default graph (shipped with the package)
DEFAULT_GRAPH = "facebook"
#: a synthetic graph of the same size (Barabasi-Albert, 4,039 nodes, ~88k edges, seeded): an
#: explicit option only, never used in place of the default graph
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
        from ..limits import check_smallest_epsilon

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


def _output_options(p: argparse.ArgumentParser) -> None:
    """``--json`` and ``--quiet``, the same on every subcommand."""
    p.add_argument("--json", action="store_true", help="print JSON on stdout instead of text")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print nothing but errors (and the JSON with --json): no progress bar, notes "
                   "or table")


def _scheduler_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--scheduler-timeout``: the same option, default and message on experiment and curate."""
    from ..dask_connect import SCHEDULER_TIMEOUT

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
    from ..datasets import resolve_graph
    from ..experiments.inputs import graph_origin

    opts = _file_options(args)
    origin = graph_origin(spec)
    if opts and origin != "file":
        what = "a registered dataset" if origin == "dataset" else "a synthetic spec"
        raise _UsageError(f"{_flags_apply(opts)} to edge-list files; GRAPH {spec!r} is {what}")
    path = Path(spec).expanduser()
    if not opts or not path.is_file():  # resolve_graph says what is wrong with a missing file
        return resolve_graph(spec, rng=args.graph_seed), origin
    from ..graph import load_graph

    return load_graph(path, **opts), origin


def _graph_notes(graph: Any) -> list[str]:
    from ..notes import dropped_edge_notes

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
    from ..experiments.inputs import as_graph_input, file_label, resolve_graph_inputs

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


# ------------------------------------------------------------------------------ helpers


def _notice(message: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"{_PROG}: note: {message}", file=sys.stderr)


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


# ------------------------------------------------------------------------------ protocol options


def _add_protocol_options(p: argparse.ArgumentParser, have: Sequence[str]) -> None:
    """The registered protocols' public options but the flags in ``have`` (already on ``p``)."""
    from ..protocols import registry

    done: set[str] = set()
    for proto in registry.protocols():
        for o in proto.options:
            if o.flag in have or o.flag in done:
                continue
            done.add(o.flag)
            helps: dict[str, list[str]] = {}  # the option's help (its default) -> the protocols saying it
            for q in registry.protocols():
                for x in q.options:
                    if x.flag == o.flag:
                        helps.setdefault(x.help, []).append(q.name)
            if len(helps) == 1:
                text = f"{o.help} ({', '.join(next(iter(helps.values())))})"
            else:  # each protocol's own meaning and default (--shares: its split)
                text = "; ".join(f"{', '.join(users)}: {h}" for h, users in helps.items())
            if o.type is bool and o.name.startswith("no_") and not o.default:  # no --no-no-degree
                p.add_argument(o.flag, action="store_true", default=None, help=text)
            elif o.type is bool:
                p.add_argument(o.flag, action=argparse.BooleanOptionalAction, default=None,
                               help=f"{text}; default {'yes' if o.default else 'no'}")
            elif o.type is int:
                p.add_argument(o.flag, type=_int(o.name, minimum=1), help=text)
            elif o.type is float:
                p.add_argument(o.flag, type=float, metavar="F", help=text)
            elif o.type is str:
                p.add_argument(o.flag, type=str, help=text)
            else:
                metavar = {dict: "Q=F,...", tuple: "K,..."}.get(o.type, o.name.upper())
                p.add_argument(o.flag, metavar=metavar, help=text)


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
