"""A Markov-logic run under Gibbs says whether its chains mixed (split-chain R-hat), in its metrics
and in the command's output (`run.model.notes_`)."""

from __future__ import annotations

import pytest

from xcore.data import load
from xcore.methods import REGISTRY, run_method
from xcore.mln.model import MLNModel

# A(x) <=> B(x) hard: single-site Gibbs cannot leave (1, 1) or (0, 0) (each step costs e^-20), so
# chains started apart stay apart and R-hat is infinite
FROZEN = b"A(obj)\nB(obj)\nA(x) <=> B(x).\n0.1 A(x)\n"


def _data(program: bytes):
    db = b"".join(b"0.5 A(O%d)\n" % i for i in range(6))  # soft evidence 0.5: a unit formula of weight 0
    return load([("p.mln", program), ("e.db", db), ("query.db", b"A(x)\nB(x)\n")])


@pytest.mark.slow
def test_frozen_chains_are_reported_not_converged():
    ds = _data(FROZEN)
    s = REGISTRY["mln"].default_settings(ds).replace(inference="gibbs", sampler="gibbs", n_samples=200, burn_in=20,
                                                    n_chains=4,
                                                    explainers=("mln:m-explain",))
    run = run_method("mln", ds, s, cache=None)
    assert run.metrics["converged"] == 0.0 and run.metrics["rhat_above_1.1"] >= 1
    note = run.model.notes_[0]
    assert "NOT converged" in note and "not trustworthy" in note and "never moved" in note


@pytest.mark.slow
def test_mixing_chains_are_reported_converged():
    ds = _data(b"A(obj)\nB(obj)\n0.8 A(x) => B(x)\n0.1 A(x)\n")
    s = REGISTRY["mln"].default_settings(ds).replace(inference="gibbs", explainers=("mln:m-explain",))
    run = run_method("mln", ds, s, cache=None)
    assert run.metrics["converged"] == 1.0 and run.metrics["max_rhat"] < 1.1
    assert run.model.notes_[0].startswith("Gibbs 4 chains x 1,000 samples (burn-in 200): converged")
    exact = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact").marginals()
    got = dict(zip(run.predictions["target"], run.predictions["prediction"]))
    want = dict(zip(exact["atom"], exact["marginal"]))
    assert max(abs(got[a] - want[a]) for a in got) < 0.05
