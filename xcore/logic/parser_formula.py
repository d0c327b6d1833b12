"""Parsing the logical side of rules: formulas (body ``->`` head, ``=>`` implications, disjunctions and
conjunctions of literals), literals, atoms, terms and comparisons (``X != Y``). A mixin of the rule
parser (`xcore.logic.parser`): it reads the parser's token cursor (``tok``, ``peek``, ``advance``,
``fail``) and uses its arithmetic parsing for summation atoms."""

from __future__ import annotations

from xcore.logic.ast import Atom, Comparison, Constant, Literal, SumVariable, Term, Variable
from xcore.logic.parser_arithmetic import NEGATIONS
from xcore.logic.tokens import IDENT, NUMBER, STRING, Token

COMPARISON_KINDS = ("!=", "==", "%")
COMPARISON_ALIASES = {"-": "!=", "^": "%"}
"""PSL's grammar (PSL.g4 `notEqual`, `nonSymmetric`) also writes ``A - B`` for ``A != B`` and ``A ^ B`` for ``A % B``."""


class FormulaParsing:
    """The rule parser's methods for formulas, literals, atoms, terms and comparisons."""

    def formula(self) -> tuple[tuple[Literal, ...], tuple[Literal, ...], tuple[Comparison, ...]]:
        """formula := body ('->' | '>>') head | head ('<<' | '<-') body | head
        (body joined by 'and', head by 'or'; term comparisons only in the body)."""
        if self.tok.kind in ("->", "=>", "<<"):
            raise self.fail(f"missing {'body' if self.tok.kind != '<<' else 'head'} before '{self.tok.text}'")
        if self.tok.kind == "<=>":
            raise self.fail("'<=>' (equivalence) is not supported: write two implications")
        if not self._is_item_start(self.tok):
            raise self.fail(f"expected a literal such as A(X), got {self.tok.describe()}")
        first, joins = self.literal_sequence()
        if self.tok.kind == "<=>":
            raise self.fail("'<=>' (equivalence) is not supported: write two implications")
        if self.tok.kind in ("->", "=>", "<<"):
            arrow = self.advance()
            if not self._is_item_start(self.tok):
                raise self.fail(f"missing {'head' if arrow.kind != '<<' else 'body'} after '{arrow.text}'")
            second, second_joins = self.literal_sequence()
            if arrow.kind == "<<":
                (first, joins), (second, second_joins) = (second, second_joins), (first, joins)
            for kind, tok in joins:
                if kind == "or":
                    raise self.fail(
                        f"disjunction {tok.text!r} is not allowed in the body (before '{arrow.text}'); "
                        "split the rule or move the literal to the head" if arrow.kind != "<<" else
                        f"disjunction {tok.text!r} is not allowed in the body (after '{arrow.text}')",
                        tok,
                    )
            for kind, tok in second_joins:
                if kind == "and":
                    raise self.fail(
                        f"conjunction {tok.text!r} is not allowed in the head: split it into one rule per literal",
                        tok,
                    )
            body, conditions = self._split_items(first)
            head, head_conditions = self._split_items(second)
            if head_conditions:
                raise self.fail("term comparisons such as (A != B) belong in the body", head_conditions[0][1])
            self._check_condition_variables(conditions, body + head)
            return tuple(body), tuple(head), tuple(c for c, _ in conditions)
        if any(kind == "and" for kind, _ in joins):
            arrow = "->" if self.dialect == "psl" else "=>"
            raise self.fail(f"missing '{arrow}' or head: a conjunction needs an implication, e.g. 'A & B {arrow} C'")
        head, conditions = self._split_items(first)
        if conditions:
            raise self.fail("a term comparison such as (A != B) needs a body: write 'A(X, Y) & (X != Y) -> B(X)'",
                            conditions[0][1])
        return (), tuple(head), ()

    @staticmethod
    def _split_items(items: list[tuple[Literal | Comparison, Token]]):
        lits = [it for it, _ in items if isinstance(it, Literal)]
        comps = [(it, tok) for it, tok in items if isinstance(it, Comparison)]
        return lits, comps

    def _check_condition_variables(self, conditions, literals: list[Literal]) -> None:
        known = {v for lit in literals for v in lit.atom.variables}
        for comp, tok in conditions:
            for v in comp.variables:
                if v not in known:
                    raise self.fail(f"variable {v.name} of {comp.text()} appears in no atom of the rule", tok)

    def _is_literal_start(self, t: Token) -> bool:
        return t.kind in NEGATIONS or t.kind == IDENT

    def _is_item_start(self, t: Token) -> bool:
        """A literal, or (PSL) a term comparison or a parenthesised group."""
        if self._is_literal_start(t):
            return True
        return self.dialect == "psl" and t.kind in ("(", STRING, NUMBER)

    def literal_sequence(self) -> tuple[list[tuple[Literal | Comparison, Token]], list[tuple[str, Token]]]:
        """item (connective item)*: the items (literals, comparisons) and the connectives used."""
        items: list[tuple[Literal | Comparison, Token]] = []
        joins: list[tuple[str, Token]] = []
        self.item(items, joins)
        while (kind := self._connective(self.tok)) is not None:
            conn = self.advance()
            if self.dialect == "psl" and conn.kind in ("&", "|") and self.tok.kind == conn.kind:
                self.advance()  # PSL's grammar reads `& &` (split across lines) as one `&&`
            if self.dialect == "mln" and conn.kind == "^" and self.tok.kind == NUMBER:
                raise self.fail("'^' followed by a number is PSL's exponent; in Markov logic '^' means 'and'", conn)
            if not self._is_item_start(self.tok):
                raise self.fail(f"expected a literal after {conn.text!r}, got {self.tok.describe()}")
            joins.append((kind, conn))
            self.item(items, joins)
        if self.tok.kind in (IDENT, STRING, NUMBER, "(") or self.tok.kind in NEGATIONS:
            hint = "'&' or '|'" if self.dialect == "psl" else "'^' or 'v'"
            raise self.fail(f"expected a connective ({hint}) or the end of the rule, got {self.tok.describe()}")
        return items, joins

    def item(self, items: list, joins: list) -> None:
        """One literal, term comparison, or parenthesised group (flattened into `items`)."""
        start = self.tok
        negated = False
        while self.tok.kind in NEGATIONS and self.dialect == "psl" and self.peek().kind == "(":
            self.advance()
            negated = not negated
        if self.dialect == "psl" and self.tok.kind == "(":
            if self._comparison_ahead(self.pos + 1):
                self.advance()
                comp = self.comparison(negated, start)
                if self.tok.kind != ")":
                    raise self.fail(f"expected ')' after the comparison, got {self.tok.describe()}")
                self.advance()
                items.append((comp, start))
                return
            if negated:
                raise self.fail("'~' before a parenthesised group is not supported; negate each literal", start)
            self.advance()
            inner, inner_joins = self.literal_sequence()
            if self.tok.kind != ")":
                raise self.fail(f"expected ')' to close the group, got {self.tok.describe()}")
            self.advance()
            items.extend(inner)
            joins.extend(inner_joins)
            return
        if self.dialect == "psl" and self._comparison_ahead(self.pos):
            items.append((self.comparison(False, start), start))
            return
        if self.tok.kind in (STRING, NUMBER):
            raise self.fail(f"expected a literal such as A(X), got {self.tok.describe()}")
        items.append((self.literal(), start))

    def _comparison_ahead(self, pos: int) -> bool:
        """Whether tokens at `pos` read ``term op term`` (op: !=, ==, %, or PSL's older '-' and '^')."""
        a, op, b, after = (self.tokens[min(pos + k, len(self.tokens) - 1)] for k in range(4))
        if a.kind not in (IDENT, STRING, NUMBER):
            return False
        if op.kind in COMPARISON_KINDS:
            return True
        # PSL's grammar also spells != as '-' and % as '^': `(A1 - A2)`, `(A ^ B)`.
        return op.kind in COMPARISON_ALIASES and b.kind in (IDENT, STRING, NUMBER) and after.kind != "("

    def comparison(self, negated: bool, start: Token) -> Comparison:
        left = self.term()
        op = self.advance()
        right = self.term()
        kind = COMPARISON_ALIASES.get(op.kind, op.kind)
        if negated:
            if kind == "%":
                raise self.fail("a negated '%' comparison is not supported", start)
            kind = "==" if kind == "!=" else "!="
        return Comparison(left, kind, right)

    def literal(self) -> Literal:
        """literal := ('~' | '!')* atom"""
        negated = False
        while self.tok.kind in NEGATIONS:
            self.advance()
            negated = not negated
        return Literal(self.atom(), negated)

    def atom(self, summation: bool = False) -> Atom:
        """atom := IDENT '(' [term (',' term)*] ')'  (`summation`: a term may be ``+X``)"""
        name = self.tok
        if name.kind != IDENT:
            raise self.fail(f"expected a predicate name, got {name.describe()}")
        self.advance()
        if self.tok.kind != "(":
            raise self.fail(f"expected '(' after predicate name '{name.text}'")
        self.advance()
        args: list[Term] = []
        if self.tok.kind == ")":
            self.advance()
            return Atom(name.text, ())
        args.append(self._argument(summation))
        while self.tok.kind == ",":
            self.advance()
            args.append(self._argument(summation))
        if self.tok.kind != ")":
            raise self.fail(f"expected ')' after arguments of '{name.text}', got {self.tok.describe()}")
        self.advance()
        return Atom(name.text, tuple(args))

    # -- arithmetic rules (PSL)
    def _argument(self, summation: bool):
        """A term, or (in an arithmetic rule) a summation variable ``+X``."""
        if summation and self.tok.kind == "+" and self.peek().kind == IDENT:
            self.advance()
            return SumVariable(self.advance().text)
        return self.term()

    def term(self) -> Term:
        """term := variable | constant, named by the dialect's conventions."""
        tok = self.tok
        if tok.kind == STRING:
            self.advance()
            return Constant(tok.value)
        if tok.kind == NUMBER:
            self.advance()
            return Constant(tok.text)
        if tok.kind == IDENT:
            self.advance()
            if self.dialect == "mln" and tok.text[0].isupper():
                return Constant(tok.text)
            return Variable(tok.text)
        if tok.kind == "+":
            raise self.fail("summation variables (+X) only appear in the atoms of arithmetic rules")
        kinds = "variable, quoted constant or number"
        raise self.fail(f"expected an argument ({kinds}), got {tok.describe()}")
