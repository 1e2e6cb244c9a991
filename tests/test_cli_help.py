"""The help says what the tool does (issue 27, item 8): every option, choice, default, plot
format and environment variable the help names exists and behaves as stated.

The choices are generated from the registries (``ldpgraph.cli.help``); these tests walk the
parser, so a new subcommand or option is checked without being listed here.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path

import pytest

import ldpgraph
from ldpgraph.cli import build_parser, main
from ldpgraph.cli import help as cli_help

README = Path(ldpgraph.__file__).resolve().parent.parent / "README.md"
TINY = "ba:n=40,m=3"


def _subparsers(parser: argparse.ArgumentParser, prefix: str = ""):
    """``(name, parser)`` of every (nested) subcommand."""
    for action in parser._actions:  # argparse exposes subparsers only through its actions
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix}{name}"
                yield full, sub
                yield from _subparsers(sub, full + " ")


def _texts(p: argparse.ArgumentParser) -> list[str]:
    return [p.description or ""] + [a.help or "" for a in p._actions]


def _flags(p: argparse.ArgumentParser) -> set[str]:
    out = {s for a in p._actions for s in a.option_strings}
    return out | {f"--no-{s[2:]}" for s in out if s.startswith("--")}


SUBCOMMANDS = dict(_subparsers(build_parser()))

#: defaults the help states for options whose argparse default is None because a library
#: function applies them: (subcommand option dest) -> the library default the help must name
_LIBRARY_DEFAULTS = {
    "max_ratio": lambda: inspect.signature(__import__("ldpgraph.graph", fromlist=["read_edgelist"])
                                           .read_edgelist).parameters["max_ratio"].default,
}


def _shown(value) -> list[str]:
    """Ways the help may write a default value."""
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], (list, tuple)):  # nargs="+" of lists: one list
            value = [x for sub in value for x in sub]
        items = [_shown(v)[0] for v in value]
        return [",".join(items), " ".join(items)]
    if isinstance(value, bool):
        return ["yes" if value else "no"]
    if isinstance(value, float):
        return [f"{value:g}", repr(value)]
    return [str(value)]


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_flag_the_help_names_exists(name):
    p = SUBCOMMANDS[name]
    flags = _flags(p)
    for text in _texts(p):
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text):
            assert flag in flags, f"'ldpgraph {name} --help' names {flag}, which {name} does not take: {text!r}"


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_default_the_help_states_is_the_default(name):
    """'(default X)' / 'default: X' in an option's help is its parsed default (or the library's)."""
    p = SUBCOMMANDS[name]
    for a in p._actions:
        if not a.option_strings or a.help in (None, argparse.SUPPRESS) or a.default is argparse.SUPPRESS:
            continue
        m = re.search(r"default:? ([^;)]+)", a.help)
        marked = re.findall(r"([\w.-]+),? \(default\b", a.help)  # 'clip (default)', 'auto (default: ...)'
        if a.default is not None and a.default is not False and not isinstance(a, argparse._StoreConstAction):
            assert m or marked, f"{name} {a.option_strings[0]}: default {a.default!r} not stated in {a.help!r}"
            stated = m.group(1).strip().lstrip("./") if m else "\0"
            assert any(stated.startswith(v.lstrip("./")) or v in marked for v in _shown(a.default)), (
                f"{name} {a.option_strings[0]}: help says default {m.group(1)!r}, parser has {a.default!r}")
        elif m and re.fullmatch(r"[\d.]+", m.group(1).strip()):  # a literal default the parser lacks
            protocol = _protocol_defaults()  # a protocol's option: its default is the protocol's
            assert a.dest in _LIBRARY_DEFAULTS or a.dest in protocol, f"{name} {a.option_strings[0]}: {a.help!r}"
            defaults = protocol[a.dest] if a.dest in protocol else [_LIBRARY_DEFAULTS[a.dest]()]
            shown = [s for d in defaults for s in _shown(d)]  # (one protocol's default, per-protocol help)
            assert m.group(1).strip() in shown, f"{name} {a.option_strings[0]}: {a.help!r}"


def _protocol_defaults() -> dict:
    """Option name -> its defaults over the registered protocols (one per protocol that takes it)."""
    from ldpgraph.protocols import registry

    out: dict = {}
    for proto in registry.protocols():
        for o in proto.options:
            out.setdefault(o.name, []).append(o.default)
    return out


def test_option_without_a_default_does_not_claim_one():
    graph = next(a for a in SUBCOMMANDS["node"]._actions if "--graph" in a.option_strings)
    assert graph.default is None and "default: facebook" not in graph.help and "no default" in graph.help


def test_environment_variables_in_the_help_are_in_the_documentation():
    docs = [README, *sorted((README.parent / "docs").glob("*.md"))]  # the README and the site's pages
    text = "".join(p.read_text(encoding="utf-8") for p in docs)
    named = {v for p in SUBCOMMANDS.values() for t in _texts(p) for v in re.findall(r"\$([A-Z_]+)", t)}
    assert named >= {"LDPGRAPH_CACHE", "LDPGRAPH_CURATOR_KEY"}
    for var in named:
        assert var in text, f"${var} is in the help, not in the README or docs/*.md"


def _listed(help_text: str, head: str) -> list[str]:
    """The comma-separated names after ``head`` up to the next '(' or ';'."""
    part = help_text.split(head, 1)[1] if head else help_text
    return [x.strip() for x in re.split(r"[(;]", part)[0].split(",") if x.strip()]


def test_estimate_and_experiment_accept_exactly_the_statistics_they_list(capsys):
    for cmd in ("estimate", "experiment"):
        stat = next(a for a in SUBCOMMANDS[cmd]._actions if "--stat" in a.option_strings)
        listed = _listed(stat.help, ": ") + _listed(stat.help, "); ")
        assert listed == cli_help.estimate_statistics()
    for st in cli_help.estimate_statistics():  # each one runs (a tiny graph, a large epsilon)
        assert main(["estimate", TINY, "--stat", st, "--epsilon", "30", "--seed", "0", "--json"]) == 0, st
        assert json.loads(capsys.readouterr().out)["statistic"].startswith(st)
    assert main(["estimate", TINY, "--stat", "nope", "--epsilon", "1"]) == 2


def test_curate_accepts_the_statistics_it_lists_for_each_protocol(tmp_path, capsys):
    stat = next(a for a in SUBCOMMANDS["curate"]._actions if "--stat" in a.option_strings)
    per = cli_help.curate_statistics()
    for proto, stats in per.items():
        assert f"{proto} rows: {', '.join(stats)}" in stat.help
    rows = tmp_path / "r.csv"
    assert main(["node", "--graph", TINY, "--epsilon", "5", "--simulate", "--seed", "0", "--kstar-counts", "2",
                 "--d-max", "40", "--out", str(rows)]) == 0
    for st in per["degree"]:
        assert main(["curate", str(rows), "--stat", st, "--d-max", "40", "--json"]) == 0, st
    for proto, stats in per.items():  # one-round protocols estimate their statistic from round 1
        if proto == "degree":
            continue
        from ldpgraph.protocols import registry

        rounds = registry.get(proto).rounds()
        if len(rounds) != 1:
            continue
        try:
            registry.get(proto).plan(5.0)
        except ValueError:  # a public parameter with no default (the shuffle model's n_users): its own tests
            continue
        for st in stats:  # (transitivity: the node also releases its degree, at a share both sides give)
            share = ["--degree-share", "0.1"] if st == "transitivity" else []
            prow = tmp_path / f"{proto}-{st}.csv"
            assert main(["node", "--protocol", proto, "--graph", TINY, "--epsilon", "5", "--simulate", "--seed", "0",
                         "--out", str(prow), *share]) == 0
            assert main(["curate", str(prow), "--epsilon", "5", "--stat", st, "--json", *share]) == 0, (proto, st)
    capsys.readouterr()


def test_round_one_needs_no_d_max_with_a_private_bound(tmp_path, capsys):
    """curate --help: --d-max 'unless the rows carry lower_degree (--private-bound)'."""
    prot = next(a for a in SUBCOMMANDS["curate"]._actions if "--protocol" in a.option_strings)
    assert "unless the rows carry lower_degree" in prot.help
    rows, b = tmp_path / "r1.csv", tmp_path / "b.txt"
    assert main(["node", "--protocol", "two-round-triangles-dlap", "--private-bound", "--graph", TINY,
                 "--epsilon", "2", "--simulate", "--seed", "0", "--out", str(rows)]) == 0
    assert main(["curate", str(rows), "--epsilon", "2", "--private-bound", "--broadcast-out", str(b)]) == 0
    assert b.is_file()
    capsys.readouterr()


def test_methods_help_lists_every_method_and_each_is_accepted(capsys):
    from ldpgraph.run.method import method_names

    methods = next(a for a in SUBCOMMANDS["estimate"]._actions if "--methods" in a.option_strings)
    assert _listed(methods.help, "estimate --stat: ") == method_names()
    for m in method_names():  # each runs on a statistic it estimates
        st = next(s for s in cli_help.estimate_statistics() if m in method_names(s))
        assert main(["estimate", TINY, "--stat", st, "--methods", m, "--epsilon", "30", "--seed", "0",
                     "--json"]) == 0, m
    capsys.readouterr()


def test_experiment_writes_the_plot_formats_its_help_promises(tmp_path, capsys):
    p = SUBCOMMANDS["experiment"]
    fmts = next(a for a in p._actions if "--plot-formats" in a.option_strings).default
    assert "PNG by default" in p.description and "SVG" not in p.description and fmts == ["png"]
    out = tmp_path / "res"
    assert main(["experiment", TINY, "--epsilons", "1,2", "--k", "2", "--trials", "3", "--methods",
                 "unbiased-dlap", "--seed", "0", "--out", str(out), "--quiet"]) == 0
    assert {f.suffix for f in (out / "plots").iterdir()} == {".png"}
    capsys.readouterr()
