"""Aleph's ``lazy_evaluate/1`` in DRM's features: the constant of a lazily evaluated literal
(``gteq(A,#number)`` in numbers/ineq) is not the bottom clause's; the background's own definition
computes it from the values the literal's variables take on the training examples the feature's
earlier literals cover (``gteq([P,N],V)`` finds a threshold V from positive values P and negative
values N), as Aleph does during its search.

While drawing, a lazy literal's ``#`` arguments are a placeholder (`mark_lazy`), so draws that
differ only in the bottom clause's constant are one feature (their computed constant is the same:
it depends on the other literals and the examples only). After drawing, one SWI-Prolog process
computes every feature's constants (`xcore.data.io.prolog_lazy`), batched per feature over all
examples; features whose definition gives no constant are dropped (Aleph drops the refinement),
and features that became equal are kept once. The problem's examples are the training examples
(`DRMEstimator.fit` sees only the training part), so held-out examples never set a constant.
"""

from __future__ import annotations

from xcore.data.io.prolog_lazy import LazyLiteral, lazy_constants
from xcore.drm.clauses import Clause, Lit, equivalent, reduce_clause, signature
from xcore.drm.problem import Problem
from xcore.logic.modes import Mode
from xcore.logic.terms import Var

PLACEHOLDER = "'$lazy'"
"""Stands for a lazily evaluated constant until it is computed (never sent to coverage)."""


def lazy_mode(problem: Problem, lit: Lit) -> Mode | None:
    """The body mode of a lazily evaluated literal, or None when `lit` is not lazy."""
    if lit.key not in problem.lazy:
        return None
    return next((m for m in problem.language.modeb if m.key == lit.key), None)


def mark_lazy(problem: Problem, clause: Clause) -> Clause:
    """The clause with each lazy literal's ``#`` arguments replaced by `PLACEHOLDER` (unchanged when
    the problem has no lazy predicates)."""
    if not problem.lazy or not any(l.key in problem.lazy for l in clause.body):
        return clause
    body = []
    for lit in clause.body:
        mode = lazy_mode(problem, lit)
        if mode is not None:
            consts = set(mode.positions("#"))
            lit = Lit(lit.pred, tuple(PLACEHOLDER if i in consts else a for i, a in enumerate(lit.args)))
        body.append(lit)
    return Clause(clause.head, tuple(body))


def has_placeholder(clause: Clause) -> bool:
    return any(a == PLACEHOLDER for l in clause.body for a in l.args)


def _task(problem: Problem, clause: Clause) -> tuple[Clause, list[LazyLiteral]]:
    """The clause with a fresh variable at each placeholder, and its lazy literals."""
    fresh = iter(range(1 << 30))
    body, specs = [], []
    for k, lit in enumerate(clause.body):
        if PLACEHOLDER not in lit.args:
            body.append(lit)
            continue
        mode = lazy_mode(problem, lit)
        assert mode is not None
        consts = tuple(i for i, a in enumerate(lit.args) if a == PLACEHOLDER)
        bound = tuple(i for i in range(len(lit.args)) if i in mode.positions("+") + mode.positions("-"))
        body.append(Lit(lit.pred, tuple(Var(f"Lazy_{next(fresh)}") if a == PLACEHOLDER else a for a in lit.args)))
        specs.append(LazyLiteral(k, bound, consts, lit.key in problem.positive_only))
    return Clause(clause.head, tuple(body)), specs


def instantiate_lazy(problem: Problem, clauses: list[Clause]) -> list[Clause]:
    """`clauses` with their lazy constants computed from the problem's (training) examples, in order;
    those without a constant dropped, and each clause equivalent to an earlier one dropped."""
    todo = [j for j, c in enumerate(clauses) if has_placeholder(c)]
    if not todo:
        return list(clauses)
    tasks = [_task(problem, clauses[j]) for j in todo]
    pos, neg = problem.example_files()
    answers = lazy_constants(problem.background, pos, neg, [(c.text(), specs) for c, specs in tasks],
                             list(zip(problem.example_atoms(), problem.labels.tolist())))
    done: dict[int, Clause | None] = {}
    for j, (clause, specs), found in zip(todo, tasks, answers):
        done[j] = None if found is None else _filled(clauses[j], specs, found)
    out: list[Clause] = []
    buckets: dict[tuple, list[Clause]] = {}
    for j, c in enumerate(clauses):
        filled = done[j] if j in done else c
        if filled is None:
            continue
        filled = reduce_clause(filled)
        bucket = buckets.setdefault(signature(filled), [])
        if any(equivalent(filled, other) for other in bucket):
            continue
        bucket.append(filled)
        out.append(filled)
    return out


def _filled(clause: Clause, specs: list[LazyLiteral], found: dict[tuple[int, int], str]) -> Clause | None:
    """The clause with each placeholder replaced by its computed constant (None if one is missing)."""
    body = list(clause.body)
    for s in specs:
        lit = body[s.literal]
        args = list(lit.args)
        for i in s.constants:
            if (s.literal, i) not in found:
                return None
            args[i] = found[(s.literal, i)]
        body[s.literal] = Lit(lit.pred, tuple(args))
    return Clause(clause.head, tuple(body))
