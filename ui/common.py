"""Streamlit helpers shared by every page: the dataset in session state and error display.

Not a page (pages live in `app_pages/`, listed by app.py's `st.navigation`). Kept tiny: pages call `xcore`
for all work.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import streamlit as st

from xcore.data import RelationalDataset, load
from xcore.errors import XcoreError

T = TypeVar("T")

DATASET_KEY = "dataset"
SOURCE_KEY = "dataset_source"


@st.cache_resource(show_spinner="Reading upload…", max_entries=8)
def cached_upload(filename: str, data: bytes) -> RelationalDataset:
    """Uploads are parsed once per distinct name and content (Streamlit hashes the bytes).

    A resource cache, not ``st.cache_data``: that one pickles the dataset into the cache and
    unpickles a copy per use, which took the server from ~0.5 to ~1.1 GB for a 47 MB table
    (``bench/loaders.py``, app rows). Datasets are not changed in place (`with_flags` copies), so
    sessions can share one.
    """
    return load((filename, data))


def get_dataset() -> RelationalDataset | None:
    """The dataset chosen on the home page, shared by every page."""
    return st.session_state.get(DATASET_KEY)


def set_dataset(ds: RelationalDataset, source: str) -> None:
    """Make `ds` the current dataset; `source` says where it came from (shown to the user)."""
    st.session_state[DATASET_KEY] = ds
    st.session_state[SOURCE_KEY] = source


def dataset_source() -> str:
    return st.session_state.get(SOURCE_KEY, "")


def require_dataset() -> RelationalDataset:
    """The current dataset, or stop the page with a pointer to the home page."""
    ds = get_dataset()
    if ds is None:
        st.info("No dataset loaded yet: choose a bundled sample or upload one on the Data page.")
        st.stop()
    return ds


def guarded(fn: Callable[..., T], *args: object, **kwargs: object) -> T | None:
    """Run `fn`; show an xcore error as `st.error` (never a traceback) and return None."""
    try:
        return fn(*args, **kwargs)
    except XcoreError as e:
        st.error(str(e))
        return None
