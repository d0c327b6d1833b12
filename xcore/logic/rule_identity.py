"""Which rules Java PSL counts as the same rule, so a model keeps only the first (as Java's runtime does).

Java PSL's `Model.addRule` skips a rule equal to one already added ("Rule already added to this model,
skipping add"). Two logical rules are equal when they are of the same kind (weighted or hard), both
squared or both linear, and their clauses have the same positive and the same negated literals as
sets (`AbstractLogicalRule.equals` over the negated DNF) — the weight is not compared. So a rule and
its contrapositive are one rule: ``1: a(X) & b(X) >> c(X)`` and ``5: a(X) & !c(X) >> !b(X)`` ground to
the same potentials, and Java keeps only the first, with its weight. Arithmetic rules are equal when
their expressions and filters are (`AbstractArithmeticRule.equals`), weights again aside.
"""

from __future__ import annotations

from typing import Hashable, Sequence

from xcore.logic.ast import ArithmeticRule, Rule


def java_identity(rule: Rule) -> Hashable:
    """The key under which Java PSL's model counts two rules as one (weight left out)."""
    kind = ("hard",) if rule.weight is None else ("weighted", bool(rule.squared))
    if isinstance(rule, ArithmeticRule):
        unweighted = rule.with_weight(None if rule.weight is None else 1.0)
        return ("arithmetic", *kind, unweighted.text("psl"))
    literals = frozenset((lit.negated, lit.atom.text("psl")) for lit in rule.clause_literals())
    conditions = frozenset(c.text("psl") for c in rule.conditions)
    return ("logical", *kind, literals, conditions)


def first_of_each(rules: Sequence[Rule]) -> tuple[list[Rule], list[tuple[int, int]]]:
    """The rules without those Java PSL would skip as already added, and (skipped, kept) index pairs."""
    kept: list[Rule] = []
    first: dict[Hashable, int] = {}
    skipped: list[tuple[int, int]] = []
    for i, rule in enumerate(rules):
        key = java_identity(rule)
        if key in first:
            skipped.append((i, first[key]))
            continue
        first[key] = i
        kept.append(rule)
    return kept, skipped
