"""Wide tables draw as a star: a type shared by many predicates becomes one hub, not a clique."""

from __future__ import annotations

from xcore.data.samples import load_sample
from xcore.viz import predicate_graph_figure


def test_mushroom_collapses_to_one_row_type_hub():
    ds = load_sample("mushroom")
    g = ds.predicate_graph()
    hubs = [n for n, d in g.nodes(data=True) if d["kind"] == "type"]
    assert len(hubs) == 1 and g.degree[hubs[0]] == len(ds.predicates)
    assert g.number_of_edges() == len(ds.predicates)  # a star, not 23 * 22 / 2 edges
    assert "argument types" in [t.name for t in predicate_graph_figure(g).data]


def test_small_schemas_keep_direct_edges():
    ds = load_sample("friends_smokers")
    g = ds.predicate_graph()
    assert all(d["kind"] == "predicate" for _, d in g.nodes(data=True))
    assert g.has_edge("friends", "smokes")
    assert ds.predicate_graph(hub_threshold=1).number_of_nodes() > len(ds.predicates)
