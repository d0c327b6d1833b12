"""Java PSL's rule identity: a rule equal to one already in the model (same clause as sets of literals,
same kind and squaring, weight aside) is skipped, as `Model.addRule` does (linqs/psl
AbstractLogicalRule.equals, WeightedLogicalRule.equals). Checked on the stance-4forums model, where
Java 2.4.1's runtime warns "Rule already added to this model, skipping add" for exactly five rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from xcore.logic.parser import parse_rule, parse_rules
from xcore.logic.rule_identity import first_of_each, java_identity

STANCE = Path(__file__).resolve().parents[1] / "methods" / "esms" / "psl_examples" / "rules" / "stance-4forums.psl"


def rule(text):
    return parse_rule(text, dialect="psl")


@pytest.mark.parametrize("a, b", [
    ("1: a(X) & b(X) >> c(X) ^2", "5: a(X) & !c(X) >> !b(X) ^2"),  # contrapositive, other weight
    ("1: a(X) & b(X) >> c(X)", "2: b(X) & a(X) >> c(X)"),  # body order
    ("a(X) & b(X) >> c(X) .", "!c(X) & b(X) >> !a(X) ."),  # hard rules too
    ("1: a(X, Y) & (X != Y) >> c(X)", "3: (X != Y) & a(X, Y) >> c(X)"),  # the condition counts as a literal
    ("1: a(X) + b(X) <= 1 ^2", "4: a(X) + b(X) <= 1 ^2"),
])
def test_same_rule_for_java(a, b):
    assert java_identity(rule(a)) == java_identity(rule(b))


@pytest.mark.parametrize("a, b", [
    ("1: a(X) & b(X) >> c(X) ^2", "1: a(X) & b(X) >> c(X)"),  # squared vs linear
    ("1: a(X) & b(X) >> c(X)", "a(X) & b(X) >> c(X) ."),  # weighted vs hard
    ("1: a(X) & b(X) >> c(X)", "1: a(Y) & b(Y) >> c(Y)"),  # other variable names: other atoms for Java
    ("1: a(X, Y) & (X != Y) >> c(X)", "1: a(X, Y) & (Y != X) >> c(X)"),
    ("1: a(X) >> c(X)", "1: a(X) >> !c(X)"),
    ("1: a(X) + b(X) <= 1 ^2", "1: a(X) + b(X) >= 1 ^2"),
])
def test_other_rules_for_java(a, b):
    assert java_identity(rule(a)) != java_identity(rule(b))


def test_stance_4forums_keeps_the_rules_java_keeps():
    rules = parse_rules(STANCE.read_text(), dialect="psl")
    kept, skipped = first_of_each(rules)
    assert len(rules) == 16 and len(kept) == 11
    # the five rules Java 2.4.1's warnings name (file lines 17, 23, 24, 26, 27), each equal to an earlier one
    assert [i for i, _ in skipped] == [9, 12, 13, 14, 15]
    for i, j in skipped:
        assert j < i and java_identity(rules[i]) == java_identity(rules[j])
