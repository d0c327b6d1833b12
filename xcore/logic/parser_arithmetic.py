"""Parsing the arithmetic side of PSL rules: linear expressions with coefficients (``|A|``, ``@Max``,
``@Min``), arithmetic rules ``c1 a1 + c2 a2 <= k``, summation filters ``{X: p(X) & !q(X)}`` (read into
disjunctive normal form) and their checks. A mixin of the rule parser (`xcore.logic.parser`): it reads
the parser's token cursor (``tok``, ``peek``, ``advance``, ``fail``) and its atoms and comparisons."""

from __future__ import annotations

import math

from xcore.logic.ast import (
    Atom,
    CoefExpr,
    Coefficient,
    Comparison,
    FilterClause,
    Literal,
    coef_op,
)
from xcore.logic.tokens import IDENT, NUMBER, Token

RELATION_KINDS = ("<=", ">=", "=")
"""The relations of an arithmetic rule."""
NEGATIONS = ("~", "!")
"""Tokens that negate a literal."""


class ArithmeticParsing:
    """The rule parser's methods for arithmetic rules, coefficients and summation filters."""

    def arithmetic(self) -> tuple[tuple[tuple[float, Atom], ...], float, str]:
        """arithmetic := linear relation linear, normalised to ``sum c_i a_i + constant  rel  0``."""
        left, lconst = self.linear(")")
        rel = self.tok
        if rel.kind not in RELATION_KINDS:
            raise self.fail(f"expected '=', '<=' or '>=' in the arithmetic rule, got {rel.describe()}")
        self.advance()
        right, rconst = self.linear(None)
        merged: dict[Atom, Coefficient] = {}
        for c, a in left:
            merged[a] = coef_op("+", merged.get(a, 0.0), c)
        for c, a in right:
            merged[a] = coef_op("-", merged.get(a, 0.0), c)
        terms = tuple((c, a) for a, c in merged.items() if isinstance(c, CoefExpr) or c != 0.0)
        if not terms:
            raise self.fail("the arithmetic rule has no atoms left once both sides are combined", rel)
        return terms, coef_op("-", lconst, rconst), rel.kind

    def linear(self, closer: str | None) -> tuple[list[tuple[Coefficient, Atom]], Coefficient]:
        """linear := ['-'] operand (('+' | '-') operand)*; returns (coefficient, atom) terms and the constant."""
        terms: list[tuple[float, Atom]] = []
        constant = 0.0
        sign = 1.0
        if self.tok.kind == "-":
            self.advance()
            sign = -1.0
        while True:
            t, c = self.operand(sign)
            terms += t
            constant = coef_op("+", constant, c)
            if self.tok.kind == "+":
                self.advance()
                sign = 1.0
            elif self.tok.kind == "-":
                self.advance()
                sign = -1.0
            elif self.tok.kind == NUMBER and self.tok.text.startswith("-"):
                sign = 1.0  # the number's own sign subtracts
            else:
                return terms, constant

    def operand(self, sign: float) -> tuple[list[tuple[Coefficient, Atom]], Coefficient]:
        """operand := [coef ['*']] atom ['/' coef] | coef | '(' linear ')'."""
        if self.tok.kind == "(" and not self._coef_start(self.pos):
            self.advance()
            terms, constant = self.linear(")")
            if self.tok.kind != ")":
                raise self.fail(f"expected ')' to close the group, got {self.tok.describe()}")
            self.advance()
            return [(coef_op("*", sign, c), a) for c, a in terms], coef_op("*", sign, constant)
        coef: Coefficient = 1.0
        if self._coef_start(self.pos):
            coef = self.coef_mult()
            if self.tok.kind == "*":
                self.advance()
            elif self.tok.kind != IDENT:
                return [], coef_op("*", sign, coef)
        if self.tok.kind in NEGATIONS:
            raise self.fail("negation is not allowed in an arithmetic rule; write 1 - A(X)")
        if self.tok.kind != IDENT:
            raise self.fail(f"expected an atom or a number, got {self.tok.describe()}")
        atom = self.atom(summation=True)
        if self.tok.kind == "/":
            slash = self.advance()
            if not self._coef_start(self.pos):
                raise self.fail(f"expected a number after '/', got {self.tok.describe()}")
            divisor = self.coef_primary()
            if divisor == 0.0:
                raise self.fail("division by zero", slash)
            coef = coef_op("/", coef, divisor)
        if self.tok.kind == "*":
            raise self.fail("write the coefficient before the atom: '2 * A(X)'")
        return [(coef_op("*", sign, coef), atom)], 0.0

    # -- coefficient expressions (PSL: numbers, |C|, @Max/@Min, + - * / and parentheses)
    def _coef_start(self, pos: int) -> bool:
        """Whether a coefficient expression starts at token `pos` (a parenthesised group counts
        when it holds no atom)."""
        t = self.tokens[pos]
        if t.kind in (NUMBER, "|", "func"):
            return True
        if t.kind != "(":
            return False
        depth = 0
        for k in range(pos, len(self.tokens)):
            tk = self.tokens[k]
            if tk.kind == "(":
                depth += 1
            elif tk.kind == ")":
                depth -= 1
                if depth == 0:
                    return True
            elif tk.kind == IDENT and self.tokens[k + 1].kind == "(":
                return False
        return False

    def coef_additive(self) -> Coefficient:
        """coef_additive := coef_mult (('+' | '-') coef_mult)*"""
        value = self.coef_mult()
        while self.tok.kind in ("+", "-") or (self.tok.kind == NUMBER and self.tok.text.startswith("-")):
            if self.tok.kind == NUMBER:
                value = coef_op("+", value, self.coef_mult())
                continue
            op = self.advance().kind
            value = coef_op(op, value, self.coef_mult())
        return value

    def coef_mult(self) -> Coefficient:
        """coef_mult := coef_primary (('*' | '/') coef_primary)*  (a '*' before an atom ends it)"""
        value = self.coef_primary()
        while self.tok.kind in ("*", "/") and self._coef_start(self.pos + 1):
            op = self.advance().kind
            divisor_tok = self.tok
            other = self.coef_primary()
            if op == "/" and other == 0.0:
                raise self.fail("division by zero", divisor_tok)
            value = coef_op(op, value, other)
        return value

    def coef_primary(self) -> Coefficient:
        """coef_primary := number | '|' variable '|' | ('@Max' | '@Min') '[' coef ',' coef ']' | '(' coef ')'"""
        t = self.tok
        if t.kind == NUMBER:
            self.advance()
            value = float(t.text)
            if not math.isfinite(value):
                raise self.fail(f"coefficient {t.text} is too large", t)
            return value
        if t.kind == "|":
            self.advance()
            if self.tok.kind != IDENT:
                raise self.fail(f"expected a summation variable inside |...|, got {self.tok.describe()}")
            name = self.advance().text
            if self.tok.kind != "|":
                raise self.fail(f"expected '|' to close the cardinality |{name}|, got {self.tok.describe()}")
            self.advance()
            return CoefExpr("card", (name,))
        if t.kind == "func":
            self.advance()
            close = {"[": "]", "(": ")"}.get(self.tok.kind)
            if close is None:
                raise self.fail(f"expected '[' after {t.text}, got {self.tok.describe()}")
            self.advance()
            a = self.coef_additive()
            if self.tok.kind != ",":
                raise self.fail(f"expected ',' between the arguments of {t.text}, got {self.tok.describe()}")
            self.advance()
            b = self.coef_additive()
            if self.tok.kind != close:
                raise self.fail(f"expected {close!r} to close {t.text}, got {self.tok.describe()}")
            self.advance()
            return coef_op(t.text[1:].lower(), a, b)
        if t.kind == "(":
            self.advance()
            value = self.coef_additive()
            if self.tok.kind != ")":
                raise self.fail(f"expected ')' to close the coefficient, got {self.tok.describe()}")
            self.advance()
            return value
        raise self.fail(f"expected a coefficient (number, |C|, @Max, @Min), got {t.describe()}")

    # -- filter clauses (PSL: {C: boolean formula over closed predicates})
    def filter_clause(self) -> FilterClause:
        """filter := '{' variable ':' boolean '}', the boolean kept in disjunctive normal form."""
        self.advance()
        if self.tok.kind != IDENT:
            raise self.fail(f"expected the summation variable of the filter, got {self.tok.describe()}")
        name = self.advance().text
        if self.tok.kind != ":":
            raise self.fail(f"expected ':' after the filter variable {name}, got {self.tok.describe()}")
        self.advance()
        dnf = self.bool_or()
        if self.tok.kind != "}":
            raise self.fail(f"expected '}}' to close the filter on {name}, got {self.tok.describe()}")
        self.advance()
        return FilterClause(name, dnf)

    def bool_or(self) -> tuple:
        out = list(self.bool_and())
        while self.tok.kind == "|":
            self.advance()
            out += self.bool_and()
        return tuple(out)

    def bool_and(self) -> tuple:
        out = self.bool_value()
        while self.tok.kind == "&":
            self.advance()
            right = self.bool_value()
            out = tuple(a + b for a in out for b in right)
        return out

    def bool_value(self) -> tuple:
        start = self.tok
        if self.tok.kind in NEGATIONS:
            self.advance()
            return self._negate_dnf(self.bool_value(), start)
        if self.tok.kind == "(" and self._comparison_ahead(self.pos + 1):
            self.advance()
            comp = self.comparison(False, start)
            if self.tok.kind != ")":
                raise self.fail(f"expected ')' after the comparison, got {self.tok.describe()}")
            self.advance()
            return ((comp,),)
        if self.tok.kind == "(":
            self.advance()
            inner = self.bool_or()
            if self.tok.kind != ")":
                raise self.fail(f"expected ')' to close the group, got {self.tok.describe()}")
            self.advance()
            return inner
        if self._comparison_ahead(self.pos):
            return ((self.comparison(False, start),),)
        return ((Literal(self.atom()),),)

    def _negate_dnf(self, dnf: tuple, where: Token) -> tuple:
        """not (OR of ANDs) as a DNF (De Morgan, then distributed)."""
        out: tuple = ((),)
        for conj in dnf:
            options = []
            for x in conj:
                if isinstance(x, Literal):
                    options.append(x.negate())
                elif x.op == "%":
                    raise self.fail("a negated '%' comparison is not supported", where)
                else:
                    options.append(Comparison(x.left, "==" if x.op == "!=" else "!=", x.right))
            out = tuple(a + (o,) for a in out for o in options)
        return out

    def _token_after(self, kind: str, name: str) -> Token:
        """The first `kind` token directly followed by the identifier `name` (for error positions)."""
        for i, t in enumerate(self.tokens[:-1]):
            if t.kind == kind and self.tokens[i + 1].kind == IDENT and self.tokens[i + 1].text == name:
                return t
        return self.tokens[0]

    def _check_summation(self, terms, constant, filters: list[FilterClause], filter_tokens: list[Token]) -> None:
        """PSL's checks on summation variables, cardinalities and filters (ArithmeticRuleExpression)."""
        sums: list[str] = [v.name for _, a in terms for v in a.sum_variables]
        plain = {v.name for _, a in terms for v in a.variables}
        for name in sums:
            if sums.count(name) > 1:
                raise self.fail(f"summation variable +{name} appears more than once; each must be unique",
                                self._token_after("+", name))
            if name in plain:
                raise self.fail(f"summation variable +{name} cannot also be used as a normal variable ({name})",
                                self._token_after("+", name))
        used = set().union(*(c.cardinalities() for c in [*(c for c, _ in terms), constant] if isinstance(c, CoefExpr)))
        for name in sorted(used - set(sums)):
            raise self.fail(f"cardinality |{name}| needs a summation variable +{name} in the rule",
                            self._token_after("|", name))
        for f, tok in zip(filters, filter_tokens):
            if f.variable not in sums:
                raise self.fail(f"filter on {f.variable}: filter variables must be summation variables (+{f.variable})",
                                tok)
            for conj in f.dnf:
                for x in conj:
                    vs = x.atom.variables if isinstance(x, Literal) else x.variables
                    for v in vs:
                        if v.name != f.variable and v.name not in plain:
                            raise self.fail(f"variable {v.name} of the filter on {f.variable} is neither {f.variable} "
                                            "nor a variable of the rule's atoms", tok)
