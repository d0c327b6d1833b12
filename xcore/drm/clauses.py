"""Definite clauses over variables and constants, theta-subsumption, reduction and equivalence.

A literal is ``Lit(predicate, args)`` whose arguments are `Var`s or constant strings. Clauses are
short (feature definitions), so subsumption is a plain backtracking matcher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from xcore.logic.terms import Var

Arg = Var | str


@dataclass(frozen=True)
class Lit:
    """One literal: a predicate name and its arguments (variables or constant strings)."""

    pred: str
    args: tuple[Arg, ...]

    @property
    def key(self) -> tuple[str, int]:
        return (self.pred, len(self.args))

    def variables(self) -> list[Var]:
        return [a for a in self.args if isinstance(a, Var)]

    def text(self) -> str:
        return f"{self.pred}({','.join(a.name if isinstance(a, Var) else _const(a) for a in self.args)})" \
            if self.args else self.pred


def _const(c: str) -> str:
    return c


@dataclass(frozen=True)
class Clause:
    """A definite clause ``head :- body`` (body is a tuple of literals, possibly empty)."""

    head: Lit
    body: tuple[Lit, ...]

    def text(self, head_name: str | None = None) -> str:
        """Prolog text with variables renamed A, B, C ... in order of first appearance."""
        names = variable_names(self)
        head = _render(self.head, names, head_name)
        if not self.body:
            return f"{head}."
        return f"{head} :- {', '.join(_render(l, names) for l in self.body)}."

    def body_text(self) -> str:
        names = variable_names(self)
        return ", ".join(_render(l, names) for l in self.body)

    def __len__(self) -> int:
        return len(self.body)


def variable_names(clause: Clause) -> dict[Var, str]:
    """Aleph-style names A, B, ..., Z, A1, ... for the clause's variables by first appearance."""
    out: dict[Var, str] = {}
    for lit in (clause.head, *clause.body):
        for a in lit.args:
            if isinstance(a, Var) and a not in out:
                i = len(out)
                out[a] = chr(65 + i % 26) + (str(i // 26) if i >= 26 else "")
    return out


def _render(lit: Lit, names: dict[Var, str], pred: str | None = None) -> str:
    args = ",".join(names[a] if isinstance(a, Var) else a for a in lit.args)
    return f"{pred or lit.pred}({args})" if lit.args else (pred or lit.pred)


# ---------------------------------------------------------------------- subsumption
def subsumes(c: Clause, d: Clause) -> dict[Var, Arg] | None:
    """A substitution theta with c.theta a subset of d (heads mapped onto heads), or None."""
    theta: dict[Var, Arg] = {}
    if not _match(c.head, d.head, theta):
        return None
    by_pred: dict[tuple[str, int], list[Lit]] = {}
    for lit in d.body:
        by_pred.setdefault(lit.key, []).append(lit)
    # most constrained first: fewest candidates, then most constants
    order = sorted(c.body, key=lambda l: (len(by_pred.get(l.key, ())), -sum(isinstance(a, str) for a in l.args)))
    if any(l.key not in by_pred for l in order):
        return None
    return _search(order, 0, by_pred, theta)


def _match(a: Lit, b: Lit, theta: dict[Var, Arg]) -> bool:
    """Extend theta in place so that a.theta == b; on failure theta may be partly extended."""
    if a.key != b.key:
        return False
    for x, y in zip(a.args, b.args):
        if isinstance(x, Var):
            bound = theta.get(x)
            if bound is None:
                theta[x] = y
            elif bound != y:
                return False
        elif x != y:
            return False
    return True


def _search(lits: list[Lit], i: int, by_pred: dict, theta: dict[Var, Arg]) -> dict[Var, Arg] | None:
    if i == len(lits):
        return dict(theta)
    for cand in by_pred[lits[i].key]:
        trial = dict(theta)
        if _match(lits[i], cand, trial):
            found = _search(lits, i + 1, by_pred, trial)
            if found is not None:
                return found
    return None


def equivalent(c: Clause, d: Clause) -> bool:
    """Subsumption-equivalence: each clause theta-subsumes the other."""
    return subsumes(c, d) is not None and subsumes(d, c) is not None


def reduce_clause(c: Clause) -> Clause:
    """Plotkin's reduction: drop body literals while the clause stays subsumption-equivalent."""
    body = list(c.body)
    i = len(body) - 1
    while i >= 0:
        shorter = Clause(c.head, tuple(body[:i] + body[i + 1:]))
        if subsumes(Clause(c.head, tuple(body)), shorter) is not None:
            body = list(shorter.body)
        i -= 1
    return Clause(c.head, tuple(body))


def rename(c: Clause, mapping: dict[Var, Arg]) -> Clause:
    """The clause with variables substituted by `mapping` (others unchanged)."""
    def sub(l: Lit) -> Lit:
        return Lit(l.pred, tuple(mapping.get(a, a) if isinstance(a, Var) else a for a in l.args))
    return Clause(sub(c.head), tuple(sub(l) for l in c.body))


def signature(c: Clause) -> tuple:
    """A renaming-invariant summary (sorted predicates with their constants) for bucketing clauses."""
    return tuple(sorted((l.pred, tuple(a if isinstance(a, str) else "" for a in l.args)) for l in c.body))


def variant_of_any(c: Clause, others: Iterable[Clause]) -> bool:
    """Whether `c` is subsumption-equivalent to one of `others`."""
    return any(equivalent(c, o) for o in others)
