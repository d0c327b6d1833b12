"""The .mln/.db parsers: syntax, CNF conversion, semantics against brute-force enumeration of the
first-order formulas (independent of the clause conversion), and fuzzed bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data import load
from xcore.errors import DataError, ParseError
from xcore.logic.ast import Constant, Variable
from xcore.logic.mln_evidence import parse_db
from xcore.logic.mln_syntax import parse_mln
from xcore.mln.model import MLNModel

SMOKERS = """
// declarations
*Friends(person, person)
Smokes(person)
Cancer(person)

1.5 Smokes(x) => Cancer(x)
1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)
-0.7 Cancer(x) ^ Smokes(x)
Smokes(x) v !Smokes(x) 0.3
"""


def test_declarations_domains_and_weights():
    prog = parse_mln(SMOKERS + "person = {Anna, Bob}\n@2 Cancer(Anna)\nlogx(0.5) Smokes(x)\nCancer(x) => Smokes(x).\n")
    assert prog.declarations["Friends"].closed and not prog.declarations["Smokes"].closed
    assert prog.declarations["Friends"].types == ("person", "person")
    assert prog.domains == {"person": ["Anna", "Bob"]}
    w = [f.weight for f in prog.formulas]
    assert w[:4] == [1.5, 1.1, -0.7, 0.3] and w[4] == 2.0 and prog.formulas[4].fixed
    assert w[5] == pytest.approx(math.log(0.5)) and w[6] is None


def test_cnf_of_equivalence_and_conjunction():
    prog = parse_mln("F(p, p)\nS(p)\n1.2 F(x, y) => (S(x) <=> S(y))\n-0.7 S(x) ^ F(x, x)\n")
    rules = prog.rules()
    iff = [r for r in rules if r.name.startswith("F(x, y) =>")]
    assert len(iff) == 2 and all(r.weight == pytest.approx(0.6) for r in iff)  # Alchemy: w / k
    texts = sorted(sorted(l.text("mln") for l in r.head) for r in iff)
    assert texts == [["!F(x, y)", "!S(x)", "S(y)"], ["!F(x, y)", "!S(y)", "S(x)"]]
    conj = [r for r in rules if r.name.startswith("S(x) ^")]
    assert len(conj) == 1 and conj[0].weight == pytest.approx(0.7)  # w [A ^ B] = w - w [!A v !B]
    assert sorted(l.text("mln") for l in conj[0].head) == ["!F(x, x)", "!S(x)"]


def test_exist_expands_over_the_domain_and_plus_over_constants():
    prog = parse_mln("A(p, q)\nB(p)\nC(p, q)\n0.5 EXIST y A(x, y) v B(x)\n1 C(x, +y)\n")
    rules = prog.rules({"q": ["U", "V"], "p": ["K"]})
    ex = [r for r in rules if r.name.startswith("EXIST")][0]
    assert sorted(l.text("mln") for l in ex.head) == ["A(x, U)", "A(x, V)", "B(x)"]
    per = [r for r in rules if r.name.startswith("C(")]
    assert sorted(r.name for r in per) == ["C(x, U)", "C(x, V)"]


def test_pracmln_grammar_and_inequality():
    prog = parse_mln("r(word, role!)\nrole = {theme, goal}\n0.4 r(?w1, theme) ^ r(?w2, goal) ^ ?w1 =/= ?w2\n")
    assert prog.declarations["r"].functional == (1,)
    (rule,) = prog.rules()
    args = {a for l in rule.head for a in l.atom.args}
    assert Variable("w1") in args and Constant("theme") in args
    assert [c.op for c in rule.conditions] == ["!="]


def test_db_atoms_negation_and_soft_evidence():
    atoms, domains = parse_db("Friends(Anna, Bob)\n!Smokes(Bob)\n0.8 Smokes(Anna)\n// c\nperson = {Cid}\n")
    assert [(a.predicate, a.args, a.value, a.soft) for a in atoms] == [
        ("Friends", ("Anna", "Bob"), 1.0, False), ("Smokes", ("Bob",), 0.0, False), ("Smokes", ("Anna",), 0.8, True)]
    assert domains == {"person": ["Cid"]}


# ---------------------------------------------------------------- semantics against enumeration

def _evaluate(tree, world, sub, domains, types):
    """Truth of a formula tree in a world (dict atom text -> bool), by its own first-order meaning."""
    kind = tree[0]
    if kind == "lit":
        a = tree[1]
        args = [sub[t.name] if isinstance(t, Variable) else t.value for t in a.args]
        v = world(a.predicate, tuple(args))
        return (not v) if tree[2] else v
    if kind in ("eq", "neq"):
        l, r = (sub[t.name] if isinstance(t, Variable) else t.value for t in tree[1:])
        return (l == r) == (kind == "eq")
    if kind == "not":
        return not _evaluate(tree[1], world, sub, domains, types)
    if kind == "and":
        return all(_evaluate(t, world, sub, domains, types) for t in tree[1])
    if kind == "or":
        return any(_evaluate(t, world, sub, domains, types) for t in tree[1])
    if kind == "imp":
        return (not _evaluate(tree[1], world, sub, domains, types)) or _evaluate(tree[2], world, sub, domains, types)
    if kind == "iff":
        return _evaluate(tree[1], world, sub, domains, types) == _evaluate(tree[2], world, sub, domains, types)
    if kind in ("exists", "forall"):
        combos = itertools.product(*(domains[types[v]] for v in tree[1]))
        test = any if kind == "exists" else all
        return test(_evaluate(tree[2], world, {**sub, **dict(zip(tree[1], c))}, domains, types) for c in combos)
    raise AssertionError(kind)


def _free(tree, bound=()):
    kind = tree[0]
    if kind == "lit":
        return {t.name for t in tree[1].args if isinstance(t, Variable)} - set(bound)
    if kind in ("eq", "neq"):
        return {t.name for t in tree[1:] if isinstance(t, Variable)} - set(bound)
    if kind == "not":
        return _free(tree[1], bound)
    if kind in ("and", "or"):
        return set().union(*(_free(t, bound) for t in tree[1]))
    if kind in ("imp", "iff"):
        return _free(tree[1], bound) | _free(tree[2], bound)
    return _free(tree[2], (*bound, *tree[1]))


def brute_force_marginals(prog, ds, hard_weight=20.0):
    """P(atom) for every target atom by enumerating worlds and counting true formula groundings."""
    queries, truth, p = brute_force_worlds(prog, ds, hard_weight)
    return dict(zip(queries, (p @ truth).tolist()))


def brute_force_worlds(prog, ds, hard_weight=20.0):
    """(query atom texts, worlds x atoms truth matrix, world probabilities) by enumeration."""
    domains = {t: [str(c) for c in ds.constants(t)] for t in ds.types()}
    obs = {}
    for p in ds.predicates:
        for row in ds.observations(p.name).itertuples(index=False):
            obs[(p.name, tuple(str(x) for x in row[:p.arity]))] = float(row[p.arity]) >= 0.5
    queries = [(p.name, tuple(str(x) for x in row[:p.arity])) for p in ds.predicates
               for row in ds.targets(p.name).itertuples(index=False)]
    assert len(queries) <= 14
    grounded = []
    for f in prog.formulas:
        types = prog.variable_types(f)
        free = sorted(_free(f.tree))
        w = hard_weight if f.weight is None else f.weight
        for combo in itertools.product(*(domains[types[v]] for v in free)):
            grounded.append((f.tree, dict(zip(free, combo)), w, types))
    logw, truth = [], []
    for bits in itertools.product([False, True], repeat=len(queries)):
        assign = dict(zip(queries, bits))
        world = lambda p, a: assign.get((p, a), obs.get((p, a), False))  # noqa: E731
        logw.append(sum(w for tree, sub, w, types in grounded if _evaluate(tree, world, sub, domains, types)))
        truth.append(bits)
    logw, truth = np.array(logw), np.array(truth, dtype=float)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    return [f"{q[0]}({', '.join(q[1])})" for q in queries], truth, p


PROGRAM = """
*Friends(person, person)
Smokes(person)
Cancer(person)
Knows(person, person)
*Likes(person, person)
1.5 Smokes(x) => Cancer(x)
0.9 Smokes(x) => EXIST y Likes(x, y)
-0.4 Cancer(x) ^ !(EXIST z Likes(z, x))
0.8 Friends(x, y) ^ Smokes(x) => Smokes(y)
-0.7 Cancer(x) ^ Smokes(x)
0.6 EXIST y Knows(x, y) v Cancer(x)
1.1 Knows(x, y) ^ x =/= y
Cancer(x) => Smokes(x).
"""
EVIDENCE = "Likes(Anna, Bob)\nFriends(Anna, Bob)\nSmokes(Anna)\n!Cancer(Bob)\nKnows(Anna, Anna)\n!Knows(Bob, Bob)\n!Knows(Bob, Anna)\n"


def test_marginals_match_enumeration_of_the_first_order_formulas():
    """Every soft formula here is one clause or a conjunction, so the clause network is exact."""
    ds = load([("p.mln", PROGRAM.encode()), ("e.db", EVIDENCE.encode())])
    prog = parse_mln(PROGRAM)
    want = brute_force_marginals(prog, ds)
    model = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact")
    got = dict(zip(model.marginals()["atom"], model.marginals()["marginal"]))
    assert set(got) == set(want)
    for atom, p in want.items():
        assert got[atom] == pytest.approx(p, abs=1e-6), atom


def test_soft_evidence_is_a_unit_formula_on_the_atom():
    ds = load([("p.mln", b"Smokes(person)\n"), ("e.db", b"0.8 Smokes(Anna)\n")])
    model = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact")
    assert float(model.marginals()["marginal"].iloc[0]) == pytest.approx(0.8)


def test_explanation_items_name_their_first_order_formula():
    ds = load([("p.mln", b"F(p, p)\nS(p)\n1.2 F(x, y) => (S(x) <=> S(y))\n"), ("e.db", b"F(A, B)\nS(A)\n")])
    model = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact")
    exp = model.explain("S(B)")
    assert exp.items and {i.extras["formula"] for i in exp.items} == {"F(x, y) => (S(x) <=> S(y))"}


# ---------------------------------------------------------------- bad input: file, line, column

@pytest.mark.parametrize("text, line, column", [
    ("A(p)\n1.0 A(x) =>\n", 2, 12),
    ("A(p)\n*1.0 A(x)\n", 2, 1),
    ("A(p)\n1.0 A(x) $ A(y)\n", 2, 10),
    ("A(p)\n/* open\n", 2, 1),
    ("A(p)\n1.0 A(x).\n", 2, 9),
])
def test_bad_programs_name_line_and_column(text, line, column):
    with pytest.raises(ParseError) as e:
        parse_mln(text, "bad.mln")
    assert (e.value.line, e.value.column, e.value.source) == (line, column, "bad.mln")


def test_bad_evidence_through_load_names_file_and_line():
    with pytest.raises(DataError) as e:
        load([("p.mln", b"A(p)\n"), ("e.db", b"A(X)\nA(Y\n")])
    assert e.value.file == "e.db" and e.value.line == 2 and "column" in str(e.value)
    with pytest.raises(DataError, match="not declared"):
        load([("p.mln", b"A(p)\n"), ("e.db", b"B(X)\n")])


_ALPHABET = st.sampled_from(list("AaBxy(),.!^v=>< *@?+{}#/\n0123456789-EXIST") + [" v ", "=>", "<=>", "EXIST "])


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_fuzzed_programs_parse_or_fail_with_a_position(text):
    try:
        prog = parse_mln("A(p)\nB(p, p)\n" + text, "f.mln")
        prog.rules({"p": ["K", "L"]})
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1 and e.source == "f.mln"


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_fuzzed_evidence_loads_or_fails_with_file_and_line(text):
    try:
        load([("p.mln", b"A(p)\nB(p, p)\n"), ("e.db", text.encode())])
    except DataError as e:
        assert e.file in ("e.db", "p.mln") and (e.line is None or e.line >= 1)


NARY = """
Adv(person, person)
*Prof(person)
{w1} Adv(x, y) => Prof(y)
{w2} Adv(x, y) => Adv(y, x)
"""


def test_nary_query_importance_matches_enumeration():
    """M-Explain on binary query atoms: each ground formula's score is E[n_f | Q] - E[n_f] computed by
    brute-force enumeration of the first-order program's worlds."""
    evidence = b"Prof(B)\nProf(C)\n!Adv(A, C)\n"
    text = NARY.format(w1=1.2, w2=-0.8)
    ds = load([("p.mln", text.encode()), ("e.db", evidence)])
    queries, truth, prob = brute_force_worlds(parse_mln(text), ds)
    index = {q: k for k, q in enumerate(queries)}
    model = MLNModel("\n".join(ds.rules)).ground(ds).infer("exact")
    mln = model.mln_
    names = mln.atoms_text()
    checked = 0
    for q in ("Adv(A, B)", "Adv(B, A)", "Adv(C, A)"):
        xq = truth[:, index[q]]
        pq = prob @ xq
        for item in model.explain(q).items:
            row = mln.S[item.extras["clause"]]
            sat = np.zeros(len(prob), dtype=bool)
            for col, sign in zip(row.indices, row.data):
                sat |= truth[:, index[str(names[col])]] == (1.0 if sign > 0 else 0.0)
            want = (prob * sat) @ xq / pq - prob @ sat
            assert item.score == pytest.approx(want, abs=1e-9)
            checked += 1
    assert checked >= 6
