"""The participant's side of the user study page: consent, one blinded screen at a time, answers saved.

Views only (shared by `app_pages/study.py` and `study_app.py`): storage, blinding and the screens' content live in `xcore.study`.
"""

from __future__ import annotations

import logging
import re
import time

import plotly.io as pio
import streamlit as st

from xcore.errors import XcoreError
from xcore.study import AccessDenied, ReplayRejected, StudyClosed, StudyStore
from xcore.study.store import default_url

LOG = logging.getLogger(__name__)
SETTLED = "_study_settled"
NOTICE = "_study_notice"
SHOWING = "_study_showing"
"""(study, participant, position) of the screen this tab drew last."""
UNAVAILABLE = ("The study is not available right now. Please try again in a few minutes; your saved answers "
               "are kept.")
"""What a participant sees when the study database cannot be opened or read: never a path or an error text."""
OTHER_TAB = ("Item {n} had already been answered (perhaps in another tab or window), so the answers you just "
             "gave on it were not saved; your earlier answers to it are kept. Please continue here, in one tab.")
HIDE_CHROME = ("<style>[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],"
               "[data-testid='stSidebarNav']{display:none !important}</style>")


@st.cache_resource(show_spinner=False)
def _store(url: str) -> StudyStore:
    return StudyStore(url)


def store() -> StudyStore:
    """The study database (one engine per URL, shared by sessions)."""
    return _store(default_url())


def escape_markdown(text: str) -> str:
    """`text` shown literally in markdown (atom names such as same_user(a, b) keep their underscores)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", text)


# ---------------------------------------------------------------------- participant view
def participant_view(study_id: str, token: str) -> None:
    """One participant's view: consent, one screen at a time, progress, next; nothing else."""
    st.markdown(HIDE_CHROME, unsafe_allow_html=True)
    if not st.session_state.get(SETTLED):
        # the first script run of a fresh browser session: run once more before showing a form, so the
        # answers given on it are not dropped by the session's first rerun (seen with a reloaded link)
        st.session_state[SETTLED] = True
        st.rerun()
    try:
        session = store().participant(study_id, token)
        closed = store().is_closed(study_id)
        consented, position = session.progress()
    except AccessDenied:
        st.error("This study link is not valid. Please check that you copied the whole link.")
        return
    except XcoreError as e:
        LOG.warning("participant view of study %r: %s", study_id, e)  # the details go to the server log only
        st.error(UNAVAILABLE)
        return
    study = session.study
    st.title(study.title)
    if closed:
        st.info("This study is closed and no longer accepts answers. Thank you for your interest.")
        return
    pending_submission(session, position)
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        st.warning(notice)
    if not consented:
        st.markdown(study.consent)
        agree = st.checkbox("I have read this and agree to take part.", key="study_consent_box")
        if st.button("Start", type="primary", key="study_start", disabled=not agree):
            try:
                session.consent()
            except XcoreError as e:
                LOG.warning("consent in study %r: %s", study_id, e)
                st.error(UNAVAILABLE)
                return
            st.rerun()
        return
    if position >= session.total:
        st.success("Thank you! All your answers are saved. You can close this page.")
        return
    if study.instructions:
        st.caption(study.instructions)
    screen_view(session, position)


def screen_view(session, position: int) -> None:
    screen = session.screen(position)
    view = screen.view
    st.progress(position / session.total, text=f"Item {position + 1} of {session.total}")
    shown = st.session_state.setdefault(f"_study_shown_{session.study.id}_{position}", time.time())
    st.subheader(view["label"])
    pred = "" if view["prediction"] is None else f" — the model predicted **{view['prediction']:.2f}**"
    truth = "" if view["truth"] is None else f" (true value {view['truth']:.2f})"
    st.markdown(f"**{escape_markdown(view['prompt'])}**{pred}{truth}")
    st.text(view["text"])
    if view["score_caption"]:
        st.caption(view["score_caption"])
    if view["graph"]:
        st.plotly_chart(pio.from_json(view["graph"]), width="stretch", key=f"study_graph_{position}")
    with st.form(f"study_screen_{position}"):
        for q in screen.questions:
            key = f"study_q_{position}_{q.id}"
            if q.kind == "free_text":
                st.text_area(q.text, key=key, max_chars=2000)
            else:
                st.radio(q.text, list(range(1, q.scale + 1)), index=None, horizontal=True, key=key,
                         format_func=lambda v, a=q.anchors: f"{v} {a[v - 1]}")
        submitted = st.form_submit_button("Next", type="primary", key=f"study_next_{position}")
    st.session_state[SHOWING] = (session.study.id, session.number, position)
    if submitted:
        submit_screen(session, screen, shown)


def pending_submission(session, current: int) -> None:
    """Answers this tab submitted for a screen that was answered meanwhile (another tab moved the
    participant on, so that screen is no longer drawn): submit them anyway, so a different answer is
    refused *and reported* instead of vanishing."""
    last = st.session_state.get(SHOWING)
    if not last or tuple(last[:2]) != (session.study.id, session.number):
        return
    position = int(last[2])
    if position < current and st.session_state.get(f"study_next_{position}"):
        st.session_state.pop(SHOWING, None)
        shown = st.session_state.get(f"_study_shown_{session.study.id}_{position}", time.time())
        submit_screen(session, session.screen(position), shown, rerun=False)


def submit_screen(session, screen, shown: float, rerun: bool = True) -> None:
    """Store one screen's answers (from the form's widgets); on success move on."""
    position = screen.position
    answers = {q.id: st.session_state.get(f"study_q_{position}_{q.id}") for q in screen.questions}
    missing = [q for q in screen.questions if q.kind != "free_text" and answers[q.id] is None]
    if missing:
        st.warning(f"Please answer every question ({len(missing)} still open).")
        return
    try:
        session.submit(position, answers, int(round((time.time() - shown) * 1000)))
    except ReplayRejected as e:
        if not e.identical:  # another tab answered this screen first, differently: say so on the next screen
            st.session_state[NOTICE] = OTHER_TAB.format(n=position + 1)
        # identical answers: a double click, nothing lost; move on
    except StudyClosed as e:
        st.info(str(e))
        return
    except XcoreError as e:
        st.error(f"Your answer was not saved: {e}")
        return
    if rerun:
        st.rerun()


def participant_only_page() -> None:
    """The single page of the participant-only server (`xcore study serve`): a participant link's view,
    or a note to use the link; nothing else of the app."""
    params = st.query_params
    study_id, token = params.get("study", ""), params.get("p", "")
    if study_id or token:
        participant_view(str(study_id), str(token))
        return
    st.markdown(HIDE_CHROME, unsafe_allow_html=True)
    st.title("User study")
    st.info("Please open the study through the link you were given.")
