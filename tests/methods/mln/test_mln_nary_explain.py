"""I-Explain and R-Explain on n-ary query atoms (advisedBy(x, y), category(p, c)): the importance of
every ground formula against brute-force enumeration of the first-order program's worlds, the
object type coalitions are cut over, and Tuffy-style query selections (`query=...`)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xcore.data import load
from xcore.errors import ConfigError
from xcore.methods import REGISTRY, run_method
from xcore.mln.iexplain import IExplainer
from xcore.mln.model import MLNModel
from xcore.mln.queries import matching_atoms, parse_query, split_atom_texts
from xcore.mln.rexplain import RExplainer
from xcore.mln.workflow import detect_setting

ROOT = Path(__file__).resolve().parents[3]
PEOPLE = ("A", "B", "C")
PROF = {"B", "C"}
W_PROF, W_SYM = 1.2, -0.8
PROGRAM = f"""
*Prof(person)
Adv(person, person)
{W_PROF} Adv(x, y) => Prof(y)
{W_SYM} Adv(x, y) => Adv(y, x)
"""
EVIDENCE = b"Prof(B)\nProf(C)\n!Adv(A, C)\n"


def _worlds():
    """Brute force over the open Adv atoms, by the formulas' own first-order meaning (not our
    clauses): query atoms, worlds x atoms truth, world probabilities, and per rule a function of
    (x, y) giving each world's truth of that ground formula."""
    atoms = [(x, y) for x in PEOPLE for y in PEOPLE if (x, y) != ("A", "C")]
    truth = np.array(list(itertools.product([0.0, 1.0], repeat=len(atoms))))
    col = {a: k for k, a in enumerate(atoms)}

    def adv(x, y):
        return truth[:, col[(x, y)]] > 0 if (x, y) in col else np.zeros(len(truth), dtype=bool)

    formulas = {
        0: lambda x, y: ~adv(x, y) | (y in PROF),  # Adv(x, y) => Prof(y)
        1: lambda x, y: ~adv(x, y) | adv(y, x),  # Adv(x, y) => Adv(y, x)
    }
    logw = sum(W_PROF * formulas[0](x, y) + W_SYM * formulas[1](x, y) for x in PEOPLE for y in PEOPLE)
    p = np.exp(logw - logw.max())
    return [f"Adv({x}, {y})" for x, y in atoms], truth, p / p.sum(), formulas


def _brute_importance(query: str, rule: int, x: str, y: str) -> float:
    queries, truth, prob, formulas = _worlds()
    xq = truth[:, queries.index(query)]
    n_f = formulas[rule](x, y).astype(float)
    return float((prob * n_f) @ xq / (prob @ xq) - prob @ n_f)


def _model():
    ds = load([("p.mln", PROGRAM.encode()), ("e.db", EVIDENCE), ("query.db", b"Adv(x, y)\n")])
    return ds, MLNModel("\n".join(ds.rules)).ground(ds).infer("exact")


def _check_against_enumeration(explanation, query: str) -> int:
    checked = 0
    for item in explanation.items:
        x, y = item.atoms[0][len("Adv("):-1].split(", ")  # both rules start with Adv(x, y)
        want = _brute_importance(query, item.extras["rule_index"], x, y)
        assert item.score == pytest.approx(want, abs=1e-9), (query, item.text)
        checked += 1
    return checked


@pytest.mark.parametrize("explainer", ["I-Explain", "R-Explain"])
def test_coalition_explainers_on_binary_queries_match_enumeration(explainer):
    """With every object sampled (C = S = 1) or every formula drawn (size 1.0), each coalition is the
    whole network and exact inference there gives each item the brute-force I(f, Q)."""
    ds, model = _model()
    if explainer == "I-Explain":
        ex = IExplainer(C=1.0, S=1.0, T=2, top_k=20, inference="exact", seed=0).fit(model, "person")
    else:
        ex = RExplainer(T=2, top_k=20, size=1.0, inference="exact", seed=0).fit(model, "person")
    checked = 0
    for q in ("Adv(A, B)", "Adv(B, A)", "Adv(C, A)", "Adv(B, C)"):
        exp = ex.explain(q)
        checked += _check_against_enumeration(exp, q)
        # ranked by |I(f, Q)| and every non-constant ground formula of Q listed
        scores = [abs(i.score) for i in exp.items]
        assert scores == sorted(scores, reverse=True)
        assert {i.extras["clause"] for i in exp.items} == set(model.mln_.entry_clause[model.mln_.entries_of(
            model.atom_column(q))].tolist())
    assert checked >= 8


def test_partial_coalitions_cover_binary_queries_with_their_own_formulas():
    """S < 1: a query is a member only when both persons are sampled; the others borrow lists, and
    every listed formula (own or borrowed) is a ground formula containing the query."""
    ds, model = _model()
    ex = IExplainer(C=0.34, S=0.5, T=6, top_k=5, inference="exact", seed=1).fit(model, "person")
    mln = model.mln_
    sizes = [len(c.members) for c in ex.coalition_details_]
    assert min(sizes) < mln.n_atoms  # some coalitions leave binary queries out
    for q in mln.atoms_text().tolist():
        col = model.atom_column(q)
        own = set(mln.entry_clause[mln.entries_of(col)].tolist())
        exp = ex.explain(q)
        assert {i.extras["clause"] for i in exp.items} <= own
        assert exp.prediction == pytest.approx(float(model.result_.marginals[col]))


def test_object_type_of_nary_queries_is_the_larger_argument_type():
    ds = load([("p.mln", b"*wrote(person, paper)\ncategory(paper, cat)\n1 wrote(a, p) ^ category(p, c) => category(p, c)\n"
                         b"0.5 category(p, Networking)\n"),
               ("e.db", b"wrote(Ann, P1)\nwrote(Bob, P2)\nwrote(Ann, P3)\ncategory(P1, Networking)\n"
                        b"category(P2, Databases)\n"), ("query.db", b"category(x, y)\n")])
    setting = detect_setting(ds)
    assert (setting.target, setting.domain_type, setting.word_predicate) == ("category", "paper", None)
    settings = REGISTRY["mln"].default_settings(ds)
    assert settings.target == "category"
    assert set(settings.explainers) == {"mln:m-explain", "mln:i-explain", "mln:r-explain"}


def test_query_patterns_select_atoms():
    frame = split_atom_texts(["Adv(A, B)", "Adv(B, B)", "Adv(B, A)", "Prof(A)"])
    consts = {"A", "B"}
    assert matching_atoms(frame, parse_query("Adv(x, y)"), consts).tolist() == [True, True, True, False]
    assert matching_atoms(frame, parse_query("Adv(B, y)"), consts).tolist() == [False, True, True, False]
    assert matching_atoms(frame, parse_query("Adv(x, x)"), consts).tolist() == [False, True, False, False]
    assert matching_atoms(frame, parse_query("Adv(A, y), Adv(x, A)"), consts).tolist() == [True, False, True, False]
    assert matching_atoms(frame, parse_query("Adv"), consts).tolist() == [True, True, True, False]
    for bad in ("Adv(x, y", "Adv(x), Prof(y)", "", "1x(y)"):
        with pytest.raises(ConfigError) as e:
            parse_query(bad)
        assert e.value.field == "query"


@pytest.mark.slow
def test_run_with_a_binary_query_explains_only_the_selected_atoms():
    ds, _ = _model()
    settings = REGISTRY["mln"].default_settings(ds).replace(query="Adv(A, y)", inference="exact")
    run = run_method("mln", ds, settings, cache=None)
    assert set(run.predictions["target"]) == {"Adv(A, A)", "Adv(A, B)"}
    assert set(run.explanations) == {"mln:m-explain", "mln:i-explain", "mln:r-explain"}
    for exps in run.explanations.values():
        assert set(exps.targets) == {"Adv(A, A)", "Adv(A, B)"}
    m = run.explanations["mln:m-explain"]["Adv(A, B)"]
    assert _check_against_enumeration(m, "Adv(A, B)") >= 1
    with pytest.raises(ConfigError, match="takes 2 argument"):
        run_method("mln", ds, settings.replace(query="Adv(A)"), cache=None)
    with pytest.raises(ConfigError, match="no predicate"):
        run_method("mln", ds, settings.replace(query="Nope(x)"), cache=None)


SHARED = os.environ.get("XCORE_SHARED_DATA")


@pytest.mark.slow
@pytest.mark.skipif(not SHARED, reason="needs XCORE_SHARED_DATA (third-party Markov logic examples)")
@pytest.mark.parametrize("example, query", [("pracmln/smokers", "Friends(x, y)"),
                                            ("pracmln/alarm", "neighborhood(x, y)")])
def test_cli_runs_pracmln_examples_with_a_binary_query(tmp_path, example, query):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "xcore", "run", "mln", str(Path(SHARED) / "mln_examples" / example),
                           "--set", f"query={query}", "--set", "T=3", "--out", str(tmp_path), "-q"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    pred = query.split("(")[0]
    exps = json.loads((tmp_path / "explanations.json").read_text())
    text = json.dumps(exps)
    for name in ("mln:i-explain", "mln:r-explain", "mln:m-explain"):
        assert name in text
    targets = (tmp_path / "predictions.csv").read_text().splitlines()[1:]
    assert targets and all(t.strip('"').startswith(pred + "(") for t in targets)
