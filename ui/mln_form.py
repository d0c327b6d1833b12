"""The Markov-logic page's settings (`app_pages/mln.py`): the generated form's layout, the query
predicates it offers, the rule editor (the data's starting rules, edits kept across navigation) and the
sidebar's annotation upload.

Views only: the settings are `MLNSettings`, the starting rules and annotations come from `xcore.mln`.
"""

from __future__ import annotations

import streamlit as st

from ui.common import guarded
from ui.forms import FormLayout
from ui.forms import settings_form as form
from ui.state import SCOPES, keep, put, reset_on
from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import ReviewAnnotation, annotation_from_json
from xcore.methods import REGISTRY
from xcore.mln.explainer_names import LEGACY
from xcore.mln.settings import EXACT_LIMIT, MLNSettings
from xcore.mln.targets import any_arity_query, declared_query, default_explainers, explainer_choices, n_query_atoms
from xcore.mln.workflow import TextSetting, find_annotation, query_predicates, starting_rules

METHOD = "mln"


def rules_editor(ds: RelationalDataset, setting: TextSetting | None) -> str:
    """The rules text, reset to the data's starting rules whenever the data changes; edits are kept across
    navigation."""
    if "mln_rules_next" in st.session_state:  # learned weights replace the editor's text before it is drawn
        put("mln_rules", st.session_state.pop("mln_rules_next"))
    fingerprint = ds.fingerprint()
    if st.session_state.get(SCOPES, {}).get("mln_rules") != fingerprint:
        reset_on("mln_rules", fingerprint, guarded(starting_rules, ds, setting) or "")
    keep("mln_rules", "")
    text = st.text_area("Weighted first-order clauses (Alchemy syntax, e.g. `1.5 smokes(x) => cancer(x)`)",
                        height=180, key="mln_rules")
    keep("mln_rules")
    return text


def query_candidates(ds: RelationalDataset) -> list[str]:
    """Query predicates to offer: I-Explain's (open unary) first, then M-Explain's of any arity; a loaded
    program's declared query first of all."""
    candidates = query_predicates(ds)
    candidates += [p.name for p in ds.predicates if p.name not in candidates and any_arity_query(ds, p.name)]
    if declared_query(ds) in candidates:
        candidates.remove(declared_query(ds))
        candidates.insert(0, declared_query(ds))
    return candidates


def inference_note(ds: RelationalDataset, values) -> str | None:
    if values["inference"] != "auto":
        return None
    return (f"auto: exact enumeration up to {EXACT_LIMIT} query atoms (here {n_query_atoms(ds)}), else sampling "
            "with the Sampler setting (Gibbs, or MC-SAT where hard or heavy formulas tie query atoms).")


def not_exact(values) -> bool:
    return values["inference"] == "exact"


# Where the Markov-logic settings go (the fields come from `MLNSettings`; the rules have their own editor).
LAYOUT = FormLayout(
    rows=(("target", "query"), ("learn", "inference", "explainers"),
          ("sampler", "n_samples", "burn_in", "n_chains", "seed"),
          ("C", "S", "T", "top_k", "aggregation", "work")),
    hidden=("rules",),
    widgets={"learn": "radio", "inference": "radio", "sampler": "radio", "C": "slider", "S": "slider"},
    steps={"n_samples": 100, "burn_in": 50, "C": 0.05, "S": 0.05},
    choices={"target": lambda d, v: query_candidates(d),
             "explainers": lambda d, v: guarded(explainer_choices, d, v["target"]) or ["mln:m-explain"]},
    labels={"explainers": LEGACY.get},
    follow=lambda d, v: {"explainers": list(default_explainers(d, v["target"]))}, follow_on=("target",),
    disable_if={"sampler": not_exact, "n_samples": not_exact, "burn_in": not_exact, "n_chains": not_exact},
    notes={"inference": inference_note})


def settings_form(ds: RelationalDataset) -> MLNSettings | None:
    return form(REGISTRY[METHOD], ds, LAYOUT)


def annotation_upload(ds: RelationalDataset) -> ReviewAnnotation | None:
    """The dataset's own annotation (bundled sample) or one uploaded in the sidebar."""
    found = guarded(find_annotation, ds)
    up = st.sidebar.file_uploader("Annotation (annotation.json)", type=["json"], key="mln_annotation_file",
                                  help="Planted explanations: planted_words, true_links, labels.")
    if up is not None:
        try:
            text = up.getvalue().decode("utf-8")
        except UnicodeDecodeError:
            st.sidebar.error(f"{up.name}: not UTF-8 text")
            return found
        ann = guarded(annotation_from_json, text, up.name)
        if ann is not None:
            return ann
    return found
