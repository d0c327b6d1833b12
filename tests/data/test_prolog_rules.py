"""Aleph background files that define predicates by clauses: SWI-Prolog evaluates them, with limits."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data import load
from xcore.data.shared import shared_data_dir

needs_swipl = pytest.mark.skipif(shutil.which("swipl") is None, reason="SWI-Prolog (swipl) not installed")

BACKGROUND = b"""
:- modeh(1, nfly(+animal)).
animal(dog). animal(eagle). animal(bat).
flies(eagle). flies(bat).
nfly(X) :- animal(X), \\+ flies(X).
twice(X, Y) :- animal(X), animal(Y), X @< Y.
gteq(X, V) :- number(X), number(V), X >= V.
"""


@needs_swipl
def test_rule_defined_predicates_become_facts():
    ds = load([("t.b", BACKGROUND), ("t.f", b"target(dog).\n")])
    assert sorted(ds.observations("nfly")["a0"]) == ["dog"]  # negation as failure, as in Prolog
    assert len(ds.observations("twice")) == 3
    assert "gteq" not in ds.schema.names  # an Aleph threshold helper: needs bound arguments
    assert "evaluated by SWI-Prolog" in ds.description


@needs_swipl
def test_side_effects_are_refused_and_directives_never_run(tmp_path):
    marker = tmp_path / "touched"
    bk = f"""
:- open('{marker}', write, S), close(S).
animal(dog).
leak(X) :- animal(X), open('{marker}', write, S), close(S).
loop(X) :- loop(X).
""".encode()
    ds = load([("t.b", bk), ("t.f", b"target(dog).\n")])
    assert not marker.exists()
    assert "leak" not in ds.schema.names and "refused by the sandbox" in ds.description
    assert "loop" not in ds.schema.names  # the depth/time limits stop it


def test_examples_must_stay_ground():
    from xcore.errors import DataError

    with pytest.raises(DataError, match="only ground facts") as e:
        load([("t.b", b"animal(dog).\n"), ("t.f", b"target(X).\n")])
    assert e.value.file == "t.f" and e.value.line == 1


@needs_swipl
@pytest.mark.slow
def test_all_aleph_example_problems_load():
    root = shared_data_dir() / "aleph_examples"
    if not root.is_dir():
        pytest.skip("shared data not present")
    problems = sorted(root.glob("*/*.b"))
    assert len(problems) == 21
    for b in problems:
        stem = str(b)[:-2]
        files = [(os.path.basename(f), open(f, "rb").read()) for f in (stem + ".b", stem + ".f", stem + ".n")
                 if os.path.exists(f)]
        ds = load(files)
        assert ds.predicates, b


@needs_swipl
@pytest.mark.slow
@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(["p(X) :- q(X).", "q(a).", "r(X, Y) :- q(X), \\+ q(Y).", ":- foo.", "s(X) :- s(X).",
                                 "t(X) :- X is 1 + .", "u(", "v(X) :- shell(ls).", "w([a|T]) :- w(T).", "\n"]),
                max_size=8).map(" ".join))
def test_fuzzed_backgrounds_load_or_name_the_file(text):
    from xcore.errors import DataError

    try:
        load([("t.b", text.encode()), ("t.f", b"target(a).\n")])
    except DataError as e:
        assert e.file == "t.b" and e.line is not None
