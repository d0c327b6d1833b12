"""Rule-language syntax tree: terms, atoms, literals and weighted rules (PSL and Markov logic).

A `Rule` is ``body -> head``: a conjunction of body literals implying a disjunction of head
literals. Every rule is also a clause: ``OR(~b for b in body) | OR(head)`` (`clause_literals`).
Priors have an empty body; Markov-logic clauses written as disjunctions have an empty body too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable
from typing import Literal as TypingLiteral

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

        Plain decimal numbers (``3``, ``-0.5``) are bare in Markov logic; PSL's grammar takes only
        quoted constants (Java PSL refuses ``HasCat(A, 1)``), so PSL text quotes them too. Quoted
        text escapes backslash, quote and line breaks so that the parser reads back exactly `value`.
        """
        if dialect == "mln" and (_BARE_MLN_CONSTANT.fullmatch(self.value) or _BARE_NUMBER.fullmatch(self.value)):
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


@dataclass(frozen=True)
class SumVariable:
    """A PSL summation variable (``+C`` in ``HasCat(A, +C)``): the atom is summed over its values."""

    name: str

    def __str__(self) -> str:
        return "+" + self.name


Term = Variable | Constant


@dataclass(frozen=True)
class Atom:
    """A predicate applied to terms: ``knows(X, 'bob')``."""

    predicate: str
    args: tuple[Term, ...] = ()

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(a for a in self.args if isinstance(a, Variable))

    @property
    def sum_variables(self) -> tuple["SumVariable", ...]:
        """Summation variables (``+C``) among the arguments, in order."""
        return tuple(a for a in self.args if isinstance(a, SumVariable))

    def text(self, dialect: Dialect = "psl") -> str:
        inner = ", ".join(a.name if isinstance(a, Variable) else str(a) if isinstance(a, SumVariable)
                          else a.text(dialect) for a in self.args)
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

COEFFICIENT_OPS: tuple[str, ...] = ("card", "+", "-", "*", "/", "max", "min")


@dataclass(frozen=True)
class CoefExpr:
    """A coefficient of an arithmetic rule that depends on cardinalities: ``|C|``, ``2 / |C|``,
    ``@Max[1, |C| - 1]``. `op` is one of `COEFFICIENT_OPS`; ``card`` has the summation variable's
    name as its one argument, the others two operands (a float or a `CoefExpr`). Numbers-only
    expressions are folded to floats by `coef_op`, so a `CoefExpr` always holds a cardinality."""

    op: str
    args: tuple

    def cardinalities(self) -> set[str]:
        """Names of the summation variables whose cardinality this coefficient uses."""
        if self.op == "card":
            return {self.args[0]}
        return set().union(*(a.cardinalities() for a in self.args if isinstance(a, CoefExpr)))

    def evaluate(self, cards: dict) -> "object":
        """The value per ground rule, given each summation variable's count (numpy arrays)."""
        import numpy as np  # only summation values need numpy; parsing rules stays numpy-free (start-up time)

        if self.op == "card":
            return np.asarray(cards[self.args[0]], dtype=np.float64)
        x, y = (a.evaluate(cards) if isinstance(a, CoefExpr) else float(a) for a in self.args)
        if self.op == "+":
            return x + y
        if self.op == "-":
            return x - y
        if self.op == "*":
            return x * y
        if self.op == "/":
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))  # PSL: x / 0 counts as 0
        return np.maximum(x, y) if self.op == "max" else np.minimum(x, y)

    def text(self) -> str:
        if self.op == "card":
            return f"|{self.args[0]}|"
        a, b = (coef_text(x, nested=True) for x in self.args)
        if self.op in ("max", "min"):
            return f"@{self.op.capitalize()}[{a}, {b}]"
        return f"({a} {self.op} {b})"

    def __str__(self) -> str:
        return self.text()


Coefficient = float | CoefExpr


def coef_text(c: Coefficient, nested: bool = False) -> str:
    """Text of a coefficient (a float prints as its shortest round-trip form)."""
    return c.text() if isinstance(c, CoefExpr) else format_weight(c)


def coef_op(op: str, a: Coefficient, b: Coefficient) -> Coefficient:
    """``a op b`` folded to a float when both are numbers (PSL divides by zero as 0)."""
    if isinstance(a, CoefExpr) or isinstance(b, CoefExpr):
        if op == "*" and (a == 1.0 or b == 1.0):
            return b if a == 1.0 else a
        if op in ("+", "-") and b == 0.0:
            return a
        if op == "+" and a == 0.0:
            return b
        if op == "/" and b == 1.0:
            return a
        if op == "-" and a == 0.0 and isinstance(b, CoefExpr) and b.op == "-" and b.args[0] == 0.0:
            return b.args[1]  # -(-x) = x
        return CoefExpr(op, (a, b))
    a, b = float(a), float(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return 0.0 if b == 0 else a / b
    return max(a, b) if op == "max" else min(a, b)


FilterConjunction = tuple  # tuple[Literal | Comparison, ...]


@dataclass(frozen=True)
class FilterClause:
    """PSL's ``{C: Formula}`` on a summation variable, kept in disjunctive normal form: a value of
    ``+C`` takes part in the sum when one conjunction holds (an atom holds when its observed value is
    above 0; PSL splits a disjunctive filter into one rule per disjunct, and so do we)."""

    variable: str
    dnf: tuple[FilterConjunction, ...]

    def text(self) -> str:
        def conj(c: FilterConjunction) -> str:
            return " & ".join(x.text("psl") for x in c)
        body = " | ".join(f"({conj(c)})" if len(self.dnf) > 1 and len(c) > 1 else conj(c) for c in self.dnf)
        return f"{{{self.variable}: {body}}}"


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

    terms: tuple[tuple[Coefficient, Atom], ...] = ()
    constant: Coefficient = 0.0
    relation: str = "<="
    filters: tuple[FilterClause, ...] = ()
    """Filter clauses ``{C: ...}`` on summation variables (only with summation atoms)."""

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {', '.join(RELATIONS)}, got {self.relation!r}")
        object.__setattr__(self, "body", tuple(Literal(a) for _, a in self.terms))
        object.__setattr__(self, "head", ())

    @property
    def coefficients(self) -> tuple[Coefficient, ...]:
        return tuple(c for c, _ in self.terms)

    @property
    def has_summation(self) -> bool:
        """Whether an atom has a summation variable (``+C``): grounded by `xcore.logic.summation`."""
        return any(a.sum_variables for _, a in self.terms)

    def map_atoms(self, fn: Callable[[Atom], Atom]) -> "ArithmeticRule":
        return replace(self, terms=tuple((c, fn(a)) for c, a in self.terms))

    def text(self, dialect: Dialect | None = None) -> str:
        """PSL text (arithmetic rules exist only in PSL); parses back to an equal rule."""
        parts: list[str] = []
        for i, (c, a) in enumerate(self.terms):
            if isinstance(c, CoefExpr):
                parts.append(f"{'' if i == 0 else ' + '}{c.text()} * {a.text('psl')}")
                continue
            sign = "-" if c < 0 else "+"
            mag = abs(c)
            coef = "" if mag == 1.0 else f"{format_weight(mag)} * "
            lead = ("-" if sign == "-" else "") if i == 0 else f" {sign} "
            parts.append(f"{lead}{coef}{a.text('psl')}")
        rhs = coef_op("-", 0.0, self.constant)
        rhs = rhs + 0.0 if isinstance(rhs, float) else rhs
        core = f"{''.join(parts)} {self.relation} {coef_text(rhs)}"
        filters = "".join(" " + f.text() for f in self.filters)
        if self.is_hard:
            return f"{core} .{filters}"
        out = f"{format_weight(self.weight)}: {core}"  # type: ignore[arg-type]
        return (out + " ^2" if self.squared else out) + filters
