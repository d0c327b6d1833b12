"""What an explanation explains, structured (`Target`): a ground atom or a table row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from xcore.explain.json_checks import ExplanationError, check_keys, check_string, check_string_list

ATOM_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.S)
ROW_RE = re.compile(r"^\s*row\s+(\S+)\s*$")


def split_args(text: str) -> list[str]:
    """Arguments of an atom text split on top-level commas (quotes and brackets respected)."""
    out, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch in "([":
            depth += 1
            cur.append(ch)
        elif ch in ")]":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur or out:
        out.append("".join(cur).strip())
    return out


@dataclass(frozen=True)
class Target:
    """What an explanation explains, structured: a ground atom (predicate + arguments) or a row.

    `text` is the one canonical text (``rating(u1, a2)``, ``row 17``) that indexes explanation sets.
    """

    predicate: str | None = None
    args: tuple[str, ...] = ()
    row: str | None = None

    def __post_init__(self) -> None:
        if (self.predicate is None) == (self.row is None):
            raise ExplanationError("a target is either an atom (predicate + arguments) or a row, not both")
        object.__setattr__(self, "args", tuple(check_string(a, "target argument") for a in self.args))

    @property
    def text(self) -> str:
        if self.row is not None:
            return f"row {self.row}"
        return f"{self.predicate}({', '.join(self.args)})"

    @classmethod
    def atom(cls, predicate: str, args: Iterable[Any]) -> "Target":
        return cls(predicate=predicate, args=tuple(str(a) for a in args))

    @classmethod
    def of_row(cls, row: Any) -> "Target":
        return cls(row=str(row))

    @classmethod
    def parse(cls, text: str) -> "Target | None":
        """The structured form of a target text, or None when it is neither an atom nor ``row N``."""
        m = ROW_RE.match(text)
        if m:
            return cls(row=m.group(1))
        m = ATOM_RE.match(text)
        if m:
            return cls(predicate=m.group(1), args=tuple(split_args(m.group(2))))
        return None

    def to_dict(self) -> dict[str, Any]:
        if self.row is not None:
            return {"row": self.row}
        return {"predicate": self.predicate, "args": list(self.args)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "target") -> "Target":
        data = check_keys(data, where, required=(), optional=("predicate", "args", "row"))
        if "row" in data:
            return cls(row=check_string(data["row"], f"{where} row"))
        if "predicate" not in data:
            raise ExplanationError(f"{where} needs a predicate or a row")
        return cls(predicate=check_string(data["predicate"], f"{where} predicate"),
                   args=tuple(check_string_list(data.get("args", []), f"{where} args")))
