"""Review probes of issues 12 and 18: detection vs parsing, YAML aliases in messages, Prolog
directives, PSL constants that break tab-separated lines.

Each test failed before its fix; the properties vary the input instead of replaying one reproducer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.data.io import load
from xcore.data.io.detect import detect_format
from xcore.errors import DataError, brief

ROOT = Path(__file__).resolve().parents[2]


def error_of(fn, *args, **kwargs) -> DataError:
    """The DataError `fn` raises (any other outcome fails the test)."""
    with pytest.raises(DataError) as info:
        fn(*args, **kwargs)
    return info.value


# ------------------------------------------------------------------ 1. config detection = parsing
NOSLASH = {"rules": ["1: K(A,B) -> L(A,B) ^2"],
           "predicates": {"K": {"arity": 2, "observations": [["a", "c"]]},
                          "L": {"types": ["UniqueStringID", "UniqueStringID"], "targets": [["a", "c"]]}}}


@pytest.mark.parametrize("as_path", [True, False])
def test_config_declaring_arity_by_field_is_detected(tmp_path: Path, as_path: bool) -> None:
    """Predicates declared with `arity` / `types` instead of ``Name/2`` are a config (as the command reads it)."""
    data = json.dumps(NOSLASH).encode()
    path = tmp_path / "noslash.json"
    path.write_bytes(data)
    ds = load(str(path) if as_path else ("noslash.json", data))
    assert sorted(ds.schema.predicates) == ["K", "L"]
    assert ds.rules == ("1.0: K(A, B) -> L(A, B) ^2",)


def test_yaml_config_declaring_arity_by_field_is_detected() -> None:
    text = ("predicates:\n  K: {arity: 2, observations: [[a, c]]}\n"
            "  L: {types: [UniqueStringID, UniqueStringID], targets: [[a, c]]}\nrules: ['1: K(A,B) -> L(A,B)']\n")
    assert detect_format({"cfg.yaml": text.encode()}) == "psl_project"
    assert sorted(load(("cfg.yaml", text.encode())).schema.predicates) == ["K", "L"]


@pytest.mark.parametrize("rows", [10, 12_000])
@pytest.mark.parametrize("as_path", [True, False])
def test_config_whose_rules_come_after_a_large_predicates_block_is_detected(tmp_path: Path, rows: int,
                                                                          as_path: bool) -> None:
    """Where the keys are in the file does not matter (12,000 inline rows put 'rules' past 64 KB)."""
    doc = {"predicates": {"Knows/2": {"observations": [[f"p{i}", f"p{i + 1}"] for i in range(rows)]}},
           "rules": ["1: Knows(A,B) -> Knows(B,A)"]}
    data = ("// a comment, so the lenient reader runs\n" + json.dumps(doc)).encode()
    assert data.find(b'"rules"') > (65536 if rows > 100 else 0)
    path = tmp_path / "late.json"
    path.write_bytes(data)
    ds = load(str(path) if as_path else ("late.json", data))
    assert ds.rules == ("1.0: Knows(A, B) -> Knows(B, A)",)


def test_a_broken_config_is_still_reported_as_a_config_with_its_line() -> None:
    """Detection falls back to the keys' text when the reader rejects the file, so parsing names the line."""
    text = '{"rules": ["1: K(A) -> K(A)"],\n "predicates": {"K": {"arity": 1,,}}}'
    err = error_of(load, ("bad.json", text.encode()))
    assert err.file == "bad.json" and err.line == 2 and "JSON" in err.problem


def test_a_json_without_a_predicates_object_is_not_a_config() -> None:
    """Text that merely mentions ``rules`` and ``Name/2:`` keys is not a config unless it reads as one."""
    files = {"x.json": b'{"rules": ["a"], "other": {"K/2": 1}}', "t.txt": b"a\tr\tb\n"}
    assert detect_format(files) == "triples"


# ------------------------------------------------------------------ 2. YAML aliases in messages
def laughs(depth: int) -> str:
    """Nested YAML anchors: ``a{depth}`` stands for 9**(depth+1) strings in a few hundred bytes."""
    lines = ["x:", '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, depth + 1):
        lines.append(f"  a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


YAML_CASES = {
    "data_predicates": ("bomb.data", "predicates:\n  Knows/2: *a8\n", "x:"),
    "config_rules": ("bomb.yaml", "rules: [*a8]\npredicates:\n  Knows/2:\n    targets: [['a','b']]\n", "options:"),
    "config_targets": ("bomb.yaml", "rules: ['1: Knows(A,B) -> Knows(B,A)']\npredicates:\n  Knows/2:\n"
                                    "    targets: [*a8]\n", "options:"),
    "config_options": ("bomb.yaml", "rules: ['1: Knows(A,B) -> Knows(B,A)']\npredicates:\n  Knows/2:\n"
                                    "    targets: [['a','b']]\n    options: {x: *a8}\n", "options:"),
}


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_shared_yaml_aliases_fail_fast_with_a_data_error(case: str) -> None:
    """A ~500-byte YAML whose aliases expand to 387 million strings is refused in well under a second."""
    name, tail, head_key = YAML_CASES[case]
    text = laughs(8).replace("x:", head_key, 1) + tail
    assert len(text) < 1000
    start = time.perf_counter()
    files = [(name, text.encode())]
    if name.endswith(".data"):
        files.append(("bomb.psl", b"1: Knows(A, B) -> Knows(B, A) ^2\n"))
    err = error_of(load, files)
    assert time.perf_counter() - start < 2.0
    assert err.file == name and len(str(err)) < 1000


def test_recursive_yaml_alias_is_refused() -> None:
    text = "predicates:\n  Knows/2: &a [*a]\n"
    err = error_of(load, ("loop.data", text.encode()))
    assert err.file == "loop.data"


def test_moderate_alias_sharing_still_reads() -> None:
    """Aliases within the bound keep working (a shared row list used twice)."""
    text = ("rules: ['1: K(A,B) -> L(A,B)']\npredicates:\n  K/2:\n    observations: &rows [[a, c], [b, d]]\n"
            "  L/2:\n    targets: *rows\n")
    ds = load(("share.yaml", text.encode()))
    assert sorted(ds.schema.predicates) == ["K", "L"]


@settings(derandomize=True, max_examples=30, deadline=None)
@given(depth=st.integers(1, 30), width=st.integers(2, 50))
def test_brief_is_bounded_for_any_sharing(depth: int, width: int) -> None:
    """`brief` never walks more than a few items per level, however large the shared structure."""
    value: object = ["x" * 500]
    for _ in range(depth):
        value = [value] * width
    start = time.perf_counter()
    text = brief(value)
    assert len(text) <= 200 and time.perf_counter() - start < 0.1


# ------------------------------------------------------------------ 3. long blank prefixes
BLANKS = st.sampled_from(["\n", "\r\n", "\r", " \t\n", "\f\v\n"])


@settings(derandomize=True, max_examples=8, deadline=None)
@given(blank=BLANKS, count=st.sampled_from([0, 1, 65_535, 70_000]))
def test_long_csv_after_any_blank_prefix_is_long_csv(blank: str, count: int) -> None:
    """Detection sees the first non-blank line however far it is, as the parser does."""
    body = "predicate,arg1,arg2,value\nknows,a,b,1\n"
    ds = load(("facts.csv", (blank * count + body).encode()))
    assert list(ds.schema.predicates) == ["knows"]


@settings(derandomize=True, max_examples=6, deadline=None)
@given(blank=BLANKS, count=st.sampled_from([0, 1, 70_000]))
def test_triples_after_any_blank_prefix_are_triples(blank: str, count: int) -> None:
    data = (blank * count + "a\tr\tb\n").encode()
    assert detect_format({"kb.txt": data}) == "triples"
    assert list(load(("kb.txt", data)).schema.predicates) == ["r"]


def test_unknown_text_after_a_blank_prefix_names_its_line() -> None:
    err = error_of(load, ("kb.txt", b"\r\n" * 80_000 + b"a\tr\n"))
    assert "unknown data format" in err.problem and err.line == 80_001


def test_triples_after_three_million_blank_lines() -> None:
    data = b"\n" * 3_000_000 + b"a\tr\tb\n"
    assert list(load(("kb.txt", data)).schema.predicates) == ["r"]


# ------------------------------------------------------------------ 4. Prolog directives
@pytest.mark.parametrize("text, line", [
    (":- foo p(a).\nq(b).\n", 1),
    ("q(b).\n:- foo :-\np(a).\n", 2),
    (":- f(a b).\nq(b).\n", 1),
    ("q(b).\n\n:- [a, b.\nq(c).\n", 3),
    (":- f(a)) .\nq(b).\n", 1),
    (":- foo bar baz.\nq(b).\n", 1),
])
def test_directive_that_is_not_one_term_is_an_error_with_its_line(text: str, line: int) -> None:
    """A directive runs to its own '.': when that swallows a fact (a missing '.'), it is an error."""
    err = error_of(load, ("t.b", text.encode()))
    assert err.file == "t.b" and err.line == line and "directive" in err.problem


def test_well_formed_directives_are_skipped() -> None:
    text = (":- modeh(1, eastbound(+train)).\n:- modeb(*, has_car(+train, -car)).\n:- set(i, 2).\n"
            ":- dynamic foo/1, bar/2.\n:- determination(eastbound/1, has_car/2).\n"
            ":- use_module(library(lists)).\n:- X = [], Y = {a}, Z = [a|T], W = \"s\".\n"
            ":- style_check(-singleton).\n:- a ; \\+ b.\n:- X is 1 + -2 * 3 mod 2.\n"
            ":- assert((p :- q)).\n:- op(700, xfx, =>).\n?- x.\n:- foo. has_car(t1, c1).\n")
    ds = load(("t.b", text.encode()))
    assert list(ds.schema.predicates) == ["has_car"]
    assert ds.schema.predicates["has_car"].types == ("train", "car")


# ------------------------------------------------------------------ 5. constants that break lines
@pytest.mark.parametrize("constant", ["a\tb", "x\ny", "x\ry"])
@pytest.mark.parametrize("partition", ["observations", "targets", "truth"])
def test_inline_constant_with_tab_or_line_break_is_refused(constant: str, partition: str) -> None:
    doc = {"rules": ["1: K(A,B) -> L(A,B) ^2"],
           "predicates": {"K/2": {"observations": [["a", "c"]]}, "L/2": {"targets": [["a", "c"]]}}}
    doc["predicates"]["L/2" if partition != "observations" else "K/2"][partition] = [["a", "c"], [constant, "z"]]
    err = error_of(load, ("cfg.json", json.dumps(doc, indent=1).encode()))
    assert err.file == "cfg.json" and err.line is not None
    assert ("L " if partition != "observations" else "K ") in err.problem
    assert repr(constant) in err.problem


def test_command_refuses_inline_constant_with_a_tab(tmp_path: Path) -> None:
    doc = {"rules": ["1: K(A,B) -> L(A,B) ^2"],
           "predicates": {"K/2": {"observations": [["a\tb", "c"]]}, "L/2": {"targets": [["a", "c"]]}}}
    (tmp_path / "tab.json").write_text(json.dumps(doc))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "xcore.psl", "--config", str(tmp_path / "tab.json"),
                          "--output", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "tab.json" in out.stderr and "K observations" in out.stderr
    assert not list((tmp_path / "out").glob("*.txt")) if (tmp_path / "out").exists() else True


def test_blank_run_is_exactly_python_whitespace() -> None:
    """Detection skips exactly the characters `str.strip` removes (the parsers' notion of blank)."""
    from xcore.data.io.files import _BLANK_RUN

    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    # every code point sharing a UTF-8 lead byte (or two) with a space, and every space itself
    near = {c for lo, hi in [(0, 0x800), (0x1000, 0x2100), (0x3000, 0x3040)] for c in range(lo, hi)}
    for c in sorted(near | set(spaces)):
        ch = chr(c)
        assert (_BLANK_RUN.match(ch.encode()).end() > 0) == ch.isspace(), hex(c)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(lines=st.lists(st.text(alphabet=" \t\u00a0\u2028\u3000\x0bab", max_size=4), max_size=8),
       ending=st.sampled_from(["\n", "\r\n", "\r"]))
def test_head_lines_are_the_first_non_blank_lines_of_the_decoded_text(lines: list[str], ending: str) -> None:
    """`head_lines` / `first_line_number` agree with splitting the normalised text, whatever the blanks."""
    from xcore.data.io.files import first_line_number, head_lines

    data = ("\ufeff" + ending.join(lines)).encode()
    split = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept = [(i + 1, line) for i, line in enumerate(split) if line.strip()]
    assert head_lines(data, 3) == [line for _, line in kept[:3]]
    assert first_line_number(data) == (kept[0][0] if kept else 1)
