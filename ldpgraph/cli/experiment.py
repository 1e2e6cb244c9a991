"""The simulation commands: ``ldpgraph estimate``, ``ldpgraph experiment`` and ``ldpgraph methods``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
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
    """Method names: the defaults, plus for each adjacency statistic its recommended method of each
    model (all its methods where none is recommended); 'all': every method of each statistic."""
    from ..run.method import did_you_mean, recommended_methods
    from ..run.method import method_names as all_method_names

    def method_names() -> list[str]:  # the k-star methods
        return all_method_names("kstars")

    if values is None:
        extra = [m for st in graph_stats for m in (list(recommended_methods(st)) or all_method_names(st))]
        return None if default is None else list(dict.fromkeys([*default, *extra]))
    if "all" in values:
        every = (m for st in graph_stats for m in all_method_names(st))
        return list(dict.fromkeys([*method_names(), *every]))
    known = [*method_names(), *(m for m in all_method_names() if m not in method_names())]
    for v in values:
        if v not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --methods: unknown method {v!r}{did_you_mean(v, 'method')}; choose "
                              f"from {choices}, all")
    return values


def _stats_arg(values: list[str] | None) -> list[str]:
    from ..experiments import statistic_names
    from ..protocols.statistics import GRAPH_STATISTICS
    from ..run.method import did_you_mean

    if values is None:
        return ["kstars"]
    if "all" in values:
        return statistic_names()
    known = [*statistic_names(), *GRAPH_STATISTICS]
    for v in values:
        if v.partition(":")[0] not in known:
            choices = ", ".join(known)
            raise _UsageError(f"argument --stat: unknown statistic {v!r}{did_you_mean(v, 'statistic')}; "
                              f"choose from {choices}, all")
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
    if any(e.is_vector for e in run.estimates):
        _print_vector_run(run)
    else:
        _print_scalar_run(run)
    if notes:
        print()
        print("\n".join(notes))


def _print_scalar_run(run: Any) -> None:
    print(f"truth      {_fmt_num(run.truth)}")
    print()
    rows = [("method", "estimate", "std_error", "se_kind", "sd_at_truth", "error", "rel_error")]
    for e in run.estimates:
        overflow = e.std_error is not None and math.isinf(e.std_error)
        se = "overflow" if overflow else _fmt_num(e.std_error)  # "-": none (the kind says why)
        kind = "none" if e.std_error_kind.startswith("none") else e.std_error_kind
        rel = abs(e.estimate - run.truth) / abs(run.truth) if run.truth else math.nan
        rows.append((e.method, _fmt_num(e.estimate), se, kind, _fmt_num(e.analytic_sd),
                     _fmt_num(e.estimate - run.truth), "-" if not math.isfinite(rel) else f"{rel:.3%}"))
    print(_table(rows, right={1, 2, 4, 5, 6}))
    print()
    print("std_error: the curator's, from the reports and public values only (se_kind: how; none: the "
          "reason follows); sd_at_truth: the closed-form standard deviation at the true graph (only a "
          "simulation knows it). '-' where none exists, 'overflow' where it exceeds the float range.")


def _print_vector_run(run: Any) -> None:
    """A vector statistic (core numbers): per method its summary, never a scalar truth or error."""
    from ..protocols.kcore.reference import FACTOR_BINS

    first = run.estimates[0].details
    print(f"degeneracy {_fmt_num(first.get('degeneracy'))} (the true largest core number)")
    print()
    bins = [f"[{lo:g},{hi:g})" for lo, hi in zip(FACTOR_BINS[:-1], FACTOR_BINS[1:], strict=True)]
    rows = [("method", "mean_factor", "max_factor", "degeneracy_est", "rounds", *bins)]
    for e in run.estimates:
        d = e.details or {}
        hist = d.get("approximation_factor_histogram", {})
        rows.append((e.method, f"{d.get('mean_approximation_factor', math.nan):.4g}",
                     f"{d.get('max_approximation_factor', math.nan):.4g}",
                     _fmt_num(d.get("degeneracy_estimate")), _fmt_num(d.get("rounds")),
                     *(f"{v:,}" for v in hist.values())))
    print(_table(rows, right=set(range(1, len(rows[0])))))
    print()
    print(f"{run.statistic} is a vector (one core number per node): a node's approximation factor is "
          "max(k^_v/k_v, k_v/k^_v) over the nodes of core number >= 1 (1: exact); the last columns count "
          "the nodes per factor range. No standard error: the summary is of this one run ('ldpgraph "
          "experiment' gives its spread over trials).")


def _cmd_estimate(args: argparse.Namespace) -> int:
    from ..experiments.single import estimate_once
    from ..protocols.statistics import GRAPH_STATISTICS, statistic_names
    from ..run.method import did_you_mean, method_names

    stat = args.stat.strip()
    if stat not in statistic_names() and stat not in GRAPH_STATISTICS:
        choices = ", ".join([*statistic_names(), *GRAPH_STATISTICS])
        raise _UsageError(f"argument --stat: unknown statistic {stat!r}{did_you_mean(stat, 'statistic')}; "
                          f"choose from {choices}")
    given = _flatten(args.methods)
    if stat in GRAPH_STATISTICS and given is not None and "all" in given:  # every method of the statistic
        methods = method_names(stat)
    elif stat in GRAPH_STATISTICS:  # default: the recommended method of each model (estimate_once)
        methods = _methods_arg(given, None, [stat])
    else:
        methods = _methods_arg(given, _default_methods())
    if methods is not None and not set(methods) & set(method_names(stat)):
        raise _UsageError(_no_method_for(stat, methods))  # (both ways: k-star and triangle methods)
    other = [m for m in methods or () if m not in method_names(stat)]
    if other and given is not None and "all" not in given:  # (defaults and 'all' say nothing of them)
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
                            seed=seed, graph_seed=args.graph_seed, options=_simulation_options(args),
                            quiet=args.quiet)
        seed = run.seed  # one root seed for all k (drawn once when not given)
        runs.append(run)
        if run.k is None:  # the statistic takes no parameter: one run
            break
    from ..notes import single_run_notes

    data = graph.graph if stat in GRAPH_STATISTICS else graph.degrees
    ran = [e.method for e in runs[0].estimates]
    left_out = [] if given is not None else [m for m in method_names(stat) if m not in ran]
    notes = [single_run_notes(r, data) for r in runs]
    if args.json:
        docs = [{**r.to_dict(), "graph_notes": graph_notes, "notes": n, "methods_left_out": left_out}
                for r, n in zip(runs, notes, strict=True)]
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
        return 0
    if args.quiet:
        return 0
    for i, run in enumerate(runs):
        if i:
            print()
        _print_single_run(run, notes[i])
    if left_out:
        print()
        print(_methods_note(stat, ran, left_out))
    return 0


def _methods_note(stat: str, ran: Sequence[str], left_out: Sequence[str]) -> str:
    """Which methods ran by default, and how to run the others (``estimate`` / ``experiment``)."""
    from ..run.method import recommended_methods

    models = recommended_methods(stat)
    if models and set(ran) <= set(models):
        what = ("the recommended method of each model: "
                + "; ".join(f"{m} ({models[m]})" for m in ran))
    else:
        what = "the default methods"
    rest = f"the other {len(left_out)}" if len(left_out) > 3 else ", ".join(left_out)
    return (f"{stat}: ran {what}. --methods all adds {rest} "
            f"('ldpgraph methods --stat {stat}' lists them all, with their references).")


def _no_method_for(stat: str, methods: Sequence[str] | None) -> str:
    """The refusal of an estimate none of whose methods estimates ``stat``."""
    from ..run.method import method_names

    return (f"statistic {stat!r} is estimated by {', '.join(method_names(stat))}; none is among "
            f"--methods {' '.join(methods or ())}")


_PLOT_FORMATS = {"png", "svg", "svgz", "pdf", "ps", "eps", "jpg", "jpeg", "tif", "tiff", "webp"}


def _cmd_experiment(args: argparse.Namespace) -> int:
    from ..experiments.runner import check_scheduler_address

    epsilons = _flatten(args.epsilons) or list(STUDY_EPSILONS)
    ks = _flatten(args.k) or list(_default_ks())
    from ..protocols.statistics import GRAPH_STATISTICS

    stats = _stats_arg(_flatten(args.stat))
    graph_stats = [st for st in GRAPH_STATISTICS if st in stats]
    methods = _methods_arg(_flatten(args.methods), _default_methods(), graph_stats)
    from ..run.method import method_names

    for st in dict.fromkeys(s.partition(":")[0] for s in stats):  # refused as estimate refuses it (exit 2)
        if methods is not None and not set(methods) & set(method_names(st)):
            raise _UsageError(_no_method_for(st, methods))
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
    from ..experiments.outputs import release_claim

    try:
        with _removed_if_left_empty(out, created):  # a failed run leaves no empty --out behind
            return _run_experiment_cmd(args, out, specs, labels, epsilons, ks, methods, stats)
    finally:
        release_claim(out)  # (a written run gave it up already): no .NAME.lock file is left behind


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
    from ..run.method import method_names

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
        quiet=args.quiet,  # progress is on stderr: --json keeps it
        graph_seed=args.graph_seed,
        preload_plots=not args.no_plots,
        options=_simulation_options(args),
    )
    paths = result.write(out, plots=not args.no_plots, plot_formats=args.plot_formats)
    cfg = result.config
    from ..notes import experiment_notes

    accuracy_notes = experiment_notes(result, graphs)
    left_out = {} if args.methods is not None else _left_out(stats, methods or ())
    if args.json:
        doc = {
            "config": cfg,
            "files": {k: [str(p) for p in v] if isinstance(v, list) else str(v) for k, v in paths.items()},
            "notes": result.notes,
            "accuracy_notes": accuracy_notes,
            "graph_notes": graph_notes,
            "methods_left_out": left_out,
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
    if left_out:
        print()
        print("\n".join(_methods_note(st, [m for m in methods or () if m in method_names(st)], rest)
                        for st, rest in left_out.items()))
    print()
    ran = cfg["backend"]
    if cfg["n_jobs"] != 1 and cfg.get("parallel", {}).get("processes") == 1:
        ran = "in this process: workers would not pay"  # the adaptive runner's decision
    print(f"{cfg['n_cells']} cells x {cfg['n_trials']} trials in {cfg['total_seconds']:.1f} s "
          f"({ran}, n_jobs={cfg['n_jobs']}); seed {cfg['seed']}")
    if cfg.get("options"):
        print(f"options {_options_text(cfg['options'])}")
    print(f"wrote {paths['records']} ({result.records.n_rows:,} rows)")
    for key in ("summary", "table", "costs", "config", "manifest"):
        if key in paths:
            print(f"wrote {paths[key]}")
    if paths["plots"]:
        print(f"wrote {len(paths['plots'])} plots in {paths['plots'][0].parent}")
    return 0


def _left_out(stats: Sequence[str], methods: Sequence[str]) -> dict[str, list[str]]:
    """The methods of each statistic of the grid that the default methods leave out."""
    from ..run.method import method_names

    out = {}
    for st in dict.fromkeys(s.partition(":")[0] for s in stats):
        rest = [m for m in method_names(st) if m not in methods]
        if rest:
            out[st] = rest
    return out


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
    from ..protocols import registry as layer
    from ..run.method import get_method, method_names

    rows = []
    try:
        names = method_names(args.stat)
    except ValueError as exc:  # a bad --stat is bad usage, as in estimate and experiment
        raise _UsageError(f"argument --stat: {exc}") from None
    for name in names:
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
                     "not_deployable": m.not_deployable or None, "reference": m.reference,
                     "model": m.model or None, "recommended_for": list(m.recommended),
                     "size_limit": getattr(m.protocol, "size_limit", "") or None})
        guarantee = getattr(m, "guarantee", None)  # the shuffle model's (epsilon, delta), epsilon0, users
        shuffle = guarantee(args.epsilon, args.n_users) if guarantee is not None else None
        rows[-1]["shuffle"] = None if shuffle is None else {**asdict(shuffle), "describe": shuffle.describe()}
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
    shuffled = [r for r in rows if r["shuffle"] is not None]
    if shuffled:
        print(f"\nshuffle model, at epsilon {args.epsilon:g} for {args.n_users:,} users (--n-users):")
        for r in shuffled:
            print(f"  {r['method']}: {r['shuffle']['describe']}")
    default = [f"{r['method']} ({', '.join(r['recommended_for'])}; {r['model']})"
               for r in rows if r["recommended_for"]]
    if default and not args.quiet:
        print("\nrun by default (the recommended method of each model): " + ", ".join(default))
    print(f"\nbudget: a node's total epsilon ({args.epsilon:g}) and its split; where the literature counts "
          "it per edge (an edge's two endpoints together):")
    for r in rows:
        if r["edge_budget"]:
            print(f"  {r['method']}: {r['edge_budget']}")
    limited = [r for r in rows if r["size_limit"]]
    if limited:
        print("\nsize limits of the simulation:")
        for r in limited:
            print(f"  {r['method']}: {r['size_limit']}")
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
    from ..protocols import registry

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
