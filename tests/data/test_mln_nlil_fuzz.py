"""Issue 30's parsers under mutation: a Markov logic program with its evidence (Tuffy/Alchemy/pracmln
syntax: types, closed-world star, weights before or after, hard formulas, `<=>`, `EXIST`, negated and
soft evidence) and an NLIL folder (pred.txt, fact.txt, valid.txt, test.txt). A mutated input loads or
raises an xcore error naming the file and the line, never another exception (the loader fuzz suite's
mutations and check, applied to these formats)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_loader_fuzz import _check_load, mutation

from xcore.data.io import load
from xcore.errors import DataError

PROGRAM = b"""// people, smoking and cancer
*Friends(person, person)
Smokes(person)
Cancer(person)
Knows(person, person)

0.5 Smokes(x) => Cancer(x)
Friends(x, y) => (Smokes(x) <=> Smokes(y))  0.8
Friends(x, y) ^ Friends(y, z) => Friends(x, z).
EXIST y Knows(x, y) v !Smokes(x)  1.1
-0.3 Cancer(x)
"""
EVIDENCE = b"""Friends(Anna, Bob)
Friends(Bob, Anna)
Friends(Bob, Carl)
Smokes(Anna)
!Smokes(Dora)
0.8 Knows(Carl, Dora)
Cancer(Anna)
"""
NLIL = {"evensucc/pred.txt": b"even(int)\nsucc(int,int)\nzero(int)\n",
        "evensucc/fact.txt": b"1\tzero(n0)\n1\tsucc(n0,n1)\n1\tsucc(n1,n2)\n1\tsucc(n2,n3)\n1\tsucc(n3,n4)\n1\teven(n0)\n",
        "evensucc/valid.txt": b"1\teven(n2)\n0\teven(n1)\n",
        "evensucc/test.txt": b"1\teven(n4)\n0\teven(n3)\n"}
INPUTS = {"markov_logic": {"smokers/smokers.mln": PROGRAM, "smokers/evidence.db": EVIDENCE}, "nlil": NLIL}

FUZZ = settings(derandomize=True, max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_the_unmutated_inputs_load():
    mln = load(INPUTS["markov_logic"])
    assert {p.name for p in mln.schema} == {"Friends", "Smokes", "Cancer", "Knows"}
    assert set(mln.target_predicates) == {"Smokes", "Cancer", "Knows"}  # Friends is closed-world (*)
    nlil = load(INPUTS["nlil"])
    with pytest.raises(DataError) as info:  # a query file naming an undeclared predicate: its file and line
        load({**INPUTS["markov_logic"], "smokers/query.db": b"Smokes(x)\nFriend(x, y)\n"})
    assert info.value.file == "smokers/query.db" and info.value.line == 2
    assert {p.name for p in nlil.schema} == {"even", "succ", "zero"}


@pytest.mark.parametrize("kind", sorted(INPUTS))
@FUZZ
@given(data=st.data())
def test_mutated_inputs_raise_only_xcore_errors_naming_file_and_line(kind: str, data) -> None:
    files = dict(INPUTS[kind])
    target = data.draw(st.sampled_from(sorted(files)))
    files[target] = data.draw(mutation(files[target]))
    _check_load(files)


@pytest.mark.parametrize("bad, where", [
    (b"Smokes(person)\n0.5 Smokes(x) => \n", 2),
    (b"Smokes(person)\n0.5 Smokes(x) ^ (Cancer(x)\n", 2),
    (b"Smokes(person)\nCancer(person)\n\n1.0 Smokes(x) <=> Cancer(x, y)\n", 4),  # arity (was loaded)
    (b"Smokes(person)\n1.0 Smokes(x) => Cancer(x)\n", 2),  # undeclared predicate (was loaded)
])
def test_a_broken_formula_names_its_file_and_line(bad: bytes, where: int) -> None:
    """Also formulas that parse but use a predicate the program does not declare, or with another arity:
    they were loaded and failed only later, in the method."""
    with pytest.raises(DataError) as info:
        load({"p/p.mln": bad, "p/e.db": b"Smokes(Anna)\n"})
    assert info.value.file is not None and info.value.file.endswith("p.mln") and info.value.line == where
