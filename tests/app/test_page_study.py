"""AppTests of the Study page and of app.py's participant mode: the key gate, building and publishing,
a participant taking part (blinded, resumable, no other page), closing, and the analysis."""

from __future__ import annotations

import sys
from collections import OrderedDict
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from study_helpers import make_run, make_study  # noqa: E402

from xcore.study import StudyStore, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "study.py")
APP = str(ROOT / "app.py")
KEY = "correct horse battery staple"
KEY_OK = "_study_key_ok"
METHOD_WORDS = ("mln", "i-explain", "lime", "markov", "toy run")
pytestmark = pytest.mark.xdist_group("app")


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    monkeypatch.setenv("XCORE_STUDY_DB", url)
    monkeypatch.delenv("XCORE_RESEARCHER_KEY", raising=False)
    store = StudyStore(url)
    yield store
    store.dispose()


def run_page(path: str = PAGE, params: dict | None = None, state: dict | None = None) -> AppTest:
    at = AppTest.from_file(path, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    for k, v in (state or {}).items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [t.value for t in at.text] + [c.value for c in at.caption]
    parts += [s.value for s in at.subheader] + [t.value for t in at.title] + [r.label for r in at.radio]
    return "\n".join(map(str, parts))


def frame_with(at: AppTest, *columns: str):
    """The first displayed table having these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def press(at: AppTest, label: str) -> AppTest:
    [b for b in at.button if b.label == label][0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def unlock(at: AppTest) -> AppTest:
    at.text_input(key="study_key_input").set_value(KEY)
    return press(at, "Open the researcher view")


# ---------------------------------------------------------------------- researcher gate
def test_without_a_configured_key_there_is_no_researcher_view(db):
    at = run_page()
    assert "researcher view is off" in at.info[0].value
    assert not at.tabs and not at.text_input


def test_the_key_opens_the_researcher_view_and_only_the_right_key(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    at = run_page(params={"key": KEY})  # a key in the URL opens nothing
    assert not at.tabs
    at.text_input(key="study_key_input").set_value("wrong")
    press(at, "Open the researcher view")
    assert "not right" in at.error[0].value and not at.tabs
    press(at, "Open the researcher view")  # twice: still closed
    assert not at.tabs
    unlock(at)
    assert [t.label for t in at.tabs] == ["Build", "Import", "Studies and links", "Analysis"]
    at.run()
    assert len(at.tabs) == 4  # stays open in this session


def test_build_and_publish_from_session_runs(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    run = make_run()
    at = run_page(state={"_runs": OrderedDict({("mln", "f" * 16, "abcdef123"): run})})
    unlock(at)
    box = at.multiselect(key="study_conditions")
    options = [(label, name) for label in ["mln on reviews_toy (settings abcdef)"] for name in run.explanations]
    box.set_value(options)
    at.run()
    at.number_input(key="study_n_items").set_value(4)
    at.text_input(key="study_id").set_value("page-study")
    at.run()
    press(at, "Build the study")
    assert any("page-study" in s.value and "Explanation A, Explanation B" in s.value for s in at.success)
    press(at, "Publish (freeze) this study")
    press(at, "Publish (freeze) this study")  # twice: the same definition again is fine
    assert any("now frozen" in s.value for s in at.success) and not at.error
    study = db.study("page-study")
    assert len(study.items) == 4 and [c.explainer for c in study.conditions] == list(run.explanations)
    frame = frame_with(at, "id", "title", "closed")
    assert list(frame["id"]) == ["page-study"]


def test_links_close_and_analysis(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study(n_items=6))
    simulate(db, "s1", 12, {"A": [0, 0, 0.1, 0.4, 0.5], "B": [0.5, 0.4, 0.1, 0, 0]}, seed=1)
    at = unlock(run_page())
    press(at, "Create participant links")
    links = [c.value for c in at.code][0].splitlines()
    assert len(links) == 5 and all(line.startswith("http://localhost:8501/?study=s1&p=") for line in links)
    press(at, "Create participant links")
    assert db.studies().set_index("id").loc["s1", "participants"] == 22
    tests = frame_with(at, "test", "effect_size")
    overall = tests[tests["question_id"] == "(all ratings)"].iloc[0]
    assert overall["test"] == "Mann-Whitney U" and overall["p"] < 0.01 and overall["effect_size"] > 0.9
    assert "Explanation A" in str(at.get("plotly_chart")[0].proto.spec)
    press(at, "Close the study to new answers")
    assert db.is_closed("s1")
    press(at, "Reopen the study")
    assert not db.is_closed("s1")


# ---------------------------------------------------------------------- participant
def answer_screen(at: AppTest, value: int = 4) -> AppTest:
    for r in at.radio:
        r.set_value(r.options.index(next(o for o in r.options if o.startswith("4 "))) + 1
                    if "Agree" in " ".join(r.options) and "select" in r.label else value)
    return press(at, "Next")


def test_participant_takes_part_blinded_and_resumes(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study(n_items=6))
    tok, other = db.add_participants("s1", 2)
    link = {"study": "s1", "p": tok}
    at = run_page(params=link)
    assert at.title[0].value == "Toy study" and not at.tabs
    assert at.button(key="study_start").disabled  # until the consent box is ticked
    at.checkbox(key="study_consent_box").check()
    at.run()
    press(at, "Start")
    assert "Item 1 of 6" in str(at.get("progress")[0].proto)
    text = shown_text(at)
    assert "Explanation A" in text and not at.dataframe and not at.tabs  # no raw tables, no researcher view
    for word in METHOD_WORDS:
        assert word not in text.lower()
    press(at, "Next")  # nothing answered: a warning, nothing stored
    assert "answer every question" in at.warning[0].value and db.responses("s1").empty
    answer_screen(at)
    assert "Item 2 of 6" in str(at.get("progress")[0].proto)
    answer_screen(at, 2)
    # the participant closes the browser and opens the same link again: resumes at item 3
    again = run_page(params=link)
    assert "Item 3 of 6" in str(again.get("progress")[0].proto)
    rows = db.responses("s1")
    assert set(rows["position"]) == {0, 1} and rows["participant"].nunique() == 1
    # the other participant's link starts at the beginning (consent), seeing none of this
    fresh = run_page(params={"study": "s1", "p": other})
    assert fresh.checkbox(key="study_consent_box") is not None and not fresh.get("progress")
    for _ in range(4):
        answer_screen(again)
    assert "All your answers are saved" in again.success[0].value
    assert db.responses("s1").drop_duplicates(["participant", "position"]).shape[0] == 6


def test_participant_link_never_shows_the_researcher_view(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study())
    (tok,) = db.add_participants("s1", 1)
    import hashlib

    unlocked = {KEY_OK: hashlib.sha256(KEY.encode()).hexdigest()}
    at = run_page(params={"study": "s1", "p": tok}, state=unlocked)
    assert not at.tabs and not at.text_input and at.title[0].value == "Toy study"
    bad = run_page(params={"study": "s1", "p": "x" * 32}, state=unlocked)
    assert "not valid" in bad.error[0].value and not bad.tabs and not bad.dataframe
    wrong_study = run_page(params={"study": "nope", "p": tok})
    assert "not valid" in wrong_study.error[0].value


def test_closed_study_says_so(db):
    db.publish(make_study())
    (tok,) = db.add_participants("s1", 1)
    db.close("s1")
    at = run_page(params={"study": "s1", "p": tok})
    assert "closed" in at.info[0].value and not at.radio and not at.button


def test_app_in_participant_mode_has_only_the_participant_page(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study())
    (tok,) = db.add_participants("s1", 1)
    at = run_page(APP, params={"study": "s1", "p": tok})
    assert at.title[0].value == "Toy study"
    assert "Dataset" not in shown_text(at) and not at.sidebar.children
    plain = run_page(APP)
    assert plain.title and plain.title[0].value != "Toy study"  # without a link: the normal app


def test_counts_are_current_after_links_and_answers_are_read_on_refresh(db, monkeypatch):
    """The studies table counts the links just made; answers stored by participants meanwhile (in their
    own sessions) show after Refresh answers, without leaving the page."""
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study(n_items=6))
    at = unlock(run_page())
    assert any("No answers yet" in i.value for i in at.info)
    press(at, "Create participant links")
    assert frame_with(at, "id", "participants").set_index("id").loc["s1", "participants"] == 5
    simulate(db, "s1", 12, {"A": [0, 0, 0.1, 0.4, 0.5], "B": [0.5, 0.4, 0.1, 0, 0]}, seed=1)
    press(at, "Refresh answers")
    assert not any("No answers yet" in i.value for i in at.info)
    assert frame_with(at, "test", "effect_size") is not None
    assert [t.label for t in at.tabs] == ["Build", "Import", "Studies and links", "Analysis"]
