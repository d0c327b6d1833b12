"""Bottom clauses built by SWI-Prolog on Aleph's own example problems against the bottom clauses in
Aleph's typescripts, literal for literal up to variable renaming; arithmetic helpers (gteq/2 with
`#` constants) saturate as in Aleph; the typescript reader and the renaming check themselves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xcore.data.io.prolog_engine import available
from xcore.logic.aleph_typescript import bottom_clauses, predicate_of, same_up_to_renaming, split_top

SHARED = os.environ.get("XCORE_SHARED_DATA")
needs_swipl = pytest.mark.skipif(not available(), reason="needs SWI-Prolog (swipl)")

GUESS = b""":- modeh(1,p(+number)).
:- modeb(*,gteq(+number,#number)).
:- determination(p/1,gteq/2).
gteq(X,Value):- number(X), number(Value), !, X >= Value.
gteq(X,Y):- number(X), var(Y), !, guess(X,Y).
guess(X,Y):- Y is X.
guess(X,Y):- Y is 2*X.
guess(X,Y):- Y is 3*X.
"""


def test_renaming_check_accepts_renamings_and_rejects_the_rest():
    assert same_up_to_renaming("p(A)", ["q(A,B)", "r(B)"], "p(X)", ["r(Y)", "q(X,Y)"]) == {"A": "X", "B": "Y"}
    assert same_up_to_renaming("p(A)", ["q(A,B)", "r(B)"], "p(X)", ["q(X,Y)", "r(Z)"]) is None  # B must be one var
    assert same_up_to_renaming("p(A)", ["q(A,B)", "q(A,C)"], "p(X)", ["q(X,Y)", "q(X,Y)"]) is None  # bijection
    assert same_up_to_renaming("p(A)", ["s(A,2)"], "p(X)", ["s(X,3)"]) is None  # constants must agree
    assert same_up_to_renaming("m(A,B)", ["B=[A|C]"], "m(X,Y)", ["Y=[X|Z]"]) is not None
    assert split_top("a(X,[1,2]), b('x,y'), c") == ["a(X,[1,2])", "b('x,y')", "c"]
    assert predicate_of("B=[A|C]") == "=" and predicate_of("gteq(A,9)") == "gteq"


def test_typescript_reader_finds_problem_example_and_settings():
    text = ("   ?- read_all(guess).\r\n   ?- set(i,3).\r\n   ?- sat(1).\r\n[sat] [1]\r\n[p(3)]\r\n\r\n"
            "[bottom clause]\r\np(A) :-\r\n   gteq(A,9), gteq(A,6),\r\n   gteq(A,3).\r\n[literals] [4]\r\n")
    (c,) = bottom_clauses(text)
    assert (c.stem, c.example, c.head, c.body, c.settings) == (
        "guess", "p(3)", "p(A)", ["gteq(A,9)", "gteq(A,6)", "gteq(A,3)"], {"i": "3"})


@needs_swipl
def test_arithmetic_helper_with_constants_saturates_as_aleph():
    """Aleph's numbers/guess: gteq(3, Y) unbound answers 3, 6, 9 (recall *): three literals."""
    from xcore.data.io.prolog_saturation import saturate_examples

    (s,) = saturate_examples(GUESS, b"p(3).\np(9).\n", b"p(1).\n", ["p(3)"])
    assert s.head == "p(A)" and sorted(s.body) == ["gteq(A,3)", "gteq(A,6)", "gteq(A,9)"]


@needs_swipl
def test_directives_are_data_and_unsafe_goals_are_refused():
    from xcore.data.io.prolog_saturation import saturate_examples

    bk = (b":- shell('touch pwned').\n:- modeh(1,p(+t)).\n:- modeb(1,q(+t,#t)).\n:- determination(p/1,q/2).\n"
          b"q(X,Y) :- shell('touch pwned2'), Y = X.\n")
    (s,) = saturate_examples(bk, b"p(a).\n", b"", ["p(a)"])
    assert s.body == [] and any("refused" in p for p in s.problems)


# Aleph typescripts whose bottom clauses depend on the interactive session, not on the files:
SESSION = {
    ("gcws", "ab0(4)"), ("gcws", "ab1(100)"), ("gcws", "ab2(400)"),  # sphyp invents ab/1 and its determinations
    ("interactive", "mem(1,[2,1])"),  # examples the user typed during induce_clauses
    ("abduce", "grandparent(dad(mum(bob)),bob)"), ("abduce", "parent(mum(mum(bob)),bob)"),  # abduced parent/2 atoms
}
PORTRAYED = {"portray", "numbers"}  # set(portray_literals, true): Aleph printed English, not literals


@needs_swipl
@pytest.mark.slow
@pytest.mark.skipif(not SHARED, reason="needs XCORE_SHARED_DATA (Aleph's examples)")
def test_bottom_clauses_match_aleph_typescripts():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from aleph_bottom_clauses import compare_folder

    root = Path(SHARED) / "aleph_examples"
    rows = [r for f in sorted(p.parent for p in root.glob("*/typescript")) for r in compare_folder(f)]
    checked = 0
    for r in rows:
        if (r["folder"], r["example"]) in SESSION or (r["folder"] in PORTRAYED and " if:" in r["aleph_clause"]) \
                or r["aleph_clause"].startswith("Train "):
            continue
        assert r["match"], (r["folder"], r["example"], r["aleph_clause"], r["our_clause"])
        assert r["order"], (r["folder"], r["example"])  # the same predicates in the same order (modes, layers)
        checked += 1
    assert checked >= 118


COVER_FOLDERS = ("abduce", "features", "good", "numbers", "recursion", "refine", "trains")
"""Folders whose first search's covers depend on the files only (constraints counts violations of
`false` constraints, gcws and interactive depend on the session, portray prints English)."""


@needs_swipl
@pytest.mark.slow
@pytest.mark.skipif(not SHARED, reason="needs XCORE_SHARED_DATA (Aleph's examples)")
def test_clause_coverage_matches_aleph_covers():
    """Every clause Aleph evaluated in the first search of a session, with its [P/N] cover: our
    coverage (SWI-Prolog, batched per clause) gives the same counts, gteq/2 thresholds included."""
    from xcore.data.io.prolog_saturation import clause_coverage
    from xcore.logic.aleph_typescript import first_search_labels

    root = Path(SHARED) / "aleph_examples"
    checked = 0
    for name in COVER_FOLDERS:
        folder = root / name
        by_stem: dict[str, list] = {}
        for lab in first_search_labels((folder / "typescript").read_text(errors="replace")):
            if " if:" not in lab.clause:  # portrayed (numbers/line, miline)
                by_stem.setdefault(lab.stem, []).append(lab)
        for stem, labs in by_stem.items():
            read = lambda s: (folder / f"{stem}.{s}").read_bytes() if (folder / f"{stem}.{s}").exists() else b""  # noqa: E731
            atoms = lambda s: [x.strip().rstrip(".") for x in read(s).decode().splitlines()  # noqa: E731
                               if x.strip() and not x.lstrip().startswith("%")]
            pos, neg = atoms("f"), atoms("n")
            cover = clause_coverage(read("b"), read("f"), read("n"), [l.clause for l in labs], pos + neg)
            for row, lab in zip(cover, labs):
                assert (int(row[:len(pos)].sum()), int(row[len(pos):].sum())) == (lab.positives, lab.negatives), \
                    (name, stem, lab.clause)
                checked += 1
    assert checked >= 140
