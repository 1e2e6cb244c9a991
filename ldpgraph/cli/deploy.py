"""The deployment commands: ``ldpgraph node``, ``ldpgraph curate`` and ``ldpgraph shuffle``.

Report files are described in :mod:`ldpgraph.protocols.reports`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import help as cli_help
from .common import (
    _add_protocol_options,
    _epsilon,
    _file_options,
    _flags_apply,
    _flatten,
    _fmt_num,
    _graph_file_options,
    _graph_notes,
    _int,
    _int_list,
    _load_graph_arg,
    _notice,
    _print_graph_notes,
    _scheduler_timeout_option,
    _shares_arg,
    _split,
    _table,
    _UsageError,
)

# ------------------------------------------------------------------------------ deployment: node, curate


def _add_deployment_commands(sub: Any, common: argparse.ArgumentParser, graph_help: str) -> None:
    """The ``node`` and ``curate`` subcommands (report files: see ldpgraph.protocols.reports)."""
    p = sub.add_parser(
        "node",
        parents=[common],
        help="release a node's noisy report rows (secure sampler) into a report file",
        description="Run the node side of a protocol (default: the degree protocol) and write its report "
        "rows (CSV, JSON Lines or Parquet, from the --out suffix). A node passes its own neighbour list "
        "(--node-id with --neighbors or --neighbors-file); --graph simulates every node of a graph. "
        "Noise is drawn with the exact integer sampler on the OS CSPRNG unless --simulate is given "
        "(the fast seeded sampler, for tests and experiments). --protocol "
        f"{cli_help.or_list(_registered_protocols())} releases that protocol's rows, round by round "
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
                   help="each node's total privacy budget (> 0), split by the protocol's plan")
    p.add_argument("--kstar-counts", type=_int_list("k", 1), metavar="K",
                   help="also release projected local k-star counts for these k "
                   "(needs --d-max; local-dlap-kstars: the one k it releases)")
    p.add_argument("--d-max", type=_int("d_max", minimum=1), help="public degree bound for the k-star counts")
    p.add_argument("--shares", metavar="Q=F,...",
                   help="budget split, e.g. degree=0.5,kstar_2=0.5 (default equal)")
    p.add_argument("--no-degree", action="store_true", help="do not release the degree")
    p.add_argument("--round", type=_int("round", minimum=1), default=1, help="protocol round (default 1)")
    p.add_argument("--broadcast", metavar="FILE",
                   help="the curator's broadcast after the previous round (round 2 and later)")
    p.add_argument("--protocol", choices=_DEPLOYED_PROTOCOLS, default=DEFAULT_PROTOCOL,
                   help="protocol (default degree; see 'ldpgraph methods'): --epsilon is each node's total "
                   "budget, split by its plan, and node and curate take the same options")
    _add_protocol_options(p, ("--d-max", "--shares", "--kstar-counts", "--no-degree"))
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
    p.add_argument("--kstar-counts", type=_int_list("k", 1), metavar="K",
                   help="the k of the nodes' local k-star count rows (read from the rows without --epsilon)")
    p.add_argument("--no-degree", action="store_true",
                   help="the nodes released no degree (read from the rows without --epsilon)")
    p.add_argument("--broadcast", metavar="FILE", help="broadcast of the previous round (round 2 and later)")
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
                   "(--private-bound; degree_bound for avg-clustering), whose noisy maximum is the bound")
    p.add_argument("--epsilon", "-e", type=_epsilon,
                   help="the nodes' total budget per node (the plan of the protocols listed by "
                   "'ldpgraph methods'; without it, the degree protocol's plan is read from the rows)")
    _add_protocol_options(p, ("--d-max", "--kstar-counts", "--no-degree"))
    p.add_argument("--level", type=float, default=0.95,
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress on stderr (a line every ~10 s while the report files are read, when "
                   "stderr is not a terminal; a bar when it is); the result is printed as always")
    p.set_defaults(handler=_cmd_curate)


def _registered_protocols() -> list[str]:
    """The deployable protocols of the registry (the continuous-Laplace ones are not)."""
    from ..protocols import registry

    return [name for name in registry.names() if registry.get(name).deployable]


#: ``--protocol``'s default, and the accumulator that refuses rows of no deployable protocol
DEFAULT_PROTOCOL = "degree"
_DEPLOYED_PROTOCOLS = tuple(_registered_protocols())


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


def _cmd_node(args: argparse.Namespace) -> int:
    _check_report_suffix(args.out, "--out")  # refuse a bad suffix before any noise is drawn
    _resolve_labels(args)
    return _cmd_node_protocol(args)


def _no_such_round(proto: Any, message: str) -> _UsageError:
    """The refusal of a round or broadcast ``proto`` does not have: its own words where it has them."""
    return _UsageError(proto.rounds_refusal() or message)


def _report_node_labels(path: Path, labels: Any) -> None:
    """Write (and name) the node-label table of a simulated graph whose rows number its nodes."""
    if labels is None:
        return
    from ..run.reportfiles import write_node_labels

    table = write_node_labels(path, labels)
    if table.name != f"{Path(path).stem}.nodes.csv":
        print(f"node labels: {table} (unchanged; {path.name} numbers the nodes 0..n-1 as it does)")
        return
    print(f"wrote {table} (the graph's node labels: {path.name} numbers its nodes 0..n-1, "
          "and this table gives each number's label)")


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
    from ..run.trianglefiles import report_protocol

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
    from ..run.reportfiles import FORMATS

    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise _UsageError(f"{what} {path}: cannot tell the report format from the suffix "
                          f"{suffix or '(none)'!r}; name the file {', '.join(sorted(FORMATS))}")


def _cmd_curate(args: argparse.Namespace) -> int:
    for path in args.reports:
        _check_report_suffix(path, "report file")
    args.expected_nodes = _expected_nodes(args)
    protocol = _files_protocol(args.reports, args.protocol)
    if protocol not in _DEPLOYED_PROTOCOLS:  # none found, or rows of no deployable protocol: the default's
        protocol = DEFAULT_PROTOCOL          # accumulator refuses them, naming the file and row
    return _cmd_curate_protocol(args, protocol)


def _curate_planned(degrees: Any, stat: str, k: int | None, rmse: float, d_max: int | None) -> Any:
    """The planner's ε for an RMSE of ``rmse``, under the ``degrees`` the protocol lets a curator
    assume (a callable: computed only when a warning needs it)."""

    def need() -> float | None:
        from ..notes import planned_epsilon

        return planned_epsilon(stat, k, degrees, rmse, d_max)

    return need


def _node_neighbours(args: argparse.Namespace, needs: str) -> tuple[list[int], list[Any], Any]:
    """(nodes, neighbour lists, labels): one node (--node-id, --neighbors*) or every node of
    --graph, numbered as the in-memory executor numbers them for a protocol whose nodes hold
    ``needs`` (:func:`~ldpgraph.run.memory.release_nodes`)."""
    if args.graph is not None:
        from ..run.memory import release_nodes

        if args.node_id is not None:
            raise _UsageError("--node-id goes with --neighbors; --graph simulates every node")
        g = _load_graph_arg(args.graph, args)[0]
        _print_graph_notes({args.graph: _graph_notes(g)}, False)
        nodes, lists, labels = release_nodes(g, needs)
        return nodes.tolist(), lists, labels
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
    from ..run.roster import read_roster

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
    from ..protocols import registry

    own = {o.name for o in proto.options}
    flags = {o.name: o.flag for p in registry.protocols() for o in p.options}
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
    line = (f"budget     {plan.describe(guarantee=False)} per node (total); round {rnd} spends "
            f"{plan.round(rnd).epsilon:.6g}")
    if plan.shuffle is not None:  # the shuffle model: (epsilon, delta), epsilon0 and the users it assumes
        line += f"\nshuffle    {plan.shuffle.describe()}"
    return line


def _cmd_node_protocol(args: argparse.Namespace) -> int:
    """``ldpgraph node --protocol NAME``: one round's rows of a registered protocol."""
    import numpy as np

    from ..core import Secure, Seeded
    from ..protocols import registry
    from ..run.files import read_broadcast, release_to_file

    proto = registry.get(args.protocol)
    rounds = proto.rounds()  # which round, with which broadcast, before the plan (its options)
    if not 1 <= args.round <= len(rounds):
        raise _no_such_round(proto, f"{proto.name} has no round {args.round}")
    if args.round > 1 and args.broadcast is None:
        raise _UsageError(f"round {args.round} of {proto.name} needs --broadcast (the curator's broadcast of "
                          "the previous round)")
    if args.round == 1 and args.broadcast is not None:
        raise _no_such_round(proto, f"round 1 of {proto.name} takes no --broadcast")
    plan = _protocol_plan(proto, args)
    if args.seed is not None and not args.simulate:
        raise _UsageError("--seed needs --simulate (the secure sampler cannot be seeded)")
    sampler: Any = Secure()
    if args.simulate:
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        sampler = Seeded(seed)
    broadcast, down = None, 0
    if args.broadcast is not None:
        from ..run.authenticate import read_broadcast_once

        with read_broadcast_once(args.broadcast) as copy:  # parsed from one read of the file
            broadcast, down = read_broadcast(proto, copy, plan), copy.stat().st_size
    nodes, lists, labels = _node_neighbours(args, proto.needs)
    rnd = rounds[args.round - 1]
    path, n_rows = release_to_file(args.out, rnd, plan, nodes, [np.asarray(x, dtype=np.int64) for x in lists],
                                   broadcast, sampler)
    extra = f"run id {broadcast.run_id}; " if getattr(broadcast, "run_id", None) is not None else ""
    print(f"wrote {path} ({n_rows:,} row{'' if n_rows == 1 else 's'}: {len(nodes):,} node(s), "
          f"{proto.name} round {args.round}; {extra}{sampler.describe()})")
    print(_budget_lines(plan, args.round))
    part = getattr(broadcast, "node_download", None)  # a broadcast a node reads part of: what these read
    what = f"{down:,} bytes per node" if part is None else f"{part(nodes):,.0f} bytes per node (mean)"
    print(f"traffic    upload {path.stat().st_size / max(len(nodes), 1):,.0f} bytes per node (mean), "
          f"download {what}")
    if plan.shuffle is not None and rnd.shuffled:  # the upload's length is a function of the node's own rows
        print(f"note       the upload's size (its number of rows) is a function of this node's epsilon0 "
              f"{plan.shuffle.local_epsilon:.6g}-LDP rows: whoever sees per-node traffic learns up to "
              "epsilon0 per adjacency bit, not the central epsilon")
    _report_node_labels(path, labels)
    return 0


def _cmd_curate_protocol(args: argparse.Namespace, name: str) -> int:
    """``ldpgraph curate`` of a registered protocol's rows: a round's broadcast, or the estimate."""
    from ..protocols import registry
    from ..protocols.screening import PublicBounds
    from ..run.files import accumulate_files, read_broadcast, write_broadcast

    proto = registry.get(name)
    stats = _curate_protocol_stats(proto, _flatten(args.stat) or [proto.statistics[0]], args.k)
    infer = getattr(proto, "plan_from_rows", None)  # rows that carry their plan (the degree protocol's)
    if args.epsilon is None and infer is None:
        raise _UsageError(f"curating {name} needs the plan: --epsilon (each node's total budget) and the "
                          "nodes' protocol options")
    if args.epsilon is None:
        from ..run.reportfiles import iter_report_chunks

        first = next(iter(iter_report_chunks(args.reports[0], chunk_rows=1024)), None)
        if first is None:
            raise ValueError(f"no reports received ({args.reports[0]})")
        plan = infer(first, **_protocol_public(proto, args))
    else:
        plan = _protocol_plan(proto, args)
    if not 0 < args.level < 1:
        raise _UsageError(f"argument --level: must be in (0, 1), got {args.level!r}")
    rounds = proto.rounds()
    second = args.broadcast is not None and len(rounds) > 1
    rnd = args.round if args.round is not None else (2 if second else 1)
    if not 1 <= rnd <= len(rounds):
        raise _no_such_round(proto, f"{name} has no round {rnd}")
    last = rnd == len(rounds)
    if rnd > 1 and args.broadcast is None:
        raise _UsageError(f"round {rnd} of {name} needs --broadcast (the previous round's broadcast)")
    if rnd == 1 and args.broadcast is not None:
        raise _no_such_round(proto, f"round 1 of {name} takes no --broadcast (round 1 writes it: "
                             "--broadcast-out)")
    if rnd < len(rounds) and args.broadcast_out is None:
        raise _UsageError(f"round {rnd} of {name} writes the broadcast of round {rnd + 1}: pass "
                          "--broadcast-out FILE")
    if last and args.broadcast_out is not None:
        raise _no_such_round(proto, f"round {rnd} is the last round of {name}: no broadcast")
    bounds = None  # the ranges need none (n, D and the node ids are public); these tighten them
    if args.n_nodes is not None or args.degree_bound is not None:
        bounds = PublicBounds(n_nodes=args.n_nodes, degree_bound=args.degree_bound)
    options: dict[str, Any] = {"outliers": args.outliers, "bounds": bounds}
    if rnd == 1:
        options["expected_nodes"] = args.expected_nodes
    from ..run.authenticate import curator_key, read_broadcast_once, sign_broadcast

    key = curator_key(args.curator_key)
    broadcast = None
    if args.broadcast is not None:  # the curator's own, signed output of the previous round
        with read_broadcast_once(args.broadcast, key) as copy:  # the bytes checked are the bytes parsed
            broadcast = read_broadcast(proto, copy, plan)
    step = rounds[rnd - 1]
    from .._progress import Progress

    with Progress(len(args.reports), unit="file", desc="report files", quiet=args.quiet) as bar:
        result = accumulate_files(args.reports, step, plan, broadcast, chunk_rows=args.chunk_rows,
                                  scheduler=args.scheduler, progress=bar, **options)
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
    senders = getattr(result, "n_senders", None)  # rows that count their senders: checked against the plan
    if senders is not None:
        out["n_senders"] = senders
    if rnd == 1:  # (later rounds take n from the curator's signed broadcast)
        out["n_nodes_inferred"] = args.expected_nodes is None and senders is None
        if out["n_nodes_inferred"]:
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
    if not last:
        b = step.broadcast(result, plan)
        bpath = write_broadcast(proto, args.broadcast_out, b)
        sig = sign_broadcast(bpath, key)
        out.update(broadcast=str(bpath), signature=str(sig), run_id=b.run_id, bound=getattr(b, "bound", None))
        if bounds_out:
            out["one_node_bound"] = bounds_out
        down = Path(bpath).stat().st_size
        nxt, what = f"round {rnd + 1}", b.what
        per_node = getattr(b, "download", None)  # a broadcast a node reads part of says what it reads
        where = per_node(down) if per_node else f"every node downloads {down:,} bytes"
        lines.append(f"\nwrote {bpath} ({what} for {nxt}; run id {b.run_id}); {where}")
        lines.append(f"signed {sig.name} with the curator key ({nxt} of curate accepts only it)")
        if args.json:
            print(json.dumps(_finite(out), indent=2))
        else:
            print("\n".join(lines))
        return 0
    if "one_node_round1_bound" in bounds_out:
        out["one_node_round1_bound"] = bounds_out["one_node_round1_bound"]
    from ..notes import estimate_notes

    entries, notes = [], []
    degrees = proto.noisy_degrees(result)
    for st in stats:
        est = proto.estimate(result, plan, broadcast, st)
        one_node = proto.statistic_bound(result, plan, st)
        if one_node is None:
            one_node = bounds_out.get("one_node_bound")
        negative = est.variance_estimate is not None and est.variance_estimate <= 0
        ci = None if negative else _interval_or_none(est, args.level)
        why = _no_std_error_reason(est, negative)
        need = None  # rows of noisy degrees: the planner's epsilon for this error, under those degrees
        if degrees is not None:
            stat, _, pinned = st.partition(":")
            need = _curate_planned(degrees, stat, int(pinned) if pinned else 2, abs(est.value),
                                   plan.public.get("d_max"))
        own = estimate_notes(est.statistic, est.value, None if negative else est.std_error,
                             epsilon=plan.epsilon, level=args.level, no_std_error=why, needed_epsilon=need)
        notes += own
        entries.append((est, negative, ci, one_node, why, own))
        per_node = getattr(est, "core_numbers", None)  # a vector statistic: every node's value too
        if per_node is not None:
            table, source = _write_per_node_table(args, per_node)
            out.update(core_numbers=per_node.tolist(), rounds=est.rounds, core_numbers_table=str(table))
            lines.append(f"rounds     {est.rounds} (the run is over)")
            top = _fmt_num(per_node.max())
            lines.append(f"cores      robust degeneracy {_fmt_num(est.value)} (the largest k with at least "
                         f"k + 1 nodes estimated at k or more, which a few high estimates do not move; the "
                         f"largest single estimate: {top})")
            lines.append(f"wrote {table} (every node's core number by {source}; the estimates are real "
                         "numbers: its column core_number_rounded holds the nearest integers)")
    if args.json:
        out["estimates"] = [{"statistic": est.statistic, "estimate": est.value, "std_error": est.std_error,
                             "std_error_kind": _se_kind(est, why), "variance_estimate": est.variance_estimate,
                             "interval": None if ci is None else list(ci), "level": args.level,
                             "one_node_bound": one_node, "no_std_error_reason": why, "notes": own}
                            for est, negative, ci, one_node, why, own in entries]
        print(json.dumps(_finite(out), indent=2))
        return 0
    print("\n".join(lines))
    rows = [("statistic", "estimate", "std_error", "se_kind", f"{args.level:.0%} interval", "one-node bound")]
    for est, negative, ci, one_node, why, _ in entries:
        shown = "-" if ci is None else f"[{_fmt_num(ci[0])}, {_fmt_num(ci[1])}]"
        se = "-" if est.std_error is None or negative else _fmt_num(est.std_error)
        bound = "-" if one_node is None else _fmt_num(one_node)
        kind = _se_kind(est, why).partition(":")[0]  # none: the reason is in the notes
        rows.append((est.statistic, _fmt_num(est.value), se, kind, shown, bound))
    print()
    print(_table(rows, right={1, 2, 4, 5}))
    if "one_node_round1_bound" in out:
        moved = _fmt_num(out["one_node_round1_bound"])
        print(f"\none node's round-1 bits can move it by at most {moved} more, through the other nodes' "
              "local counts")
    if notes:
        print("\n" + "\n".join(notes))
    return 0


def _finite(doc: Any) -> Any:
    """``doc`` with NaN and infinities as None (JSON has no such numbers; as ``estimate --json``)."""
    import math

    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: _finite(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_finite(v) for v in doc]
    return doc


def _write_per_node_table(args: argparse.Namespace, values: Any) -> tuple[Path, str]:
    """``<first report>.cores.csv``: ``node,label,core_number,core_number_rounded``; the labels from
    ``--roster``, else from a node-label table beside the report files (``node --graph``), else
    none. Returns the table's path and where its labels came from."""
    import csv
    import io

    import numpy as np

    from .._atomic import atomic_write
    from ..run.reportfiles import node_labels_path
    from ..run.roster import read_roster

    n = len(values)
    labels, source = None, "node number (no roster or node-label table found)"
    first = Path(args.reports[0])
    found = [Path(args.roster)] if args.roster is not None else [
        *(node_labels_path(r) for r in args.reports), *sorted(first.parent.glob("*.nodes.csv"))]
    for path in dict.fromkeys(found):
        try:
            roster = read_roster(path)
        except (OSError, ValueError):
            if args.roster is not None:
                raise
            continue
        if len(roster) == n:
            labels, source = roster.labels, f"label (from {path})"
            break
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("node", "label", "core_number", "core_number_rounded"))
    rounded = np.rint(values).astype(np.int64)
    for v in range(n):
        w.writerow((v, "" if labels is None else labels[v], repr(float(values[v])), int(rounded[v])))
    table = first.with_name(f"{first.stem}.cores.csv")
    with atomic_write(table, "w", newline="", encoding="utf-8") as fh:
        fh.write(buf.getvalue())
    return table, source


def _curate_protocol_stats(proto: Any, stats: list[str], k: int) -> list[str]:
    """The statistics to estimate, each checked by the protocol; ``--k`` pins a statistic that takes
    a parameter (``kstars`` -> ``kstars:K``) where the protocol accepts it."""
    out = []
    for st in stats:
        if ":" not in st and k != 2:
            try:
                proto.check_statistic(f"{st}:{k}")
                st = f"{st}:{k}"
            except ValueError:
                pass
        try:
            proto.check_statistic(st)
        except ValueError as exc:
            choices = " or ".join(proto.statistics)
            raise _UsageError(f"{proto.name} reports estimate --stat {choices}, got {st} ({exc})") from None
        out.append(st)
    return out


def _se_kind(est: Any, why: str | None) -> str:
    """How the standard error is computed (:data:`~ldpgraph.protocols.curator.SE_KINDS`), or
    ``"none: <why>"``."""
    if why is not None:
        return "none: " + why
    kind = getattr(est, "std_error_kind", None)
    return kind if isinstance(kind, str) else "unstated"


def _no_std_error_reason(est: Any, negative: bool) -> str | None:
    """Why an estimate has no standard error (None when it has one)."""
    if getattr(est, "no_std_error_reason", None):
        return str(est.no_std_error_reason)
    if negative:
        return (f"the unbiased variance estimate is {est.variance_estimate:.3g} <= 0 (the noise dominates): "
                "no standard error or interval")
    if est.std_error is None and getattr(est, "note", None):
        return est.note
    if est.std_error is None:
        return "the curator of this protocol computes no variance estimate for this statistic"
    return None


# ------------------------------------------------------------------------------ deployment: shuffle


def _add_shuffle_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """``ldpgraph shuffle IN... --out OUT --epsilon E ...``: the shuffler between nodes and curator."""
    p = sub.add_parser(
        "shuffle",
        parents=[common],
        help="the shuffler: check the nodes' rows per sender, drop their node ids, write their multiset",
        description="Stream the report rows of every IN file (CSV, JSON Lines or Parquet) of a shuffled "
        "round (wshuffle-*), check them against the public plan (the nodes' --epsilon and options, as for "
        "node and curate) and per sender (node ids 0..n-1, at most the rows the protocol produces for one "
        "node, one sender token each; refused at the first excess), refuse fewer senders than the plan's "
        "n users (the amplification holds only if all are shuffled together), and write the rows without "
        "node ids, as a multiset in canonical order (what a random permutation reveals, and no more), for"
        " 'ldpgraph curate'. Memory: one chunk and the distinct rows, whatever the number of rows.",
    )
    p.add_argument("inputs", nargs="+", metavar="IN", help="report files of the nodes")
    p.add_argument("--out", required=True, metavar="OUT",
                   help="the shuffled report file (.csv, .jsonl, .parquet)")
    p.add_argument("--epsilon", "-e", type=_epsilon, required=True,
                   help="the nodes' total budget per node (their plan: pass their options too)")
    p.add_argument("--protocol", choices=_DEPLOYED_PROTOCOLS,
                   help="protocol of the rows (default: the first row's)")
    p.add_argument("--round", type=_int("round", minimum=1),
                   help="the shuffled round (default: the protocol's shuffled round)")
    p.add_argument("--expected-nodes", type=_int("expected nodes", minimum=1), metavar="N",
                   help="nodes 0..N-1 must all send (must be the plan's number of users)")
    p.add_argument("--roster", metavar="FILE",
                   help="the public roster of participants: its length must be the plan's number of users")
    p.add_argument("--chunk-rows", type=_int("chunk rows", minimum=1), default=1 << 20,
                   help="rows per streaming chunk (default 1048576; the output does not depend on it)")
    _add_protocol_options(p, ())
    p.set_defaults(handler=_cmd_shuffle)


def _expected_nodes(args: argparse.Namespace) -> int | None:
    """``--expected-nodes``, or the roster's length (they must agree when both are given)."""
    if args.roster is None:
        return args.expected_nodes
    from ..run.roster import read_roster

    n = len(read_roster(args.roster))
    if args.expected_nodes not in (None, n):
        raise _UsageError(f"--expected-nodes {args.expected_nodes} contradicts the roster's {n} participants")
    return n


def _cmd_shuffle(args: argparse.Namespace) -> int:
    from ..protocols import registry
    from ..run.shuffler import shuffle_files

    _check_report_suffix(args.out, "--out")
    for path in args.inputs:
        _check_report_suffix(path, "report file")
    expected = _expected_nodes(args)
    name = _files_protocol(args.inputs, args.protocol)
    if name is None:
        raise _UsageError("no rows name their protocol: pass --protocol")
    proto = registry.get(name)
    rounds = proto.rounds()
    shuffled = [r.number for r in rounds if r.shuffled]
    if args.round is None and len(shuffled) != 1:
        raise _UsageError(f"{name} has no shuffled round: its rows go to the curator as they are (ldpgraph "
                          "curate)" if not shuffled else f"{name} shuffles rounds {shuffled}: pass --round")
    number = shuffled[0] if args.round is None else args.round
    if not 1 <= number <= len(rounds) or not rounds[number - 1].shuffled:
        raise _UsageError(f"round {number} of {name} is not shuffled (shuffled rounds: "
                          f"{', '.join(map(str, shuffled)) or 'none'})")
    plan = _protocol_plan(proto, args)
    done = shuffle_files(args.inputs, args.out, plan, rounds[number - 1], expected_nodes=expected,
                         chunk_rows=args.chunk_rows)
    print(f"wrote {done.path} ({done.n_rows:,} rows from {len(args.inputs)} file(s); node ids dropped, "
          "the rows listed as a multiset)")
    print(f"received   the rows of {done.n_senders:,} users (one sender token each), all the plan's")
    print(_budget_lines(plan, number))
    return 0
