"""AppTest of the home page: load a sample, upload a valid zip, upload a broken file."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from xcore.data import Predicate, RelationalDataset, Schema
from xcore.data.samples import list_samples

ROOT = Path(__file__).resolve().parents[2]  # tests/app/ -> repository root
HOME = str(ROOT / "app_pages" / "home.py")
pytestmark = pytest.mark.xdist_group("app")


def run_home() -> AppTest:
    at = AppTest.from_file(HOME, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def psl_zip() -> bytes:
    """A valid PSL-folder dataset, zipped as a browser upload would be."""
    from xcore.data.io import write_psl_folder

    schema = Schema.of([Predicate("knows", 2, ("person", "person"), template="{0} knows {1}"),
                        Predicate("trusts", 2, ("person", "person"), closed=False)])
    ds = RelationalDataset(schema, {
        "knows": {"obs": pd.DataFrame({"a0": ["ann", "bob"], "a1": ["bob", "cat"], "value": [1.0, 0.7]})},
        "trusts": {"targets": pd.DataFrame({"a0": ["ann"], "a1": ["cat"]}),
                   "truth": pd.DataFrame({"a0": ["ann"], "a1": ["cat"], "value": [1.0]})},
    }, name="tiny_trust")
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        write_psl_folder(ds, Path(d) / "tiny")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for f in sorted((Path(d) / "tiny").rglob("*")):
                if f.is_file():
                    z.write(f, f.relative_to(d))
        return buf.getvalue()


def test_home_starts_with_first_sample():
    at = run_home()
    ds = at.session_state["dataset"]
    assert ds.n_atoms() > 0
    assert any("Dataset:" in h.value for h in at.header)
    assert len(at.metric) == 4


@pytest.mark.slow
def test_load_each_bundled_sample():
    at = run_home()
    for info in list_samples():
        at.selectbox(key="sample_name").set_value(info.name)
        at.button(key="load_sample").click()
        at.run()
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        ds = at.session_state["dataset"]
        assert ds.n_atoms() > 0, info.name
        assert at.session_state["dataset_source"] == f"sample: {info.title}"


def test_upload_valid_zip_replaces_dataset():
    at = run_home()
    at.radio(key="data_source_kind").set_value("Upload")
    at.run()
    at.file_uploader(key="upload").set_value(("tiny.zip", psl_zip(), "application/zip"))
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert set(ds.schema.names) == {"knows", "trusts"}
    assert len(ds.targets("trusts")) == 1
    assert at.session_state["dataset_source"] == "upload: tiny.zip"


def test_upload_broken_file_shows_error_and_keeps_dataset():
    at = run_home()
    before = at.session_state["dataset"]
    at.radio(key="data_source_kind").set_value("Upload")
    at.run()
    bad = b"predicate,arg1,arg2,value,partition\nknows,ann,bob,1.0,obs\nknows,bob,cat,1.7,obs\n"
    at.file_uploader(key="upload").set_value(("facts.csv", bad, "text/csv"))
    at.run()
    assert not at.exception, at.exception
    messages = [e.value for e in at.error]
    assert len(messages) == 1
    assert "facts.csv" in messages[0] and "line 3" in messages[0] and "[0, 1]" in messages[0]
    assert at.session_state["dataset"] is before  # never lose the user's data


def test_flag_edit_changes_dataset():
    at = run_home()
    first = at.session_state["dataset"].predicates[0]
    at.session_state["flags_editor"] = {"edited_rows": {0: {"explainable": not first.explainable}},
                                        "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception
    edited = at.session_state["dataset"].predicate(first.name)
    assert edited.explainable is (not first.explainable)
    assert edited.closed is first.closed
