"""PSL weight learning (`xcore.psl.weight_learning`, ``python -m xcore.psl --learn``).

References: the perceptron steps written out by hand on a two-atom program whose MAP state has a
closed form; a planted data set (the truth follows one rule and ignores another); the command's
files and exit codes through subprocess; and Java PSL on the same project (the runtime jar bundled
in pslpython for StructuredPerceptron, PSL 2.3's psl-cli jar for MaxLikelihoodMPE when
``XCORE_PSL_CLI_JAR`` names it).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xcore.data.io.psl_project import UNLIMITED, read_project
from xcore.errors import ConfigError, XcoreError
from xcore.logic.parser import parse_rules
from xcore.psl.java_engine import java_psl_jar
from xcore.psl.model import PSLModel
from xcore.psl.weight_learning import (
    GradientDescentOptions,
    VotedPerceptronOptions,
    learn_weights,
    learner_options,
    observed_state,
    project_simplex,
    resolve_method,
    rule_incompatibility,
)

ROOT = Path(__file__).resolve().parents[3]
RULES = ["1.0: Good(P) -> Label(P) ^2", "1.0: Bad(P) -> Label(P) ^2", "1.0: ~Label(P) ^2"]


# ---------------------------------------------------------------------- a tiny program by hand
def tiny_project(root: Path, truth: str = "a\t1\nb\t0\n") -> Path:
    """Targets L(a), L(b); G(a) = 0.8, G(b) = 0.3; rules G(P) -> L(P) ^2 and ~L(P) ^2, weights 1."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "g.txt").write_text("a\t0.8\nb\t0.3\n")
    (root / "l_targets.txt").write_text("a\nb\n")
    (root / "l_truth.txt").write_text(truth)
    config = {"rules": ["1.0: G(P) -> L(P) ^2", "1.0: ~L(P) ^2"],
              "predicates": {"G/1": {"observations": ["g.txt"]},
                             "L/1": {"targets": ["l_targets.txt"], "truth": ["l_truth.txt"]}}}
    path = root / "tiny.json"
    path.write_text(json.dumps(config))
    return path


def tiny_model(tmp_path: Path, truth: str = "a\t1\nb\t0\n") -> tuple[PSLModel, object]:
    project = read_project(config=str(tiny_project(tmp_path, truth)))
    return PSLModel(project.parsed_rules(), limit=None), project.dataset("infer", UNLIMITED)


def incompatibilities_by_hand(la: float, lb: float) -> np.ndarray:
    """Phi of each rule: sum over P of max(0, G(P) - L(P))^2, and of L(P)^2."""
    g = {"a": 0.8, "b": 0.3}
    return np.array([max(0.0, g["a"] - la) ** 2 + max(0.0, g["b"] - lb) ** 2, la * la + lb * lb])


def map_by_hand(w1: float, w2: float) -> tuple[float, float]:
    """argmin_l w1 (g - l)_+^2 + w2 l^2 = w1 g / (w1 + w2) for each atom."""
    return 0.8 * w1 / (w1 + w2), 0.3 * w1 / (w1 + w2)


def test_voted_perceptron_steps_equal_the_hand_computation(tmp_path):
    model, ds = tiny_model(tmp_path)
    res = learn_weights(model, ds, "MaxLikelihoodMPE", {"votedperceptron.numsteps": 3})
    observed = incompatibilities_by_hand(1.0, 0.0)
    np.testing.assert_allclose(res.observed, observed, atol=1e-12)
    w = np.array([1.0, 1.0])
    for t in range(3):  # PSL: w += 0.2 / (t + 1) * (Phi(MAP) - Phi(truth)) / #groundings, clipped at 0
        expected = incompatibilities_by_hand(*map_by_hand(*w))
        w = np.maximum(w + 0.2 / (t + 1) * (expected - observed) / 2.0, 0.0)
        np.testing.assert_allclose(res.history[t], w, atol=1e-7)
    np.testing.assert_allclose(res.weights, w, atol=1e-7)
    np.testing.assert_allclose([r.weight for r in model.rules], w, atol=1e-7)


def test_voted_perceptron_options_average_and_unscaled_gradient(tmp_path):
    model, ds = tiny_model(tmp_path)
    opts = {"votedperceptron.numsteps": "2", "votedperceptron.averagesteps": "true",
            "votedperceptron.scalegradient": "false", "votedperceptron.stepsize": "0.5",
            "votedperceptron.scalestepsize": "false"}
    res = learn_weights(model, ds, "votedperceptron", opts)
    observed, w, seen = incompatibilities_by_hand(1.0, 0.0), np.array([1.0, 1.0]), []
    for _ in range(2):
        w = np.maximum(w + 0.5 * (incompatibilities_by_hand(*map_by_hand(*w)) - observed), 0.0)
        seen.append(w)
    np.testing.assert_allclose(res.weights, np.mean(seen, axis=0), atol=1e-7)


def test_structured_perceptron_mirror_step_equals_the_hand_computation(tmp_path):
    model, ds = tiny_model(tmp_path)
    res = learn_weights(model, ds, "StructuredPerceptron", {"gradientdescent.numsteps": 1,
                                                            "gradientdescent.runfulliterations": True})
    observed, w = incompatibilities_by_hand(1.0, 0.0), np.array([0.5, 0.5])  # scaled onto the simplex
    for t in range(2):  # PSL runs while iteration <= numsteps
        g = observed - incompatibilities_by_hand(*map_by_hand(*w)) - 1.0 / w + 10.0 * (np.log(w) + 1.0)
        g = g * min(1.0, 25.0 / np.abs(g).max())  # clipped to magnitude 25 (max norm)
        w = w * np.exp(-0.1 / (t + 1) * g)
        w = w / w.sum()
        np.testing.assert_allclose(res.history[t], w, atol=1e-9)
    assert res.weights.sum() == pytest.approx(1.0)


def test_structured_perceptron_recomputes_latent_atoms_every_step(tmp_path):
    model, ds = tiny_model(tmp_path, truth="a\t1\n")  # L(b) latent
    res = learn_weights(model, ds, "StructuredPerceptron", {"gradientdescent.numsteps": 2,
                                                            "gradientdescent.runfulliterations": "true",
                                                            "gradientdescent.negativeentropyregularization": 0})
    w = np.array([0.5, 0.5])
    for t in range(3):
        latent_b = 0.3 * w[0] / w.sum()  # MAP of L(b) with L(a) fixed to its truth, current weights
        g = incompatibilities_by_hand(1.0, latent_b) - incompatibilities_by_hand(*map_by_hand(*w)) - 1.0 / w
        g = g * min(1.0, 25.0 / np.abs(g).max())
        w = w * np.exp(-0.1 / (t + 1) * g)
        w = w / w.sum()
        np.testing.assert_allclose(res.history[t], w, atol=1e-8)


def test_incompatibility_is_the_sum_of_ground_potentials(tmp_path):
    model, ds = tiny_model(tmp_path)
    model.ground(ds)
    rng = np.random.default_rng(3)
    for _ in range(5):
        y = rng.random(2)
        cols = model.store_.target_index[model.store_.target_ids]
        la, lb = y[cols[0]], y[cols[1]]  # target order as the store keeps it (a before b)
        np.testing.assert_allclose(rule_incompatibility(model.program_, y, 2), incompatibilities_by_hand(la, lb),
                                   atol=1e-12)


def test_latent_targets_take_their_map_values_given_the_labels(tmp_path):
    model, ds = tiny_model(tmp_path, truth="a\t1\n")  # L(b) has no truth: latent
    model.ground(ds)
    y = observed_state(model.program_, model.store_.truth)
    # L(b) given the labels: argmin (0.3 - l)_+^2 + l^2 = 0.15
    assert sorted(np.round(y, 9)) == [0.15, 1.0]


def test_method_names_and_options_are_checked():
    assert resolve_method(None) == resolve_method("maxlikelihoodmpe") == "MaxLikelihoodMPE"
    assert resolve_method("org.linqs.psl.application.learning.weight.maxlikelihood.MaxLikelihoodMPE") \
        == "MaxLikelihoodMPE"
    assert resolve_method("org.linqs.psl.application.learning.weight.gradient.optimalvalue.StructuredPerceptron") \
        == "StructuredPerceptron"
    with pytest.raises(ConfigError, match="supported: MaxLikelihoodMPE, StructuredPerceptron"):
        resolve_method("MaxPseudoLikelihood")
    assert learner_options("MaxLikelihoodMPE", {}) == VotedPerceptronOptions()
    assert VotedPerceptronOptions().numsteps == 25 and VotedPerceptronOptions().stepsize == 0.2
    assert learner_options("StructuredPerceptron", {"gradientdescent.extension": "none"}).extension == "NONE"
    assert learner_options("StructuredPerceptron", {}) == GradientDescentOptions()
    with pytest.raises(ConfigError, match="votedperceptron.numsteps"):
        learner_options("MaxLikelihoodMPE", {"votedperceptron.numstep": 3})
    assert learner_options("MaxLikelihoodMPE", {"votedperceptron.cutobjective": "false"}).cutobjective is False
    with pytest.raises(ConfigError, match="cutobjective=true is not supported"):
        learner_options("MaxLikelihoodMPE", {"votedperceptron.cutobjective": "true"})
    with pytest.raises(ConfigError, match="true or false"):
        learner_options("MaxLikelihoodMPE", {"votedperceptron.averagesteps": "yes"})


def test_simplex_projection_matches_a_solver():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    for _ in range(5):
        v = rng.normal(size=4)
        ref = minimize(lambda w: ((w - v) ** 2).sum(), np.full(4, 0.25), bounds=[(0, 1)] * 4,
                       constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1}], method="SLSQP", tol=1e-12).x
        np.testing.assert_allclose(project_simplex(v), ref, atol=1e-6)


def test_no_truth_names_the_predicate(tmp_path):
    model, ds = tiny_model(tmp_path, truth="")
    with pytest.raises(XcoreError, match="no truth labels for L"):
        learn_weights(model, ds)


# ---------------------------------------------------------------------- planted ground truth
def write_planted(root: Path, seed: int = 0, n: int = 60) -> Path:
    """Learn and eval splits where Label(P) ~ Good(P) (plus noise) and Bad(P) is unrelated to it:
    `Good -> Label` holds in the truth, `Bad -> Label` is often violated."""
    rng = np.random.default_rng(seed)
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "cli").mkdir(exist_ok=True)
    for split in ("learn", "eval"):
        people = [f"{split[0]}{i}" for i in range(n)]
        good, bad = rng.random(n), rng.random(n)
        truth = np.clip(good + rng.normal(0, 0.05, n), 0, 1)
        for name, values in (("good", good), ("bad", bad), ("label_truth", truth)):
            (root / "data" / f"{name}_{split}.txt").write_text("".join(f"{p}\t{v:.3f}\n" for p, v in zip(people, values)))
        (root / "data" / f"label_targets_{split}.txt").write_text("".join(f"{p}\n" for p in people))
        data = {"predicates": {"Good/1": "closed", "Bad/1": "closed", "Label/1": "open"},
                "observations": {"Good": f"../data/good_{split}.txt", "Bad": f"../data/bad_{split}.txt"},
                "targets": {"Label": f"../data/label_targets_{split}.txt"},
                "truth": {"Label": f"../data/label_truth_{split}.txt"}}
        (root / "cli" / f"planted-{split}.data").write_text(json.dumps(data))  # JSON is YAML
    (root / "cli" / "planted.psl").write_text("\n".join(RULES) + "\n")

    def files(kind: str) -> dict:
        return {"learn": [f"../data/{kind}_learn.txt"], "infer": [f"../data/{kind}_eval.txt"]}

    config = {"rules": RULES,
              "predicates": {"Good/1": {"observations": files("good")}, "Bad/1": {"observations": files("bad")},
                             "Label/1": {"targets": files("label_targets"), "truth": files("label_truth"),
                                         "evaluations": ["ContinuousEvaluator"]}}}
    path = root / "cli" / "planted.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def eval_mse(project, rules) -> float:
    model = PSLModel(rules, limit=None).ground(project.dataset("infer", UNLIMITED))
    model.infer()
    return model.evaluate()["mse"]


@pytest.mark.parametrize("method", ["MaxLikelihoodMPE", "StructuredPerceptron"])
def test_planted_truth_weights_the_true_rule_above_the_false_one(tmp_path, method):
    project = read_project(config=str(write_planted(tmp_path)))
    model = PSLModel(project.parsed_rules("learn"), limit=None)
    options = {"votedperceptron.numsteps": 50, "votedperceptron.stepsize": 2.0}
    res = learn_weights(model, project.dataset("learn", UNLIMITED), method, options)
    good, bad, _ = res.weights
    assert good > bad
    assert res.observed[0] < res.observed[1]  # the truth violates Bad -> Label more
    assert eval_mse(project, model.rules) < eval_mse(project, project.parsed_rules("infer")) - 1e-3


# ---------------------------------------------------------------------- the command
def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "xcore.psl", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def read_values(path: Path) -> dict[tuple[str, ...], float]:
    return {tuple(line.split("\t")[:-1]): float(line.split("\t")[-1]) for line in path.read_text().splitlines()}


@pytest.mark.slow
def test_learn_then_infer_from_a_config_writes_the_learned_model_and_values(tmp_path):
    config = write_planted(tmp_path / "proj")
    res = run("--config", str(config), "--learn", "--output", str(tmp_path / "out"), "--eval")
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["LABEL.txt", "planted-learned.psl"]
    values = read_values(tmp_path / "out" / "LABEL.txt")
    assert len(values) == 60 and all(k[0].startswith("e") for k in values)  # the eval split
    learned = parse_rules((tmp_path / "out" / "planted-learned.psl").read_text(), dialect="psl")
    project = read_project(config=str(config))
    model = PSLModel(project.parsed_rules("learn"), limit=None)
    learn_weights(model, project.dataset("learn", UNLIMITED), "StructuredPerceptron")  # the runtime's default
    assert [r.text() for r in learned] == [r.text() for r in model.rules]  # round trip, same weights
    # the values are inference with the learned weights on the eval split
    ev = PSLModel(learned, limit=None).ground(project.dataset("infer", UNLIMITED))
    ev.infer()
    frame = ev.predict()
    for row in frame.itertuples():
        assert values[(row.a0,)] == pytest.approx(row.prediction, abs=1e-6)
    assert "Label: 60 atoms with truth" in res.stdout and "learned StructuredPerceptron weights" in res.stderr


@pytest.mark.slow
def test_learn_on_a_data_file_then_infer_with_the_learned_model(tmp_path):
    write_planted(tmp_path)
    cli = tmp_path / "cli"
    res = run("--learn", "--model", "planted.psl", "--data", "planted-learn.data", "-o", "out",
              "-D", "votedperceptron.numsteps=10", "-q", cwd=cli)
    assert res.returncode == 0, res.stderr
    assert [p.name for p in (cli / "out").iterdir()] == ["planted-learned.psl"]  # PSL 2's -l only learns
    res = run("--infer", "--model", "out/planted-learned.psl", "--data", "planted-eval.data", "-o", "eval",
              "-q", cwd=cli)
    assert res.returncode == 0, res.stderr
    assert len(read_values(cli / "eval" / "LABEL.txt")) == 60
    res = run("--learn", "--infer", "--model", "planted.psl", "--data", "planted-learn.data", "-o", "both",
              "-q", cwd=cli)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (cli / "both").iterdir()) == ["LABEL.txt", "planted-learned.psl"]


@pytest.mark.slow
def test_relative_config_path_with_a_folder(tmp_path):
    """``--config cli/x.json`` from the project root (the reader alone resolved it to cli/cli/x.json)."""
    write_planted(tmp_path)
    res = run("--config", "cli/planted.json", "--learn", "StructuredPerceptron", "-o", "out", "-q", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["LABEL.txt", "planted-learned.psl"]


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["--learn", "MaxPseudoLikelihood"], "supported: MaxLikelihoodMPE, StructuredPerceptron"),
    (["--learn", "-D", "gradientdescent.numsteps=many"], "expected a number"),
    (["--learn", "MaxLikelihoodMPE", "-D", "votedperceptron.numsteps=many"], "expected a number"),
    (["-D", "runtime.learn.method=MaxPseudoLikelihood"], "supported: MaxLikelihoodMPE, StructuredPerceptron"),
    (["--learn", "-D", "votedperceptron"], "-D takes KEY=VALUE"),
    (["--learn", "--data", "notruth.data", "--model", "planted.psl"], "no truth labels for Label"),
])
def test_bad_learning_input_exits_2(tmp_path, args, words):
    config = write_planted(tmp_path)
    text = (tmp_path / "cli" / "planted-learn.data").read_text()
    (tmp_path / "cli" / "notruth.data").write_text(text.replace('"truth": {"Label": "../data/label_truth_learn.txt"}',
                                                                '"truth": {}'))
    if "--data" not in args:
        args = ["--config", str(config), *args]
    res = run(*args, cwd=tmp_path / "cli")
    assert res.returncode == 2, res.stderr
    assert words in res.stderr and "Traceback" not in res.stderr


# ---------------------------------------------------------------------- Java PSL
JAVA_OPTIONS = {"runtime.log.level": "WARN", "runtime.db.intids": False,
                "admmreasoner.epsilonabs": 1e-7, "admmreasoner.epsilonrel": 1e-7}


def java_learned(path: Path) -> list[float]:
    return [r.weight for r in parse_rules(path.read_text(), dialect="psl")]


@pytest.mark.slow
@pytest.mark.skipif(java_psl_jar() is None, reason="needs Java and the PSL jar bundled in pslpython (bench extra)")
def test_structured_perceptron_matches_java_psl_runtime(tmp_path):
    """PSL's runtime (pslpython's jar): its default learner from the same config, then inference."""
    config = write_planted(tmp_path)
    doc = json.loads(config.read_text())
    doc["options"] = {**JAVA_OPTIONS, "runtime.learn.output.model.path": str(tmp_path / "java-learned.psl"),
                      "runtime.inference.output.results.dir": str(tmp_path / "java_out")}
    (config.parent / "java.json").write_text(json.dumps(doc))
    java = subprocess.run(["java", "-Xmx1g", "-jar", str(java_psl_jar()), "java.json"], cwd=config.parent,
                          capture_output=True, text=True, timeout=300)
    assert java.returncode == 0, java.stdout[-2000:] + java.stderr[-2000:]
    ours = run("--config", str(config), "--learn", "StructuredPerceptron", "-o", str(tmp_path / "ours"), "-q")
    assert ours.returncode == 0, ours.stderr
    theirs, mine = java_learned(tmp_path / "java-learned.psl"), java_learned(tmp_path / "ours" / "planted-learned.psl")
    np.testing.assert_allclose(mine, theirs, atol=1e-5)  # measured 3e-8: Java keeps weights in float32
    a, b = read_values(tmp_path / "java_out" / "LABEL.txt"), read_values(tmp_path / "ours" / "LABEL.txt")
    assert set(a) == set(b) and max(abs(a[k] - b[k]) for k in a) < 1e-4


def java_on_simple_acquaintances(tmp_path: Path) -> Path:
    """psl-examples' simple-acquaintances config unchanged with synthetic data (half the targets latent),
    learned then inferred by Java PSL into tmp_path (java-learned.psl, java_out/); returns the config."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_psl_examples import copy_project, write_synthetic_data

    root = copy_project("simple-acquaintances", tmp_path)
    config = root / "cli" / "simple-acquaintances.json"
    write_synthetic_data(config, seed=3, reflexive_targets=False, domain=tuple(str(i) for i in range(6)))
    doc = json.loads(config.read_text())
    doc["options"] = {**JAVA_OPTIONS, "runtime.learn": True, "runtime.inference": True,
                      "runtime.learn.output.model.path": str(tmp_path / "java-learned.psl"),
                      "runtime.inference.output.results.dir": str(tmp_path / "java_out")}
    (config.parent / "java.json").write_text(json.dumps(doc))
    java = subprocess.run(["java", "-Xmx1g", "-jar", str(java_psl_jar()), "java.json"], cwd=config.parent,
                          capture_output=True, text=True, timeout=300)
    assert java.returncode == 0, java.stdout[-2000:] + java.stderr[-2000:]
    return config


@pytest.mark.slow
@pytest.mark.skipif(java_psl_jar() is None, reason="needs Java and the PSL jar bundled in pslpython (bench extra)")
def test_structured_perceptron_matches_java_on_simple_acquaintances(tmp_path):
    """linqs/psl-examples' simple-acquaintances config unchanged (hard symmetry, transitivity), synthetic
    data with truth for half the targets (the rest latent): PSL learns on it, then infers."""
    config = java_on_simple_acquaintances(tmp_path)
    ours = run("--config", str(config), "--learn", "StructuredPerceptron", "--infer", "-o", str(tmp_path / "ours"),
               "-q")
    assert ours.returncode == 0, ours.stderr
    theirs = java_learned(tmp_path / "java-learned.psl")
    mine = java_learned(tmp_path / "ours" / "simple-acquaintances-learned.psl")
    np.testing.assert_allclose(np.array(mine, dtype=float), np.array(theirs, dtype=float), atol=1e-5)  # measured 2e-7
    assert theirs[4] is None and mine[4] is None  # the hard rule stays hard
    a, b = read_values(tmp_path / "java_out" / "KNOWS.txt"), read_values(tmp_path / "ours" / "KNOWS.txt")
    assert set(a) == set(b) and max(abs(a[k] - b[k]) for k in a) < 1e-3


PSL_CLI_JAR = os.environ.get("XCORE_PSL_CLI_JAR")


@pytest.mark.slow
@pytest.mark.skipif(not (PSL_CLI_JAR and Path(PSL_CLI_JAR).is_file() and shutil.which("java")),
                    reason="set XCORE_PSL_CLI_JAR to PSL 2.3's psl-cli jar (pslpython 2.3.0) to compare MaxLikelihoodMPE")
def test_max_likelihood_mpe_matches_java_psl_cli(tmp_path):
    """PSL 2.3's command line: ``--learn --model X.psl --data X-learn.data`` writes X-learned.psl."""
    write_planted(tmp_path)
    cli = tmp_path / "cli"
    options = [f"-D{k}={v}" for k, v in JAVA_OPTIONS.items() if k.startswith("admm")]
    java = subprocess.run(["java", "-jar", PSL_CLI_JAR, "--learn", "--model", "planted.psl", "--data",
                           "planted-learn.data", *options], cwd=cli, capture_output=True, text=True, timeout=300)
    assert java.returncode == 0, java.stdout[-2000:] + java.stderr[-2000:]
    theirs = java_learned(cli / "planted-learned.psl")
    ours = run("--learn", "--model", "planted.psl", "--data", "planted-learn.data", "-o", "ours", "-q", cwd=cli)
    assert ours.returncode == 0, ours.stderr
    np.testing.assert_allclose(java_learned(cli / "ours" / "planted-learned.psl"), theirs, atol=1e-5)
    assert not math.isclose(theirs[0], 1.0)  # learning moved the weights
