"""AppTests of the study pages' safety (issue 25): a storage failure on the participant page shows the
study's own message (no traceback, no path), a second tab's rejected answers are reported, the
researcher key needs a minimum length and is rate-limited and locked out, exports are made only when
clicked, and the participant-only app serves nothing but the study."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))
from study_helpers import make_study  # noqa: E402

from xcore.study import StudyStore, access, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app_pages" / "study.py")
PARTICIPANT_APP = str(ROOT / "study_app.py")
KEY = "correct horse battery staple"
pytestmark = pytest.mark.xdist_group("app")


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    monkeypatch.setenv("XCORE_STUDY_DB", url)
    monkeypatch.delenv("XCORE_RESEARCHER_KEY", raising=False)
    store = StudyStore(url)
    yield store
    store.dispose()


def run(path: str = PAGE, params: dict | None = None) -> AppTest:
    at = AppTest.from_file(path, default_timeout=120)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def press(at: AppTest, label: str) -> AppTest:
    [b for b in at.button if b.label == label][0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def everything_shown(at: AppTest) -> str:
    parts = [str(e.value) for kind in ("markdown", "text", "caption", "title", "error", "warning", "info",
                                       "success", "exception") for e in getattr(at, kind)]
    return "\n".join(parts)


def start(at: AppTest) -> AppTest:
    at.checkbox(key="study_consent_box").check()
    at.run()
    return press(at, "Start")


def answer_all(at: AppTest, value: int) -> AppTest:
    for r in at.radio:
        r.set_value(next(v for v in r.options if v == 4) if "select" in r.label else value)
    return press(at, "Next")


# ---------------------------------------------------------------------- participant page
def test_a_storage_failure_shows_the_studys_message_not_a_traceback(db, monkeypatch):
    db.publish(make_study())
    (tok,) = db.add_participants("s1", 1)
    from xcore.study import store as store_module

    def locked(self, conn):
        raise OperationalError("SELECT position FROM xs_responses", {}, Exception("database is locked"))

    monkeypatch.setattr(store_module.ParticipantSession, "_positions", locked)
    at = run(params={"study": "s1", "p": tok})
    shown = everything_shown(at)
    assert "not available right now" in shown and "locked" not in shown and "SELECT" not in shown


def test_an_unopenable_database_never_shows_its_path_to_a_participant(tmp_path, monkeypatch):
    folder = tmp_path / "secret-folder-name"
    folder.mkdir()
    (folder / "study.sqlite").write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("XCORE_STUDY_DB", str(folder / "study.sqlite"))
    at = run(params={"study": "s1", "p": "p" + "x" * 30})
    shown = everything_shown(at)
    assert "not available right now" in shown and "secret-folder-name" not in shown and "sqlite" not in shown


def test_a_second_tab_is_told_its_different_answers_were_not_saved(db):
    db.publish(make_study(n_items=6))
    (tok,) = db.add_participants("s1", 1)
    link = {"study": "s1", "p": tok}
    first = start(run(params=link))
    second = run(params=link)  # the same link in another tab, on the same screen
    answer_all(first, 5)
    answer_all(second, 1)
    warning = " ".join(w.value for w in second.warning)
    assert "not saved" in warning and "another tab" in warning
    rows = db.responses("s1")
    assert set(rows.loc[rows["question_id"] == "useful_relational", "answer"]) == {"5"}  # the first tab's
    again = run(params=link)  # the notice is shown once, not forever
    assert not again.warning


def test_the_same_answers_twice_move_on_silently(db):
    db.publish(make_study(n_items=6))
    (tok,) = db.add_participants("s1", 1)
    link = {"study": "s1", "p": tok}
    first = start(run(params=link))
    second = run(params=link)
    answer_all(first, 3)
    answer_all(second, 3)
    assert not second.warning and "Item 2 of 6" in str(second.get("progress")[0].proto)


# ---------------------------------------------------------------------- researcher key
def test_a_short_researcher_key_keeps_the_researcher_view_off(db, monkeypatch):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", "short-key")
    at = run()
    assert "at least 16" in at.error[0].value and not at.text_input and not at.tabs


@pytest.fixture
def guard(monkeypatch):
    g = access.KeyGuard(session_limit=3, server_limit=5, window_s=600, delay_s=0.0)
    monkeypatch.setattr(access, "GUARD", g)
    return g


def test_wrong_keys_lock_the_session_then_the_server(db, monkeypatch, guard):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    at = run()
    for _ in range(3):
        at.text_input(key="study_key_input").set_value("wrong guess")
        press(at, "Open the researcher view")
    assert "locked" in at.error[0].value
    at.text_input(key="study_key_input").set_value(KEY)  # now even the right key is not checked
    press(at, "Open the researcher view")
    assert "locked" in at.error[0].value and not at.tabs
    other = run()  # another browser session: two more wrong keys reach the server's limit
    for _ in range(2):
        other.text_input(key="study_key_input").set_value("another guess")
        press(other, "Open the researcher view")
    third = run()
    third.text_input(key="study_key_input").set_value(KEY)
    press(third, "Open the researcher view")
    assert "on this server" in third.error[0].value and not third.tabs


def test_the_right_key_still_opens_after_a_few_mistakes(db, monkeypatch, guard):
    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    at = run()
    at.text_input(key="study_key_input").set_value("typo")
    press(at, "Open the researcher view")
    assert "not right" in at.error[0].value
    at.text_input(key="study_key_input").set_value(KEY)
    press(at, "Open the researcher view")
    assert [t.label for t in at.tabs] == ["Build", "Import", "Studies and links", "Analysis"]


def test_key_guard_windows_and_delays():
    now = [0.0]
    slept = []
    g = access.KeyGuard(session_limit=2, server_limit=3, window_s=60, delay_s=1.5, clock=lambda: now[0],
                        sleep=slept.append)
    assert g.attempt("a", "bad", KEY) == (False, "That researcher key is not right.")
    assert slept == [1.5]  # every failure is slowed down
    assert g.attempt("a", "bad", KEY)[1].startswith("Too many wrong researcher keys in this session")
    assert g.attempt("a", KEY, KEY)[0] is False and slept == [1.5, 1.5]  # locked: not even checked
    assert g.attempt("b", KEY, KEY) == (True, "")  # another session may still open
    assert g.attempt("c", "bad", KEY)[1].endswith("locked for about 1 more minute.") and "on this server" in g.locked("d")
    now[0] = 61.0  # the window has passed
    assert g.locked("a") is None and g.attempt("a", KEY, KEY) == (True, "")
    assert not access.key_matches("", "") and not access.key_matches(KEY[:-1], KEY)


# ---------------------------------------------------------------------- exports
def test_exports_are_made_only_when_clicked(db, monkeypatch):
    """Rendering the researcher tabs makes no CSV, definition file or HTML report (no /media copy per rerun)."""
    import pandas as pd

    from xcore.study import definition, export, report

    monkeypatch.setenv("XCORE_RESEARCHER_KEY", KEY)
    db.publish(make_study(n_items=6))
    simulate(db, "s1", 6, {"A": [0, 0, 0.1, 0.4, 0.5], "B": [0.5, 0.4, 0.1, 0, 0]}, seed=1)
    made: list[str] = []

    def counting(name, fn):
        def wrapper(*a, **k):
            made.append(name)
            return fn(*a, **k)
        return wrapper

    monkeypatch.setattr(pd.DataFrame, "to_csv", counting("csv", pd.DataFrame.to_csv))
    plain_json = definition.Study.to_json

    def file_json(self, indent=1):  # indent=None is the digest check of a stored study, not a file
        if indent is not None:
            made.append("json")
        return plain_json(self, indent=indent)

    monkeypatch.setattr(definition.Study, "to_json", file_json)
    monkeypatch.setattr(report, "html_report", counting("html", report.html_report))
    monkeypatch.setattr(export, "responses_csv", counting("csv", export.responses_csv))
    at = run()
    at.text_input(key="study_key_input").set_value(KEY)
    press(at, "Open the researcher view")
    at.run()
    assert len(at.tabs) == 4 and made == []
    buttons = [b for b in at.get("download_button")]
    assert len(buttons) >= 4


# ---------------------------------------------------------------------- participant-only server
def test_the_participant_only_app_serves_only_the_study(db):
    db.publish(make_study())
    (tok,) = db.add_participants("s1", 1)
    bare = run(PARTICIPANT_APP)
    assert "link you were given" in bare.info[0].value and not bare.text_input and not bare.sidebar.children
    for page in ("app_pages/home.py", "app_pages/study.py", "app_pages/compare.py"):
        with pytest.raises(ValueError, match="Known pages: \\['User study'\\]"):
            bare.switch_page(str(ROOT / page))
    at = run(PARTICIPANT_APP, params={"study": "s1", "p": tok})
    assert at.title[0].value == "Toy study" and at.checkbox(key="study_consent_box") is not None
