"""User study page: participants take a blinded study through their link; researchers (with the key)
build, publish, enrol, close and analyse studies (building in `ui/study_build.py`, the analysis in
`ui/study_analysis.py`, the participant's side in `ui/study_participant.py`).

With ``?study=ID&p=TOKEN`` in the URL this page shows only that participant's view (app.py then
lists no other page). Without the researcher key it offers nothing else. Views only: storage,
blinding, plans and statistics all live in `xcore.study`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import streamlit as st

from ui.study_analysis import analysis_tab, pick_study
from ui.study_build import build_tab, import_box
from ui.study_participant import participant_view, store
from xcore.errors import XcoreError
from xcore.study import access, configured_key
from xcore.study.access import KEY_ENV, STUDY_PARAM, TOKEN_PARAM, check_key_strength, participant_links
from xcore.study.export import responses_csv

KEY_OK = "_study_key_ok"
SESSION_ID = "_study_session_id"
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


# ---------------------------------------------------------------------- researcher: studies
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
