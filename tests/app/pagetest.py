"""Helpers for AppTests of the pages: start a page on a dataset, read what it displays."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def page(name: str, dataset=None, timeout: int = 300) -> AppTest:
    """A fresh page (a new browser session), optionally with a current dataset, after its first run."""
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=timeout)
    if dataset is not None:
        at.session_state["dataset"] = dataset
    at.run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, key: str) -> AppTest:
    """Press a button and run the page; the page must not show an exception."""
    at.button(key=key).click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def chart_titles(at: AppTest) -> list[str]:
    return [c.proto.spec for c in at.get("plotly_chart")]


def item_tables(at: AppTest) -> list:
    """The explanation panels' item tables (rank, natural, text, score, explainable)."""
    return [d.value for d in at.dataframe if {"rank", "natural", "score"} <= set(d.value.columns)]


def shown_targets(at: AppTest) -> set[str]:
    """Targets listed in the predictions browsers."""
    out: set[str] = set()
    for d in at.dataframe:
        if "target" in d.value.columns:
            out |= set(map(str, d.value["target"]))
    return out
