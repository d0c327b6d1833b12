"""Reading a user study's answers (the researcher's Analysis tab of `app_pages/study.py`), and the table of
published studies both researcher tabs pick from: counts, diverging and mean charts, Student-t intervals,
tests between conditions, relational parts, time per item, and the exports.

Views only: the statistics live in `xcore.study`.
"""

from __future__ import annotations

import streamlit as st

from ui.study_participant import store
from xcore.errors import XcoreError
from xcore.study import analyse
from xcore.study.export import responses_csv
from xcore.study.report import diverging_figure, html_report, means_figure


def pick_study(key: str) -> str | None:
    frame = store().studies()
    if frame.empty:
        st.info("No study is published yet.")
        return None
    st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_table")
    return st.selectbox("Study", list(frame["id"]), key=f"{key}_pick")


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
