"""Rule-language syntax tree: terms, atoms, literals and weighted rules (PSL and Markov logic).

A `Rule` is ``body -> head``: a conjunction of body literals implying a disjunction of head
literals. Every rule is also a clause: ``OR(~b for b in body) | OR(head)`` (`clause_literals`).
Priors have an empty body; Markov-logic clauses written as disjunctions have an empty body too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Literal as TypingLiteral

Dialect = TypingLiteral["psl", "mln"]

_BARE_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
"""Constants printed without quotes in both dialects (the parser reads them as number tokens)."""
_BARE_MLN_CONSTANT = re.compile(r"[A-Z][A-Za-z0-9_]*")
"""Markov-logic constants printed without quotes (capitalised ASCII names)."""


@dataclass(frozen=True)
class Variable:
    """A logical variable (``X`` in PSL, ``x`` in Markov logic)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Constant:
    """A constant (an object or a value), always stored as a string."""

    value: str

    def text(self, dialect: Dialect = "psl") -> str:
        """Canonical text: quoted in PSL; bare when it is a capitalised name in Markov logic.

        Plain decimal numbers (``3``, ``-0.5``) are bare in both dialects. Quoted text escapes
        backslash, quote and line breaks so that the parser reads back exactly `value`.
        """
        if dialect == "mln" and _BARE_MLN_CONSTANT.fullmatch(self.value):
            return self.value
        if _BARE_NUMBER.fullmatch(self.value):
            return self.value
        escaped = (
            self.value.replace("\\", "\\\\")
            .replace("'", "\\'")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
        return f"'{escaped}'"

    def __str__(self) -> str:
        return self.text()


Term = Variable | Constant


@dataclass(frozen=True)
class Atom:
    """A predicate applied to terms: ``knows(X, 'bob')``."""

    predicate: str
    args: tuple[Term, ...] = ()

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(a for a in self.args if isinstance(a, Variable))

    def text(self, dialect: Dialect = "psl") -> str:
        inner = ", ".join(a.name if isinstance(a, Variable) else a.text(dialect) for a in self.args)
        return f"{self.predicate}({inner})"

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class Literal:
    """An atom or its negation."""

    atom: Atom
    negated: bool = False

    def negate(self) -> "Literal":
        return Literal(self.atom, not self.negated)

    def text(self, dialect: Dialect = "psl") -> str:
        neg = ("!" if dialect == "mln" else "~") if self.negated else ""
        return f"{neg}{self.atom.text(dialect)}"

    def __str__(self) -> str:
        return self.text()


COMPARISONS: tuple[str, ...] = ("!=", "==", "%")
"""PSL term comparisons: not equal, equal, and PSL's non-symmetric ``%`` (first < second, here
by constant text; PSL uses it to keep one of two symmetric groundings)."""


@dataclass(frozen=True)
class Comparison:
    """A term comparison in a rule body, ``(P1 != P2)``: a filter on the rule's groundings."""

    left: Term
    op: str
    right: Term

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(t for t in (self.left, self.right) if isinstance(t, Variable))

    def text(self, dialect: Dialect = "psl") -> str:
        def side(t: Term) -> str:
            return t.name if isinstance(t, Variable) else t.text(dialect)
        return f"({side(self.left)} {self.op} {side(self.right)})"

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class Rule:
    """A weighted (soft) or hard rule ``body -> head``.

    `weight` is None for hard constraints. `squared` marks PSL's squared hinge (``^2``).
    `dialect` only decides how the rule prints; the semantics are the clause in both.
    """

    body: tuple[Literal, ...] = ()
    head: tuple[Literal, ...] = ()
    weight: float | None = 1.0
    squared: bool = False
    dialect: Dialect = "psl"
    name: str = field(default="", compare=False)
    conditions: tuple[Comparison, ...] = ()
    """Term comparisons of the body (PSL's ``(A != B)``), in the order written."""

    @property
    def is_hard(self) -> bool:
        return self.weight is None

    @property
    def literals(self) -> tuple[Literal, ...]:
        """Body literals then head literals, as written."""
        return self.body + self.head

    def clause_literals(self) -> tuple[Literal, ...]:
        """The rule as a disjunction: negated body literals, then head literals."""
        return tuple(l.negate() for l in self.body) + self.head

    @property
    def predicates(self) -> tuple[str, ...]:
        return tuple(l.atom.predicate for l in self.literals)

    @property
    def variables(self) -> tuple[Variable, ...]:
        """Distinct variables in order of first appearance (body first)."""
        seen: dict[Variable, None] = {}
        for lit in self.literals:
            for v in lit.atom.variables:
                seen.setdefault(v, None)
        return tuple(seen)

    def with_weight(self, weight: float | None) -> "Rule":
        return replace(self, weight=weight)

    def map_atoms(self, fn: Callable[[Atom], Atom]) -> "Rule":
        """The same rule with every atom replaced by ``fn(atom)`` (e.g. predicates renamed)."""
        def lits(ls: tuple[Literal, ...]) -> tuple[Literal, ...]:
            return tuple(Literal(fn(l.atom), l.negated) for l in ls)
        return replace(self, body=lits(self.body), head=lits(self.head))

    def text(self, dialect: Dialect | None = None) -> str:
        """Canonical text in the given dialect (default: the rule's own); parses back to an equal rule."""
        d = dialect or self.dialect
        return _mln_text(self) if d == "mln" else _psl_text(self)

    def __str__(self) -> str:
        return self.text()


def format_weight(w: float) -> str:
    """Shortest text that parses back to exactly the same float."""
    return repr(float(w))


def _psl_text(r: Rule) -> str:
    body = " & ".join([l.text("psl") for l in r.body] + [c.text("psl") for c in r.conditions])
    head = " | ".join(l.text("psl") for l in r.head)
    core = f"{body} -> {head}" if r.body else head
    if r.is_hard:
        return f"{core} ."
    out = f"{format_weight(r.weight)}: {core}"  # type: ignore[arg-type]
    return out + " ^2" if r.squared else out


def _mln_text(r: Rule) -> str:
    body = " ^ ".join(l.text("mln") for l in r.body)
    head = " v ".join(l.text("mln") for l in r.head)
    core = f"{body} => {head}" if r.body else head
    if r.is_hard:
        return f"{core}."
    return f"{format_weight(r.weight)} {core}"  # type: ignore[arg-type]


RELATIONS: tuple[str, ...] = ("<=", ">=", "=")


@dataclass(frozen=True)
class ArithmeticRule(Rule):
    """A PSL arithmetic rule: ``sum_i c_i * atom_i + constant  (<= | >= | =)  0``.

    Written as in PSL, e.g. the hard ``Knows(P1, P2) = Knows(P2, P1) .`` or the weighted
    ``2.0: A(X) + B(X) <= 1 ^2``. A hard rule is a linear constraint on every grounding; a weighted
    ``<=`` is the hinge ``max(0, sum c_i y_i + constant)`` (``>=`` negated), a weighted ``=`` the
    two hinges of both directions, as PSL grounds it. It grounds once per assignment under which
    every atom exists (all atoms are inner joined); `body` lists the atoms for that reason, so
    schema checks and grounding plans treat it like a rule whose atoms all bind.
    """

    terms: tuple[tuple[float, Atom], ...] = ()
    constant: float = 0.0
    relation: str = "<="

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {self.relation!r}")
        object.__setattr__(self, "body", tuple(Literal(a) for _, a in self.terms))
        object.__setattr__(self, "head", ())

    @property
    def coefficients(self) -> tuple[float, ...]:
        return tuple(c for c, _ in self.terms)

    def map_atoms(self, fn: Callable[[Atom], Atom]) -> "ArithmeticRule":
        return replace(self, terms=tuple((c, fn(a)) for c, a in self.terms))

    def text(self, dialect: Dialect | None = None) -> str:
        """PSL text (arithmetic rules exist only in PSL); parses back to an equal rule."""
        parts: list[str] = []
        for i, (c, a) in enumerate(self.terms):
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            coef = "" if mag == 1.0 else f"{format_weight(mag)} * "
            lead = ("-" if sign == "-" else "") if i == 0 else f" {sign} "
            parts.append(f"{lead}{coef}{a.text('psl')}")
        rhs = -self.constant + 0.0
        core = f"{''.join(parts)} {self.relation} {format_weight(rhs)}"
        if self.is_hard:
            return f"{core} ."
        out = f"{format_weight(self.weight)}: {core}"  # type: ignore[arg-type]
        return out + " ^2" if self.squared else out
