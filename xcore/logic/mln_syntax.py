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

import itertools
import math
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

from xcore.errors import ParseError
from xcore.logic.ast import Atom, Comparison, Constant, Literal, Rule, Term, Variable

MAX_CLAUSES = 256
"""Most clauses one formula may expand to (CNF distribution is exponential in the worst case)."""
MAX_EXPANSION = 4096
"""Most atoms an existential or ``+x`` expansion may write into one formula."""

_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?![A-Za-z_]))
  | (?P<ident>\??[A-Za-z_][A-Za-z0-9_]*(?:!(?!=))?)
  | (?P<sym><=>|=>|=/=|!=|->|<-|[()\[\]{},.=!~^|&*@+:])
""", re.VERBOSE)
_QUANTIFIERS = {"EXIST": "exists", "EXISTS": "exists", "FORALL": "forall"}


@dataclass(frozen=True)
class Token:
    """A token: kind (ident, number, string, a symbol), text, 1-based line and column."""

    kind: str
    text: str
    line: int
    column: int


@dataclass(frozen=True)
class Declaration:
    """A predicate declaration: argument types, Tuffy's closed-world mark, functional arguments."""

    name: str
    types: tuple[str, ...]
    closed: bool = False
    functional: tuple[int, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Formula:
    """One first-order formula: syntax tree, weight (None: hard), source text and line."""

    tree: tuple
    weight: float | None
    text: str
    line: int
    fixed: bool = False
    """Tuffy's ``@w``: a weight not to be learned."""
    per_constant: tuple[str, ...] = ()
    """Variables written ``+x``: the formula stands for one formula per constant of each."""

    @property
    def is_hard(self) -> bool:
        return self.weight is None


@dataclass
class MLNProgram:
    """Declarations, domains and formulas of one ``.mln`` file (see the module docstring)."""

    declarations: dict[str, Declaration] = field(default_factory=dict)
    domains: dict[str, list[str]] = field(default_factory=dict)
    formulas: list[Formula] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str | None = None

    def variable_types(self, formula: Formula) -> dict[str, str]:
        """The type of each variable of `formula`, from the declarations of the predicates it is used in."""
        types: dict[str, str] = {}
        for atom in _atoms(formula.tree):
            decl = self.declarations.get(atom.predicate)
            if decl is None:
                raise ParseError(f"predicate {atom.predicate} is not declared", formula.line, 1,
                                 formula.text, self.source)
            if len(atom.args) != len(decl.types):
                raise ParseError(f"{atom.predicate} takes {len(decl.types)} argument(s), "
                                 f"{len(atom.args)} given", formula.line, 1, formula.text, self.source)
            for term, typ in zip(atom.args, decl.types):
                if isinstance(term, Variable):
                    if types.setdefault(term.name, typ) != typ:
                        raise ParseError(f"variable {term.name} is used as {types[term.name]} and as {typ}",
                                         formula.line, 1, formula.text, self.source)
        return types

    def type_constants(self, formulas: bool = True) -> dict[str, set[str]]:
        """Constants of each type written in the program: domain declarations and formula constants."""
        out: dict[str, set[str]] = {t: set(v) for t, v in self.domains.items()}
        for f in self.formulas if formulas else ():
            for atom in _atoms(f.tree):
                decl = self.declarations.get(atom.predicate)
                for term, typ in zip(atom.args, decl.types if decl else ()):
                    if isinstance(term, Constant):
                        out.setdefault(typ, set()).add(term.value)
        return out

    def rules(self, domains: Mapping[str, Sequence[str]] | None = None, derive: "Derive | None" = None) -> list[Rule]:
        """The program's clauses (see the module docstring); `domains` gives each type's constants
        (for ``EXIST`` and ``+x``); the program's own domain declarations are used otherwise."""
        dom = {t: sorted(v) for t, v in self.type_constants().items()}
        for t, v in (domains or {}).items():
            dom[t] = sorted(set(dom.get(t, ())) | {str(c) for c in v})
        out: list[Rule] = []
        for f in self.formulas:
            for g in self._per_constant(f, dom):
                out.extend(self._clauses(g, dom, derive))
        return out

    # ------------------------------------------------------------------ conversion
    def _per_constant(self, f: Formula, dom: Mapping[str, Sequence[str]]) -> list[Formula]:
        if not f.per_constant:
            return [f]
        types = self.variable_types(f)
        values = [dom.get(types.get(v, ""), []) for v in f.per_constant]
        if math.prod(len(v) for v in values) > MAX_EXPANSION:
            raise ParseError(f"+{f.per_constant[0]} expands to more than {MAX_EXPANSION} formulas",
                             f.line, 1, f.text, self.source)
        out = []
        for combo in itertools.product(*values):
            sub = {v: Constant(c) for v, c in zip(f.per_constant, combo)}
            tree = _substitute(f.tree, sub)
            text = f.text
            for v, c in zip(f.per_constant, combo):
                text = re.sub(r"\+\??" + re.escape(v) + r"\b", c, text)
            out.append(replace(f, tree=tree, text=text, per_constant=()))
        return out

    def _clauses(self, f: Formula, dom: Mapping[str, Sequence[str]], derive: "Derive | None" = None) -> list[Rule]:
        types = self.variable_types(f)
        tree = _expand_quantifiers(f.tree, types, dom, self, f, True, derive)
        clauses = _cnf(_nnf(tree, True), self, f)
        weight = f.weight
        if weight is not None and len(clauses) > 1:
            negated = _cnf(_nnf(tree, False), self, f)
            if len(negated) == 1:
                clauses, weight = negated, -weight
            else:
                weight = weight / len(clauses)
        rules = []
        for clause in clauses:
            lits = [l for l in clause if l[0] == "lit"]
            conds = tuple(_condition(l) for l in clause if l[0] in ("eq", "neq"))
            if any(c is True for c in conds):  # a literal true in every grounding: the clause is constant
                continue
            conds = tuple(c for c in conds if c is not False)
            if not lits:
                continue
            seen: dict[Literal, None] = {}
            for l in lits:
                seen.setdefault(Literal(l[1], l[2]))
            rules.append(Rule(body=(), head=tuple(seen), weight=weight, dialect="mln", name=f.text,
                              conditions=conds))
        return rules


# ---------------------------------------------------------------------- syntax trees
# ("lit", Atom, negated) | ("eq", t, t) | ("neq", t, t) | ("not", x) | ("and", [..]) | ("or", [..])
# | ("imp", a, b) | ("iff", a, b) | ("exists", (vars), body) | ("forall", (vars), body) | ("true",) | ("false",)


def _atoms(tree: tuple) -> Iterable[Atom]:
    kind = tree[0]
    if kind == "lit":
        yield tree[1]
    elif kind in ("not",):
        yield from _atoms(tree[1])
    elif kind in ("and", "or"):
        for t in tree[1]:
            yield from _atoms(t)
    elif kind in ("imp", "iff"):
        yield from _atoms(tree[1])
        yield from _atoms(tree[2])
    elif kind in ("exists", "forall"):
        yield from _atoms(tree[2])


def _sub_term(t: Term, sub: Mapping[str, Term]) -> Term:
    return sub.get(t.name, t) if isinstance(t, Variable) else t


def _substitute(tree: tuple, sub: Mapping[str, Term]) -> tuple:
    kind = tree[0]
    if kind == "lit":
        a = tree[1]
        return ("lit", Atom(a.predicate, tuple(_sub_term(t, sub) for t in a.args)), tree[2])
    if kind in ("eq", "neq"):
        return (kind, _sub_term(tree[1], sub), _sub_term(tree[2], sub))
    if kind == "not":
        return ("not", _substitute(tree[1], sub))
    if kind in ("and", "or"):
        return (kind, [_substitute(t, sub) for t in tree[1]])
    if kind in ("imp", "iff"):
        return (kind, _substitute(tree[1], sub), _substitute(tree[2], sub))
    if kind in ("exists", "forall"):
        inner = {k: v for k, v in sub.items() if k not in tree[1]}
        return (kind, tree[1], _substitute(tree[2], inner))
    return tree


Derive = Callable[[Atom, frozenset], "Atom | None"]
"""``derive(atom, bound)``: for an atom of a closed predicate under an existential over `bound`
variables, an atom of a closed predicate holding exactly where ``EXIST bound atom`` holds by the
evidence (its projection), or None to expand the existential over the domain instead."""


def _expand_quantifiers(tree: tuple, types: Mapping[str, str], dom: Mapping[str, Sequence[str]],
                        prog: MLNProgram, f: Formula, positive: bool = True, derive: Derive | None = None) -> tuple:
    """Quantifiers become disjunctions (EXIST) or conjunctions (FORALL) over their variables'
    domains: exact for hard and soft formulas alike (a soft formula counts its groundings over its
    free variables only). An existential disjunct that is one atom of a closed predicate is
    replaced by `derive`'s projection of the evidence when one is given (no expansion)."""
    def rec(t: tuple, pos: bool = positive) -> tuple:
        return _expand_quantifiers(t, types, dom, prog, f, pos, derive)

    kind = tree[0]
    if kind == "not":
        return ("not", rec(tree[1], not positive))
    if kind in ("and", "or"):
        return (kind, [rec(t) for t in tree[1]])
    if kind == "imp":
        return ("imp", rec(tree[1], not positive), rec(tree[2]))
    if kind == "iff":
        if _has_quantifier(tree):  # each side occurs with both polarities
            a, b = tree[1], tree[2]
            return rec(("and", [("imp", a, b), ("imp", b, a)]))
        return tree
    if kind in ("exists", "forall"):
        names, body = tree[1], tree[2]
        existential = (kind == "exists") == positive
        if existential and derive is not None:
            body = _derive_disjuncts(body, frozenset(names), derive, positive)
            if not (set(names) & {v.name for a in _atoms(body) for v in a.variables}):
                return rec(body)
        values = []
        for v in names:
            typ = types.get(v)
            if typ is None:
                raise ParseError(f"{'EXIST' if kind == 'exists' else 'FORALL'} variable {v} does not occur in an atom",
                                 f.line, 1, f.text, prog.source)
            if not dom.get(typ):
                return ("false",) if kind == "exists" else ("true",)
            values.append(dom[typ])
        n_atoms = sum(1 for _ in _atoms(body))
        if math.prod(len(v) for v in values) * max(n_atoms, 1) > MAX_EXPANSION:
            raise ParseError(f"{' '.join(names)} expands to more than {MAX_EXPANSION} atoms",
                             f.line, 1, f.text, prog.source)
        parts = [_substitute(body, {v: Constant(c) for v, c in zip(names, combo)})
                 for combo in itertools.product(*values)]
        return ("or" if kind == "exists" else "and", [rec(p) for p in parts])
    return tree


def _derive_disjuncts(body: tuple, bound: frozenset, derive: Derive, positive: bool) -> tuple:
    """EXIST distributes over the disjuncts of its body: each closed-predicate atom disjunct (in the
    polarity that makes it a positive atom) becomes its derived projection."""
    parts = body[1] if body[0] == ("or" if positive else "and") else [body]
    out = []
    for part in parts:
        lit = part if positive else (part[1] if part[0] == "not" else None)
        if lit is not None and lit[0] == "lit" and not lit[2]:
            got = derive(lit[1], bound)
            if got is not None:
                new = ("lit", got, False)
                out.append(new if positive else ("not", new))
                continue
        out.append(part)
    if len(out) == 1:
        return out[0]
    return (body[0], out) if len(parts) > 1 else out[0]


def _has_quantifier(tree: tuple) -> bool:
    kind = tree[0]
    if kind in ("exists", "forall"):
        return True
    if kind == "not":
        return _has_quantifier(tree[1])
    if kind in ("and", "or"):
        return any(_has_quantifier(t) for t in tree[1])
    if kind in ("imp", "iff"):
        return _has_quantifier(tree[1]) or _has_quantifier(tree[2])
    return False


def _nnf(tree: tuple, positive: bool) -> tuple:
    """Negation normal form of `tree` (or of its negation): only and/or over literals remain."""
    kind = tree[0]
    if kind == "lit":
        return ("lit", tree[1], tree[2] != (not positive))
    if kind in ("eq", "neq"):
        flip = {"eq": "neq", "neq": "eq"}
        return (kind if positive else flip[kind], tree[1], tree[2])
    if kind == "true":
        return ("true",) if positive else ("false",)
    if kind == "false":
        return ("false",) if positive else ("true",)
    if kind == "not":
        return _nnf(tree[1], not positive)
    if kind in ("and", "or"):
        op = kind if positive else {"and": "or", "or": "and"}[kind]
        return (op, [_nnf(t, positive) for t in tree[1]])
    if kind == "imp":
        return _nnf(("or", [("not", tree[1]), tree[2]]), positive)
    if kind == "iff":
        a, b = tree[1], tree[2]
        return _nnf(("and", [("or", [("not", a), b]), ("or", [a, ("not", b)])]), positive)
    raise ValueError(f"unexpected node {kind}")  # quantifiers are expanded before


def _cnf(tree: tuple, prog: MLNProgram, f: Formula) -> list[list[tuple]]:
    """Clauses (lists of literal nodes) of an NNF tree, by distribution; tautologies dropped."""
    kind = tree[0]
    if kind in ("lit", "eq", "neq"):
        return [[tree]]
    if kind == "true":
        return []
    if kind == "false":
        return [[]]
    parts = [_cnf(t, prog, f) for t in tree[1]]
    if kind == "and":
        out = [c for p in parts for c in p]
    else:
        out = [[]]
        for p in parts:
            if math.prod((len(out), len(p))) > MAX_CLAUSES:
                raise ParseError(f"formula has more than {MAX_CLAUSES} clauses in conjunctive normal form",
                                 f.line, 1, f.text, prog.source)
            out = [a + b for a in out for b in p]
    if len(out) > MAX_CLAUSES:
        raise ParseError(f"formula has more than {MAX_CLAUSES} clauses in conjunctive normal form",
                         f.line, 1, f.text, prog.source)
    return [c for c in out if not _tautology(c)]


def _tautology(clause: list[tuple]) -> bool:
    lits = {(l[1], l[2]) for l in clause if l[0] == "lit"}
    return any((a, not n) in lits for a, n in lits)


def _condition(node: tuple) -> Comparison | bool:
    """A clause's equality literal as a grounding filter: the clause matters only where it is false."""
    kind, a, b = node
    if isinstance(a, Constant) and isinstance(b, Constant):
        return (a.value == b.value) == (kind == "eq")  # literal's own truth
    return Comparison(a, "!=" if kind == "eq" else "==", b)


# ---------------------------------------------------------------------- tokenizer


def _strip_comments(text: str, source: str | None) -> str:
    """Blank out ``//`` and ``/* */`` comments, keeping line and column positions."""
    out, i, n = [], 0, len(text)
    quote = None
    while i < n:
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == quote or ch == "\n":
                quote = None
            i += 1
            continue
        if ch in "\"'":
            quote = ch
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                col = i - (text.rfind("\n", 0, i) + 1) + 1
                raise ParseError("unterminated /* comment", line, col, text.splitlines()[line - 1], source)
            chunk = text[i:j + 2]
            out.append("".join(c if c == "\n" else " " for c in chunk))
            i = j + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize_line(text: str, line: int, source: str | None = None) -> list[Token]:
    """Tokens of one line (comments already removed)."""
    out, i = [], 0
    while i < len(text):
        m = _TOKEN_RE.match(text, i)
        if m is None:
            raise ParseError(f"unexpected character {text[i]!r}", line, i + 1, text, source)
        kind = m.lastgroup or "sym"
        if kind != "ws":
            out.append(Token(m.group() if kind == "sym" else kind, m.group(), line, i + 1))
        i = m.end()
    return out


# ---------------------------------------------------------------------- parser


class _Parser:
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
        if t.kind == "ident" and t.text in _QUANTIFIERS:
            self.pos += 1
            names = [self._variable_name(self.take("ident", "a variable after " + t.text))]
            while self.at(","):
                self.pos += 1
                names.append(self._variable_name(self.take("ident", "a variable")))
            body = self.formula()
            return (_QUANTIFIERS[t.text], tuple(names), body)
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
            return Constant(_unquote(t.text))
        if t.kind == "number":
            return Constant(t.text)
        if t.kind == "ident" and not t.text.endswith("!"):
            if t.text.startswith("?"):
                return Variable(t.text[1:])
            if not self.prac and (t.text[0].islower() or t.text[0] == "_"):
                return Variable(t.text)
            return Constant(t.text)
        raise self.fail(f"expected a variable or constant, got {t.text!r}", t)


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), body)


def _statements(text: str) -> list[tuple[int, str]]:
    """(line number, text) of each statement: one per line, joined with the next lines while
    brackets are open or the line ends in a connective (long formulas wrapped over lines)."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for n, raw in enumerate(text.split("\n"), 1):
        if not pending and not raw.strip():
            continue
        if not pending:
            first = n
        pending.append(raw.rstrip())
        joined = "\n".join(pending)
        depth = sum(joined.count(c) for c in "({") - sum(joined.count(c) for c in ")}")
        words = joined.split()
        if (depth > 0 or words[-1] in _CONTINUES) and len(pending) < 200 and not joined.lstrip().startswith("#"):
            continue
        out.append((first, joined))
        pending = []
    if pending:
        out.append((first, "\n".join(pending)))
    return out


_CONTINUES = ("^", "v", "=>", "<=>", "|", "&", "->")


def _tokens(stmt: str, first_line: int, source: str | None) -> list[Token]:
    toks: list[Token] = []
    for k, line in enumerate(stmt.split("\n")):
        toks.extend(tokenize_line(line, first_line + k, source))
    return toks


def parse_mln(text: str, source: str | None = None) -> MLNProgram:
    """Parse a ``.mln`` program (see the module docstring); bad input raises `ParseError`."""
    clean = _strip_comments(text.replace("\r\n", "\n").replace("\r", "\n"), source)
    prac = bool(re.search(r"(?<![A-Za-z0-9_])\?[A-Za-z_]", clean))
    prog = MLNProgram(source=source)
    for line_no, stmt in _statements(clean):
        lines_text = text.replace("\r\n", "\n").replace("\r", "\n")
        if stmt.lstrip().startswith("#"):
            prog.notes.append(f"line {line_no}: directive {stmt.strip().split()[0]} ignored")
            continue
        toks = _tokens(stmt, line_no, source)
        if not toks:
            continue
        parser = _Parser(toks, lines_text, source, prac)
        if _parse_domain(parser, prog) or _parse_declaration(parser, prog):
            continue
        prog.formulas.append(_parse_formula(parser, prog, stmt))
    return prog


def _parse_domain(p: _Parser, prog: MLNProgram) -> bool:
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
        values.append(_unquote(v.text) if v.kind == "string" else v.text)
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


def _parse_declaration(p: _Parser, prog: MLNProgram) -> bool:
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


def _parse_formula(p: _Parser, prog: MLNProgram, stmt: str) -> Formula:
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
    text = _join_tokens(t[start:end])
    text = text.rstrip(" .")
    if weight == -math.inf:  # pracmln's logx(0): the formula never holds
        tree, weight, text, hard = ("not", tree), None, f"!({text})", True
    elif not hard and weight is None:
        prog.notes.append(f"line {first.line}: formula without weight or '.' given weight 0")
        weight = 0.0
    return Formula(tree, None if hard else weight, text, first.line, fixed, tuple(p.per_constant))


def _join_tokens(toks: Sequence[Token]) -> str:
    """Canonical text of a token run: ``F(x, y) => (S(x) <=> !S(y))``."""
    out = ""
    prev: Token | None = None
    for tok in toks:
        tight = prev is None or tok.kind in (")", ",") or prev.kind in ("(", "!", "~", "+") \
            or (tok.kind == "(" and prev.kind == "ident" and prev.text not in _QUANTIFIERS and prev.text != "v")
        out += ("" if tight else " ") + tok.text
        if tok.kind == ",":
            out += " "
            prev = Token("(", "", 0, 0)  # no second space after the comma
            continue
        prev = tok
    return out


def _weight(p: _Parser, tok: Token) -> float:
    w = float(tok.text)
    if not math.isfinite(w):
        raise p.fail("weight must be a finite number", tok)
    return w


# ---------------------------------------------------------------------- evidence (.db)


@dataclass(frozen=True)
class EvidenceAtom:
    """One line of a ``.db`` file: a ground atom, its truth (1, 0 or a soft probability) and line."""

    predicate: str
    args: tuple[str, ...]
    value: float
    line: int
    soft: bool = False


def parse_db(text: str, source: str | None = None) -> tuple[list[EvidenceAtom], dict[str, list[str]]]:
    """Atoms of an evidence file (``Smokes(A)``, ``!Smokes(A)``, Tuffy's ``0.8 Smokes(A)``) and any
    domain declarations (``person = {A, B}``) in it. Bad lines raise `ParseError`."""
    clean = _strip_comments(text.replace("\r\n", "\n").replace("\r", "\n"), source)
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    atoms: list[EvidenceAtom] = []
    domains: dict[str, list[str]] = {}
    for n, line in enumerate(clean.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        toks = tokenize_line(line, n, source)
        p = _Parser(toks, "\n".join(raw_lines), source, prac=True)
        dom = MLNProgram(source=source)
        if _parse_domain(p, dom):
            for k, v in dom.domains.items():
                domains.setdefault(k, []).extend(v)
            continue
        p.pos = 0
        value, soft = 1.0, False
        if p.at("number"):
            value, soft = float(p.tok.text), True  # type: ignore[union-attr]
            if not 0.0 <= value <= 1.0:
                raise p.fail("soft evidence must be a probability in [0, 1]", toks[0])
            p.pos += 1
        if p.at("!", "~"):
            if soft:
                raise p.fail("soft evidence takes a positive atom", p.tok)
            value = 0.0
            p.pos += 1
        t = p.tok
        if t is None or t.kind != "ident" or p.pos + 1 >= len(toks) or toks[p.pos + 1].kind != "(":
            raise p.fail("expected a ground atom such as Smokes(Anna), !Smokes(Anna) or 0.8 Smokes(Anna)")
        lit = p.atom()
        if p.tok is not None and p.at("."):
            p.pos += 1
        if p.tok is not None:
            raise p.fail(f"unexpected {p.tok.text!r} after the atom")
        args = []
        for term in lit[1].args:
            if isinstance(term, Variable):
                raise p.fail("evidence atoms are ground: no ?variables or +variables", t)
            args.append(term.value)
        atoms.append(EvidenceAtom(lit[1].predicate, tuple(args), value, n, soft and value not in (0.0, 1.0)))
    return atoms, domains
