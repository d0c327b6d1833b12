"""When two rules are the same rule: Java PSL's identity (a model keeps only the first of equal rules, as
Java's runtime does) and `rule_key`, the canonical text up to body order and variable names.

Java PSL's `Model.addRule` skips a rule equal to one already added ("Rule already added to this model,
skipping add"). Two logical rules are equal when they are of the same kind (weighted or hard), both
squared or both linear, and their clauses have the same positive and the same negated literals as
sets (`AbstractLogicalRule.equals` over the negated DNF) — the weight is not compared. So a rule and
its contrapositive are one rule: ``1: a(X) & b(X) >> c(X)`` and ``5: a(X) & !c(X) >> !b(X)`` ground to
the same potentials, and Java keeps only the first, with its weight. Arithmetic rules are equal when
their expressions and filters are (`AbstractArithmeticRule.equals`), weights again aside.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import lru_cache
from typing import Hashable, Sequence

from xcore.logic.ast import ArithmeticRule, Comparison, Literal, Rule, Variable


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


@lru_cache(maxsize=65536)
def rule_key(rule: Rule) -> str:
    """Canonical text of a rule up to body order and variable names (weight ignored).

    Two rules with the same key have the same ground rules, so PPLL gives them the same weight.
    """
    if isinstance(rule, ArithmeticRule):
        core = replace(rule, weight=None, squared=False).text()
        return core + ("" if rule.is_hard else " (weighted)") + (" ^2" if rule.squared else "")
    best = None
    body = rule.body
    perms = itertools.permutations(body) if len(body) <= 5 else [tuple(sorted(body, key=str))]
    for perm in perms:
        names: dict[Variable, str] = {}
        for lit in rule.head + tuple(perm):
            for v in lit.atom.variables:
                names.setdefault(v, f"V{len(names)}")
        text = " & ".join(_renamed(l, names) for l in perm) + " -> " + " | ".join(_renamed(l, names) for l in rule.head)
        if rule.conditions:
            text += " if " + " & ".join(sorted(_renamed_comparison(c, names) for c in rule.conditions))
        if best is None or text < best:
            best = text
    sq = " ^2" if rule.squared else ""
    hard = " ." if rule.is_hard else ""
    return f"{best}{sq}{hard}"


def _renamed_comparison(c: Comparison, names: dict[Variable, str]) -> str:
    def side(t) -> str:
        return names.get(t, t.name) if isinstance(t, Variable) else t.text()
    left, right = side(c.left), side(c.right)
    if c.op != "%" and right < left:  # != and == are symmetric
        left, right = right, left
    return f"({left} {c.op} {right})"


def _renamed(lit: Literal, names: dict[Variable, str]) -> str:
    args = ", ".join(names[a] if isinstance(a, Variable) else a.text() for a in lit.atom.args)
    return f"{'~' if lit.negated else ''}{lit.atom.predicate}({args})"
