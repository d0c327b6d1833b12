"""Page state kept per browser session across navigation and reruns.

Streamlit forgets a widget's value once a script run does not draw it (leaving a page). `keep` puts a
widget's last value back before the widget is drawn again, so settings survive a visit to another page
(`remembered` does so for a widget whose choices may change: a sort column of another run's table);
`form_store` holds a method form's own bookkeeping (the data it was drawn for, the defaults it showed).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

KEPT = "_kept_widgets"
FORMS = "_forms"
SCOPES = "_widget_scopes"
_MISSING = object()


def keep(key: str, default: Any = _MISSING) -> None:
    """Before drawing a widget: restore its kept value (else `default`) when Streamlit has dropped it.
    After drawing it (no default): remember its value for the next visit."""
    kept: dict[str, Any] = st.session_state.setdefault(KEPT, {})
    if default is _MISSING:
        if key in st.session_state:
            kept[key] = st.session_state[key]
        return
    if key not in st.session_state:
        st.session_state[key] = kept.get(key, default)


def remember_widgets() -> None:
    """At the start of every script pass (app.py): note the current value of every kept widget.

    A value typed just before the user leaves the page reaches the server with the pass that leaves it;
    the page's own pass that would have noted it may have been cut short by that navigation, and the
    leaving pass drops the undrawn widget at its end."""
    kept: dict[str, Any] = st.session_state.setdefault(KEPT, {})
    for key in list(kept):
        try:
            if key in st.session_state:
                kept[key] = st.session_state[key]
        except (KeyError, AttributeError):  # a widget Streamlit has dropped meanwhile
            continue


def remembered(key: str, default: Any, allowed: Any = None) -> None:
    """Before drawing a widget the user sets (a filter, a grid, a sort column): its kept value, else `default`;
    a kept value no longer among `allowed` (another run's columns) goes back to `default`. Call `keep(key)`
    after drawing it."""
    keep(key, default)
    if allowed is not None and st.session_state[key] not in allowed:
        put(key, default)


def forget(key: str) -> None:
    """Drop a widget's value and its kept copy (it is drawn with its default next time)."""
    st.session_state.pop(key, None)
    st.session_state.setdefault(KEPT, {}).pop(key, None)


def put(key: str, value: Any) -> None:
    """Set a widget's value before it is drawn (a demo button, data that changed) and keep it."""
    st.session_state[key] = value
    st.session_state.setdefault(KEPT, {})[key] = value


def form_store(method: str) -> dict[str, Any]:
    """A method form's bookkeeping in this session (not widget values)."""
    forms: dict[str, dict[str, Any]] = st.session_state.setdefault(FORMS, {})
    return forms.setdefault(method, {})


def reset_on(key: str, scope: Any, value: Any) -> None:
    """Before drawing a widget that shows something of a run or a dataset (a rule editor): set it to `value`
    whenever `scope` (what it shows) changes, else keep the user's edits, across navigation too."""
    scopes: dict[str, Any] = st.session_state.setdefault(SCOPES, {})
    if scopes.get(key) != scope:
        put(key, value)
        scopes[key] = scope
    else:
        keep(key, value)
