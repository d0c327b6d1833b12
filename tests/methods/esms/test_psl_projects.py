"""PSL projects in both layouts (JSON config; .data + .psl) load unchanged and infer the MAP
state of an independent solution: a closed form, or scipy's LP written out by hand here."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from xcore.data import load
from xcore.data.io.psl_project import read_project
from xcore.errors import DataError
from xcore.psl.model import PSLModel

CONFIG = """{
    // acquaintances: a comment, trailing commas and single quotes, as PSL's reader allows
    "rules": [
        "20: Lived(P1, L) & Lived(P2, L) & (P1 != P2) >> Knows(P1, P2) ^2",
        "5 : Lived(P1, L1) & Lived(P2, L2) & (P1 != P2) & (L1 != L2) -> !Knows(P1, P2) ^2",
        /* symmetry is a hard arithmetic constraint */
        "Knows(P1, P2) = Knows(P2, P1) .",
        "1: !KNOWS(P1, P2) ^2",
    ],
    "predicates": {
        "Lived/2": {"observations": ["../data/lived_obs.txt"]},
        "Knows/2": {
            "evaluations": ["DiscreteEvaluator"],
            "observations": [['a', 'c', 1]],
            "targets": {"infer": ["../data/knows_targets.txt"], "learn": [["a", "b"]]},
            "truth": {"infer": ["../data/knows_truth.txt"]},
        },
    },
    "options": {"admmreasoner.maxiterations": 500},
}
"""


def write_json_project(root: Path) -> Path:
    (root / "cli").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "data" / "lived_obs.txt").write_text("a\tx\nb\tx\nc\ty\n")
    (root / "data" / "knows_targets.txt").write_text("a\tb\nb\ta\nb\tc\nc\tb\nc\ta\n")
    (root / "data" / "knows_truth.txt").write_text("a\tb\t1\nb\ta\t1\nb\tc\t0\n")
    config = root / "cli" / "acquaintances.json"
    config.write_text(CONFIG)
    return config


def closed_form() -> dict[tuple[str, str], float]:
    """MAP by hand. Knows(a,b) = Knows(b,a) = k minimises 2*20(1-k)^2 + 2k^2 -> k = 40/42;
    Knows(b,c) = Knows(c,b) = k minimises 2*(5+1)k^2 -> 0; Knows(c,a) must equal the observed
    Knows(a,c) = 1 (the hard constraint), whatever the soft rules pull."""
    k = 40.0 / 42.0
    return {("a", "b"): k, ("b", "a"): k, ("b", "c"): 0.0, ("c", "b"): 0.0, ("c", "a"): 1.0}


def predictions(model: PSLModel) -> dict[tuple[str, str], float]:
    p = model.predict()
    return {(r.a0, r.a1): r.prediction for r in p.itertuples()}


@pytest.mark.parametrize("method", ["auto", "qp", "admm", "lbfgs"])
def test_json_project_matches_the_closed_form(tmp_path, method):
    config = write_json_project(tmp_path)
    ds = load(config)
    assert ds.name == "acquaintances"
    assert [p.name for p in ds.predicates] == ["Lived", "Knows"]
    assert not ds.predicate("Knows").closed and ds.predicate("Lived").closed
    assert len(ds.targets("Knows")) == 5 and len(ds.truth("Knows")) == 3
    model = PSLModel(list(ds.rules)).ground(ds)
    result = model.infer(method=method)
    got = predictions(model)
    for atom, want in closed_form().items():
        assert got[atom] == pytest.approx(want, abs=1e-5), (atom, result.method)
    assert model.program_.constraint_violation(model.y_) < 1e-6


def test_learn_split_and_options_are_kept(tmp_path):
    config = write_json_project(tmp_path)
    project = read_project(config)
    assert project.options == {"admmreasoner.maxiterations": 500}
    assert project.evaluations == {"Knows": ["DiscreteEvaluator"]}
    learn = project.dataset("learn")
    assert learn.targets("Knows")[["a0", "a1"]].values.tolist() == [["a", "b"]]
    assert len(learn.truth("Knows")) == 0
    infer = load(config, split="infer")
    assert len(infer.targets("Knows")) == 5
    # the rules carried by the dataset use the declared spelling, whatever case the rule used
    assert "~Knows(P1, P2) ^2" in infer.rules[-1]


def test_same_project_from_a_folder_and_a_zip_upload(tmp_path):
    config = write_json_project(tmp_path / "acq")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in (tmp_path / "acq").rglob("*.*"):
            zf.write(f, f"acq/{f.relative_to(tmp_path / 'acq').as_posix()}")
    for source in (tmp_path / "acq", ("acq.zip", buf.getvalue())):
        ds = load(source)
        model = PSLModel(list(ds.rules)).ground(ds)
        model.infer()
        got = predictions(model)
        assert got[("c", "a")] == pytest.approx(1.0, abs=1e-6)
        assert got[("a", "b")] == pytest.approx(40 / 42, abs=1e-6)
    assert config.exists()


DATA = """predicates:
  Rated/2: closed
  Likes/2: open

observations:
  rated: ratings.txt

targets:
  Likes: [likes_targets.txt]

truth:
  LIKES: likes_truth.txt
"""

MODEL = """# linear hinges, a constant-argument hard constraint
2: Rated(U, I) -> Likes(U, I)
1: !Likes(U, I)
Likes(U, 'i1') + Likes(U, 'i2') <= 1 .
"""


def write_data_project(root: Path) -> tuple[Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ratings.txt").write_text("u1\ti1\t1.0\nu1\ti2\t0.6\nu2\ti1\t0.3\n")
    (root / "likes_targets.txt").write_text("u1\ti1\nu1\ti2\nu2\ti1\nu2\ti2\n")
    (root / "likes_truth.txt").write_text("u1\ti1\t1\nu2\ti1\t0\n")
    (root / "likes.data").write_text(DATA)
    (root / "likes.psl").write_text(MODEL)
    return root / "likes.data", root / "likes.psl"


def lp_energy() -> float:
    """The MAP energy as an LP written by hand: y = Likes(u1,i1), (u1,i2), (u2,i1), (u2,i2);
    slacks s >= Rated - y for the three ratings; minimise 2*sum(s) + sum(y) with the hard
    constraint y1 + y2 <= 1 and y3 + y4 <= 1."""
    rated = [1.0, 0.6, 0.3]
    c = np.r_[np.ones(4), 2 * np.ones(3)]
    A_ub, b_ub = [], []
    for j, r in enumerate(rated):  # r - y_j - s_j <= 0
        row = np.zeros(7)
        row[j], row[4 + j] = -1, -1
        A_ub.append(row)
        b_ub.append(-r)
    A_ub += [np.r_[1, 1, 0, 0, np.zeros(3)], np.r_[0, 0, 1, 1, np.zeros(3)]]
    b_ub += [1, 1]
    res = linprog(c, A_ub=np.array(A_ub), b_ub=b_ub, bounds=[(0, 1)] * 4 + [(0, None)] * 3)
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("method", ["auto", "admm"])
def test_data_and_psl_pair_matches_the_lp(tmp_path, method):
    data, _ = write_data_project(tmp_path)
    ds = load(data)
    assert [p.name for p in ds.predicates] == ["Rated", "Likes"]
    model = PSLModel(list(ds.rules)).ground(ds)
    res = model.infer(method=method)
    assert res.energy == pytest.approx(lp_energy(), abs=1e-5)
    assert model.program_.constraint_violation(model.y_) < 1e-6


def test_learn_and_eval_data_files_become_two_splits(tmp_path):
    write_data_project(tmp_path)
    (tmp_path / "likes.data").rename(tmp_path / "likes-eval.data")
    (tmp_path / "learn_targets.txt").write_text("u1\ti2\n")
    (tmp_path / "likes-learn.data").write_text(DATA.replace("likes_targets.txt", "learn_targets.txt"))
    eval_ds = load(tmp_path)
    learn_ds = load(tmp_path, split="learn")
    assert len(eval_ds.targets("Likes")) == 4 and len(learn_ds.targets("Likes")) == 1


def _error(source, **kw) -> DataError:
    with pytest.raises(DataError) as e:
        load(source, **kw)
    return e.value


def test_missing_truth_file_names_config_and_line(tmp_path):
    config = write_json_project(tmp_path)
    (tmp_path / "data" / "knows_truth.txt").unlink()
    err = _error(config)
    assert err.file == str(config)
    assert err.line == CONFIG.splitlines().index('            "truth": {"infer": ["../data/knows_truth.txt"]},') + 1
    assert "Knows truth file '../data/knows_truth.txt' does not exist" in err.problem


@pytest.mark.parametrize("edit, words", [
    (("1: !KNOWS(P1, P2) ^2", "1: !Friends(P1, P2) ^2"), "predicate 'Friends', which the project does not declare"),
    (("1: !KNOWS(P1, P2) ^2", "1: !Knows(P1) ^2"), "Knows takes 2 arguments"),
    (("1: !KNOWS(P1, P2) ^2", "1: !Knows(P1, +P2) ^2"), "summation variables (+X) only appear in the atoms of arithmetic rules"),
    (('"Lived/2"', '"Lived/x"'), "write the arity"),
    (('"evaluations"', '"evaluation"'), "unknown field(s) 'evaluation'"),
])
def test_bad_projects_raise_data_errors_with_their_line(tmp_path, edit, words):
    config = write_json_project(tmp_path)
    text = CONFIG.replace(*edit)
    config.write_text(text)
    err = _error(config)
    assert words in err.problem
    assert err.file == str(config)
    assert err.line == next(i + 1 for i, l in enumerate(text.splitlines()) if edit[1] in l)


def test_paths_may_not_leave_an_upload(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("p/cli/x.json", '{"rules": ["1: !K(A)"], "predicates": {"K/1": {"targets": ["../../../etc/passwd"]}}}')
        zf.writestr("p/data/k.txt", "a\n")
    err = _error(("p.zip", buf.getvalue()))
    assert "leaves the project" in err.problem and err.file.endswith("cli/x.json") and err.line == 1


def test_arity_mismatch_in_a_data_file_names_the_file_and_line(tmp_path):
    data, _ = write_data_project(tmp_path)
    (tmp_path / "ratings.txt").write_text("u1\ti1\t1.0\nu1\ti2\t0.6\textra\n")
    err = _error(data)
    assert err.file.endswith("ratings.txt") and err.line == 2


def test_inline_rows_and_a_rule_file_path(tmp_path):
    (tmp_path / "m.psl").write_text("0.5: Smokes(X) -> Cancer(X) ^2\n0.01: !Cancer(X) ^2\n")
    (tmp_path / "smokers.json").write_text("""{
        "rules": "m.psl",
        "predicates": {
            "Smokes/1": {"observations": [["Anna"], ["Bob", 0.5]]},
            "Cancer/1": {"targets": [["Anna"], ["Bob"]], "truth": [["Anna", 1], ["Bob", 0]]}
        }
    }""")
    ds = load(tmp_path / "smokers.json")
    assert ds.observations("Smokes")["value"].tolist() == [1.0, 0.5]
    model = PSLModel(list(ds.rules)).ground(ds)
    model.infer()
    got = dict(zip(model.predict()["a0"], model.predict()["prediction"]))
    # minimise 0.5(s - y)^2 + 0.01 y^2 for y <= s: y = 0.5 s / 0.51
    assert got["Anna"] == pytest.approx(0.5 / 0.51, abs=1e-6)
    assert got["Bob"] == pytest.approx(0.25 / 0.51, abs=1e-6)


def test_esms_scores_the_projects_rules_as_a_starting_model(tmp_path):
    from xcore.errors import XcoreError
    from xcore.esms.data_reading import project_rules
    from xcore.esms.settings import ESMSSettings
    from xcore.logic.parser import parse_rules

    ds = load(write_json_project(tmp_path))
    settings = ESMSSettings(target="Knows", iterations=2, rules_per_model=2, n_jobs=1, project_rules=True,
                            valid_fraction=0.34, test_fraction=0.34)
    est = settings.estimator().fit(ds)
    h = est.history_
    assert len(h) == 3 and int(h["iteration"].iloc[-1]) == 2
    start = h.iloc[-1]
    assert start["rules"] == [r.text("psl") for r in parse_rules("\n".join(ds.rules))]
    best = h["score"].min()
    if start["score"] < h["score"].iloc[:-1].min():
        assert est.rules_ == project_rules(ds)  # weights and the hard rule as written
    assert est.search_.best_score_ == pytest.approx(best)
    bare = ds.subset([p.name for p in ds.predicates])
    with pytest.raises(XcoreError, match="carries no rules"):
        project_rules(bare)
