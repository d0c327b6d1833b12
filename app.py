"""Streamlit entry point: the navigation, built from the method registry (`xcore.methods.REGISTRY`).

Run with `streamlit run app.py`. The Data page comes first; every registered method whose page file
exists follows, in registry order, under the title and icon its `MethodSpec` gives.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from xcore.methods import REGISTRY

ROOT = Path(__file__).resolve().parent


def method_pages() -> list[st.Page]:
    """One page per registered method (in registry order) whose page file exists."""
    pages = []
    for key in REGISTRY:
        spec = REGISTRY[key]
        path = ROOT / spec.page
        if spec.page and path.exists():
            pages.append(st.Page(str(path), title=spec.title, icon=spec.icon, url_path=key))
    return pages


def build_navigation() -> st.navigation:
    """The navigation: the data home page plus every registered method's page."""
    home = st.Page(str(ROOT / "pages" / "home.py"), title="Data", icon=":material/database:", default=True)
    sections: dict[str, list] = {"Data": [home]}
    methods = method_pages()
    if methods:
        sections["Methods"] = methods
    return st.navigation(sections)


st.set_page_config(page_title="xcore — relational explanation inspector", page_icon="🔎", layout="wide")
build_navigation().run()
