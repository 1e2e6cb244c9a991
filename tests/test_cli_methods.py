"""``ldpgraph methods``: every registered method, its budget split, and how it deploys."""

from __future__ import annotations

import json

import pytest

from ldpgraph.cli import build_parser, main
from ldpgraph.protocols import registry as deployed
from ldpgraph.run.method import get_method, method_names


def _methods(capsys, *args):
    capsys.readouterr()
    assert main(["methods", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)["methods"]


def test_lists_every_method_with_a_budget_that_adds_up(capsys):
    rows = _methods(capsys, "--epsilon", "2.5")
    assert [r["method"] for r in rows] == method_names()
    for r in rows:
        assert sum(r["budget"].values()) == pytest.approx(2.5, rel=1e-12)
        assert r["reference"], r["method"]
        assert r["deployable"] == bool(r["deploy"]) != bool(r["not_deployable"])


def test_stat_filters(capsys):
    rows = _methods(capsys, "--stat", "triangles")
    assert {r["method"] for r in rows} == set(method_names("triangles"))
    assert main(["methods", "--stat", "nope"]) == 2  # bad usage, as in estimate and experiment


def test_every_deployment_names_a_node_protocol_and_its_options():
    """What ``methods`` prints runs: the protocol is a --protocol choice, every option a flag of node."""
    node = build_parser()._subparsers._group_actions[0].choices["node"]  # argparse has no public API for this
    flags = {s for a in node._actions for s in a.option_strings}
    choices = next(a for a in node._actions if "--protocol" in a.option_strings).choices
    for name in method_names():
        m = get_method(name)
        if m.deployed_as is None:
            continue
        proto, options = m.deployed_as
        assert proto in choices, name
        for opt in options:
            assert "--" + opt.replace("_", "-") in flags, (name, opt)
        p = deployed.get(proto)  # a protocol of the layer: its options, and its statistics
        assert set(options) <= {o.name for o in p.options}, name
        assert set(m.statistics) & set(p.statistics), name


def test_every_deployable_protocol_is_reachable_from_a_method():
    named = {get_method(n).deployed_as[0] for n in method_names() if get_method(n).deployed_as}
    built_in = {n for n in deployed.names() if type(deployed.get(n)).__module__ in deployed.MODULES
                and deployed.get(n).deployable}
    assert built_in <= named
    not_deployable = {n for n in deployed.names() if not deployed.get(n).deployable}
    assert not_deployable and not_deployable <= set(method_names())  # shown by 'methods', with the reason
    for name in not_deployable:
        assert get_method(name).deployed_as is None and get_method(name).not_deployable


def test_table(capsys):
    capsys.readouterr()
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "two-round-triangles-dlap-private" in out and "--private-bound" in out
    assert "no: continuous Laplace releases" in out


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_a_deployment_spends_what_its_simulation_spends(epsilon):
    """The layer's plan for a method's deployment releases the same epsilons as the simulated method."""
    for name in method_names():
        m = get_method(name)
        if m.deployed_as is None:
            continue
        proto, options = m.deployed_as
        p = deployed.get(proto)
        public = {k: (2,) if v == "K" else 5 if v == "D" else v for k, v in options.items()}  # k and D: any
        defaults = {o.name: o.default for o in p.options}
        clipping = public.get("clipping", defaults.get("clipping", False))  # arr-triangles: no public bound
        if "d_max" in defaults and not public.get("private_bound") and not clipping:
            public["d_max"] = 5  # a public bound (its value does not change the split)
        if "n_users" in {o.name for o in p.options}:
            public["n_users"] = 1000  # the shuffle model's public n (its value does not change the split)
        plan = p.plan(epsilon, **public)
        released = plan.release_budget()  # the same names, the same split: node and curate print these
        assert released == pytest.approx(m.budget(epsilon), rel=1e-12), name
        assert plan.describe(guarantee=False) == f"epsilon {epsilon:g} = " + " + ".join(
            f"{k} {v:.6g}" for k, v in released.items()) + (f" ({plan.rounds[0].repeats})" if plan.rounds[0].repeats
                                                           else ""), name


def test_statistics_a_deployment_does_not_estimate_are_said(capsys):
    """A method's simulation may estimate more than its deployed protocol: the listing says which, per
    method (edge-orient-triangles, which once simulated transitivity only, now deploys it too)."""
    methods = _methods(capsys)
    for r in methods:
        if not r["deployable"]:
            assert r["deployed_statistics"] is None
            continue
        assert r["deployed_statistics"] == list(deployed.get(r["deploy"].split()[1]).statistics)
        missing = [s for s in r["statistics"] if s not in r["deployed_statistics"]]
        assert (f"({', '.join(missing)}: simulation only)" in r["deploy"]) == bool(missing), r["method"]
    rows = {r["method"]: r for r in methods}
    assert "simulation only" not in rows["edge-orient-triangles"]["deploy"]
    assert "simulation only" not in rows["rr-triangles"]["deploy"]


def test_budget_is_a_node_total_with_the_per_edge_convention_beside_it_where_the_literature_uses_it(capsys):
    rows = {r["method"]: r for r in _methods(capsys, "--epsilon", "1.5")}
    eo = rows["edge-orient-triangles"]
    # only the order's noisy degree is released by both endpoints of an edge
    assert eo["edge_budget"].startswith(f"per edge {1.5 + eo['budget']['order']:.4g} ")
    assert "worse at eps_paper 0.5" in eo["edge_budget"]  # where it loses to the reference, said
    assert rows["edge-orient-reference"]["edge_budget"].startswith("per edge: eps_paper 2 ")
    assert rows["kcore-reference"]["edge_budget"].startswith("per edge: eps_paper 3 ")
    assert rows["rr-triangles"]["edge_budget"] is None
    assert main(["methods", "--stat", "triangles", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "budget: a node's total epsilon 1" in out and "edge-orient-triangles: per edge 1.01" in out
