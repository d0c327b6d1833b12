"""Syntax trees of Markov-logic formulas: substitution, quantifier expansion, NNF and CNF.

syntax trees
# ("lit", Atom, negated) | ("eq", t, t) | ("neq", t, t) | ("not", x) | ("and", [..]) | ("or", [..])
# | ("imp", a, b) | ("iff", a, b) | ("exists", (vars), body) | ("forall", (vars), body) | ("true",) | ("false",)
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from xcore.errors import ParseError
from xcore.logic.ast import Atom, Comparison, Constant, Term, Variable

if TYPE_CHECKING:  # the program module imports this one
    from xcore.logic.mln_program import Formula, MLNProgram

MAX_CLAUSES = 256
"""Most clauses one formula may expand to (CNF distribution is exponential in the worst case)."""
MAX_EXPANSION = 4096
"""Most atoms an existential or ``+x`` expansion may write into one formula."""



def tree_atoms(tree: tuple) -> Iterable[Atom]:
    kind = tree[0]
    if kind == "lit":
        yield tree[1]
    elif kind in ("not",):
        yield from tree_atoms(tree[1])
    elif kind in ("and", "or"):
        for t in tree[1]:
            yield from tree_atoms(t)
    elif kind in ("imp", "iff"):
        yield from tree_atoms(tree[1])
        yield from tree_atoms(tree[2])
    elif kind in ("exists", "forall"):
        yield from tree_atoms(tree[2])


def _sub_term(t: Term, sub: Mapping[str, Term]) -> Term:
    return sub.get(t.name, t) if isinstance(t, Variable) else t


def substitute(tree: tuple, sub: Mapping[str, Term]) -> tuple:
    kind = tree[0]
    if kind == "lit":
        a = tree[1]
        return ("lit", Atom(a.predicate, tuple(_sub_term(t, sub) for t in a.args)), tree[2])
    if kind in ("eq", "neq"):
        return (kind, _sub_term(tree[1], sub), _sub_term(tree[2], sub))
    if kind == "not":
        return ("not", substitute(tree[1], sub))
    if kind in ("and", "or"):
        return (kind, [substitute(t, sub) for t in tree[1]])
    if kind in ("imp", "iff"):
        return (kind, substitute(tree[1], sub), substitute(tree[2], sub))
    if kind in ("exists", "forall"):
        inner = {k: v for k, v in sub.items() if k not in tree[1]}
        return (kind, tree[1], substitute(tree[2], inner))
    return tree


Derive = Callable[[Atom, frozenset], "Atom | None"]
"""``derive(atom, bound)``: for an atom of a closed predicate under an existential over `bound`
variables, an atom of a closed predicate holding exactly where ``EXIST bound atom`` holds by the
evidence (its projection), or None to expand the existential over the domain instead."""


def expand_quantifiers(tree: tuple, types: Mapping[str, str], dom: Mapping[str, Sequence[str]],
                        prog: MLNProgram, f: Formula, positive: bool = True, derive: Derive | None = None) -> tuple:
    """Quantifiers become disjunctions (EXIST) or conjunctions (FORALL) over their variables'
    domains: exact for hard and soft formulas alike (a soft formula counts its groundings over its
    free variables only). An existential disjunct that is one atom of a closed predicate is
    replaced by `derive`'s projection of the evidence when one is given (no expansion)."""
    def rec(t: tuple, pos: bool = positive) -> tuple:
        return expand_quantifiers(t, types, dom, prog, f, pos, derive)

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
            if not (set(names) & {v.name for a in tree_atoms(body) for v in a.variables}):
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
        n_atoms = sum(1 for _ in tree_atoms(body))
        if math.prod(len(v) for v in values) * max(n_atoms, 1) > MAX_EXPANSION:
            raise ParseError(f"{' '.join(names)} expands to more than {MAX_EXPANSION} atoms",
                             f.line, 1, f.text, prog.source)
        parts = [substitute(body, {v: Constant(c) for v, c in zip(names, combo)})
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


def to_nnf(tree: tuple, positive: bool) -> tuple:
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
        return to_nnf(tree[1], not positive)
    if kind in ("and", "or"):
        op = kind if positive else {"and": "or", "or": "and"}[kind]
        return (op, [to_nnf(t, positive) for t in tree[1]])
    if kind == "imp":
        return to_nnf(("or", [("not", tree[1]), tree[2]]), positive)
    if kind == "iff":
        a, b = tree[1], tree[2]
        return to_nnf(("and", [("or", [("not", a), b]), ("or", [a, ("not", b)])]), positive)
    raise ValueError(f"unexpected node {kind}")  # quantifiers are expanded before


def to_cnf(tree: tuple, prog: MLNProgram, f: Formula) -> list[list[tuple]]:
    """Clauses (lists of literal nodes) of an NNF tree, by distribution; tautologies dropped."""
    kind = tree[0]
    if kind in ("lit", "eq", "neq"):
        return [[tree]]
    if kind == "true":
        return []
    if kind == "false":
        return [[]]
    parts = [to_cnf(t, prog, f) for t in tree[1]]
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


def condition_of(node: tuple) -> Comparison | bool:
    """A clause's equality literal as a grounding filter: the clause matters only where it is false."""
    kind, a, b = node
    if isinstance(a, Constant) and isinstance(b, Constant):
        return (a.value == b.value) == (kind == "eq")  # literal's own truth
    return Comparison(a, "!=" if kind == "eq" else "==", b)


