"""Streamlit entry point: the navigation, built from the method catalog (`xcore.methods.catalog`).

Run with `streamlit run app.py`. The Data page comes first; every registered method whose page file
exists follows, in registry order, under the title and icon its `MethodSpec` gives (read from the
light catalog, so that the navigation imports no method package: each loads when its page opens).
Pages live in `app_pages/` (not `pages/`, which Streamlit would also read as old-style pages), each an
`st.Page` with a title and URL path, so the sidebar never shows a module name; shared parts are in `ui/`.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui.state import remember_widgets
from xcore.methods.catalog import catalog
from xcore.study.access import STUDY_PARAM, TOKEN_PARAM

ROOT = Path(__file__).resolve().parent

# (file, title, icon, url path) of pages that work across methods; listed when their file exists.
TOOL_PAGES: list[tuple[str, str, str, str]] = [
    ("app_pages/compare.py", "Compare runs", ":material/compare_arrows:", "compare"),
    ("app_pages/study.py", "User study", ":material/groups:", "study"),
]


def method_pages() -> list[st.Page]:
    """One page per registered method (in registry order) whose page file exists."""
    pages = []
    for key, spec in catalog().items():
        path = ROOT / spec.page
        if spec.page and path.exists():
            pages.append(st.Page(str(path), title=spec.title, icon=spec.icon, url_path=key))
    return pages


def build_navigation() -> st.navigation:
    """The navigation: the data home page plus every registered method's page."""
    home = st.Page(str(ROOT / "app_pages" / "home.py"), title="Data", icon=":material/database:", default=True)
    sections: dict[str, list] = {"Data": [home]}
    methods = method_pages()
    if methods:
        sections["Methods"] = methods
    tools = [st.Page(str(ROOT / f), title=t, icon=i, url_path=u) for f, t, i, u in TOOL_PAGES if (ROOT / f).exists()]
    if tools:
        sections["Tools"] = tools
    return st.navigation(sections)


def is_participant_link() -> bool:
    params = st.query_params
    return STUDY_PARAM in params or TOKEN_PARAM in params


def participant_navigation() -> st.navigation | None:
    """With a participant link (``?study=ID&p=TOKEN``): a navigation holding only the participant view,
    hidden, so no other page, no sidebar and no researcher view can be reached from it."""
    if not is_participant_link():
        return None
    page = st.Page(str(ROOT / "app_pages" / "study.py"), title="Study", icon=":material/groups:", default=True)
    return st.navigation([page], position="hidden")


PARTICIPANT = is_participant_link()
st.set_page_config(page_title="xcore — relational explanation inspector", page_icon="🔎",
                   layout="centered" if PARTICIPANT else "wide",
                   initial_sidebar_state="collapsed" if PARTICIPANT else "auto")
if not PARTICIPANT:
    remember_widgets()  # a value typed just before leaving a page is kept (the page's own pass may be cut short)
(participant_navigation() if PARTICIPANT else build_navigation()).run()
