"""The simulation commands: ``ldpgraph estimate``, ``ldpgraph experiment`` and ``ldpgraph methods``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import (
    DEFAULT_GRAPH,
    STUDY_EPSILONS,
    _check_labels,
    _flatten,
    _fmt_num,
    _graph_input_args,
    _graph_notes,
    _notice,
    _print_graph_notes,
    _shares_arg,
    _table,
    _UsageError,
)

#: plot formats written by default (``experiment --plot-formats``)
_DEFAULT_PLOT_FORMATS = ("png",)


# ------------------------------------------------------------------------------ arg types


def _default_methods() -> tuple[str, ...]:
    from ..experiments.runner import DEFAULT_METHODS

    return DEFAULT_METHODS


def _default_ks() -> tuple[int, ...]:
    from ..experiments.runner import DEFAULT_KS

    return DEFAULT_KS


# ------------------------------------------------------------------------------ helpers


def _default_graph(quiet: bool = False) -> str:
    """The default graph, ``facebook``: it ships with the package, so it is always found."""
    return DEFAULT_GRAPH


def _methods_arg(
    values: list[str] | None, default: Sequence[str] | None, graph_stats: Sequence[str] = ()
) -> list[str] | None:
    """Method names; the triangle protocols join the defaults and 'all' for adjacency statistics."""
    from ..baselines.methods import method_names
    from ..registry import method_names as all_method_names

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
    from ..experiments import statistic_names
    from ..experiments.statistics import GRAPH_STATISTICS

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
    from ..experiments.outputs import claim_output

    claim_output(out)  # another run writing --out: refused now, before any work
    return out


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
    from ..experiments.single import estimate_once
    from ..experiments.statistics import GRAPH_STATISTICS, statistic_names

    stat = args.stat.strip()
    if stat not in statistic_names() and stat not in GRAPH_STATISTICS:
        choices = ", ".join([*statistic_names(), *GRAPH_STATISTICS])
        raise _UsageError(f"argument --stat: unknown statistic {stat!r}; choose from {choices}")
    if stat in GRAPH_STATISTICS:  # default: the protocols of the statistic (estimate_once)
        methods = _methods_arg(_flatten(args.methods), None, [stat])
    else:
        methods = _methods_arg(_flatten(args.methods), _default_methods())
    from ..registry import method_names

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
    from ..notes import single_run_notes

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
    from ..registry import method_names

    return (f"statistic {stat!r} is estimated by {', '.join(method_names(stat))}; none is among "
            f"--methods {' '.join(methods or ())}")


_PLOT_FORMATS = {"png", "svg", "svgz", "pdf", "ps", "eps", "jpg", "jpeg", "tif", "tiff", "webp"}


def _cmd_experiment(args: argparse.Namespace) -> int:
    from ..experiments.runner import check_scheduler_address

    epsilons = _flatten(args.epsilons) or list(STUDY_EPSILONS)
    ks = _flatten(args.k) or list(_default_ks())
    from ..experiments.statistics import GRAPH_STATISTICS

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
    from ..experiments import run_experiment

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
    from ..notes import experiment_notes

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
    from ..core import registry as layer
    from ..registry import get_method, method_names

    rows = []
    for name in method_names(args.stat):
        m = get_method(name)
        deployed = [] if m.deployed_as is None else list(layer.get(m.deployed_as[0]).statistics)
        deploy = _deploy_text(m.deployed_as)
        simulated_only = [s for s in m.statistics if deployed and s not in deployed]
        if simulated_only:  # statistics its simulation estimates but its deployed protocol does not
            deploy += f" ({', '.join(simulated_only)}: simulation only)"
        rows.append({"method": name, "statistics": list(m.statistics), "rounds": len(m.budget(args.epsilon)),
                     "budget": m.budget(args.epsilon), "edge_budget": m.edge_budget(args.epsilon) or None,
                     "unbiased": bool(m.unbiased), "needs": m.needs,
                     "deployable": m.deployed_as is not None, "deploy": deploy,
                     "deployed_statistics": deployed or None,
                     "not_deployable": m.not_deployable or None, "reference": m.reference})
    if args.json:
        print(json.dumps({"epsilon": args.epsilon, "methods": rows}, indent=2))
        return 0
    table = [("method", "statistics", f"budget: a node's total epsilon {args.epsilon:g}",
              "deployment (ldpgraph node/curate)")]
    for r in rows:
        split = " + ".join(f"{k} {v:.4g}" for k, v in r["budget"].items())
        deploy = r["deploy"] or f"no: {r['not_deployable']}"
        table.append((r["method"], ",".join(r["statistics"]), split, deploy))
    print(_table(table, right=set()))
    print(f"\nbudget: a node's total epsilon ({args.epsilon:g}) and its split; where the literature counts "
          "it per edge (an edge's two endpoints together):")
    for r in rows:
        if r["edge_budget"]:
            print(f"  {r['method']}: {r['edge_budget']}")
    if not args.quiet:
        print("\nreferences:")
        for r in rows:
            print(f"  {r['method']}: {r['reference']}")
    return 0


# ------------------------------------------------------------------------------ protocol options


#: what estimate / experiment say of the protocol options they share with node / curate
_OPTIONS_NOTE = ("The protocol options (--d-max, --shares, --mu, ...) are those of node and curate, with the "
                 "same meaning: each applies to the listed methods whose simulation takes it (one no listed "
                 "method takes is refused, naming those that do), and the run records them, so that a "
                 "simulated configuration reruns as a deployment ('ldpgraph methods' shows how).")


def _simulation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The protocol options given on the command line (``estimate`` / ``experiment``)."""
    from ..core import registry

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
