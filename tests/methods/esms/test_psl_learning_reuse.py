"""Weight learning reuses one grounding's solvers (issue 26 item 4), and ``-D admmreasoner.*`` reach ADMM.

References: ADMM blocks rebuilt from scratch (the reweighted ones must be identical), the HiGHS QP
(an independent exact solver), and the learners on the exact solvers (the weights the code learned
before ADMM's state was carried across steps).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from xcore.data.io.psl_project import UNLIMITED, read_project
from xcore.errors import ConfigError
from xcore.psl import project_run
from xcore.psl.admm import PSL_EPSILON, AdmmWarm, admm_options, blocks_of, map_admm
from xcore.psl.admm_blocks import build_blocks
from xcore.psl.cli import main
from xcore.psl.inference import map_inference
from xcore.psl.java_engine import java_psl_jar
from xcore.psl.model import PSLModel
from xcore.psl.program import HingeProgram
from xcore.psl.weight_learning import learn_weights

RULES = ["1.0: Good(P) -> Label(P)", "1.0: Bad(P) -> Label(P)", "1.0: ~Label(P) ^2",  # strictly convex: one optimum
         "1.0: Good(P) & Friend(P, Q) -> Label(Q) ^2"]


def random_program(seed: int, m: int = 300, n: int = 8) -> HingeProgram:
    """Linear and squared hinges with repeated linear forms (so blocks merge members), some weights 0."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=0.3, random_state=seed, format="csr")
    A.data = rng.choice([-1.0, 1.0, 0.5], len(A.data))
    A = sp.vstack([A, 2.0 * A]).tocsr()  # the same forms up to a factor: exact merges
    b = np.round(rng.uniform(-1, 1, 2 * m), 1)
    w = rng.uniform(0, 2, 2 * m) * (rng.random(2 * m) < 0.8)
    return HingeProgram(A, b, w, rng.random(2 * m) < 0.5, rule_index=np.arange(2 * m) % 3)


@pytest.mark.parametrize("seed", [0, 1])
def test_reweighted_blocks_equal_blocks_built_anew(seed):
    prog = random_program(seed)
    bl = blocks_of(prog, keep_zero=True)[0]
    w = np.random.default_rng(seed + 10).uniform(0, 3, prog.n_potentials)
    again = build_blocks(prog.A, prog.b, w, prog.squared, prog.C, prog.d, prog.equality, prog.n_atoms, keep_zero=True)
    new = bl.reweighted(w)
    for name in ("rows", "cols", "a", "norm2", "first", "bp"):
        assert np.array_equal(getattr(new, name), getattr(again, name)), name
    for name in ("P", "L", "S", "SB"):
        assert np.allclose(getattr(new, name), getattr(again, name), rtol=1e-12, atol=1e-12), name
    with pytest.raises(ValueError):
        blocks_of(prog)[0].reweighted(w)  # built without the zero weights: its weights cannot be redone


def test_warm_admm_over_changing_weights_equals_the_qp():
    prog = random_program(2, m=150)
    warm = AdmmWarm.of(prog)
    rng = np.random.default_rng(3)
    y = None
    for _ in range(4):  # weights drift as a perceptron moves them; one block structure throughout
        prog.w = np.maximum(prog.w + rng.normal(0, 0.3, prog.n_potentials), 0.0)
        res = map_admm(prog, y, tol=1e-10, warm=warm)
        exact = map_inference(prog, "qp")
        assert res.converged
        assert abs(res.energy - exact.energy) <= 1e-7 * max(1.0, abs(exact.energy))
        y = res.y
    assert warm.u is not None and warm.rho > 0


def write_project(root: Path, n: int = 25, seed: int = 0) -> Path:
    """A learn/infer config: Label(P) follows Good(P), Bad(P) is noise; linear and squared rules."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    people = [f"p{i}" for i in range(n)]
    good, bad = rng.random(n), rng.random(n)
    truth = np.clip(good + rng.normal(0, 0.05, n), 0, 1)
    files = {"good": zip(people, good), "bad": zip(people, bad), "truth": zip(people, truth)}
    for name, rows in files.items():
        (root / f"{name}.txt").write_text("".join(f"{p}\t{v:.3f}\n" for p, v in rows))
    (root / "friend.txt").write_text("".join(f"{people[i]}\t{people[(i + 1) % n]}\t1\n" for i in range(n)))
    (root / "targets.txt").write_text("".join(f"{p}\n" for p in people))
    both = lambda f: {"learn": [f], "infer": [f]}  # noqa: E731
    config = {"rules": RULES,
              "predicates": {"Good/1": {"observations": both("good.txt")}, "Bad/1": {"observations": both("bad.txt")},
                             "Friend/2": {"observations": both("friend.txt")},
                             "Label/1": {"targets": both("targets.txt"), "truth": both("truth.txt")}}}
    path = root / "p.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("method", ["MaxLikelihoodMPE", "StructuredPerceptron"])
def test_learning_on_admm_equals_learning_on_the_exact_qp(tmp_path, method):
    project = read_project(config=str(write_project(tmp_path)))
    options = {"votedperceptron.numsteps": 10, "gradientdescent.numsteps": 20}
    learned = {}
    for solver in ("qp", "admm"):
        model = PSLModel(project.parsed_rules("learn"), inference=solver, limit=None)
        learned[solver] = learn_weights(model, project.dataset("learn", UNLIMITED), method, options)
    assert learned["qp"].steps == learned["admm"].steps
    np.testing.assert_allclose(learned["admm"].weights, learned["qp"].weights, atol=1e-4)
    np.testing.assert_allclose(learned["admm"].expected, learned["qp"].expected, atol=1e-3)


def test_admm_options_are_read_as_java_names_them():
    assert admm_options({}) == {}
    assert admm_options({"admmreasoner.epsilonabs": "1e-6"}) == {"stop": "psl", "epsilon": (1e-6, PSL_EPSILON[1])}
    assert admm_options({"ADMMReasoner.EpsilonRel": "0.01", "admmreasoner.maxiterations": "500",
                         "admmreasoner.stepsize": "2"}) == {"stop": "psl", "epsilon": (PSL_EPSILON[0], 0.01),
                                                            "max_iter": 500, "rho": 2.0}
    for bad in ({"admmreasoner.epsilonabs": "x"}, {"admmreasoner.maxiterations": "2.5"},
                {"admmreasoner.stepsize": "-1"}):
        with pytest.raises(ConfigError, match="admmreasoner"):
            admm_options(bad)


def run_cli(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, err.getvalue()


def test_cli_admm_options_reach_map_admm(tmp_path, monkeypatch):
    config = str(write_project(tmp_path))
    seen = []
    real = project_run.map_admm

    def spy(prog, y0=None, **kwargs):
        seen.append(kwargs)
        return real(prog, y0, **kwargs)

    monkeypatch.setattr(project_run, "map_admm", spy)
    code, err = run_cli("--config", config, "--no-learn", "--method", "admm", "-o", str(tmp_path / "o"),
                        "-D", "admmreasoner.epsilonabs=1e-6", "-D", "admmreasoner.epsilonrel=1e-4",
                        "-D", "admmreasoner.maxiterations=7000")
    assert code == 0, err
    assert seen == [{"tol": 1e-9, "stop": "psl", "epsilon": (1e-6, 1e-4), "max_iter": 7000}]
    assert "ignored" not in err
    code, err = run_cli("--config", config, "--no-learn", "--method", "admm", "-o", str(tmp_path / "o2"),
                        "-D", "admmreasoner.maxiterations=2")
    assert code == 0 and "iteration limit reached" in err  # the cap was applied
    doc = json.loads(Path(config).read_text())  # a config's admmreasoner.* (tuned for Java's rule) are not used
    doc["options"] = {"admmreasoner.maxiterations": 2}
    Path(config).write_text(json.dumps(doc))
    code, err = run_cli("--config", config, "--no-learn", "--method", "admm", "-o", str(tmp_path / "o3"))
    assert code == 0 and "iteration limit reached" not in err, err


def test_cli_unknown_option_is_named_with_the_supported_ones(tmp_path):
    config = str(write_project(tmp_path))
    code, err = run_cli("--config", config, "--no-learn", "-q", "-o", str(tmp_path / "o"), "-D", "admmreasoner.epsilonab=1")
    assert code == 0
    assert "warning:" in err and "admmreasoner.epsilonab=1" in err
    assert "admmreasoner.epsilonabs" in err and "votedperceptron.*" in err  # the supported ones are listed
    code, err = run_cli("--config", config, "--no-learn", "-o", str(tmp_path / "o"),
                        "-D", "admmreasoner.maxiterations=many")
    assert code == 2 and "admmreasoner.maxiterations" in err


@pytest.mark.slow
@pytest.mark.skipif(java_psl_jar() is None, reason="needs Java and the PSL jar bundled in pslpython (bench extra)")
def test_learning_on_kept_admm_matches_java_on_simple_acquaintances(tmp_path):
    """psl-examples' simple-acquaintances (hard symmetry, latent targets) learned with --method admm, whose
    blocks and multipliers are kept across steps, gives Java PSL's learned weights and values."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_psl_weight_learning import java_learned, java_on_simple_acquaintances, read_values

    config = java_on_simple_acquaintances(tmp_path)
    code, err = run_cli("--config", str(config), "--learn", "StructuredPerceptron", "--infer", "--method", "admm",
                        "-o", str(tmp_path / "ours"), "-q")
    assert code == 0, err
    theirs = java_learned(tmp_path / "java-learned.psl")
    mine = java_learned(tmp_path / "ours" / "simple-acquaintances-learned.psl")
    np.testing.assert_allclose(np.array(mine, dtype=float), np.array(theirs, dtype=float), atol=1e-5)
    a, b = read_values(tmp_path / "java_out" / "KNOWS.txt"), read_values(tmp_path / "ours" / "KNOWS.txt")
    assert set(a) == set(b) and max(abs(a[k] - b[k]) for k in a) < 1e-3
