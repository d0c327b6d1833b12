"""Hand-written tokenizer and recursive-descent parser for PSL rules and Markov-logic clauses.

Two surface syntaxes produce the same `Rule` (``body -> head``):

PSL::

    1.5: A(X, Y) & B(Y, Z) -> C(X, Z) ^2      # weighted, squared hinge (^1 = linear, the default)
    A(X) -> B(X) .                            # hard constraint: no weight, ends in ' .'
    1.0: ~C(X, Y) ^2                          # prior: empty body
    0.5: A(X) -> B(X) | C(X)                  # disjunction in the head

  Bare identifiers in argument lists are variables; constants are quoted ('bob' or "bob") or
  numbers. Weights must be >= 0 (``1.0 :`` with a space works too). PSL's other spellings:
  ``>>`` for ``->``, ``head << body``, ``&&``, ``||``; parentheses group literals. Also::

    1.0: Lived(P1, L) & Lived(P2, L) & (P1 != P2) -> Knows(P1, P2) ^2   # term comparisons:
                                                  # (A != B), (A == B), (A % B); bare A != B too;
                                                  # PSL's older (A - B) for != and (A ^ B) for %
    Knows(P1, P2) = Knows(P2, P1) .               # arithmetic rules: linear (in)equalities
    2.0: A(X) + 0.5 * B(X) <= 1 ^2                # over atoms with coefficients (=, <=, >=),
    1.0: 2 A(X) - B(X) / 4 >= -1                  # weighted or hard (`ArithmeticRule`)

    HasCat(A, +C) = 1 .                       # summation atoms: +C sums over C's values
    1.0: Friends(A, +B) <= |B| / 2 ^2 {B: Nice(B) & !Rival(A, B)}
                                              # cardinality |B|, coefficient expressions
                                              # (+ - * /, @Max[a, b], @Min[a, b]), filter clauses

  Not supported, and reported with the position: functional terms.

Markov logic (Alchemy)::

    1.5 Smokes(x) => Cancer(x)
    0.8 Friends(x, y) ^ Smokes(x) => Smokes(y)
    2.1 !Smokes(x) v Cancer(x)                # a clause: empty body
    Smokes(x) => Cancer(x).                   # hard clause

  Lowercase-initial identifiers (and ones starting with ``_``) are variables; capitalised
  identifiers, quoted strings and numbers are constants. Weights may be negative.

Both dialects accept ``~``/``!`` for negation, ``&`` for "and", ``|`` for "or" and either arrow
``->``/``=>``; Markov logic also reads ``^`` as "and" and the word ``v`` as "or". ``#`` and ``//``
start comments. Weights are ints, floats or scientific notation (``1e-3``).

Dialect detection (``dialect="auto"``), per line, first match wins:

1. a leading weight followed by ``:`` -> PSL;
2. a ``=>`` arrow -> Markov logic; a ``->`` arrow -> PSL;
3. ``v`` used as a connective, or ``^`` used as "and" (not followed by a number) -> Markov logic;
   ``^`` followed by a number (PSL's ``^2``) -> PSL;
4. ``&`` outside argument lists -> PSL;
5. a leading weight without ``:`` -> Markov logic;
6. otherwise the line is ambiguous (e.g. ``A(X) | B(X) .``): `parse_rules` uses the dialect of
   the other lines of the text when they all agree; failing that, a final ``.`` written
   directly after ``)`` means Markov logic and anything else PSL.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from xcore.errors import DataError, ParseError
from xcore.logic.ast import (
    ArithmeticRule,
    Atom,
    CoefExpr,
    Coefficient,
    Comparison,
    Constant,
    Dialect,
    FilterClause,
    Literal,
    Rule,
    SumVariable,
    Term,
    Variable,
    coef_op,
)

DIALECTS: tuple[str, ...] = ("auto", "psl", "mln")

# Token kinds: the symbol itself for punctuation, plus these names.
NUMBER, STRING, IDENT, EOF = "number", "string", "identifier", "end of line"

_SYMBOLS: tuple[str, ...] = ("<=>", "->", "=>", ">>", "<<", "<-", "<=", ">=", "==", "!=", "&&", "||",
                             "(", ")", ",", ":", "&", "|", "^", "~", "!", ".", "=", "+", "-", "*", "/",
                             "%", "{", "}", "[", "]")
_SYMBOL_KINDS = {"&&": "&", "||": "|", ">>": "->", "<-": "<<"}
"""PSL's alternative spellings, read as the same token kind (the text keeps the spelling)."""
_COMPARISON_KINDS = ("!=", "==", "%")
_COMPARISON_ALIASES = {"-": "!=", "^": "%"}
"""PSL's grammar (PSL.g4 `notEqual`, `nonSymmetric`) also writes ``A - B`` for ``A != B`` and ``A ^ B`` for ``A % B``."""
_RELATION_KINDS = ("<=", ">=", "=")
_PSL_ONLY_KINDS = frozenset({"<<", "!=", "==", "<=", ">=", "=", "+", "*", "/", "%", "{"})
_NUMBER_RE = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_NEGATIONS = ("~", "!")
MAX_NESTING = 100
"""Deepest parenthesis nesting a rule may have: the parser recurses once or twice per level, so a
bound keeps a hostile line (100,000 opening parentheses) from exhausting Python's stack."""


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token: its kind, source text, decoded value (strings) and 1-based column."""

    kind: str
    text: str
    column: int
    value: str = ""

    @property
    def end(self) -> int:
        """Column just after the token."""
        return self.column + len(self.text)

    def describe(self) -> str:
        return "end of line" if self.kind == EOF else repr(self.text)


@dataclass(frozen=True, slots=True)
class _Line:
    """One source line: its 1-based number and text."""

    number: int
    text: str
    source: str | None

    def error(self, problem: str, column: int) -> ParseError:
        return ParseError(problem, self.number, column, self.text, self.source)


# --------------------------------------------------------------------------- tokenizer


def tokenize(line_text: str, line: int = 1, source: str | None = None) -> list[Token]:
    """Split one line into tokens (comments dropped), ending with an EOF token.

    Raises ParseError on an unknown symbol, a malformed number or an unterminated string.
    """
    where = _Line(line, line_text, source)
    out: list[Token] = []
    i, n = 0, len(line_text)
    while i < n:
        ch = line_text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "#" or line_text.startswith("//", i):
            break
        if ch in "'\"":
            token, i = _read_string(line_text, i, where)
            out.append(token)
            continue
        m = _NUMBER_RE.match(line_text, i) if (ch.isdigit() or ch in "-.") else None
        if m and ch.isascii():
            end = m.end()
            if end < n and _IDENT_CHAR.match(line_text, end):
                bad = _IDENT_RE.match(line_text, end)
                tail = bad.group() if bad else line_text[end]
                raise where.error(f"invalid number '{m.group()}{tail}'", i + 1)
            out.append(Token(NUMBER, m.group(), i + 1))
            i = end
            continue
        m = _IDENT_RE.match(line_text, i)
        if m:
            out.append(Token(IDENT, m.group(), i + 1))
            i = m.end()
            continue
        symbol = next((s for s in _SYMBOLS if line_text.startswith(s, i)), None)
        if symbol is None and line_text.startswith(("@Max", "@Min"), i):
            out.append(Token("func", line_text[i:i + 4], i + 1))
            i += 4
            continue
        if symbol is None:
            raise where.error(f"unknown symbol {ch!r}", i + 1)
        out.append(Token(_SYMBOL_KINDS.get(symbol, symbol), symbol, i + 1))
        i += len(symbol)
    out.append(Token(EOF, "", out[-1].end if out else 1))
    return out


def _read_string(text: str, start: int, where: _Line) -> tuple[Token, int]:
    """Read a quoted constant starting at `start`; backslash escapes the next character."""
    quote = text[start]
    chars: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            chars.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == quote:
            return Token(STRING, text[start : i + 1], start + 1, "".join(chars)), i + 1
        chars.append(ch)
        i += 1
    raise where.error(f"unterminated string: missing closing {quote}", start + 1)


# --------------------------------------------------------------------------- dialect detection


def _detect(tokens: list[Token]) -> Dialect | None:
    """Dialect implied by the tokens of one line, or None when the line reads the same in both."""
    toks = tokens[:-1]
    if not toks:
        return None
    weighted = toks[0].kind == NUMBER
    if weighted and len(toks) > 1 and toks[1].kind == ":":
        return "psl"
    kinds = {t.kind for t in toks}
    if "=>" in kinds:
        return "mln"
    if "->" in kinds or kinds & _PSL_ONLY_KINDS:
        return "psl"
    depth, has_and = 0, False
    for i, t in enumerate(toks):
        nxt = tokens[i + 1]
        if t.kind == "(":
            depth += 1
        elif t.kind == ")":
            depth -= 1
        elif depth == 0 and t.kind == IDENT and t.text == "v" and i > 0 and nxt.kind != "(":
            return "mln"
        elif depth == 0 and t.kind == "^":
            return "psl" if nxt.kind == NUMBER else "mln"
        elif depth == 0 and t.kind == "&":
            has_and = True
    if has_and:
        return "psl"
    if weighted:
        return "mln"
    return None


def _tie_break(tokens: list[Token]) -> Dialect:
    """Dialect of an ambiguous line: Markov logic when a final '.' touches the ')', else PSL."""
    if len(tokens) >= 3 and tokens[-2].kind == "." and tokens[-3].kind == ")":
        if tokens[-3].end == tokens[-2].column:
            return "mln"
    return "psl"


def detect_dialect(line: str) -> Dialect:
    """Dialect of one rule line under the auto-detection rules in this module's docstring."""
    tokens = tokenize(line)
    return _detect(tokens) or _tie_break(tokens)


# --------------------------------------------------------------------------- parser


class _Parser:
    """Recursive-descent parser of one tokenized line in a fixed dialect."""

    def __init__(self, tokens: list[Token], dialect: Dialect, where: _Line) -> None:
        self.tokens = tokens
        self.pos = 0
        self.dialect = dialect
        self.where = where

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def advance(self) -> Token:
        t = self.tokens[self.pos]
        if t.kind != EOF:
            self.pos += 1
        return t

    def fail(self, problem: str, token: Token | None = None) -> ParseError:
        return self.where.error(problem, (token or self.tok).column)

    def _connective(self, t: Token) -> str | None:
        """'and' / 'or' when `t` joins two literals in this dialect, else None."""
        if t.kind == "&":
            return "and"
        if t.kind == "|":
            return "or"
        if self.dialect == "mln":
            if t.kind == "^":
                return "and"
            if t.kind == IDENT and t.text == "v":
                return "or"
        return None

    # -- grammar
    def rule(self) -> Rule:
        """rule := [weight (':' in PSL)] (formula | arithmetic) ['^' (1|2)] ['.']"""
        self._check_nesting()
        if self.tok.kind == IDENT and self.peek().kind == ":":
            raise self.fail(f"weight must be a number, got {self.tok.describe()}")
        weight, weight_tok = self.weight()
        self._refuse_unsupported()
        if self.dialect == "psl" and self._relation_at_top() is not None:
            terms, constant, relation = self.arithmetic()
            kind = "arithmetic"
        else:
            body, head, conditions = self.formula()
            kind = "logical"
        squared = False
        if self.tok.kind == "^":
            squared = self.exponent(weight_tok)
        hard = self.tok.kind == "."
        if hard:
            dot = self.advance()
            if weight_tok is not None:
                raise self.fail(
                    "a weighted rule cannot end in '.': the final '.' marks a hard constraint, "
                    "which has no weight",
                    dot,
                )
        filters: list[FilterClause] = []
        filter_tokens: list[Token] = []
        while self.tok.kind == "{" and kind == "arithmetic":
            filter_tokens.append(self.tok)
            filters.append(self.filter_clause())
        if self.tok.kind == "{":
            raise self.fail("filter clauses ({X: ...}) belong to arithmetic rules with summation atoms")
        if self.tok.kind != EOF:
            raise self.fail(f"unexpected {self.tok.describe()} after the end of the rule")
        if weight_tok is None and not hard:
            example = "'1.0: A(X) -> B(X)'" if self.dialect == "psl" else "'1.0 A(x) => B(x)'"
            raise self.fail(
                f"missing weight (e.g. {example}) or a final '.' for a hard constraint"
            )
        if kind == "arithmetic":
            self._check_summation(terms, constant, filters, filter_tokens)
            return ArithmeticRule(weight=weight, squared=squared, terms=terms, constant=constant,
                                  relation=relation, filters=tuple(filters))
        return Rule(body=body, head=head, weight=weight, squared=squared, dialect=self.dialect,
                    conditions=conditions)

    def _check_nesting(self) -> None:
        """Refuse parentheses nested deeper than `MAX_NESTING`, at the first one too deep (before any recursion)."""
        depth = 0
        for t in self.tokens:
            if t.kind == "(":
                depth += 1
                if depth > MAX_NESTING:
                    raise self.fail(f"parentheses nested more than {MAX_NESTING} deep; "
                                    f"write the rule with fewer nested groups", t)
            elif t.kind == ")":
                depth -= 1

    def _refuse_unsupported(self) -> None:
        """Name PSL constructs xcore does not support (never drop them silently)."""
        for i, t in enumerate(self.tokens):
            nxt = self.tokens[min(i + 1, len(self.tokens) - 1)]
            prev_kind = self.tokens[i - 1].kind if i else ""
            if prev_kind not in ("(", ",") and t.kind in ("+", IDENT):
                continue
            if t.kind == IDENT and nxt.kind == "(" and self._inside_atom(i):
                raise self.fail(f"functional terms ({t.text}(...) as an argument) are not supported by xcore", t)

    def _inside_atom(self, i: int) -> bool:
        """Whether token `i` lies inside the argument list of an atom."""
        depth_atoms: list[bool] = []
        for k in range(i):
            t = self.tokens[k]
            if t.kind == "(":
                depth_atoms.append(k > 0 and self.tokens[k - 1].kind == IDENT)
            elif t.kind == ")" and depth_atoms:
                depth_atoms.pop()
        return bool(depth_atoms) and depth_atoms[-1]

    def _relation_at_top(self) -> Token | None:
        """The first '=', '<=' or '>=' outside parentheses (an arithmetic rule), if any."""
        depth = 0
        for t in self.tokens[self.pos:]:
            if t.kind == "(":
                depth += 1
            elif t.kind == ")":
                depth -= 1
            elif depth == 0 and t.kind in _RELATION_KINDS:
                return t
        return None

    def weight(self) -> tuple[float | None, Token | None]:
        if self.tok.kind != NUMBER:
            return None, None
        if self.dialect == "psl" and self.peek().kind != ":":
            if self._relation_at_top() is not None:
                return None, None  # a leading coefficient of an arithmetic rule, not a weight
            raise self.fail(f"expected ':' after the weight {self.tok.text} "
                            f"(PSL: '{self.tok.text}: A(X) -> B(X)')", self.peek())
        tok = self.advance()
        value = float(tok.text)
        if not math.isfinite(value):
            raise self.fail(f"weight {tok.text} is too large (must be finite)", tok)
        if self.dialect == "psl":
            self.advance()
            if value < 0:
                raise self.fail(f"weight must be >= 0 in PSL, got {tok.text}", tok)
        elif self.tok.kind == ":":
            raise self.fail("unexpected ':' after the weight (Markov logic writes '1.5 A(x) => B(x)')")
        return value, tok

    def exponent(self, weight_tok: Token | None) -> bool:
        caret = self.advance()
        if self.dialect == "mln":
            raise self.fail("'^' followed by a number is PSL's exponent; in Markov logic '^' means 'and'", caret)
        if weight_tok is None:
            raise self.fail("'^1'/'^2' only follow a weighted rule (e.g. '1.0: A(X) ^2'); hard constraints have no exponent", caret)
        tok = self.tok
        if self._is_literal_start(tok):
            raise self.fail("PSL writes 'and' as '&'; '^' is only the exponent '^1'/'^2' at the end of a rule", caret)
        if tok.kind != NUMBER or tok.text not in ("1", "2"):
            raise self.fail(f"expected 1 or 2 after '^' (linear or squared hinge), got {tok.describe()}")
        self.advance()
        return tok.text == "2"

    # -- logical rules
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
        return t.kind in _NEGATIONS or t.kind == IDENT

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
        if self.tok.kind in (IDENT, STRING, NUMBER, "(") or self.tok.kind in _NEGATIONS:
            hint = "'&' or '|'" if self.dialect == "psl" else "'^' or 'v'"
            raise self.fail(f"expected a connective ({hint}) or the end of the rule, got {self.tok.describe()}")
        return items, joins

    def item(self, items: list, joins: list) -> None:
        """One literal, term comparison, or parenthesised group (flattened into `items`)."""
        start = self.tok
        negated = False
        while self.tok.kind in _NEGATIONS and self.dialect == "psl" and self.peek().kind == "(":
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
        if op.kind in _COMPARISON_KINDS:
            return True
        # PSL's grammar also spells != as '-' and % as '^': `(A1 - A2)`, `(A ^ B)`.
        return op.kind in _COMPARISON_ALIASES and b.kind in (IDENT, STRING, NUMBER) and after.kind != "("

    def comparison(self, negated: bool, start: Token) -> Comparison:
        left = self.term()
        op = self.advance()
        right = self.term()
        kind = _COMPARISON_ALIASES.get(op.kind, op.kind)
        if negated:
            if kind == "%":
                raise self.fail("a negated '%' comparison is not supported", start)
            kind = "==" if kind == "!=" else "!="
        return Comparison(left, kind, right)

    def literal(self) -> Literal:
        """literal := ('~' | '!')* atom"""
        negated = False
        while self.tok.kind in _NEGATIONS:
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
    def arithmetic(self) -> tuple[tuple[tuple[float, Atom], ...], float, str]:
        """arithmetic := linear relation linear, normalised to ``sum c_i a_i + constant  rel  0``."""
        left, lconst = self.linear(")")
        rel = self.tok
        if rel.kind not in _RELATION_KINDS:
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
        if self.tok.kind in _NEGATIONS:
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
        if self.tok.kind in _NEGATIONS:
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


# --------------------------------------------------------------------------- public API


def _check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}; got {dialect!r}")


def _split_lines(text: str) -> list[str]:
    """Lines of `text` split on newlines only (so quoted control characters stay inside a line)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def parse_rules(text: str, dialect: str = "auto", source: str | None = None) -> list[Rule]:
    """Parse one rule per non-empty line (``#``/``//`` comments and blank lines skipped).

    `dialect` is "psl", "mln" or "auto" (detected per line, see the module docstring).
    Errors raise ParseError naming `source`, the line within `text` and the column.
    """
    _check_dialect(dialect)
    lines = [_Line(i + 1, t, source) for i, t in enumerate(_split_lines(text))]
    tokenized: list[list[Token] | ParseError] = []
    for line in lines:
        try:
            tokenized.append(tokenize(line.text, line.number, source))
        except ParseError as e:
            tokenized.append(e)
    dialects: list[Dialect | None] = []
    for toks in tokenized:
        if isinstance(toks, ParseError) or len(toks) == 1:
            dialects.append(None)
        else:
            dialects.append(dialect if dialect != "auto" else _detect(toks))  # type: ignore[arg-type]
    decided = {d for d in dialects if d is not None}
    fallback = next(iter(decided)) if len(decided) == 1 else None
    rules: list[Rule] = []
    for line, toks, d in zip(lines, tokenized, dialects):
        if isinstance(toks, ParseError):
            raise toks
        if len(toks) == 1:  # blank or comment-only
            continue
        rules.append(_Parser(toks, d or fallback or _tie_break(toks), line).rule())
    return rules


def parse_rule(text: str, dialect: str = "auto", source: str | None = None) -> Rule:
    """Parse exactly one rule (comments allowed); see `parse_rules` for the syntax and dialects."""
    rules = parse_rules(text, dialect, source)
    if not rules:
        lines = _split_lines(text)
        raise ParseError("empty rule: expected a rule such as '1.0: A(X) -> B(X)'", 1, 1, lines[0], source)
    if len(rules) > 1:
        lines = _split_lines(text)
        second = [i for i, t in enumerate(lines) if len(tokenize(t, i + 1, source)) > 1][1]
        raise ParseError("expected one rule, found a second one", second + 1, 1, lines[second], source)
    return rules[0]


def parse_rules_file(path: str | Path, dialect: str = "auto") -> list[Rule]:
    """Read and parse a rules file (UTF-8); errors name the file, line and column."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a BOM is stripped, as the data loaders do
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read rules file: {e}", file=str(p)) from None
    return parse_rules(text, dialect, source=str(p))
