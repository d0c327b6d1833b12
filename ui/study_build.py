"""Building a user study from runs (the researcher's Build and Import tabs of `app_pages/study.py`): pick
conditions among this session's runs and uploaded run bundles, choose items, questions and design, then
download or publish the definition; or import a definition file.

Views only: plans, blinding and storage live in `xcore.study`.
"""

from __future__ import annotations

import streamlit as st

from ui.components import session_runs
from ui.study_participant import store
from xcore.errors import XcoreError
from xcore.methods import Run
from xcore.methods.session_runs import run_label
from xcore.study import TEMPLATES, ConditionSource, Study, build_study, candidate_targets, pick_items
from xcore.viz.common import natural_sorted

UPLOADED = "_study_uploaded_runs"
DRAFT = "_study_draft"


def available_runs() -> dict[str, Run]:
    """Runs of this session (from the method pages) and uploaded run bundles, by a researcher label."""
    runs: dict[str, Run] = {}
    kept = session_runs()
    st.caption(kept.limit_text())
    if kept.dropped_notice():
        st.warning(kept.dropped_notice(), icon=":material/delete_sweep:")
    for key, run in kept.items():
        runs[run_label(key, run)] = run
    runs.update(st.session_state.get(UPLOADED, {}))
    return runs


def upload_runs() -> None:
    files = st.file_uploader("Add run bundles (JSON from a method page's Downloads)", type=["json"],
                             accept_multiple_files=True, key="study_run_upload")
    store_ = st.session_state.setdefault(UPLOADED, {})
    for f in files or []:
        if f.name in store_:
            continue
        try:
            store_[f.name] = Run.from_bundle(f.getvalue())
        except XcoreError as e:
            st.error(f"{f.name}: {e}")


def build_tab() -> None:
    upload_runs()
    runs = available_runs()
    if not runs:
        st.info("No runs yet: run a method on its page, or add run bundles above.")
        return
    options = [(label, name) for label, run in runs.items() for name in run.explanations]
    picked = st.multiselect("Conditions (each becomes Explanation A, B, ... for participants)", options,
                            format_func=lambda o: f"{o[0]} — {o[1]}", key="study_conditions")
    if not picked:
        st.caption("Pick at least one condition (an explainer of a run; two runs of one method compare settings).")
        return
    sources = [ConditionSource(label, runs[label], name) for label, name in picked]
    try:
        targets = candidate_targets(sources)
    except XcoreError as e:
        st.error(str(e))
        return
    c = st.columns(4)
    mode = c[0].radio("Items", ["random", "stratified", "hand"], key="study_item_mode",
                      format_func={"random": "random", "stratified": "half correct, half wrong",
                                   "hand": "hand-picked"}.get)
    n = c[1].number_input("Number of items", 1, max(1, len(targets)), min(12, len(targets)), key="study_n_items")
    design = c[2].radio("Design", ["between", "within"], key="study_design",
                        format_func=lambda d: f"{d}-subject")
    seed = c[3].number_input("Seed", 0, 2**31 - 1, 0, key="study_seed")
    chosen = st.multiselect("Hand-picked items", natural_sorted(targets), key="study_hand") if mode == "hand" else []
    c = st.columns(2)
    study_id = c[0].text_input("Study id (letters, digits, - and _)", "study-1", key="study_id")
    title = c[1].text_input("Title participants see", "Which explanation helps?", key="study_title")
    consent = st.text_area("Consent text", "You are invited to rate explanations of a model's predictions. Taking "
                           "part is voluntary; you can stop at any time. Your answers are stored without your name.",
                           key="study_consent_text")
    templates = st.multiselect("Questions", list(TEMPLATES), default=list(TEMPLATES)[:2], key="study_templates")
    c = st.columns(2)
    k = c[0].slider("Reasons shown per explanation", 1, 10, 5, key="study_k")
    graph = c[1].checkbox("Show the explanation graph", True, key="study_graph")
    if st.button("Build the study", type="primary", key="study_build"):
        try:
            items = pick_items(sources, int(n), mode, seed=int(seed), chosen=chosen)
            questions = [q for t in templates for q in TEMPLATES[t]()]
            st.session_state[DRAFT] = build_study(study_id, title, sources, items, questions, design=design,
                                                  seed=int(seed), consent=consent, k=int(k), graph=graph)
        except XcoreError as e:
            st.error(f"The study cannot be built: {e}")
    draft: Study | None = st.session_state.get(DRAFT)
    if draft is not None:
        publish_box(draft, "draft")


def publish_box(study: Study, key: str) -> None:
    st.success(f"Study **{study.id}**: {len(study.items)} items, {len(study.conditions)} conditions "
               f"({', '.join(c.label for c in study.conditions)}), {len(study.questions)} questions, "
               f"{study.design}-subject.")
    c = st.columns(2)
    c[0].download_button("Download the definition file", study.to_json, f"{study.id}.study.json",
                         mime="application/json", key=f"study_dl_{key}", on_click="ignore")
    if c[1].button("Publish (freeze) this study", key=f"study_publish_{key}"):
        try:
            store().publish(study)
        except XcoreError as e:
            st.error(str(e))
        else:
            st.success(f"Published {study.id}: what participants see is now frozen.")


def import_box() -> None:
    f = st.file_uploader("Import a study definition file", type=["json"], key="study_import")
    if f is None:
        return
    try:
        study = Study.from_json(f.getvalue())
    except XcoreError as e:
        st.error(f"{f.name}: {e}")
        return
    publish_box(study, "import")
