"""Participant-only server: `xcore study serve` runs this instead of app.py for real participants.

It serves nothing but the study's participant view: one hidden page, no data page, no method page, no
uploads and no researcher view, whatever the URL. The researcher dashboard (`xcore app`) runs
separately, on an address participants cannot reach.
"""

from __future__ import annotations

import streamlit as st

from ui.study_participant import participant_only_page

st.set_page_config(page_title="User study", page_icon="📝", layout="centered", initial_sidebar_state="collapsed")
st.navigation([st.Page(participant_only_page, title="User study", url_path="study", default=True)],
              position="hidden").run()
