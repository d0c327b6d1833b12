"""What a dataset offers Markov-logic explanation: its query predicates, their text setting (words,
links) and the explainers that apply to them."""

from __future__ import annotations

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.mln.explainer_names import NAMES, WORD_EXPLAINERS
from xcore.mln.workflow import TextSetting, available_methods, detect_setting


def text_setting(dataset: RelationalDataset, target: str | None) -> TextSetting | None:
    """The data's query/object/word/link setting, or None when it has no open query predicate."""
    try:
        return detect_setting(dataset, target)
    except XcoreError:
        if target is not None and not any_arity_query(dataset, target):
            raise
        return None


def any_arity_query(dataset: RelationalDataset, target: str) -> bool:
    """True when `target` is an open predicate with query atoms (of any arity: M-Explain explains them)."""
    return target in dataset.schema.names and not dataset.predicate(target).closed and len(dataset.targets(target)) > 0


def declared_query(dataset: RelationalDataset) -> str | None:
    """The first query predicate a loaded Markov logic program names (Tuffy query.db, pracmln query.conf)."""
    return next((p.name for p in dataset.predicates if p.description == "query predicate"
                 and any_arity_query(dataset, p.name)), None)


def default_explainers(dataset: RelationalDataset, target: str | None) -> tuple[str, ...]:
    """The explainers offered by default for a query predicate: M-Explain on any; I-/R-Explain on an open
    unary one; LIME and SHAP where there are words and observed labels of both classes."""
    setting = text_setting(dataset, target) if target is not None else None
    if setting is None:
        return ("mln:m-explain",)
    return tuple(NAMES[m] for m in available_methods(setting)
                 if NAMES[m] not in WORD_EXPLAINERS or labelled_both_ways(dataset, setting.target))


def explainer_choices(dataset: RelationalDataset, target: str | None) -> list[str]:
    """Every explainer that can run for a query predicate (registry names)."""
    setting = text_setting(dataset, target) if target is not None else None
    return [NAMES[m] for m in available_methods(setting)] if setting is not None else ["mln:m-explain"]


def labelled_both_ways(dataset: RelationalDataset, target: str) -> bool:
    """True when the query predicate has observed atoms of both classes: the bag-of-words baselines
    (LIME, SHAP) train a classifier on them, so by default they are offered only then."""
    observed = dataset.table(target, "obs")["value"].to_numpy(dtype=float) >= 0.5
    return bool(observed.any() and not observed.all())


def n_query_atoms(dataset: RelationalDataset) -> int:
    """Query atoms of every predicate (decides exact enumeration or sampling under ``inference="auto"``)."""
    return sum(len(dataset.targets(p.name)) for p in dataset.predicates)
