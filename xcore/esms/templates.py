"""ESMS meta-templates: rule shapes whose slots are filled by predicates of fitting argument types.

A `MetaTemplate` is a rule with predicate *slots*, e.g. path ``_(A,B) & _(B,C) -> T(A,C)``.
`fill_templates` enumerates every rule obtained by putting a schema predicate of the right arity
in each slot such that every variable gets one argument type (head variables take the target's
types). The paper's templates (Embar, Srinivasan, Getoor, UAI 2022) for a binary target
``T(A,B)`` are `DEFAULT_TEMPLATES`; a *block* predicate (e.g. ``rated(U, I)``) may be conjoined to
every non-prior body so only relevant pairs ground.

Counterparts (an option, off by default; HyPER, Kouki et al. RecSys 2015, whose LastFM rules the
paper follows): the paper's templates only have positive heads, so every rule can only push T up.
The *counterpart* of a template negates the head and the body slot that carries the value, pulling
T DOWN when that evidence is low: ``_(A,B) -> T(A,B)`` gets ``~_(A,B) -> ~T(A,B)`` (i.e.
``T(A,B) -> _(A,B)``), ``rating(U,I1) & sim(I1,I2) -> rating(U,I2)`` gets
``~rating(U,I1) & sim(I1,I2) -> ~rating(U,I2)``. Which slot is negated, per filling: every slot
filled by a predicate with the target's argument types (one counterpart per such slot, negating
that slot only); if none has them and the template has a single slot, that slot; otherwise the
filling has no counterpart. With a block predicate, a negated target-typed slot also gets the block
atom over its own arguments (``rated(U,I1)``, as in HyPER), so the negated literal is left joined
only over relevant pairs instead of reading every missing pair as 0. `HYPER_TEMPLATES` is the
paper's templates plus their counterparts; `fill_templates(..., counterparts=True)` adds them.

`is_alpha_explainable` (`xcore.psl.explainable_rules`) is the paper's alpha-explainability: the share of explainable predicates in
the body (block atoms excluded -- on the head's arguments, or positive on a negated slot's arguments:
they only scope grounding; a negated slot counts as its predicate, so a counterpart has the same
share as the rule it mirrors) must *exceed* alpha; an empty body
(priors) has share 0, so priors are never explainable. `sample_rules` is Algorithm 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xcore.data.schema import Schema
from xcore.errors import SchemaError, XcoreError
from xcore.logic.ast import Atom, Literal, Rule, Variable
from xcore.logic.rule_identity import rule_key
from xcore.psl.explainable_rules import is_alpha_explainable

PRIOR_TEMPLATES: tuple[str, ...] = ("prior_false", "prior_true")
"""Names of the two prior templates (T pulled towards 0 and towards 1)."""


@dataclass(frozen=True)
class MetaTemplate:
    """A rule shape with predicate slots over variables; the head is the target T(head_vars).

    `slots` lists each body slot's variables, e.g. ``(("A", "B"), ("B", "C"))``; `negated_head`
    makes the head ``~T`` (the prior towards 0). `counterpart` makes this the negative counterpart
    of the template with the same slots (see the module docstring: value slot and head negated).
    Filled rules carry the template name as `Rule.name`.
    """

    name: str
    slots: tuple[tuple[str, ...], ...]
    head: tuple[str, ...] = ("A", "B")
    negated_head: bool = False
    description: str = ""
    counterpart: bool = False

    @property
    def is_prior(self) -> bool:
        return not self.slots

    def text(self, target: str = "T") -> str:
        """The template as text with ``_`` slots: ``_(A, B) & _(B, C) -> T(A, C)``.

        A counterpart marks its slots ``~_`` (one slot) or ``[~]_`` (the negated one depends on the filling).
        """
        neg = ("~" if len(self.slots) == 1 else "[~]") if self.counterpart else ""
        body = " & ".join(f"{neg}_({', '.join(s)})" for s in self.slots)
        head = f"{'~' if self.negated_head or self.counterpart else ''}{target}({', '.join(self.head)})"
        return f"{body} -> {head}" if body else head

    def fill(self, schema: Schema, target: str, block: str | None = None,
             squared: bool = True, weight: float = 1.0) -> list[Rule]:
        """Every rule from this template whose variable types are consistent with `schema`."""
        tpred = schema[target]
        if tpred.arity != len(self.head):
            raise XcoreError(
                f"template {self.name} has a head of arity {len(self.head)} but target {target} has "
                f"arity {tpred.arity}; the ESMS meta-templates are defined for binary targets T(A, B)")
        head_atom = Atom(target, tuple(Variable(v) for v in self.head))
        head = (Literal(head_atom, self.negated_head or self.counterpart),)
        block_atom = _block_atom(schema, tpred, block, head_atom)
        base_types = dict(zip(self.head, tpred.types))
        by_arity: dict[int, list] = {}
        for p in schema:
            by_arity.setdefault(p.arity, []).append(p)
        out: list[Rule] = []
        for preds, _types in _fillings(self.slots, by_arity, base_types):
            body_atoms = tuple(Atom(p.name, tuple(Variable(v) for v in slot))
                               for p, slot in zip(preds, self.slots))
            if head_atom in body_atoms:
                continue  # T(A,B) -> T(A,B) and the like: a tautology
            if not self.counterpart:
                if block_atom is not None and not self.is_prior and block_atom not in body_atoms:
                    body_atoms = body_atoms + (block_atom,)
                body = tuple(Literal(a) for a in body_atoms)
                out.append(Rule(body, head, weight, squared, "psl", name=self.name))
                continue
            for k in _value_slots(preds, tpred.types):
                body = [Literal(a, i == k) for i, a in enumerate(body_atoms)]
                extra = [block_atom]
                if block is not None and preds[k].types == tpred.types:
                    extra.append(Atom(block, body_atoms[k].args))
                for b in extra:
                    if b is not None and b not in body_atoms and Literal(b) not in body:
                        body.append(Literal(b))
                out.append(Rule(tuple(body), head, weight, squared, "psl", name=self.name))
        return out


def _value_slots(preds, target_types: tuple[str, ...]) -> list[int]:
    """Slots a counterpart negates: those typed like the target; else the only slot; else none."""
    typed = [i for i, p in enumerate(preds) if p.types == target_types]
    if typed:
        return typed
    return [0] if len(preds) == 1 else []


def counterpart_of(template: MetaTemplate) -> MetaTemplate:
    """The negative counterpart of a (non-prior) template: value slot and head negated."""
    if template.is_prior or template.counterpart or template.negated_head:
        raise XcoreError(f"template {template.name} has no counterpart (priors and counterparts have none)")
    shape = MetaTemplate(f"{template.name}_neg", template.slots, template.head, counterpart=True)
    return MetaTemplate(shape.name, shape.slots, shape.head, counterpart=True,
                        description=f"counterpart of {template.name}: {shape.text()} (negated: each slot "
                                    "typed like T, one counterpart per such slot; else the only slot)")


def _block_atom(schema: Schema, tpred, block: str | None, head_atom: Atom) -> Atom | None:
    if block is None:
        return None
    bpred = schema[block]
    if bpred.types != tpred.types:
        raise SchemaError(f"block predicate {block}{bpred.types} must have the target's argument types "
                          f"{tpred.name}{tpred.types}")
    return Atom(block, head_atom.args)


def _fillings(slots, by_arity, types: dict[str, str]):
    """Yield (predicates, variable types) for every type-consistent filling of `slots`."""
    if not slots:
        yield (), types
        return
    first, rest = slots[0], slots[1:]
    for p in by_arity.get(len(first), []):
        t = dict(types)
        ok = True
        for v, pt in zip(first, p.types):
            if t.setdefault(v, pt) != pt:
                ok = False
                break
        if not ok:
            continue
        for preds, tt in _fillings(rest, by_arity, t):
            yield (p, *preds), tt


DEFAULT_TEMPLATES: tuple[MetaTemplate, ...] = (
    MetaTemplate("path2", (("A", "B"), ("B", "C")), ("A", "C"),
                 description="path of length 2: _(A,B) & _(B,C) -> T(A,C)"),
    MetaTemplate("path3", (("A", "B"), ("B", "C"), ("C", "D")), ("A", "D"),
                 description="path of length 3: _(A,B) & _(B,C) & _(C,D) -> T(A,D)"),
    MetaTemplate("similarity", (("A", "B"), ("C", "A")), ("C", "B"),
                 description="similarity: _(A,B) & _(C,A) -> T(C,B)"),
    MetaTemplate("local", (("A", "B"),), ("A", "B"), description="local: _(A,B) -> T(A,B)"),
    MetaTemplate("local_second", (("B",),), ("A", "B"), description="local: _(B) -> T(A,B)"),
    MetaTemplate("local_first", (("A",),), ("A", "B"), description="local: _(A) -> T(A,B)"),
    MetaTemplate("prior_false", (), ("A", "B"), negated_head=True,
                 description="prior: T(A,B) pulled towards 0"),
    MetaTemplate("prior_true", (), ("A", "B"), description="prior: T(A,B) pulled towards 1"),
)
"""The paper's meta-templates for a binary target T(A, B)."""

UNARY_TEMPLATES: tuple[MetaTemplate, ...] = (
    MetaTemplate("attribute", (("A",),), ("A",), description="attribute: _(A) -> T(A)"),
    MetaTemplate("relation", (("A", "B"),), ("A",), description="has a relation: _(A,B) -> T(A)"),
    MetaTemplate("neighbour", (("A", "B"), ("B",)), ("A",),
                 description="neighbour through a link: _(A,B) & _(B) -> T(A)"),
    MetaTemplate("neighbour_in", (("B", "A"), ("B",)), ("A",),
                 description="neighbour through an incoming link: _(B,A) & _(B) -> T(A)"),
    MetaTemplate("two_hop", (("A", "B"), ("B", "C"), ("C",)), ("A",),
                 description="two hops: _(A,B) & _(B,C) & _(C) -> T(A)"),
    MetaTemplate("prior_false", (), ("A",), negated_head=True, description="prior: T(A) pulled towards 0"),
    MetaTemplate("prior_true", (), ("A",), description="prior: T(A) pulled towards 1"),
)
"""The same shapes for a unary target T(A) (attribute, neighbour through a link, two hops, priors), so
ESMS runs on data such as friends and smokers; the paper defines templates for pairs only."""

HYPER_TEMPLATES: tuple[MetaTemplate, ...] = DEFAULT_TEMPLATES + tuple(
    counterpart_of(t) for t in DEFAULT_TEMPLATES if not t.is_prior)
"""The paper's templates plus their negative counterparts (HyPER-style two-sided rules)."""


def with_counterparts(templates: Sequence[MetaTemplate]) -> tuple[MetaTemplate, ...]:
    """`templates` plus the counterpart of each non-prior template not already present (by name)."""
    names = {t.name for t in templates}
    extra = [counterpart_of(t) for t in templates
             if not t.is_prior and not t.counterpart and not t.negated_head and f"{t.name}_neg" not in names]
    return tuple(templates) + tuple(extra)


class CandidateRules(list):
    """A list of candidate rules (from `fill_templates`) that remembers its schema, target, block."""

    def __init__(self, rules: Sequence[Rule], schema: Schema, target: str, block: str | None) -> None:
        super().__init__(rules)
        self.schema = schema
        self.target = target
        self.block = block
        self._memo: dict = {}

    def by_template(self) -> dict[str, list[Rule]]:
        """Candidates grouped by template name (`Rule.name`), in template order."""
        out: dict[str, list[Rule]] = {}
        for r in self:
            out.setdefault(r.name, []).append(r)
        return out


def fill_templates(schema: Schema | Sequence, target_pred: str, block_pred: str | None = None,
                   templates: Sequence[MetaTemplate] = DEFAULT_TEMPLATES, squared: bool = True,
                   include_priors: bool = True, counterparts: bool = False) -> CandidateRules:
    """All candidate rules: every template filled with every type-consistent choice of predicates.

    `counterparts=True` also fills the negative counterpart of every non-prior template. For a unary
    target, pair-shaped templates (the default) are replaced by `UNARY_TEMPLATES`.
    """
    if counterparts:
        templates = with_counterparts(templates)
    if not isinstance(schema, Schema):
        schema = Schema.of(list(schema))
    if schema[target_pred].arity == 1 and all(len(t.head) == 2 for t in templates):
        unary = UNARY_TEMPLATES  # the default (pair) templates asked for a unary target: use their unary shapes
        templates = with_counterparts(unary) if any(t.counterpart for t in templates) else unary
    out: list[Rule] = []
    for t in templates:
        if t.is_prior and not include_priors:
            continue
        out.extend(t.fill(schema, target_pred, block_pred, squared))
    return CandidateRules(out, schema, target_pred, block_pred)


def prior_rules(target: str, arity: int = 2, squared: bool = True, weight: float = 1.0) -> list[Rule]:
    """The two priors ``~T(A,B)`` (towards 0) and ``T(A,B)`` (towards 1), one variable per argument."""
    if arity < 1:
        raise XcoreError(f"prior rules need a target with arguments, got arity {arity}")
    atom = Atom(target, tuple(Variable(chr(ord("A") + i)) for i in range(arity)))
    return [Rule((), (Literal(atom, neg),), weight, squared, "psl", name=name)
            for name, neg in (("prior_false", True), ("prior_true", False))]


# ---------------------------------------------------------------------- Algorithm 2
def sample_rules(candidates: Sequence[Rule], L_M: int, gamma: float, alpha: float,
                 rng: np.random.Generator, schema: Schema | None = None,
                 block: str | None = None, exclude: Sequence[Rule] = ()) -> list[Rule]:
    """ESMS Algorithm 2: draw up to `L_M` distinct rules for one candidate model.

    Each draw picks a template uniformly (among templates with unused fillings), then one of its
    fillings uniformly; an alpha-explainable rule is kept, any other is kept with probability
    ``1 - gamma``. Rules equal up to body order / variable names (`rule_key`) are not repeated,
    nor are rules in `exclude`. Stops early when no acceptable rule is left.
    """
    if not 0.0 <= gamma <= 1.0:
        raise XcoreError(f"explainability bias gamma must be in [0, 1], got {gamma}")
    if L_M < 0:
        raise XcoreError(f"rules per model must be >= 0, got {L_M}")
    schema = schema if schema is not None else getattr(candidates, "schema", None)
    if schema is None:
        raise XcoreError("sample_rules needs the schema (pass schema= or candidates from fill_templates)")
    block = block if block is not None else getattr(candidates, "block", None)
    groups, keys, expl = _prepared(candidates, schema, alpha, block)
    names = list(groups)
    used = {rule_key(r) for r in exclude}
    remaining = {n: [i for i, k in enumerate(keys[n]) if k not in used] for n in names}
    members: dict[str, list[tuple[str, int]]] = {}
    for n in names:
        for i, k in enumerate(keys[n]):
            members.setdefault(k, []).append((n, i))
    chosen: list[Rule] = []
    while len(chosen) < L_M:
        live = [n for n in names if remaining[n]]
        if not live or (gamma >= 1.0 and not any(expl[n][remaining[n]].any() for n in live)):
            break
        n = live[int(rng.integers(len(live)))]
        idx = remaining[n][int(rng.integers(len(remaining[n])))]
        if expl[n][idx] or rng.random() < 1.0 - gamma:
            chosen.append(groups[n][idx])
            for m, j in members[keys[n][idx]]:  # equivalent rules of other templates are used up too
                if j in remaining[m]:
                    remaining[m].remove(j)
    return chosen


def _prepared(candidates: Sequence[Rule], schema: Schema, alpha: float, block: str | None):
    """Candidates grouped by template, with their `rule_key`s and explainability (memoised)."""
    memo = getattr(candidates, "_memo", None)
    tag = (id(schema), float(alpha), block)
    if memo is not None and tag in memo:
        return memo[tag]
    groups: dict[str, list[Rule]] = {}
    for r in candidates:
        groups.setdefault(r.name or "", []).append(r)
    keys = {n: [rule_key(r) for r in rs] for n, rs in groups.items()}
    expl = {n: np.array([is_alpha_explainable(r, schema, alpha, block) for r in rs], dtype=bool)
            for n, rs in groups.items()}
    if memo is not None:
        memo[tag] = (groups, keys, expl)
    return groups, keys, expl
