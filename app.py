"""Streamlit entry point: navigation, dataset choice and the shared session state.

Run with `streamlit run app.py`. Each method page lives in `pages/`; a page appears in the
navigation only when its file exists (only implemented methods are listed).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent

# (file, title, icon) of every method page, in the order they appear in the navigation.
METHOD_PAGES: list[tuple[str, str, str]] = [
    ("pages/esms.py", "ESMS — explainable PSL", ":material/account_tree:"),
    ("pages/iexplain.py", "I-Explain — Markov logic", ":material/hub:"),
    ("pages/drm.py", "DRM — relational features", ":material/neurology:"),
    ("pages/nlil.py", "m-NLIL — rules per label", ":material/rule:"),
    ("pages/plkb.py", "Probabilistic-logic classifier", ":material/table_chart:"),
]


def build_navigation() -> st.navigation:
    """The navigation: the data home page plus every method page that is implemented."""
    home = st.Page(str(ROOT / "pages" / "home.py"), title="Data", icon=":material/database:",
                   default=True)
    methods = [st.Page(str(ROOT / f), title=t, icon=i) for f, t, i in METHOD_PAGES
               if (ROOT / f).exists()]
    sections: dict[str, list] = {"Data": [home]}
    if methods:
        sections["Methods"] = methods
    return st.navigation(sections)


st.set_page_config(page_title="xcore — relational explanation inspector", page_icon="🔎",
                   layout="wide")
build_navigation().run()
