"""Aleph's saturation in Python: the depth-bounded bottom clause of one example.

Layer by layer (``i`` layers, Aleph's default 2), every body mode is called on the terms of its
input types already available, over the ground background facts; for each input binding up to
`recall` answers are kept (in fact order, as Prolog returns them), new output terms become new
variables for the next layer, ``#`` arguments keep their constants, and no literal is added twice.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from xcore.data.io.prolog_saturation import saturate_examples
from xcore.drm.clauses import Clause, Lit
from xcore.drm.problem import Problem, table_name
from xcore.logic.aleph_typescript import split_top
from xcore.logic.modes import Mode
from xcore.logic.terms import Var


def bottom_clause(problem: Problem, example: str | int, depth: int | None = None) -> Clause:
    """The bottom clause of one example (name or index) with `depth` layers (default: the language's i)."""
    return saturate(problem, example, depth)[0]


def saturate(problem: Problem, example: str | int, depth: int | None = None) -> tuple[Clause, tuple[Mode, ...]]:
    """The bottom clause of one example and the mode each body literal came from."""
    index = problem.index_of(example) if isinstance(example, str) else int(example)
    depth = problem.language.depth if depth is None else depth
    if problem.computed:
        return engine_saturate(problem, depth)[index]
    head_mode = problem.language.modeh[0]
    head_type = head_mode.args[0].type
    counter = iter(range(1 << 30))
    terms: dict[tuple[int, str], Var] = {}

    def var_of(code: int, typ: str) -> Var:
        key = (code, typ)
        if key not in terms:
            terms[key] = Var(f"V{next(counter)}")
        return terms[key]

    x = int(problem.example_codes[index])
    head = Lit(problem.target, (var_of(x, head_type),))
    known: dict[str, set[int]] = {head_type: {x}}
    newest: dict[str, set[int]] = {head_type: {x}}
    body: list[Lit] = []
    used: list[Mode] = []
    seen: set[Lit] = set()
    modes = problem.language.body_modes((problem.target, 1))
    for _layer in range(depth):
        produced: dict[str, set[int]] = {}
        for mode in modes:
            for lit, outs in _call_mode(problem, mode, known, newest, var_of):
                if lit not in seen:
                    seen.add(lit)
                    body.append(lit)
                    used.append(mode)
                for code, typ in outs:
                    if code not in known.get(typ, ()):
                        produced.setdefault(typ, set()).add(code)
        for typ, codes in produced.items():
            known.setdefault(typ, set()).update(codes)
        newest = produced
        if not newest:
            break
    return Clause(head, tuple(body)), tuple(used)


def _call_mode(problem: Problem, mode: Mode, known: dict[str, set[int]], newest: dict[str, set[int]], var_of):
    """Literals (with their output terms) of one mode over the facts whose inputs are known terms,
    at most `recall` per input binding, only for bindings that use a term from the newest layer."""
    facts = problem.tables.get(table_name(problem, mode))
    if facts is None or not len(facts):
        return []
    ins = mode.positions("+")
    if not ins:
        return []
    ok = np.ones(len(facts), dtype=bool)
    fresh = np.zeros(len(facts), dtype=bool)
    for i in ins:
        typ = mode.args[i].type
        ok &= np.isin(facts[:, i], np.fromiter(known.get(typ, ()), dtype=np.int64))
        fresh |= np.isin(facts[:, i], np.fromiter(newest.get(typ, ()), dtype=np.int64))
    rows = np.flatnonzero(ok & fresh)
    if not len(rows):
        return []
    if mode.recall is not None:
        frame = pd.DataFrame(facts[rows][:, ins], columns=[f"i{k}" for k in range(len(ins))])
        keep = frame.groupby(list(frame.columns), sort=False).head(mode.recall).index.to_numpy()
        rows = rows[keep]
    out = []
    vocab = problem.vocab
    for r in facts[rows]:
        args = []
        outs = []
        for i, a in enumerate(mode.args):
            code = int(r[i])
            if a.role == "#":
                args.append(str(vocab[code]))
            else:
                args.append(var_of(code, a.type))
                if a.role == "-":
                    outs.append((code, a.type))
        out.append((Lit(mode.predicate, tuple(args)), outs))
    return out


def engine_saturate(problem: Problem, depth: int) -> list[tuple[Clause, tuple[Mode, ...]]]:
    """Bottom clauses of every example by SWI-Prolog (`xcore.data.io.prolog_saturation`, one process,
    cached on the problem): a language with rule-defined predicates (``gteq(+number,#number)``)
    saturates as in Aleph. Literals that are not plain ``p(args)`` (operators) are left out."""
    key = ("bottoms", depth)
    if key not in problem.engine_cache:
        pos, neg = problem.example_files()
        sats = saturate_examples(problem.background, pos, neg, problem.example_atoms(), {"i": str(depth)})
        modes = {(m.predicate, m.arity): m for m in reversed(problem.language.modeb)}
        out = []
        for sat in sats:
            head_var = Var(sat.head[sat.head.index("(") + 1:-1].strip()) if "(" in sat.head else Var("A")
            body, used = [], []
            for text in sat.body:
                m = re.fullmatch(r"([a-z][A-Za-z0-9_]*)\((.*)\)", text.strip())
                if m is None:
                    continue
                args = tuple(Var(a) if re.fullmatch(r"[A-Z_][A-Za-z0-9_]*", a) else a for a in split_top(m.group(2)))
                mode = modes.get((m.group(1), len(args)))
                if mode is None:
                    continue
                body.append(Lit(m.group(1), args))
                used.append(mode)
            out.append((Clause(Lit(problem.target, (head_var,)), tuple(body)), tuple(used)))
        problem.engine_cache[key] = out
    return problem.engine_cache[key]
