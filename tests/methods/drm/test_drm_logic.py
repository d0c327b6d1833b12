"""DRM's ILP parts against references: Aleph's east1 bottom clause (transcript), brute-force coverage
by theta-subsumption on ground facts, hand-checked subsumption cases, the term and mode readers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from xcore.data.samples import load_sample, sample_data_dir
from xcore.drm.clauses import Clause, Lit, equivalent, reduce_clause, subsumes
from xcore.drm.features import Evaluator, draw_features, draw_subclause
from xcore.drm.problem import build_problem
from xcore.drm.saturation import bottom_clause, saturate
from xcore.errors import DataError
from xcore.logic.modes import read_language
from xcore.logic.terms import Struct, Var, conjuncts, list_items, read_clauses, read_term

TRANSCRIPTS = Path("/work/shared/data/aleph_reference_transcripts")
TRAIN_B = sample_data_dir() / "trains_michalski10" / "train.b"


def clause_of(text: str) -> Clause:
    """A `Clause` from Prolog text (``h(A) :- b1, b2.``)."""
    t = read_term(text)
    head, body = (t.args if isinstance(t, Struct) and t.name == ":-" else (t, None))
    lits = [] if body is None else conjuncts(body)
    conv = lambda s: Lit(s.name, tuple(a if isinstance(a, Var) else str(a) for a in s.args))  # noqa: E731
    return Clause(conv(head), tuple(conv(l) for l in lits))


@pytest.fixture(scope="module")
def trains():
    return build_problem(load_sample("trains_michalski10"), TRAIN_B.read_text())


def transcript_bottoms() -> list[Clause]:
    out = []
    for name in ("trains_typescript.txt", "features_typescript.txt"):
        text = (TRANSCRIPTS / name).read_text().replace("\r", "")
        m = re.search(r"\[bottom clause\]\n(.*?)\n\[literals\] \[(\d+)\]", text, re.S)
        clause = clause_of(m[1])
        assert len(clause.body) + 1 == int(m[2])
        out.append(clause)
    return out


@pytest.mark.skipif(not TRANSCRIPTS.exists(), reason="Aleph transcripts live in /work/shared (not in CI)")
def test_east1_bottom_clause_is_alephs_literal_for_literal(trains):
    ours = bottom_clause(trains, "east1")
    for aleph in transcript_bottoms():
        assert len(ours.body) == len(aleph.body) == 24
        theta = subsumes(aleph, ours)
        assert theta is not None and subsumes(ours, aleph) is not None
        # a bijection of variables: every Aleph literal maps onto a distinct literal of ours
        assert len(set(theta.values())) == len(theta)
        mapped = {Lit(l.pred, tuple(theta.get(a, a) for a in l.args)) for l in aleph.body}
        assert mapped == set(ours.body)


def test_east1_bottom_clause_by_hand(trains):
    """Without the transcript: east1's 4 cars, 24 body literals, the known car facts."""
    b = bottom_clause(trains, "east1")
    assert sum(l.pred == "has_car" for l in b.body) == 4
    assert len(b.body) == 24
    assert {l.args[1:] for l in b.body if l.pred == "load"} == {
        ("rectangle", "3"), ("triangle", "1"), ("hexagon", "1"), ("circle", "1")}
    assert len(bottom_clause(trains, "east1", depth=1).body) == 4  # only has_car in layer 1


def test_derived_modes_equal_the_files_modes():
    ds = load_sample("trains_michalski10")
    ref = read_language(TRAIN_B.read_text())
    derived = build_problem(ds).language
    # the file's modes, plus a variable in each of load's constant columns (issue 31: any count, any shape)
    extra = ["modeb(*,load(+car,#shape,-int))", "modeb(*,load(+car,-shape,#int))"]
    assert sorted(list(map(str, ref.modeb)) + extra) == sorted(map(str, derived.modeb))
    assert str(derived.modeh[0]) == "modeh(1,eastbound(+train))" and ref.depth == 2


def test_coverage_matrix_equals_brute_force_subsumption(trains):
    """Reference: clause covers e iff it theta-subsumes the ground clause e :- all facts."""
    feats = draw_features(trains, 400, seed=3)
    X = Evaluator(trains).matrix(feats)
    facts = tuple(Lit(name, tuple(str(trains.vocab[c]) for c in row))
                  for name, t in trains.tables.items() for row in t)
    for i, e in enumerate(trains.examples):
        ground = Clause(Lit("eastbound", (str(e),)), facts)
        for j, f in enumerate(feats):
            expected = subsumes(f.clause, ground) is not None
            assert X[i, j] == expected, (e, f.definition())


def test_features_are_mode_consistent_non_redundant_and_seeded(trains):
    feats = draw_features(trains, 1000, seed=0)
    again = draw_features(trains, 1000, seed=0)
    assert [f.definition() for f in feats] == [f.definition() for f in again]
    for f in feats:
        bound = set(f.clause.head.variables())
        for lit in f.clause.body:
            assert lit.args[0] in bound  # the one input (+train or +car) is bound by the head or earlier
            bound.update(lit.variables())
    for i, f in enumerate(feats):
        for g in feats[:i]:
            assert not equivalent(f.clause, g.clause)
    classic = clause_of("eastbound(A) :- has_car(A,B), short(B), closed(B).")
    assert sum(equivalent(f.clause, classic) for f in feats) == 1  # drawn once, never twice


def test_subsumption_and_reduction_by_hand():
    c = clause_of("p(A) :- q(A,B), r(B).")
    d = clause_of("p(X) :- q(X,Y), r(Y), s(Y), q(X,Z).")
    assert subsumes(c, d) is not None and subsumes(d, c) is None
    redundant = clause_of("p(A) :- has_car(A,B), short(B), has_car(A,C), short(C).")
    assert len(reduce_clause(redundant).body) == 2
    assert equivalent(redundant, clause_of("p(A) :- has_car(A,B), short(B)."))
    assert subsumes(clause_of("p(A) :- q(A,a)."), clause_of("p(A) :- q(A,b).")) is None
    assert subsumes(clause_of("p(A) :- q(A,B), q(B,A)."), clause_of("p(X) :- q(X,X).")) is not None


def test_draw_subclause_drops_dangling_outputs(trains):
    bottom, modes = saturate(trains, "east1")
    rng = np.random.default_rng(0)
    for _ in range(200):
        c = draw_subclause(bottom, modes, rng, 4)
        cars = [l.args[1] for l in c.body if l.pred == "has_car"]
        if len(c.body) > 1:
            assert all(any(car in l.args for l in c.body if l.pred != "has_car") for car in cars)


def test_term_reader_lists_negative_numbers_and_errors():
    t = read_term("ring_struc(d1,[[d1_1,d1_2],[d1_3]],-0.5)")
    assert isinstance(t, Struct) and t.args[2] == -0.5
    assert [list_items(x) is not None for x in list_items(t.args[1])] == [True, True]
    old = read_clauses("!- modeb(*,atm(+drug,-atomid,#element)).\n")
    assert read_language("!- modeb(*,atm(+drug,-atomid,#element)).").modeb[0].recall is None
    assert old[0].directive is not None
    with pytest.raises(DataError, match="line 2"):
        read_clauses("a(b).\nc(d\n")
    with pytest.raises(DataError, match="recall"):
        read_language(":- modeb(0,p(+a)).")
