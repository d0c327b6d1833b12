"""AppTests: a PSL project zip uploads on the Data page with its rules, and the ESMS page can
score those rules as a starting model."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from pagetest import click, page

from xcore.data import load

pytestmark = pytest.mark.xdist_group("app")


def project_zip(n: int = 24, seed: int = 0) -> bytes:
    """A psl-examples-shaped project: cli/friends.json with '..' paths to data/, comments, a hard rule."""
    rng = np.random.default_rng(seed)
    people = [f"p{i}" for i in range(n)]
    place = {p: f"l{rng.integers(0, 4)}" for p in people}
    pairs = [(a, b) for a in people for b in people if a != b and rng.random() < 0.25]
    truth = [(a, b, int(place[a] == place[b] or rng.random() < 0.1)) for a, b in pairs]
    config = {
        "rules": ["5: Lived(P1, L) & Lived(P2, L) & (P1 != P2) -> Knows(P1, P2) ^2",
                  "1: !Knows(P1, P2) ^2"],
        "predicates": {"Lived/2": {"observations": ["../data/lived_obs.txt"]},
                       "Knows/2": {"targets": ["../data/knows_targets.txt"],
                                   "truth": ["../data/knows_truth.txt"]}},
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("friends/cli/friends.json", "// a PSL project\n" + json.dumps(config, indent=1))
        zf.writestr("friends/data/lived_obs.txt", "".join(f"{p}\t{place[p]}\n" for p in people))
        zf.writestr("friends/data/knows_targets.txt", "".join(f"{a}\t{b}\n" for a, b, _ in truth))
        zf.writestr("friends/data/knows_truth.txt", "".join(f"{a}\t{b}\t{v}\n" for a, b, v in truth))
    return buf.getvalue()


def test_project_zip_upload_carries_its_rules():
    at = page("home")
    at.radio(key="data_source_kind").set_value("Upload")
    at.run()
    at.file_uploader(key="upload").set_value(("friends.zip", project_zip(), "application/zip"))
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert ds.name == "friends" and len(ds.rules) == 2
    assert any("Rules of the project (2)" in e.label for e in at.expander)


@pytest.mark.slow
def test_esms_scores_the_project_rules_when_asked():
    ds = load(("friends.zip", project_zip()))
    at = page("esms", ds)
    at.checkbox(key="esms_project_rules").check()
    at.number_input(key="esms_iterations").set_value(3)
    at.number_input(key="esms_rules_per_model").set_value(3)
    at.run()
    click(at, "esms_run_btn")
    run = list(at.session_state["_runs"].values())[-1]
    assert run.settings.project_rules
    search = run.model.search_
    assert len(search.start_rules) == 2
    assert len(search.history_) == 4  # three drawn models and the project's
