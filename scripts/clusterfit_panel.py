"""The held-out panel of issue 37: graphs nobody tuned the clustering estimators on. FROZEN.

Chosen and committed before any estimator was measured on it (issue 37, "Done when"): real and
synthetic graphs of different degree skew, average clustering from about 0.05 to 0.6 and 5 k to
50 k nodes. Facebook is the development graph and is not in the panel. Do not edit the entries
(names, parameters, seeds) after results exist: a graph added later must be said to be added later.

=============== ========================================================== ====================
name            graph                                                      why
=============== ========================================================== ====================
wiki-vote       SNAP Wiki-Vote (7,115 nodes), ``$LDPGRAPH_DATA``           skewed, C ~ 0.14
email-enron     SNAP Email-Enron (36,692 nodes)                            very skewed, C ~ 0.5
holme-kim       networkx ``powerlaw_cluster_graph(20000, 4, 0.5)``, seed 11 power law + triangles
watts-strogatz  networkx ``watts_strogatz_graph(10000, 10, 0.1)``, seed 12 no skew, C ~ 0.5
geometric       networkx ``random_geometric_graph(5000, 0.028)``, seed 13   no skew, C ~ 0.6
sbm             networkx ``stochastic_block_model``: 50 blocks of 200,     no skew, C ~ 0.06
                p_in 0.1, p_out 0.0005, seed 14
=============== ========================================================== ====================

Usage: ``python scripts/clusterfit_panel.py`` prints each graph's size, maximum degree, average
clustering and transitivity.
"""

from __future__ import annotations

from typing import Any

#: (name, how to build it): a dataset name, or a networkx generator with its arguments and seed
PANEL: tuple[tuple[str, dict[str, Any]], ...] = (
    ("wiki-vote", {"dataset": "wiki-vote"}),
    ("email-enron", {"dataset": "email-enron"}),
    ("holme-kim", {"networkx": "powerlaw_cluster_graph", "args": (20000, 4, 0.5), "seed": 11}),
    ("watts-strogatz", {"networkx": "watts_strogatz_graph", "args": (10000, 10, 0.1), "seed": 12}),
    ("geometric", {"networkx": "random_geometric_graph", "args": (5000, 0.028), "seed": 13}),
    ("sbm", {"networkx": "stochastic_block_model",
             "args": ([200] * 50, [[0.1 if i == j else 0.0005 for j in range(50)] for i in range(50)]),
             "seed": 14}),
)

#: the development graph (tuned on; never part of the panel)
DEVELOPMENT = "facebook"


def panel_graph(name: str) -> Any:
    """The panel graph ``name`` (or the development graph) as an ldpgraph Graph."""
    from ldpgraph.datasets import load_dataset

    if name == DEVELOPMENT:
        return load_dataset(name)
    spec = dict(PANEL)[name]
    if "dataset" in spec:
        return load_dataset(spec["dataset"])
    import networkx as nx

    from ldpgraph.graph.convert import from_networkx

    g = getattr(nx, spec["networkx"])(*spec["args"], seed=spec["seed"])
    g = nx.convert_node_labels_to_integers(nx.Graph(g))
    g.remove_edges_from(nx.selfloop_edges(g))
    return from_networkx(g)


def main() -> None:
    from ldpgraph.protocols.clustering.kernels import average_clustering_truth

    for name, _ in PANEL:
        g = panel_graph(name)
        d = g.degrees
        s2 = float((d * (d - 1) / 2.0).sum())
        import numpy as np

        from ldpgraph.protocols.clustering.adaptive import wedge_table

        t = wedge_table(g)
        tri3 = float((t.incidence @ t.closed.astype(np.float32)).sum())
        print(f"{name:15s} n {g.n_nodes:6d}  m {g.n_edges:7d}  max degree {int(d.max()):5d}  "
              f"avg clustering {average_clustering_truth(g):.4f}  transitivity {tri3 / s2:.4f}")


if __name__ == "__main__":
    main()
