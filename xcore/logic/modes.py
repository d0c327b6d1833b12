"""Aleph/Progol mode declarations: ``modeh``/``modeb`` with recall and +input/-output/#constant types.

`read_language` reads the ``:- modeh(...)``, ``:- modeb(...)``, ``:- determination(...)``,
``:- set(Param, Value)``, ``:- lazy_evaluate(P/N)`` and ``:- positive_only(P/N)`` directives of a
``.b`` file (the old Progol ``!-`` form too) into a `ModeLanguage`; ground facts of the file are
returned alongside (with lists kept as terms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xcore.errors import DataError, XcoreError
from xcore.logic.terms import Clause, Struct, Term, Var, read_clauses, term_text

ROLES = {"+": "input", "-": "output", "#": "constant"}


@dataclass(frozen=True)
class ModeArg:
    """One argument of a mode: its role symbol (``+``, ``-`` or ``#``) and its type."""

    role: str
    type: str

    def __str__(self) -> str:
        return f"{self.role}{self.type}"


@dataclass(frozen=True)
class Mode:
    """A mode declaration: recall (None for ``*``), predicate name and typed argument roles."""

    recall: int | None
    predicate: str
    args: tuple[ModeArg, ...]
    head: bool = False

    @property
    def arity(self) -> int:
        return len(self.args)

    @property
    def key(self) -> tuple[str, int]:
        return (self.predicate, self.arity)

    def positions(self, role: str) -> list[int]:
        """Argument positions with the given role symbol."""
        return [i for i, a in enumerate(self.args) if a.role == role]

    def __str__(self) -> str:
        kind = "modeh" if self.head else "modeb"
        recall = "*" if self.recall is None else str(self.recall)
        return f"{kind}({recall},{self.predicate}({','.join(map(str, self.args))}))"


@dataclass
class ModeLanguage:
    """The language of an ILP task: head and body modes, determinations and ``set/2`` parameters."""

    modeh: list[Mode] = field(default_factory=list)
    modeb: list[Mode] = field(default_factory=list)
    determinations: list[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    lazy: list[tuple[str, int]] = field(default_factory=list)
    """Predicates declared ``lazy_evaluate/1``: their constants are computed during the search by the
    background's own definition from the values their variables take on the covered examples."""
    positive_only: list[tuple[str, int]] = field(default_factory=list)
    """Lazily evaluated predicates declared ``positive_only/1``: their definition sees positives only."""

    @property
    def depth(self) -> int:
        """Aleph's ``i`` (layers of new variables in a bottom clause; default 2)."""
        try:
            return int(self.settings.get("i", "2"))
        except ValueError:
            raise DataError(f"set(i, {self.settings['i']}) must be an integer") from None

    def body_modes(self, head: tuple[str, int] | None = None) -> list[Mode]:
        """Body modes allowed for `head` by the determinations (all of them when there are none)."""
        if head is None or not self.determinations:
            return list(self.modeb)
        allowed = {b for h, b in self.determinations if h == head}
        return [m for m in self.modeb if m.key in allowed]

    def text(self) -> str:
        """The language as Aleph directives (one per line)."""
        lines = [f":- {m}." for m in self.modeh + self.modeb]
        lines += [f":- determination({h[0]}/{h[1]},{b[0]}/{b[1]})." for h, b in self.determinations]
        lines += [f":- set({k},{v})." for k, v in self.settings.items()]
        lines += [f":- lazy_evaluate({n}/{a})." for n, a in self.lazy]
        lines += [f":- positive_only({n}/{a})." for n, a in self.positive_only]
        return "\n".join(lines)


def parse_mode(term: Term, head: bool, file: str = "<modes>", line: int | None = None) -> Mode:
    """A `Mode` from the term of ``modeh(R, p(+t, -u, #c))`` or ``modeb(...)``."""
    if not (isinstance(term, Struct) and len(term.args) == 2):
        raise DataError(f"a mode declaration needs (Recall, Template), got {term_text(term)}", file=file, line=line)
    recall_t, template = term.args
    if isinstance(recall_t, Struct) and recall_t.name == "*" and not recall_t.args:
        recall = None
    elif isinstance(recall_t, int) and recall_t >= 1:
        recall = recall_t
    else:
        raise DataError(f"mode recall must be a positive integer or *, got {term_text(recall_t)}",
                        file=file, line=line)
    if not isinstance(template, Struct):
        raise DataError(f"mode template must be a predicate, got {term_text(template)}", file=file, line=line)
    args = []
    for a in template.args:
        if not (isinstance(a, Struct) and a.name in ROLES and len(a.args) == 1 and isinstance(a.args[0], Struct)
                and not a.args[0].args):
            raise DataError(f"mode argument {term_text(a)} of {template.name} must be +type, -type or #type",
                            file=file, line=line)
        args.append(ModeArg(a.name, a.args[0].name))
    return Mode(recall, template.name, tuple(args), head)


def _indicator(t: Term, file: str, line: int) -> tuple[str, int]:
    if isinstance(t, Struct) and t.name == "/" and len(t.args) == 2 and isinstance(t.args[0], Struct) \
            and isinstance(t.args[1], int):
        return (t.args[0].name, t.args[1])
    raise DataError(f"expected name/arity, got {term_text(t)}", file=file, line=line)


def language_from_clauses(clauses: list[Clause], file: str = "<modes>") -> ModeLanguage:
    """The mode language declared by the directives among `clauses` (other clauses are ignored)."""
    lang = ModeLanguage()
    for c in clauses:
        goal = c.directive
        if not isinstance(goal, Struct):
            continue
        if goal.name in ("modeh", "modeb") and len(goal.args) == 2:
            mode = parse_mode(goal, goal.name == "modeh", file, c.line)
            (lang.modeh if mode.head else lang.modeb).append(mode)
        elif goal.name == "determination" and len(goal.args) == 2:
            lang.determinations.append((_indicator(goal.args[0], file, c.line),
                                        _indicator(goal.args[1], file, c.line)))
        elif goal.name == "set" and len(goal.args) == 2:
            lang.settings[term_text(goal.args[0])] = term_text(goal.args[1])
        elif goal.name in ("lazy_evaluate", "positive_only") and len(goal.args) == 1:
            keys = lang.lazy if goal.name == "lazy_evaluate" else lang.positive_only
            key = _indicator(goal.args[0], file, c.line)
            if key not in keys:
                keys.append(key)
    return lang


def read_language(text: str, file: str = "<modes>") -> ModeLanguage:
    """The mode language of an Aleph ``.b`` (or Progol) file's text."""
    return language_from_clauses(read_clauses(text, file), file)


_DECLARATION = re.compile(r"^[ \t]*(?::-|!-)[ \t]*(?:modeh|modeb|mode|determination|set|lazy_evaluate|positive_only)"
                          r"[ \t]*\(.*$", re.M)


def read_declarations(text: str, file: str = "background") -> ModeLanguage | None:
    """The declarations (modes, determinations, settings, ``lazy_evaluate``, ``positive_only``) of an
    Aleph background that also has rules, read from its one-line directives only (rules need a full
    Prolog reader); None when they cannot be read."""
    try:
        return read_language("\n".join(_DECLARATION.findall(text)), file)
    except XcoreError:
        return None


def ground_facts(clauses: list[Clause]) -> dict[tuple[str, int], list[tuple[str, ...]]]:
    """Ground facts among `clauses`, by predicate indicator, arguments as canonical term text."""
    out: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    for c in clauses:
        t = c.term
        if c.directive is not None or not isinstance(t, Struct) or t.name in (":-", "-->"):
            continue
        if _has_var(t):
            continue
        out.setdefault(t.key, []).append(tuple(term_text(a) for a in t.args))
    return out


def _has_var(t: Term) -> bool:
    if isinstance(t, Var):
        return True
    if isinstance(t, Struct):
        return any(_has_var(a) for a in t.args)
    return False
