"""Reading a PSL ``.psl`` rule file: comments skipped, rules spanning several lines joined (PSL's grammar
treats line breaks as spaces), each rule with its file and first line."""

from __future__ import annotations

import re

from xcore.data.io.files import decode_text
from xcore.data.io.psl_spec import RuleSpec


def parse_rule_file(data: bytes, file: str) -> list[RuleSpec]:
    """The rules of a ``.psl`` file (``#``, ``//`` and ``/* */`` comments skipped).

    PSL's grammar treats line breaks as spaces, so a rule may span lines: a line continues the
    rule above while that rule has unclosed brackets or ends in a connective, or when the line
    starts with one (``&``, ``->``, ``^2``, ``{X: ...}``, ...). Each rule keeps its first line.
    """
    text = decode_text(data, file, allow_empty=True)
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    out: list[RuleSpec] = []
    pending: list[str] = []
    first = 0
    for i, line in enumerate(text.split("\n")):
        body = _strip_rule_comment(line).strip()
        if not body:
            continue
        if pending and (_rule_continues(" ".join(pending)) or body.startswith(_CONTINUATION_STARTS)):
            pending.append(body)
            continue
        if pending:
            out.append(RuleSpec(text=" ".join(pending), file=file, line=first))
        pending, first = [body], i + 1
    if pending:
        out.append(RuleSpec(text=" ".join(pending), file=file, line=first))
    return out


_CONTINUATION_STARTS = ("&", "|", "->", ">>", "<<", "<-", "^", "{", "}", ".", ")", ",", "=", "<=", ">=", "+",
                        "*", "/", "%")
"""A rule-file line starting with one of these continues the rule above it."""
_CONTINUATION_ENDS = ("&", "|", "->", ">>", "<<", "<-", "(", ",", ":", "=", "<=", ">=", "+", "-", "*", "/",
                      "!", "~", "%", "^", "{")
"""A rule ending in one of these is unfinished: the next line continues it."""


def _rule_continues(rule: str) -> bool:
    """Whether the rule text so far is unfinished (open brackets, or a trailing connective)."""
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "''", rule)
    depth = sum(unquoted.count(c) for c in "([{") - sum(unquoted.count(c) for c in ")]}")
    return depth > 0 or unquoted.rstrip().endswith(_CONTINUATION_ENDS)


def _strip_rule_comment(line: str) -> str:
    """`line` without its ``#`` or ``//`` comment (quoted text kept)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" or line.startswith("//", i):
            return line[:i]
    return line
