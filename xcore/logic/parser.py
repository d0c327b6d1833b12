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
from pathlib import Path

from xcore.errors import DataError, ParseError
from xcore.logic.ast import (
    ArithmeticRule,
    Dialect,
    FilterClause,
    Rule,
)
from xcore.logic.parser_arithmetic import RELATION_KINDS, ArithmeticParsing
from xcore.logic.parser_formula import FormulaParsing
from xcore.logic.tokens import (
    EOF,
    IDENT,
    NUMBER,
    SourceLine,
    Token,
    implied_dialect,
    tie_break,
    tokenize,
)

DIALECTS: tuple[str, ...] = ("auto", "psl", "mln")

MAX_NESTING = 100
"""Deepest parenthesis nesting a rule may have: the parser recurses once or twice per level, so a
bound keeps a hostile line (100,000 opening parentheses) from exhausting Python's stack."""


# --------------------------------------------------------------------------- parser


class _Parser(FormulaParsing, ArithmeticParsing):
    """Recursive-descent parser of one tokenized line in a fixed dialect."""

    def __init__(self, tokens: list[Token], dialect: Dialect, where: SourceLine) -> None:
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
            elif depth == 0 and t.kind in RELATION_KINDS:
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
    lines = [SourceLine(i + 1, t, source) for i, t in enumerate(_split_lines(text))]
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
            dialects.append(dialect if dialect != "auto" else implied_dialect(toks))  # type: ignore[arg-type]
    decided = {d for d in dialects if d is not None}
    fallback = next(iter(decided)) if len(decided) == 1 else None
    rules: list[Rule] = []
    for line, toks, d in zip(lines, tokenized, dialects):
        if isinstance(toks, ParseError):
            raise toks
        if len(toks) == 1:  # blank or comment-only
            continue
        rules.append(_Parser(toks, d or fallback or tie_break(toks), line).rule())
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
