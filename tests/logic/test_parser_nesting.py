"""Issue 29's fuzz case: a rule of 100,000 opening parentheses is a `ParseError` naming the column
where the nesting gets too deep (it was a RecursionError); nesting up to the bound still parses."""

from __future__ import annotations

import pytest

from xcore.errors import ParseError
from xcore.logic.parser import MAX_NESTING, parse_rule


@pytest.mark.parametrize("text", [
    pytest.param("1.0: " + "(" * 100_000 + "A(X) -> B(X)", marks=pytest.mark.slow),  # the fuzz case (tokenizing: 1-2 s)
    "1.0: " + "(" * 5_000 + "A(X) -> B(X)",            # PSL groups
    "(" * 5_000,                                         # nothing else
    "A(X) + " + "(" * 5_000 + " B(X) <= 1 .",            # arithmetic groups
    "1.0 " + "(" * 5_000 + "a(x)",                       # Markov logic
], ids=["fuzz-100000", "psl", "bare", "arithmetic", "mln"])
def test_a_hundred_thousand_opening_parentheses_are_a_parse_error(text):
    with pytest.raises(ParseError, match=f"parentheses nested more than {MAX_NESTING} deep") as info:
        parse_rule(text)
    assert info.value.line == 1 and info.value.column == text.index("(" * (MAX_NESTING + 1)) + MAX_NESTING + 1


def test_nesting_up_to_the_bound_parses_as_before():
    deep = "(" * (MAX_NESTING - 1)
    close = ")" * (MAX_NESTING - 1)
    rule = parse_rule(f"1.0: {deep}A(X) & B(X){close} -> C(X)")  # the atoms' own parentheses make MAX_NESTING
    assert [lit.atom.predicate for lit in rule.body] == ["A", "B"]
    arith = parse_rule(f"A(X) + {deep}B(X) - 2 * C(X){close} <= 1 .")
    assert sorted(c for c, _ in arith.terms) == [-2.0, 1.0, 1.0]
    with pytest.raises(ParseError, match="nested more than"):
        parse_rule(f"1.0: ({deep}A(X){close}) -> C(X)")
