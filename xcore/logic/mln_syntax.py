"""Markov logic programs as Alchemy, Tuffy and pracmln write them: declarations, formulas, CNF.

A program (`parse_mln`) holds

* predicate declarations ``Friends(person, person)``; Tuffy's ``*Friends(...)`` marks a
  closed-world predicate; a ``!`` after a type (``has_sense(word, sense!)``) marks pracmln's
  functional argument (recorded in `Declaration.functional`);
* domain declarations ``person = {Anna, Bob}``;
* formulas: a weight before (``1.5 F``, Tuffy's fixed ``@5 F``, pracmln's ``logx(0.9) F`` = log 0.9)
  or after (``F 1.5``), or none with a final ``.`` (hard). Connectives, loosest first:
  ``<=>``, ``=>``, ``v``/``|``, ``^``/``&``, ``!``/``~``; parentheses; ``EXIST y F`` / ``FORALL y F``
  (scope to the right as far as possible); terms ``x`` (variable, lower-case), ``Anna`` (constant),
  ``"text"``, numbers, pracmln's ``?w`` variables (then bare names are constants, as in pracmln's
  PRAC grammar) and ``+x`` / ``+?r`` (one formula per constant of x's domain, each with its own
  weight); ``x = y``, ``x != y`` and pracmln's ``x =/= y``;
* ``#`` directives (``#fuzzy``, ``#unique{...}``, ``#include``) are kept as notes, not applied.

Clauses (`MLNProgram.rules`): existentials are expanded over the domain of their variable, ``+x``
formulas over theirs; each formula is put in negation normal form (``<=>`` and ``=>`` expanded)
and converted to CNF by distribution. A soft formula whose CNF is one clause keeps its weight; one
whose negation is one clause (a conjunction, ``A ^ B``) becomes that clause with the weight negated
(exact: ``w [F] = w - w [not F]``); otherwise its k clauses get ``w / k`` each, Alchemy's
convention. Hard formulas give hard clauses. Equality literals become grounding filters (the
clause's `conditions`). Every clause keeps the text of its first-order formula in ``Rule.name``:
the formula stays the unit of explanation.

Every problem raises `ParseError` with the source, line and column.
"""

from __future__ import annotations

import math
import re

from xcore.errors import ParseError
from xcore.logic.ast import Atom, Constant, Term, Variable
from xcore.logic.mln_program import Declaration, Formula, MLNProgram
from xcore.logic.mln_tokens import (
    QUANTIFIERS,
    Token,
    join_tokens,
    split_statements,
    statement_tokens,
    strip_comments,
    unquote,
)

# ---------------------------------------------------------------------- parser


class Parser:
    """Recursive descent over the tokens of one statement."""

    def __init__(self, tokens: list[Token], text: str, source: str | None, prac: bool) -> None:
        self.toks, self.pos, self.text, self.source, self.prac = tokens, 0, text, source, prac
        self.per_constant: list[str] = []

    @property
    def tok(self) -> Token | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def fail(self, problem: str, tok: Token | None = None) -> ParseError:
        t = tok or self.tok
        if t is None:
            last = self.toks[-1] if self.toks else None
            line = last.line if last else 1
            col = (last.column + len(last.text)) if last else 1
            return ParseError(problem + " (at the end of the formula)", line, col, self._line(line), self.source)
        return ParseError(problem, t.line, t.column, self._line(t.line), self.source)

    def _line(self, line: int) -> str:
        lines = self.text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def at(self, *kinds: str) -> bool:
        t = self.tok
        return t is not None and (t.kind in kinds or (t.kind == "ident" and t.text in kinds))

    def take(self, kind: str, what: str) -> Token:
        if not self.at(kind):
            got = repr(self.tok.text) if self.tok else "the end of the formula"
            raise self.fail(f"expected {what}, got {got}")
        t = self.tok
        self.pos += 1
        return t  # type: ignore[return-value]

    # formula := iff
    def formula(self) -> tuple:
        left = self.implication()
        while self.at("<=>"):
            self.pos += 1
            left = ("iff", left, self.implication())
        return left

    def implication(self) -> tuple:
        left = self.disjunction()
        if self.at("=>", "->"):
            self.pos += 1
            return ("imp", left, self.implication())
        return left

    def disjunction(self) -> tuple:
        parts = [self.conjunction()]
        while self.at("v", "|"):
            self.pos += 1
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def conjunction(self) -> tuple:
        parts = [self.unary()]
        while self.at("^", "&"):
            self.pos += 1
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def unary(self) -> tuple:
        t = self.tok
        if t is None:
            raise self.fail("expected an atom, '!' or '('")
        if t.kind in ("!", "~"):
            self.pos += 1
            return ("not", self.unary())
        if t.kind == "(":
            self.pos += 1
            inner = self.formula()
            self.take(")", "')'")
            return inner
        if t.kind == "ident" and t.text in QUANTIFIERS:
            self.pos += 1
            names = [self._variable_name(self.take("ident", "a variable after " + t.text))]
            while self.at(","):
                self.pos += 1
                names.append(self._variable_name(self.take("ident", "a variable")))
            body = self.formula()
            return (QUANTIFIERS[t.text], tuple(names), body)
        if t.kind == "ident" and not t.text.endswith("!") and self.pos + 1 < len(self.toks) \
                and self.toks[self.pos + 1].kind == "(":
            return self.atom()
        if t.kind in ("ident", "string", "number", "+"):
            left = self.term()
            if self.at("=", "!=", "=/="):
                op = self.tok.kind  # type: ignore[union-attr]
                self.pos += 1
                right = self.term()
                return ("eq" if op == "=" else "neq", left, right)
            raise self.fail("expected an atom such as Smokes(x) or a comparison x = y", t)
        raise self.fail(f"expected an atom, '!' or '(', got {t.text!r}", t)

    def atom(self) -> tuple:
        name = self.take("ident", "a predicate name")
        self.take("(", "'('")
        args: list[Term] = []
        if not self.at(")"):
            args.append(self.term())
            while self.at(","):
                self.pos += 1
                args.append(self.term())
        self.take(")", "')' or ','")
        return ("lit", Atom(name.text, tuple(args)), False)

    def _variable_name(self, t: Token) -> str:
        return t.text[1:] if t.text.startswith("?") else t.text

    def term(self) -> Term:
        t = self.tok
        if t is None:
            raise self.fail("expected a term")
        if t.kind == "+":
            self.pos += 1
            v = self.take("ident", "a variable after '+'")
            name = self._variable_name(v)
            if not (v.text.startswith("?") or (not self.prac and (name[0].islower() or name[0] == "_"))):
                raise self.fail("'+' must precede a variable", v)
            if name not in self.per_constant:
                self.per_constant.append(name)
            return Variable(name)
        self.pos += 1
        if t.kind == "string":
            return Constant(unquote(t.text))
        if t.kind == "number":
            return Constant(t.text)
        if t.kind == "ident" and not t.text.endswith("!"):
            if t.text.startswith("?"):
                return Variable(t.text[1:])
            if not self.prac and (t.text[0].islower() or t.text[0] == "_"):
                return Variable(t.text)
            return Constant(t.text)
        raise self.fail(f"expected a variable or constant, got {t.text!r}", t)


def parse_mln(text: str, source: str | None = None) -> MLNProgram:
    """Parse a ``.mln`` program (see the module docstring); bad input raises `ParseError`."""
    clean = strip_comments(text.replace("\r\n", "\n").replace("\r", "\n"), source)
    prac = bool(re.search(r"(?<![A-Za-z0-9_])\?[A-Za-z_]", clean))
    prog = MLNProgram(source=source)
    for line_no, stmt in split_statements(clean):
        lines_text = text.replace("\r\n", "\n").replace("\r", "\n")
        if stmt.lstrip().startswith("#"):
            prog.notes.append(f"line {line_no}: directive {stmt.strip().split()[0]} ignored")
            continue
        toks = statement_tokens(stmt, line_no, source)
        if not toks:
            continue
        parser = Parser(toks, lines_text, source, prac)
        if parse_domain(parser, prog) or _parse_declaration(parser, prog):
            continue
        prog.formulas.append(_parse_formula(parser, prog, stmt))
    return prog


def parse_domain(p: Parser, prog: MLNProgram) -> bool:
    """``type = {A, B, C}``: a domain declaration."""
    t = p.toks
    if len(t) < 3 or t[0].kind != "ident" or t[1].kind != "=" or t[2].kind != "{":
        return False
    p.pos = 3
    values: list[str] = []
    while not p.at("}"):
        v = p.tok
        if v is None or v.kind not in ("ident", "number", "string"):
            raise p.fail("expected a constant or '}' in the domain declaration")
        values.append(unquote(v.text) if v.kind == "string" else v.text)
        p.pos += 1
        if p.at(","):
            p.pos += 1
        elif not p.at("}"):
            raise p.fail("expected ',' or '}' in the domain declaration")
    p.pos += 1
    if p.tok is not None:
        raise p.fail("unexpected text after the domain declaration")
    prog.domains.setdefault(t[0].text, [])
    prog.domains[t[0].text].extend(v for v in values if v not in prog.domains[t[0].text])
    return True


def _parse_declaration(p: Parser, prog: MLNProgram) -> bool:
    """``[*]Name(type, type!)`` alone on its line, for a predicate not declared before."""
    t = p.toks
    star = bool(t) and t[0].kind == "*"
    i = 1 if star else 0
    if len(t) < i + 3 or t[i].kind != "ident" or t[i + 1].kind != "(" or t[-1].kind != ")":
        if star:
            raise p.fail("'*' (closed world) must precede a predicate declaration such as *Friends(person, person)",
                         t[0])
        return False
    if t[i].text in prog.declarations and not star:
        return False
    inner = t[i + 2:-1]
    if any(x.kind not in ("ident", ",") for x in inner) or any(x.text.startswith("?") for x in inner):
        if star:
            raise p.fail("a declaration lists argument types: *Name(type, type)", t[0])
        return False
    types = [x for x in inner if x.kind == "ident"]
    if len(inner) != max(2 * len(types) - 1, 0) or any(inner[k].kind != "," for k in range(1, len(inner), 2)):
        raise p.fail("a declaration lists argument types separated by commas", inner[0] if inner else t[i])
    if t[i].text in prog.declarations:
        raise p.fail(f"predicate {t[i].text} is declared twice", t[i])
    functional = tuple(k for k, x in enumerate(types) if x.text.endswith("!"))
    prog.declarations[t[i].text] = Declaration(t[i].text, tuple(x.text.rstrip("!") for x in types), star,
                                               functional, t[i].line)
    return True


_LOGX = re.compile(r"logx\(", re.I)


def _parse_formula(p: Parser, prog: MLNProgram, stmt: str) -> Formula:
    """A weighted, hard or unweighted formula statement."""
    t = p.toks
    weight: float | None = None
    fixed = False
    first = t[0]
    if first.kind == "@":
        p.pos = 1
        weight = _weight(p, p.take("number", "a weight after '@'"))
        fixed = True
    elif first.kind == "number" and len(t) > 1:
        p.pos = 1
        weight = _weight(p, first)
    elif first.kind == "ident" and first.text.lower() == "logx" and len(t) > 3 and t[1].kind == "(":
        p.pos = 2
        num = p.take("number", "a probability in logx(...)")
        p.take(")", "')'")
        prob = float(num.text)
        if not 0.0 <= prob:
            raise p.fail("logx needs a non-negative number", num)
        weight = math.log(prob) if prob > 0 else -math.inf
    start = p.pos
    tree = p.formula()
    end = p.pos
    hard = False
    if p.at("."):
        dot = p.tok
        p.pos += 1
        hard = True
        if weight is not None and weight != -math.inf:
            raise p.fail("a formula ending in '.' is hard and takes no weight", dot)
    elif weight is None and p.tok is not None and p.tok.kind == "number":
        weight = _weight(p, p.tok)
        p.pos += 1
    if p.tok is not None:
        raise p.fail(f"unexpected {p.tok.text!r} after the formula")
    text = join_tokens(t[start:end])
    text = text.rstrip(" .")
    if weight == -math.inf:  # pracmln's logx(0): the formula never holds
        tree, weight, text, hard = ("not", tree), None, f"!({text})", True
    elif not hard and weight is None:
        prog.notes.append(f"line {first.line}: formula without weight or '.' given weight 0")
        weight = 0.0
    return Formula(tree, None if hard else weight, text, first.line, fixed, tuple(p.per_constant))


def _weight(p: Parser, tok: Token) -> float:
    w = float(tok.text)
    if not math.isfinite(w):
        raise p.fail("weight must be a finite number", tok)
    return w


