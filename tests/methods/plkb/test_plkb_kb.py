"""Domains, queries and KBs: the text format (parse errors with line/column, unknown names,
ambiguity, exact round trip), KB arrays, selection and relevance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.errors import ParseError, SchemaError, XcoreError
from xcore.plkb.kb import KB, Clause
from xcore.plkb.kbtext import parse_clauses
from xcore.plkb.literals import ABSENT, FALSE, FREE, TRUE, UNSEEN, Domain, Lit

DOM = Domain(("a1", "a2", "a3"), (("0", "1"), ("0", "1"), ("0", "1")))


def test_domain_ids_and_states():
    d = Domain(("a", "b"), (("x", "y", "z"), ("0", "1")))
    assert d.n_atoms == 6 and d.offsets.tolist() == [1, 4]
    assert d.atom_names() == ["POS", "a_x", "a_y", "a_z", "b_0", "b_1"]
    assert d.atom_id(Lit("b", "1")) == 5 and d.atom_lit(2) == Lit("a", "y")
    codes = d.query({"a": "y"})
    assert codes.tolist() == [1, ABSENT]
    assert d.atom_states(codes).tolist() == [FREE, FALSE, TRUE, FALSE, FREE, FREE]
    assert d.atom_states(d.query({"a": "w"})).tolist() == [FREE, FALSE, FALSE, FALSE, FREE, FREE]
    assert d.query({"a": "w"})[0] == UNSEEN
    with pytest.raises(SchemaError, match="unknown feature 'c'"):
        d.query({"c": "1"})


def test_domain_rejects_bad_definitions():
    with pytest.raises(SchemaError, match="reserved"):
        Domain(("POS",), (("1",),))
    with pytest.raises(SchemaError, match="twice"):
        Domain(("a", "a"), (("1",), ("1",)))


def test_domain_from_frame_and_encode():
    X = pd.DataFrame({"n": ["10", "9", "10"], "c": ["b", "a", None]})
    d = Domain.from_frame(X.fillna("NA"))
    assert d.values == (("9", "10"), ("NA", "a", "b"))  # numbers sort numerically
    Y = pd.DataFrame({"c": ["a", "zz", None]})
    codes = d.encode(Y)
    assert codes[:, 0].tolist() == [ABSENT] * 3  # missing column: left out of the query
    assert codes[:, 1].tolist() == [1, UNSEEN, ABSENT]


def test_parse_basic_and_round_trip():
    text = "0.9: POS | ~a3_0\n# comment\n\n0.25: ~POS | a1_1 | ~a2=0   # trailing comment\n1: a1_0\n"
    kb = KB.from_text(text, DOM)
    assert len(kb) == 3 and kb.prob.tolist() == [0.9, 0.25, 1.0]
    assert kb.clause(1) == Clause(0.25, (Lit(None, None, False), Lit("a1", "1"), Lit("a2", "0", False)))
    again = KB.from_text(kb.to_text(), DOM)
    assert again.equals(kb)
    assert kb.to_frame()["clause"].tolist() == ["POS | ~a3_0", "~POS | a1_1 | ~a2_0", "a1_0"]


@pytest.mark.parametrize("text,line,col,msg", [
    ("0.9 POS | a1_0", 1, 1, "probability and a colon"),
    ("0.5: POS |", 1, 11, "expected a literal"),
    ("0.5: POS | | a1_0", 1, 12, "expected a literal"),
    ("\n1.5: POS", 2, 1, "outside [0, 1]"),
    ("0.5: POS a1_0", 1, 10, "expected '|'"),
    ("0.5: POS | nounderscore", 1, 12, "cannot tell feature from value"),
    ('0.5: POS | "a1=0', 1, 12, "unterminated"),
])
def test_parse_errors_name_line_and_column(text, line, col, msg):
    with pytest.raises(ParseError) as e:
        KB.from_text(text, DOM)
    assert e.value.line == line and e.value.column == col
    assert msg in str(e.value)


def test_unknown_feature_or_value_is_a_clear_error():
    with pytest.raises(SchemaError, match=r"line 2, column 13: unknown feature 'zz'"):
        KB.from_text("0.5: POS\n0.5: POS | ~zz_1", DOM)
    with pytest.raises(SchemaError, match=r"unknown value '7' of feature 'a2'; known values: 0, 1"):
        KB.from_text("0.5: POS | ~a2_7", DOM)
    with pytest.raises(SchemaError, match="unknown value 'q'"):
        KB.from_text("0.5: POS | a1=q", DOM)
    assert isinstance(SchemaError("x"), XcoreError)


def test_underscores_in_names_are_resolved_against_the_domain():
    d = Domain(("has_nurs", "form"), (("less_proper", "proper"), ("complete", "foster")))
    kb = KB.from_text("0.5: POS | ~has_nurs_less_proper | ~form_foster", d)
    assert kb.clause(0).lits[1] == Lit("has_nurs", "less_proper", False)
    amb = Domain(("a", "a_b"), (("b_c", "x"), ("c", "y")))
    with pytest.raises(ParseError, match=r"ambiguous: write a=b_c or a_b=c"):
        KB.from_text("0.5: POS | a_b_c", amb)
    kb2 = KB.from_text("0.5: POS | a=b_c | ~a_b=c", amb)
    assert KB.from_text(kb2.to_text(), amb).equals(kb2)
    assert "a=b_c" in kb2.to_text()  # the writer avoids the ambiguous form


def test_quoted_names_round_trip():
    d = Domain(("age group", 'we"ird'), (("60+", "under 18"), ("a|b", "~x")))
    kb = KB.from_text('0.3: POS | ~"age group"="under 18" | "we\\"ird"="a|b" | ~"we\\"ird"="~x"', d)
    assert kb.clause(0).lits[1] == Lit("age group", "under 18", False)
    assert KB.from_text(kb.to_text(), d).equals(kb)


name = st.text(alphabet=st.characters(codec="ascii", exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85"),
               min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(feats=st.lists(name, min_size=1, max_size=3, unique=True),
       vals=st.lists(st.lists(name, min_size=1, max_size=3, unique=True), min_size=3, max_size=3),
       probs=st.lists(st.floats(0, 1), min_size=1, max_size=4), seed=st.integers(0, 1000))
def test_writer_round_trips_any_names(feats, vals, probs, seed):
    if "POS" in feats:
        return
    dom = Domain(tuple(feats), tuple(tuple(v) for v in vals[:len(feats)]))
    rng = np.random.default_rng(seed)
    clauses = []
    for p in probs:
        lits = [Lit(None, None, bool(rng.random() < 0.7))]
        for f, fv in zip(dom.features, dom.values):
            if rng.random() < 0.6:
                lits.append(Lit(f, fv[int(rng.integers(0, len(fv)))], bool(rng.random() < 0.3)))
        clauses.append(Clause(p, tuple(lits)))
    kb = KB.from_clauses(dom, clauses)
    assert KB.from_text(kb.to_text(), dom).equals(kb)


def test_parse_without_domain_splits_at_last_underscore():
    cl = parse_clauses("0.5: POS | ~my_feat_v1")
    assert cl[0].lits[1] == Lit("my_feat", "v1", False)


def test_kb_select_concat_and_validation():
    kb = KB.from_text("0.1: POS | ~a1_0\n0.2: POS | ~a1_1 | ~a2_0\n0.3: POS\n", DOM)
    sub = kb.select([2, 0])
    assert sub.prob.tolist() == [0.3, 0.1] and sub.to_frame()["clause"].tolist() == ["POS", "POS | ~a1_0"]
    both = KB.concat([kb, sub])
    assert len(both) == 5 and both.clause(4) == kb.clause(0)
    assert kb.summary() == {"clauses": 3, "literal_occurrences": 6, "atoms": 4, "domain_atoms": 7}
    with pytest.raises(XcoreError, match="outside"):
        KB(DOM, [1.5], [0, 1], [0], [True])
    with pytest.raises(XcoreError, match="at least one literal"):
        KB(DOM, [0.5], [0, 0], [], [])


def test_relevance_is_the_subset_rule_for_negative_clauses():
    kb = KB.from_text(
        "0.1: POS | ~a1_0\n"          # relevant when a1=0
        "0.2: POS | ~a1_0 | ~a2_1\n"  # needs a2 too
        "0.3: POS | ~a1_1\n"          # a1_1 false -> ~a1_1 true -> satisfied, irrelevant
        "0.4: POS\n"                  # prior: always relevant
        "0.5: POS | a3_1\n", DOM)     # positive literal: relevant when a3 is fixed to 0
    codes = DOM.query({"a1": "0", "a3": "0"})
    assert kb.relevant_mask(codes).tolist() == [True, False, False, True, True]
    codes = DOM.query({"a1": "0", "a2": "1", "a3": "1"})
    assert kb.relevant_mask(codes).tolist() == [True, True, False, True, False]
