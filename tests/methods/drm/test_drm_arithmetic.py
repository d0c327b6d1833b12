"""DRM on Aleph problems whose modes use arithmetic helpers defined by rules (numbers/guess:
``gteq(+number,#number)`` with ``gteq/2`` and ``guess/2`` in the background): SWI-Prolog saturates
and evaluates the features, as Aleph does; covers against Aleph's own typescript."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from xcore.data import load
from xcore.data.io.prolog_engine import available

pytestmark = pytest.mark.skipif(not available(), reason="needs SWI-Prolog (swipl)")

GUESS_B = b""":- modeh(1,p(+number)).
:- modeb(*,gteq(+number,#number)).
:- determination(p/1,gteq/2).
gteq(X,Value):- number(X), number(Value), !, X >= Value.
gteq(X,Y):- number(X), var(Y), !, guess(X,Y).
guess(X,Y):- Y is X.
guess(X,Y):- Y is 2*X.
guess(X,Y):- Y is 3*X.
"""
POS, NEG = (3, 5, 8, 9, 10), (1, 2, 4, 6)


def _guess():
    return load([("guess.b", GUESS_B), ("guess.f", "".join(f"p({v}).\n" for v in POS).encode()),
                 ("guess.n", "".join(f"p({v}).\n" for v in NEG).encode())])


@pytest.mark.slow
def test_rule_defined_helpers_make_drm_applicable_and_are_evaluated_by_prolog():
    from xcore.drm.features import Evaluator, draw_features
    from xcore.drm.problem import applicable, build_problem

    ds = _guess()
    assert applicable(ds) is None  # before: "there are no background facts to build features from"
    problem = build_problem(ds)
    assert problem.computed == frozenset({"gteq"})
    feats = draw_features(problem, 60, seed=0)
    X = Evaluator(problem).matrix(feats)
    values = np.array([int(e) for e in problem.examples])
    seen = 0
    for f, col in zip(feats, X.T):
        # every feature is a conjunction of gteq(A, c) literals: it covers x exactly when x >= max c
        consts = [int(l.args[1]) for l in f.clause.body]
        assert {l.pred for l in f.clause.body} == {"gteq"}
        assert col.tolist() == (values >= max(consts)).astype(int).tolist(), f.definition()
        # constants are those saturation found: c in {x, 2x, 3x} of some example x (guess/2)
        assert all(any(c in (x, 2 * x, 3 * x) for x in values) for c in consts)
        seen += 1
    assert seen >= 10


SHARED = os.environ.get("XCORE_SHARED_DATA")


@pytest.mark.slow
@pytest.mark.skipif(not SHARED, reason="needs XCORE_SHARED_DATA (Aleph's examples)")
def test_drm_features_cover_what_aleph_reports_on_numbers():
    """Each drawn feature equal (up to renaming) to a clause of the first search in Aleph's
    numbers typescript covers as many positives and negatives as Aleph printed."""
    from xcore.drm.features import Evaluator, draw_features
    from xcore.drm.problem import build_problem
    from xcore.logic.aleph_typescript import first_search_labels, same_up_to_renaming, split_top

    folder = Path(SHARED) / "aleph_examples" / "numbers"
    labels = first_search_labels((folder / "typescript").read_text(errors="replace"))
    matched = 0
    for stem in ("guess", "ineq"):
        ds = load([(f"{stem}.{s}", (folder / f"{stem}.{s}").read_bytes()) for s in ("b", "f", "n")])
        problem = build_problem(ds)
        feats = draw_features(problem, 100, seed=0)
        X = Evaluator(problem).matrix(feats)
        for lab in (l for l in labels if l.stem == stem and ":-" in l.clause):
            head, body = (x.strip() for x in lab.clause.split(":-", 1))
            for f, col in zip(feats, X.T):
                text = f.clause.text().rstrip(".")
                fh, fb = (x.strip() for x in text.split(":-", 1))
                if same_up_to_renaming(head, split_top(body), fh, split_top(fb)) is not None:
                    assert (int(col[problem.labels == 1].sum()), int(col[problem.labels == 0].sum())) == \
                        (lab.positives, lab.negatives), lab.clause
                    matched += 1
    assert matched >= 3  # gteq(A,9) [2/0], gteq(A,6) [3/1], gteq(A,3) [5/2] and their conjunctions
