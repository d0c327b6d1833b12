"""Which PSL rules count as explainable (ESMS's alpha-explainability, Embar et al. UAI 2022): the share of
explainable predicates in a rule's body must exceed alpha.

Block atoms are excluded from the share (on the head's arguments, or positive on a negated slot's
arguments: they only scope grounding); a negated literal counts as its predicate; an empty body (priors)
has share 0, so priors are never explainable. `PSLModel` marks its rules and ground rules with it.
"""

from __future__ import annotations

from xcore.data.schema import Schema
from xcore.logic.ast import Literal, Rule


def explainable_fraction(rule: Rule, schema: Schema, block: str | None = None) -> float:
    """Share of explainable predicates among the body literals (block atom excluded; 0 if none)."""
    body = _scored_body(rule, block)
    if not body:
        return 0.0
    return sum(schema[l.atom.predicate].explainable for l in body) / len(body)


def is_alpha_explainable(rule: Rule, schema: Schema, alpha: float = 0.25, block: str | None = None) -> bool:
    """True iff the explainable share of the rule's body exceeds `alpha` (ESMS, paper: 0.25)."""
    return explainable_fraction(rule, schema, block) > alpha


def _scored_body(rule: Rule, block: str | None) -> tuple[Literal, ...]:
    if block is None or not rule.head:
        return rule.body
    head_args = rule.head[0].atom.args
    negated_args = {l.atom.args for l in rule.body if l.negated}
    return tuple(l for l in rule.body
                 if not (l.atom.predicate == block
                         and (l.atom.args == head_args or (not l.negated and l.atom.args in negated_args))))
