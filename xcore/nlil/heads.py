"""Which head predicates m-NLIL can learn and which a run trains."""

from __future__ import annotations

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.nlil.settings import NLILSettings


def candidate_heads(ds: RelationalDataset) -> list[str]:
    """Unary or binary predicates with target atoms (and labels to learn from)."""
    return [p for p in ds.target_predicates if ds.schema[p].arity in (1, 2)]


def applicable(ds: RelationalDataset) -> str | None:
    """Why m-NLIL cannot run on `ds`, or None."""
    if ds.tabular is not None:
        return ("it learns rules from graph-structured data (entities and relations), not from the rows of a "
                "table: load a graph (e.g. the trains or family samples) or generate scene graphs here")
    heads = candidate_heads(ds)
    if not heads:
        return ("it learns rules for a unary or binary predicate with target atoms: load a graph with "
                "labelled nodes or links (e.g. the trains or family samples) or generate scene graphs here")
    if not any(p.arity == 2 and len(ds.tables[p.name]["obs"]) for p in ds.schema):
        return "it needs at least one observed binary relation to build rule bodies from"
    for h in heads:
        t = pd.concat([ds.tables[h]["obs"], ds.tables[h]["truth"]])
        if (t["value"] >= 0.5).any():
            return None
    return "no target predicate has a true labelled atom (in its observations or truth) to learn from"


def is_knowledge_graph(ds: RelationalDataset) -> bool:
    """Only binary relations, some with held-out true triples: link prediction is the standard evaluation."""
    return all(p.arity == 2 for p in ds.schema) and any(
        (ds.tables[p.name]["truth"]["value"] >= 0.5).any() for p in ds.schema if len(ds.tables[p.name]["truth"]))


def planned_heads(ds: RelationalDataset, settings: NLILSettings) -> tuple[list[str], list[str]]:
    """(heads that will be trained, candidate heads left out by `max_heads`), as the run will choose them."""
    if settings.heads:
        return list(settings.heads), []
    if settings.eval == "link-prediction":
        return [p.name for p in ds.schema if p.arity == 2], []
    cands = candidate_heads(ds)
    return cands[: settings.max_heads], cands[settings.max_heads:]


def default_settings(ds: RelationalDataset) -> NLILSettings:
    """Heads are left empty (every candidate up to `max_heads`, so `max_heads` and `heads` keep their meaning);
    knowledge graphs (binary relations only, held-out triples) are evaluated by link prediction."""
    return NLILSettings(eval="link-prediction" if is_knowledge_graph(ds) else "rules")
