"""User study page: participants take a blinded study through their link; researchers (with the key)
build, publish, enrol, close and analyse studies.

With ``?study=ID&p=TOKEN`` in the URL this page shows only that participant's view (app.py then
lists no other page). Without the researcher key it offers nothing else. Views only: storage,
blinding, plans and statistics all live in `xcore.study`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import streamlit as st

from ui.components import session_runs
from ui.study_participant import participant_view, store
from xcore.errors import XcoreError
from xcore.methods import Run
from xcore.methods.session_runs import run_label
from xcore.study import (
    TEMPLATES,
    ConditionSource,
    Study,
    access,
    analyse,
    build_study,
    candidate_targets,
    configured_key,
    pick_items,
)
from xcore.study.access import KEY_ENV, STUDY_PARAM, TOKEN_PARAM, check_key_strength, participant_links
from xcore.study.export import responses_csv
from xcore.study.report import diverging_figure, html_report, means_figure
from xcore.viz.common import natural_sorted

KEY_OK = "_study_key_ok"
SESSION_ID = "_study_session_id"
UPLOADED = "_study_uploaded_runs"
DRAFT = "_study_draft"
LINKS = "_study_links"


# ---------------------------------------------------------------------- researcher access
def researcher_unlocked() -> bool:
    """True once this session gave the configured researcher key (never read from the URL)."""
    expected = configured_key(st.secrets)
    if not expected:
        st.info(f"The researcher view is off: set the environment variable `{KEY_ENV}` or `researcher_key` in "
                "`.streamlit/secrets.toml`. Participants open the study through the link they were given.")
        return False
    try:
        check_key_strength(expected)
    except XcoreError as e:
        st.error(f"The researcher view is off: {e}. Set a longer key and restart the app.")
        return False
    digest = hashlib.sha256(expected.encode()).hexdigest()
    if hmac.compare_digest(str(st.session_state.get(KEY_OK, "")), digest):
        return True
    st.caption("Participants: open the study through the link you were given.")
    with st.form("study_login"):
        given = st.text_input("Researcher key", type="password", key="study_key_input")
        ok = st.form_submit_button("Open the researcher view")
    if ok:
        session = st.session_state.setdefault(SESSION_ID, secrets.token_hex(16))
        opened, message = access.GUARD.attempt(session, given, expected)  # slowed, limited, constant time
        if opened:
            st.session_state[KEY_OK] = digest
            st.rerun()
        st.error(message)
    return False


# ---------------------------------------------------------------------- researcher: build
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


# ---------------------------------------------------------------------- researcher: studies
def pick_study(key: str) -> str | None:
    frame = store().studies()
    if frame.empty:
        st.info("No study is published yet.")
        return None
    st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_table")
    return st.selectbox("Study", list(frame["id"]), key=f"{key}_pick")


def make_links(study_id: str) -> None:
    """Enrol the number of participants asked for and keep their links for this pass to show once."""
    try:
        tokens = store().add_participants(study_id, int(st.session_state.get("study_new_n", 5)))
    except XcoreError as e:
        st.session_state[LINKS] = (study_id, [], str(e))
    else:
        st.session_state[LINKS] = (study_id, tokens, None)


def studies_tab() -> None:
    study_id = pick_study("study_studies")
    if study_id is None:
        return
    s = store()
    study = s.study(study_id)
    closed = s.is_closed(study_id)
    c = st.columns(3)
    c[0].number_input("New participants", 1, 1000, 5, key="study_new_n")  # read by make_links
    base = c[1].text_input("App address", str(getattr(st.context, "url", "") or "http://localhost:8501"),
                           key="study_base_url")
    # a callback: the links are made before this pass draws the studies table, so its count is current
    c[2].button("Create participant links", key="study_make_links", on_click=make_links, args=(study_id,))
    links = st.session_state.get(LINKS)
    if links and links[0] == study_id and len(links) > 2 and links[2]:
        st.error(links[2])
    elif links and links[0] == study_id:
        text = "\n".join(participant_links(base, study_id, links[1]))
        st.caption("Each link is shown once (only a hash of its token is stored): copy or download them now.")
        st.code(text, language=None)
        st.download_button("Download links", lambda: text, f"{study_id}_links.txt", key="study_links_dl",
                           on_click="ignore")
    st.button("Reopen the study" if closed else "Close the study to new answers", key="study_close",
              on_click=s.close, args=(study_id, not closed))
    st.caption("Closed: no new answers are accepted." if closed else "Open: participants can answer.")
    with st.expander("Conditions (unblinded: researchers only)"):
        st.dataframe([{"code": c.code, "method": c.method, "explainer": c.explainer, "run": c.source}
                      for c in study.conditions], hide_index=True)
    c = st.columns(2)
    # exports are made when clicked (Streamlit's deferred download), never on a rerun, and never kept
    c[0].download_button("Export the definition file", study.to_json, f"{study_id}.study.json",
                         mime="application/json", key="study_export", on_click="ignore")
    c[1].download_button("Raw responses (CSV)", lambda: responses_csv(s, study_id), f"{study_id}_responses.csv",
                         mime="text/csv", key="study_csv", on_click="ignore")


# ---------------------------------------------------------------------- researcher: analysis
def analysis_tab() -> None:
    # answers arrive from other sessions: the store is read afresh on every pass, and this button makes one
    st.button("Refresh answers", key="study_refresh", icon=":material/refresh:",
              help="Read the answers stored so far (participants answer in their own sessions).")
    study_id = pick_study("study_analysis")
    if study_id is None:
        return
    s = store()
    study, responses = s.study(study_id), s.responses(study_id)
    if responses.empty:
        st.info("No answers yet (press Refresh answers to read them again).")
        return
    exclude = st.checkbox("Leave out participants who failed an attention check", True, key="study_exclude")
    try:
        a = analyse(study, responses, exclude_failed_attention=exclude)
    except XcoreError as e:
        st.error(f"The analysis failed: {e}")
        return
    st.caption(f"{a.n_participants} participants, {len(responses):,} answers; {len(a.excluded)} left out for "
               "failed attention checks. Tests and intervals use one mean per participant.")
    if a.orphans:
        st.warning(f"{a.orphan_answers} answers of {a.orphans} participants whose enrolment row is missing "
                   "(deleted outside xcore) are included; they show as negative participant numbers.")
    st.dataframe(a.counts, hide_index=True, width="stretch", key="study_counts")
    rated = [q.id for q in study.questions if q.rated]
    qid = st.selectbox("Question", rated, key="study_question",
                       format_func=lambda i: study.question(i).text[:90])
    st.plotly_chart(diverging_figure(a, qid), width="stretch", key="study_div")
    st.plotly_chart(means_figure(a), width="stretch", key="study_means_fig")
    st.subheader("Means with 95% Student-t intervals")
    st.dataframe(a.means.round(3), hide_index=True, width="stretch", key="study_means")
    st.subheader("Tests between conditions")
    st.dataframe(a.tests.round(4), hide_index=True, width="stretch", key="study_tests")
    if len(a.parts):
        st.subheader("Relational vs non-relational parts")
        st.dataframe(a.parts.round(4), hide_index=True, width="stretch", key="study_parts")
    st.subheader("Time per item")
    st.dataframe(a.times.round(2), hide_index=True, width="stretch", key="study_times")
    c = st.columns(2)
    c[0].download_button("Raw responses (CSV)", lambda: responses_csv(s, study_id), f"{study_id}_responses.csv",
                         mime="text/csv", key="study_csv_analysis", on_click="ignore")
    c[1].download_button("Analysis report (HTML)", lambda: html_report(a), f"{study_id}_report.html",
                         mime="text/html", key="study_report", on_click="ignore")


def researcher_view() -> None:
    st.title("User study")
    if not researcher_unlocked():
        return
    # opening a tab reruns the page, so the studies table and the analysis read the store afresh
    tabs = st.tabs(["Build", "Import", "Studies and links", "Analysis"], key="study_tabs", on_change="rerun")
    with tabs[0]:
        build_tab()
    with tabs[1]:
        import_box()
    with tabs[2]:
        studies_tab()
    with tabs[3]:
        analysis_tab()


params = st.query_params
if STUDY_PARAM in params or TOKEN_PARAM in params:
    participant_view(str(params.get(STUDY_PARAM, "")), str(params.get(TOKEN_PARAM, "")))
else:
    try:
        researcher_view()
    except XcoreError as e:
        st.error(str(e))
