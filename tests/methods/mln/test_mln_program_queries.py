"""Markov-logic runs on a loaded .mln program: the declared query predicate (any arity) is the default
target, `target` picks another, M-Explain explains its atoms."""

from __future__ import annotations

from xcore.data import load
from xcore.methods import REGISTRY, run_method

PROGRAM = b"*Prof(person)\nAdv(person, person)\nBusy(person)\n1.2 Adv(x, y) => Prof(y)\n0.7 Busy(x) => EXIST y Adv(x, y)\n"


def test_declared_binary_query_is_the_default_and_target_overrides():
    ds = load([("p.mln", PROGRAM), ("e.db", b"Prof(A)\n!Adv(A, A)\nBusy(B)\n"), ("query.db", b"Adv(x, y)\n")])
    spec = REGISTRY["mln"]
    assert spec.applicable(ds) is None
    settings = spec.default_settings(ds)
    assert settings.target == "Adv"  # n-ary queries get every formula explainer (I-, M-, R-Explain)
    assert set(settings.explainers) == {"mln:i-explain", "mln:m-explain", "mln:r-explain"}
    run = run_method("mln", ds, settings.replace(explainers=("mln:m-explain",)), cache=None)
    assert set(run.predictions["target"]) == {"Adv(A, B)", "Adv(B, A)", "Adv(B, B)"}
    exps = run.explanations["mln:m-explain"]
    assert exps["Adv(B, A)"].items  # an n-ary query atom explained by its ground formulas
    other = run_method("mln", ds, settings.replace(target="Busy", explainers=("mln:m-explain",)), cache=None)
    assert set(other.predictions["target"]) == {"Busy(A)"}
