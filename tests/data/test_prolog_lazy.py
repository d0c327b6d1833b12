"""Aleph's lazy evaluation run by SWI-Prolog (`xcore.data.io.prolog_lazy`) against real Aleph: the
``[P,N]`` lists Aleph hands to a lazily evaluated definition (recorded from Aleph itself, see
tests/data/aleph_lazy/README.md), the constants it then prints, and numbers/line's regression line
from Aleph's typescript; the declarations are parsed and kept."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from xcore.data.io.prolog_engine import available
from xcore.logic.aleph_typescript import split_top

HERE = Path(__file__).parent / "aleph_lazy"
SHARED = os.environ.get("XCORE_SHARED_DATA")
needs_swipl = pytest.mark.skipif(not available(), reason="needs SWI-Prolog (swipl)")
LISTS = "gteq([P,N],lists(P,N)) :- !."
"""A lazy definition that answers the lists it is given (to compare them with Aleph's)."""


def aleph_lazy_calls() -> list[tuple[list, list, str]]:
    """(P, N, refinement) of each ``LAZY P N`` line of Aleph's trace: the lists its ``gteq([P,N],V)``
    got and the clause it built from the answer (prefix and the literal with its constant)."""
    lines = (HERE / "aleph_trace.txt").read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("LAZY "):
            continue
        p, n = line[5:].split("] [")
        chunk: list[str] = []
        for nxt in lines[i + 1:]:
            if nxt.startswith("[") and not chunk:
                continue
            chunk.append(nxt.strip())
            if nxt.rstrip().endswith("."):
                break
        out.append((ast.literal_eval(p + "]"), ast.literal_eval("[" + n), " ".join(chunk).rstrip(".")))
    return out


def _bags() -> tuple[bytes, bytes, bytes, list[tuple[str, int]]]:
    pos, neg = (HERE / "bags.f").read_bytes(), (HERE / "bags.n").read_bytes()
    exs = [(l.strip().rstrip("."), y) for data, y in ((pos, 1), (neg, 0)) for l in data.decode().splitlines() if l]
    return (HERE / "bags.b").read_bytes(), pos, neg, exs


def _task(refinement: str):
    """The refinement's clause with its last literal's constant a variable, and that literal's spec."""
    from xcore.data.io.prolog_lazy import LazyLiteral

    head, body = (x.strip() for x in refinement.split(":-"))
    lits = split_top(body)
    lits[-1] = re.sub(r",[^,()]+\)$", ",Lazy)", lits[-1])
    return f"{head} :- {', '.join(lits)}", [LazyLiteral(len(lits) - 1, (0,), (1,))]


def test_the_reference_trace_has_the_prefixes_that_matter():
    calls = aleph_lazy_calls()
    assert len(calls) == 5
    clauses = {c for _, _, c in calls}
    assert clauses == {"p(A) :- val(A,B), gteq(B,9)", "p(A) :- col(A,red), val(A,B), gteq(B,12)",
                       "p(A) :- val(A,B), val(A,C), gteq(C,9)"}


@needs_swipl
def test_lists_handed_to_the_definition_are_alephs():
    """Distinct values over the examples the prefix covers, positives and negatives apart, newest first:
    ``col(A,red)`` before ``val`` keeps the red examples' values only ([20,12,3] and [1,5,3])."""
    from xcore.data.io.prolog_lazy import lazy_constants

    bk, pos, neg, exs = _bags()
    bk = bk.replace(b"gteq([P,N],V) :- !, threshold(P,N,V).", LISTS.encode())
    calls = aleph_lazy_calls()
    got = lazy_constants(bk, pos, neg, [_task(c) for _, _, c in calls], exs)
    for (p, n, clause), found in zip(calls, got):
        assert found is not None, clause
        (value,) = found.values()
        assert value == f"lists({p},{n})".replace(" ", ""), clause


@needs_swipl
def test_constants_are_the_ones_aleph_builds():
    from xcore.data.io.prolog_lazy import lazy_constants

    bk, pos, neg, exs = _bags()
    calls = aleph_lazy_calls()
    got = lazy_constants(bk, pos, neg, [_task(c) for _, _, c in calls], exs)
    for (_, _, clause), found in zip(calls, got):
        assert found is not None
        k = len(split_top(clause.split(":-")[1])) - 1
        assert clause.endswith(f",{found[(k, 1)]})"), (clause, found)


@needs_swipl
def test_ineq_lists_and_threshold_are_alephs():
    """numbers/ineq: real Aleph (SWI-Prolog pack, commit cc6ef27) calls ``gteq([[10,9,8,5,3],[6,4,2,1]],V)``
    and gets 8; the examples' order (positives 3, 5, 8, 9, 10) makes the lists newest first."""
    from xcore.data.io.prolog_lazy import LazyLiteral, lazy_constants

    pos, neg = (3, 5, 8, 9, 10), (1, 2, 4, 6)
    exs = [(f"p({v})", 1) for v in pos] + [(f"p({v})", 0) for v in neg]
    f = "".join(f"p({v}).\n" for v in pos).encode()
    n = "".join(f"p({v}).\n" for v in neg).encode()
    bk = b"gteq(X,V) :- number(X), number(V), !, X >= V.\ngteq(X,X).\n"
    spec = [LazyLiteral(0, (0,), (1,))]
    (lists,) = lazy_constants(LISTS.encode() + b"\n" + bk, f, n, [("p(A) :- gteq(A,L)", spec)], exs)
    assert lists == {(0, 1): "lists([10,9,8,5,3],[6,4,2,1])"}
    mid = b"gteq([P,N],V) :- !, min_list(P,A), max_list(N,B), V is (A+B)/2.\n"
    (half,) = lazy_constants(mid + bk, f, n, [("p(A) :- gteq(A,L)", spec)], exs)
    assert half == {(0, 1): "4.5"}  # (3 + 6) / 2: every positive and negative value was seen


@needs_swipl
def test_refused_prefix_failing_definition_and_non_ground_answer_give_none():
    from xcore.data.io.prolog_lazy import LazyLiteral, lazy_constants

    bk = b"g([P,N],V) :- !, P = [_|_], min_list(P,V).\ng([_,_],_).\nh([_,_],_).\nq(a,1).\n"
    exs = [("p(a)", 1)]
    spec = [LazyLiteral(1, (0,), (1,))]
    tasks = [("p(A) :- shell(ls), g(A,X)", [LazyLiteral(1, (0,), (1,))]),   # the sandbox refuses the prefix
             ("p(A) :- q(A,B), g(B,X)", spec),                               # min of [1]
             ("p(A) :- q(A,B), q(B,C), g(C,X)", [LazyLiteral(2, (0,), (1,))]),  # no proof: P = [], only the unbound answer
             ("p(A) :- q(A,B), h(B,X)", spec)]                               # an unbound answer
    got = lazy_constants(bk, b"p(a).\n", b"", tasks, exs)
    assert got == [None, {(1, 1): "1"}, None, None]
    unreadable = [("p(a b)", 1), ("p(a)", 1)]  # an example Prolog cannot read adds no value, the others do
    assert lazy_constants(bk, b"p(a).\n", b"", tasks[1:2], unreadable) == [{(1, 1): "1"}]


@needs_swipl
@pytest.mark.skipif(not SHARED, reason="needs XCORE_SHARED_DATA (Aleph's examples)")
def test_numbers_line_positive_only_gives_alephs_line():
    """numbers/line: ``lin_regress1(+dep,+indep,#,#,#)`` lazily evaluated on positives only
    (``positive_only/1``): Aleph's typescript prints ``B is 2.0 * A + 0.0 +/- 0.0``."""
    from xcore.data.io.prolog_lazy import LazyLiteral, lazy_constants

    folder = Path(SHARED) / "aleph_examples" / "numbers"
    f, n = (folder / "line.f").read_bytes(), (folder / "line.n").read_bytes()
    exs = [(l.strip().rstrip("."), y) for data, y in ((f, 1), (n, 0)) for l in data.decode().splitlines() if l.strip()]
    (got,) = lazy_constants((folder / "line.b").read_bytes(), f, n,
                            [("p(A,B) :- lin_regress1(B,A,M,C,E)", [LazyLiteral(0, (0, 1), (2, 3, 4), True)])], exs)
    assert got is not None
    assert [float(got[(0, i)]) for i in (2, 3, 4)] == [2.0, 0.0, 0.0]


def test_lazy_declarations_are_read_and_written_back():
    from xcore.logic.modes import read_declarations, read_language

    text = (":- modeh(1,p(+number)).\n:- modeb(1,gteq(+number,#number)).\n:- lazy_evaluate(gteq/2).\n"
            ":- positive_only(gteq/2).\n:- lazy_evaluate(gteq/2).\nfoo(X) :- bar(X).\n")
    lang = read_declarations(text)
    assert lang is not None and lang.lazy == [("gteq", 2)] and lang.positive_only == [("gteq", 2)]
    assert read_language(lang.text()).lazy == [("gteq", 2)]
    assert ":- lazy_evaluate(" not in read_language(":- modeb(1,q(+t)).").text()  # no lazy: text as before


@pytest.mark.slow
@needs_swipl
def test_the_dataset_keeps_and_names_its_lazy_predicates():
    from xcore.data import load

    ds = load([(f"bags.{s}", (HERE / f"bags.{s}").read_bytes()) for s in ("b", "f", "n")])
    assert "lazily evaluated" in ds.description and "gteq/2" in ds.description
    assert any(":- lazy_evaluate(gteq/2)." in r for r in ds.rules)
