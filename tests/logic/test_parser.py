"""Rule-language parser: concrete PSL/MLN examples, errors with positions, round trips, schema checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError, ParseError, SchemaError
from xcore.logic import (
    Atom,
    Constant,
    Literal,
    Rule,
    Variable,
    check_rule,
    detect_dialect,
    parse_rule,
    parse_rules,
    parse_rules_file,
    rule_variable_types,
)
from xcore.logic.tokens import tokenize

X, Y, Z = Variable("X"), Variable("Y"), Variable("Z")
x, y = Variable("x"), Variable("y")


def lit(pred: str, *args: object, neg: bool = False) -> Literal:
    """Literal builder: str args become Variables, Constant args stay."""
    terms = tuple(a if isinstance(a, Constant) else Variable(str(a)) for a in args)
    return Literal(Atom(pred, terms), neg)


# --------------------------------------------------------------------------- PSL examples


def test_psl_weighted_squared_rule():
    r = parse_rule("2.5: A(X,Y) & B(Y,Z) -> C(X,Z) ^2")
    assert r == Rule(
        body=(lit("A", "X", "Y"), lit("B", "Y", "Z")), head=(lit("C", "X", "Z"),), weight=2.5, squared=True
    )
    assert r.dialect == "psl"
    assert r.text() == "2.5: A(X, Y) & B(Y, Z) -> C(X, Z) ^2"


def test_psl_linear_exponent_and_default():
    explicit = parse_rule("1: A(X) -> B(X) ^1")
    implicit = parse_rule("1: A(X) -> B(X)")
    assert explicit == implicit
    assert explicit.squared is False and explicit.weight == 1.0


def test_psl_hard_constraint():
    r = parse_rule("A(X) -> B(X) .")
    assert r.is_hard and r.weight is None and not r.squared
    assert r.body == (lit("A", "X"),) and r.head == (lit("B", "X"),)
    assert r.text() == "A(X) -> B(X) ."


def test_psl_negation_both_symbols():
    a = parse_rule("1: ~A(X) & !B(X) -> ~C(X)")
    assert [l.negated for l in a.body] == [True, True]
    assert a.head[0].negated
    assert parse_rule("1: !!A(X) -> B(X)").body[0].negated is False


def test_psl_disjunctive_head():
    r = parse_rule("0.5: A(X) -> B(X) | C(X) | ~D(X)")
    assert r.head == (lit("B", "X"), lit("C", "X"), lit("D", "X", neg=True))


def test_psl_prior_empty_body():
    r = parse_rule("1.0: ~C(X,Y) ^2")
    assert r.body == () and r.head == (lit("C", "X", "Y", neg=True),)
    assert r.squared and r.weight == 1.0
    assert r.text() == "1.0: ~C(X, Y) ^2"


def test_psl_constants_are_quoted_or_numbers():
    r = parse_rule("""1: Knows(X, 'bob') & Age(X, 42) & Name(X, "Al Smith") & T(-3.5) -> P(X)""")
    args = [a for l in r.body for a in l.atom.args]
    assert args == [X, Constant("bob"), X, Constant("42"), X, Constant("Al Smith"), Constant("-3.5")]
    # Bare capitalised and lowercase identifiers are both variables in PSL.
    assert parse_rule("1: A(bob, Bob) -> B(bob)").body[0].atom.args == (Variable("bob"), Variable("Bob"))


def test_psl_string_escapes():
    r = parse_rule(r"1: A('it\'s', 'back\\slash', 'a\nb', '#no comment') -> B(X)")
    assert [a.value for a in r.body[0].atom.args] == ["it's", "back\\slash", "a\nb", "#no comment"]


@pytest.mark.parametrize(
    "text, weight",
    [("3: A(X)", 3.0), ("0.25: A(X)", 0.25), ("1e-3: A(X)", 1e-3), ("2.5E+2: A(X)", 250.0), (".5: A(X)", 0.5), ("0: A(X)", 0.0)],
)
def test_psl_weight_formats(text, weight):
    assert parse_rule(text).weight == weight


def test_zero_arity_atom():
    r = parse_rule("1: Raining() -> Wet()")
    assert r.body[0].atom == Atom("Raining", ()) and r.text() == "1.0: Raining() -> Wet()"


def test_comments_and_whitespace():
    assert parse_rule("  1 :A(X)->B(X)   # trailing comment") == parse_rule("1: A(X) -> B(X)")
    assert parse_rule("A(X) -> B(X) . // c") == parse_rule("A(X) -> B(X) .")


# --------------------------------------------------------------------------- MLN examples


def test_mln_weighted_implication():
    r = parse_rule("1.5 Smokes(x) => Cancer(x)")
    assert r == Rule(body=(lit("Smokes", "x"),), head=(lit("Cancer", "x"),), weight=1.5, dialect="mln")
    assert r.text() == "1.5 Smokes(x) => Cancer(x)"


def test_mln_conjunction_caret_and_ampersand():
    a = parse_rule("0.8 Friends(x,y) ^ Smokes(x) => Smokes(y)")
    b = parse_rule("0.8 Friends(x,y) & Smokes(x) => Smokes(y)")
    assert a == b
    assert a.dialect == "mln" and a.body == (lit("Friends", "x", "y"), lit("Smokes", "x"))
    assert a.text() == "0.8 Friends(x, y) ^ Smokes(x) => Smokes(y)"


def test_mln_disjunctive_clause():
    r = parse_rule("2.1 !Smokes(x) v Cancer(x)")
    assert r.dialect == "mln" and r.body == ()
    assert r.head == (lit("Smokes", "x", neg=True), lit("Cancer", "x"))
    assert parse_rule("2.1 ~Smokes(x) | Cancer(x)") == r
    assert r.text() == "2.1 !Smokes(x) v Cancer(x)"


def test_mln_hard_clause():
    r = parse_rule("Smokes(x) => Cancer(x).")
    assert r.is_hard and r.dialect == "mln"
    assert r.text() == "Smokes(x) => Cancer(x)."


def test_mln_constants_and_variables():
    r = parse_rule("1 Friends(x, Anna) ^ Age(x, 30) ^ Name(x, 'bob') => Knows(_y, x)")
    assert r.body[0].atom.args == (x, Constant("Anna"))
    assert r.body[1].atom.args == (x, Constant("30"))
    assert r.body[2].atom.args == (x, Constant("bob"))
    assert r.head[0].atom.args == (Variable("_y"), x)
    assert r.text() == "1.0 Friends(x, Anna) ^ Age(x, 30) ^ Name(x, 'bob') => Knows(_y, x)"


def test_mln_negative_weight_allowed():
    r = parse_rule("-1.25 Smokes(x)")
    assert r.weight == -1.25 and r.dialect == "mln" and r.head == (lit("Smokes", "x"),)


def test_mln_v_is_a_variable_or_predicate_when_not_a_connective():
    r = parse_rule("1 v(v) v V(v)")
    assert r.dialect == "mln"
    assert r.head == (lit("v", "v"), Literal(Atom("V", (Variable("v"),))))


# --------------------------------------------------------------------------- dialect detection


@pytest.mark.parametrize(
    "line, dialect",
    [
        ("1: A(X) -> B(X)", "psl"),
        ("1.0: A(X)", "psl"),
        ("A(X) -> B(X) .", "psl"),
        ("A(X) & B(X) .", "psl"),  # '&' means PSL (the parse then fails: no head)
        ("1.0: ~C(X) ^2", "psl"),
        ("1.5 Smokes(x) => Cancer(x)", "mln"),
        ("Smokes(x) => Cancer(x).", "mln"),
        ("2 !A(x) v B(x)", "mln"),
        ("!A(x) v B(x).", "mln"),
        ("1 A(x) ^ B(x) => C(x)", "mln"),
        ("-2 A(x)", "mln"),
        ("A(x).", "mln"),  # ambiguous: '.' touching ')' is Markov logic
        ("A(X) | B(X) .", "psl"),  # ambiguous: ' .' is PSL
    ],
)
def test_detect_dialect(line, dialect):
    assert detect_dialect(line) == dialect


def test_ambiguous_lines_follow_the_rest_of_the_file():
    rules = parse_rules("1.5 Smokes(x) => Cancer(x)\nSmokes(Anna) .\n")
    assert rules[1].dialect == "mln" and rules[1].head[0].atom.args == (Constant("Anna"),)
    rules = parse_rules("1: A(X) -> B(X)\nC(Anna).\n")
    assert rules[1].dialect == "psl" and rules[1].head[0].atom.args == (Variable("Anna"),)


def test_explicit_dialect_overrides_detection():
    r = parse_rule("A(Anna).", dialect="psl")
    assert r.dialect == "psl" and r.head[0].atom.args == (Variable("Anna"),)
    r = parse_rule("A(Anna) | B(x) .", dialect="mln")
    assert r.dialect == "mln" and r.head[0].atom.args == (Constant("Anna"),)
    with pytest.raises(ValueError, match="dialect"):
        parse_rule("A(X) .", dialect="prolog")


# --------------------------------------------------------------------------- parse_rules


def test_parse_rules_skips_blank_and_comment_lines():
    text = """
# PSL rules
1: A(X) -> B(X) ^2

   // another comment
A(X) -> C(X) .   # hard
0.5 Smokes(x) => Cancer(x)
"""
    rules = parse_rules(text)
    assert [r.text() for r in rules] == ["1.0: A(X) -> B(X) ^2", "A(X) -> C(X) .", "0.5 Smokes(x) => Cancer(x)"]
    assert parse_rules("") == [] and parse_rules("# only\n\n") == []


def test_parse_rules_reports_line_within_text_and_source():
    text = "1: A(X) -> B(X)\n\n# comment\n1: A(X) -> B(X Y)\n"
    with pytest.raises(ParseError) as e:
        parse_rules(text, source="rules.psl")
    assert (e.value.line, e.value.column) == (4, 16)
    assert e.value.text == "1: A(X) -> B(X Y)" and e.value.source == "rules.psl"
    assert "rules.psl, line 4, column 16" in str(e.value)
    assert "expected ')' after arguments" in e.value.problem


def test_parse_rules_reports_first_error_even_when_a_later_line_does_not_tokenize():
    with pytest.raises(ParseError) as e:
        parse_rules("1: A(X) ->\n1: A(X) @ B(X)\n")
    assert e.value.line == 1 and "missing head" in e.value.problem


def test_parse_rules_crlf_line_endings():
    assert len(parse_rules("1: A(X) -> B(X)\r\nA(X) -> C(X) .\r\n")) == 2


def test_parse_rule_requires_exactly_one_rule():
    with pytest.raises(ParseError, match="empty rule"):
        parse_rule("   # nothing")
    with pytest.raises(ParseError) as e:
        parse_rule("1: A(X)\n\n2: B(X)")
    assert e.value.line == 3 and "second" in e.value.problem


def test_parse_rules_file(tmp_path):
    p = tmp_path / "model.mln"
    p.write_text("// smoking\n1.5 Smokes(x) => Cancer(x)\nbad(\n", encoding="utf-8")
    with pytest.raises(ParseError) as e:
        parse_rules_file(p)
    assert e.value.source == str(p) and e.value.line == 3
    p.write_text("1.5 Smokes(x) => Cancer(x)\n", encoding="utf-8")
    assert parse_rules_file(p)[0].weight == 1.5
    with pytest.raises(DataError, match="cannot read"):
        parse_rules_file(tmp_path / "missing.mln")


# --------------------------------------------------------------------------- errors with positions


@pytest.mark.parametrize(
    "text, column, message",
    [
        ("1: A(X) @ B(X)", 9, "unknown symbol '@'"),
        ("1: A(X, Y -> B(X)", 11, "expected ')' after arguments"),
        ("1: A(X, Y", 10, "expected ')' after arguments"),
        ("1: A(X) & B(X)", 15, "missing '->' or head"),
        ("-1: A(X) -> B(X)", 1, "weight must be >= 0"),
        ("1: A(X) ->", 11, "missing head after '->'"),
        ("1: -> B(X)", 4, "missing body before '->'"),
        ("1: A(X) | B(X) -> C(X)", 9, "disjunction '|' is not allowed in the body"),
        ("1: A(X) -> B(X) & C(X)", 17, "conjunction '&' is not allowed in the head"),
        ("1 A(X) -> B(X)", 3, "expected ':' after the weight"),
        ("A(X) -> B(X)", 13, "missing weight"),
        ("1: A(X) -> B(X) .", 17, "weighted rule cannot end in '.'"),
        ("A(X) -> B(X) ^2 .", 14, "only follow a weighted rule"),
        ("1: A(X) -> B(X) ^3", 18, "expected 1 or 2 after '^'"),
        ("1: A(X) -> B(X) extra", 17, "expected a connective"),
        ("1: A(X) -> B(X) . .", 17, "weighted rule cannot end"),
        ("A(X) -> B(X) . B(X)", 16, "unexpected 'B' after the end of the rule"),
        ("1: A X -> B(X)", 6, "expected '(' after predicate name 'A'"),
        ("1: A(X,) -> B(X)", 8, "expected an argument"),
        ("1: A('bob) -> B(X)", 6, "unterminated string"),
        ("1: 'A'(X) -> B(X)", 4, "expected a literal"),
        ("1.5x: A(X)", 1, "invalid number '1.5x'"),
        ("1e999: A(X)", 1, "must be finite"),
        ("w: A(X) -> B(X)", 1, "weight must be a number"),
        ("1: A(X) <=> B(X)", 9, "'<=>' (equivalence) is not supported"),
        ("1: A(X) ^ B(X)", 9, "PSL writes 'and' as '&'"),
        ("1: A(X) & ", 10, "expected a literal after '&'"),
        ("1.5 Smokes(x) => Cancer(x) ^2", 28, "PSL's exponent"),
        ("1.5 Smokes(x) ^ Friends(x, y) v Cancer(x)", 42, "missing '=>' or head"),
        ("1.5 Smokes(x) v Friends(x, y) => Cancer(x)", 15, "disjunction 'v' is not allowed in the body"),
        ("1.5 Smokes(x) => Cancer(x).", 27, "weighted rule cannot end in '.'"),
        ("Smokes(x) => Cancer(x)", 23, "missing weight"),
    ],
)
def test_parse_errors_have_line_and_column(text, column, message):
    with pytest.raises(ParseError) as e:
        parse_rule(text)
    assert message in e.value.problem, e.value.problem
    assert (e.value.line, e.value.column) == (1, column), str(e.value)
    assert e.value.text == text
    # The message shows the line and a caret under the column.
    assert str(e.value).splitlines()[-1].index("^") - 4 == column - 1


def test_forced_dialect_errors():
    with pytest.raises(ParseError, match="unexpected ':' after the weight") as e:
        parse_rule("1.5: Smokes(x) => Cancer(x)", dialect="mln")
    assert e.value.column == 4
    with pytest.raises(ParseError, match="expected a connective") as e:
        parse_rule("1: A(X) v B(X)", dialect="psl")
    assert e.value.column == 9


def test_error_column_counts_from_line_start_in_multi_line_text():
    with pytest.raises(ParseError) as e:
        parse_rules("1: A(X) -> B(X)\n   1: A(X) -> B(X) $")
    assert (e.value.line, e.value.column) == (2, 20)
    assert "unknown symbol '$'" in e.value.problem


def test_tokenizer_positions():
    toks = tokenize("1.5: ~A(X, 'b c') -> B(X)")
    assert [(t.kind, t.column) for t in toks[:6]] == [
        ("number", 1), (":", 4), ("~", 6), ("identifier", 7), ("(", 8), ("identifier", 9)
    ]
    assert toks[-1].kind == "end of line" and toks[-1].column == 26


# --------------------------------------------------------------------------- round trips (hypothesis)

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True)
MLN_VARIABLES = st.from_regex(r"[a-z_][A-Za-z0-9_]{0,5}", fullmatch=True)
CONSTANT_VALUES = st.one_of(
    st.text(max_size=6),
    st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[A-Z][A-Za-z0-9_]{0,5}", fullmatch=True),
    st.sampled_from(["v", "V", "X", "x", "'", '"', "\\", "\n", "\r\n", "#", "//", "a b", "1e5", "--1", "3.", ".5", "²"]),
)


@st.composite
def rules(draw, dialect: str) -> Rule:
    """A random rule whose names follow `dialect`'s variable/constant conventions."""
    variables = NAMES if dialect == "psl" else MLN_VARIABLES
    term = st.one_of(variables.map(Variable), CONSTANT_VALUES.map(Constant))
    atom = st.builds(Atom, NAMES, st.lists(term, max_size=3).map(tuple))
    literal = st.builds(Literal, atom, st.booleans())
    body = tuple(draw(st.lists(literal, max_size=3)))
    head = tuple(draw(st.lists(literal, min_size=1, max_size=3)))
    finite = dict(allow_nan=False, allow_infinity=False)
    weights = st.floats(min_value=0, **finite) if dialect == "psl" else st.floats(**finite)
    weight = draw(st.none() | weights)
    squared = dialect == "psl" and weight is not None and draw(st.booleans())
    return Rule(body, head, weight, squared, dialect)  # type: ignore[arg-type]


ANY_RULE = st.sampled_from(["psl", "mln"]).flatmap(rules)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(ANY_RULE)
def test_round_trip_auto_dialect(rule):
    text = rule.text()
    parsed = parse_rule(text)
    assert parsed == rule, text
    assert parsed.dialect == rule.dialect
    assert parsed.text() == text


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(ANY_RULE)
def test_round_trip_explicit_dialect(rule):
    assert parse_rule(rule.text(), dialect=rule.dialect) == rule


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["psl", "mln"]).flatmap(lambda d: st.lists(rules(d), max_size=4)), max_size=1).map(
    lambda ls: ls[0] if ls else []
))
@pytest.mark.slow
def test_round_trip_many_lines(rule_list):
    text = "\n# comment\n\n".join(r.text() for r in rule_list)
    assert parse_rules(text) == rule_list


def _quote(value: str, q: str) -> str:
    escaped = value.replace("\\", "\\\\").replace(q, "\\" + q).replace("\n", "\\n").replace("\r", "\\r")
    return f"{q}{escaped}{q}"


@st.composite
def noisy_texts(draw, rule: Rule) -> str:
    """Non-canonical but equivalent text of `rule`: random spacing, symbols, quoting, number formats."""
    mln = rule.dialect == "mln"
    sp = lambda: draw(st.sampled_from(["", " ", "  ", "\t"]))  # noqa: E731
    need = lambda: draw(st.sampled_from([" ", "  ", "\t"]))  # noqa: E731

    def term(t) -> str:
        if isinstance(t, Variable):
            return t.name
        bare = t.text(rule.dialect)
        return draw(st.sampled_from([bare, _quote(t.value, "'"), _quote(t.value, '"')]))

    def literal(l: Literal) -> str:
        neg = draw(st.sampled_from(["~", "!"])) + sp() if l.negated else draw(st.sampled_from(["", "", "!~" + sp()]))
        args = ("," + sp()).join(term(a) for a in l.atom.args)
        return f"{neg}{l.atom.predicate}{sp()}({sp()}{args}{sp()})"

    def join(lits, ops) -> str:
        out = literal(lits[0])
        for l in lits[1:]:
            op = draw(st.sampled_from(ops))
            out += (need() + op + need() if op == "v" else sp() + op + sp()) + literal(l)
        return out

    and_ops, or_ops = (["^", "&"], ["v", "|"]) if mln else (["&"], ["|"])
    core = join(rule.head, or_ops)
    if rule.body:
        core = join(rule.body, and_ops) + sp() + ("=>" if mln else "->") + sp() + core
    if rule.weight is None:
        end = "." if mln else need() + "."
        text = core + end
    else:
        w = float(rule.weight)
        formats = [repr(w), "%.17g" % w, "%.17e" % w] + ([str(int(w))] if w.is_integer() and abs(w) < 1e15 else [])
        weight = draw(st.sampled_from(formats))
        text = weight + (sp() + ":" + sp() if not mln else need()) + core
        if not mln:
            text += draw(st.sampled_from(["", " ^1"])) if not rule.squared else sp() + "^" + sp() + "2"
    return sp() + text + draw(st.sampled_from(["", " # note", "  // note"]))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.data())
def test_noisy_text_parses_to_the_same_rule(data):
    rule = data.draw(ANY_RULE)
    text = data.draw(noisy_texts(rule))
    parsed = parse_rule(text)
    assert parsed == rule, text
    # Canonical text is a fixed point: text(parse(text(parse(s)))) == text(parse(s)).
    assert parse_rule(parsed.text()).text() == parsed.text()


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="AB(XYx),'&|~!^v-=>.:0123 #", max_size=20))
def test_random_text_parses_or_raises_parse_error(text):
    """Garbage never crashes: it either parses (and then round-trips) or raises ParseError."""
    try:
        rules_ = parse_rules(text)
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1
        return
    for r in rules_:
        assert parse_rule(r.text()) == r


# --------------------------------------------------------------------------- schema checks

SCHEMA = Schema.of(
    [
        Predicate("Friends", 2, ("person", "person")),
        Predicate("Smokes", 1, ("person",)),
        Predicate("Cancer", 1, ("person",)),
        Predicate("Likes", 2, ("person", "movie")),
        Predicate("Genre", 2, ("movie", "genre")),
    ]
)


def test_check_rule_accepts_a_fitting_rule():
    check_rule(parse_rule("0.8 Friends(x,y) ^ Smokes(x) => Smokes(y)"), SCHEMA)
    check_rule(parse_rule("1: Likes(P, M) & Genre(M, 'drama') -> Smokes(P)"), SCHEMA)


def test_check_rule_unknown_predicate_suggests_close_names():
    with pytest.raises(SchemaError, match=r"unknown predicate 'Frends'.*did you mean 'Friends'"):
        check_rule(parse_rule("1: Frends(X, Y) -> Smokes(X)"), SCHEMA)
    with pytest.raises(SchemaError, match=r"unknown predicate 'Zzz'.*known predicates: Friends, Smokes"):
        check_rule(parse_rule("1: Zzz(X) -> Smokes(X)"), SCHEMA)


def test_check_rule_wrong_arity():
    with pytest.raises(SchemaError, match=r"'Friends' takes 2 arguments but `Friends\(X\)` has 1"):
        check_rule(parse_rule("1: Friends(X) -> Smokes(X)"), SCHEMA)
    with pytest.raises(SchemaError, match=r"'Smokes' takes 1 argument but"):
        check_rule(parse_rule("1: Smokes(X, Y) -> Cancer(X)"), SCHEMA)


def test_check_rule_no_literals():
    with pytest.raises(SchemaError, match="no literals"):
        check_rule(Rule(), SCHEMA)


def test_check_rule_type_conflict_can_be_skipped():
    rule = parse_rule("1: Likes(P, M) & Smokes(M) -> Cancer(P)")
    with pytest.raises(SchemaError, match=r"variable M has type 'movie' as argument 2 of `Likes\(P, M\)`"):
        check_rule(rule, SCHEMA)
    check_rule(rule, SCHEMA, check_types=False)


def test_rule_variable_types():
    rule = parse_rule("1: Likes(P, M) & Genre(M, G) & Friends(P, Q) -> Likes(Q, M)")
    types = rule_variable_types(rule, SCHEMA)
    assert types == {
        Variable("P"): "person",
        Variable("M"): "movie",
        Variable("G"): "genre",
        Variable("Q"): "person",
    }
    assert list(types) == [Variable("P"), Variable("M"), Variable("G"), Variable("Q")]
    assert rule_variable_types(parse_rule("1: Genre('m1', 'drama')"), SCHEMA) == {}


def test_rule_variable_types_conflict_and_schema_errors():
    with pytest.raises(SchemaError, match=r"variable x has type 'person'.*but type 'movie' as argument 1 of `Genre\(x, y\)`"):
        rule_variable_types(parse_rule("1 Smokes(x) => Genre(x, y)"), SCHEMA)
    with pytest.raises(SchemaError, match="unknown predicate"):
        rule_variable_types(parse_rule("1: Nope(X)"), SCHEMA)
    with pytest.raises(SchemaError, match="takes 1 argument"):
        rule_variable_types(parse_rule("1: Smokes()"), SCHEMA)
