"""Predicate declarations: the schema of a relational dataset."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

from xcore.errors import DataError

PARTITIONS: tuple[str, ...] = ("obs", "targets", "truth")
"""Observations (evidence), targets (open atoms to infer) and truth (labels of targets)."""

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Predicate:
    """One predicate: name, arity, argument types and the flags the methods need.

    `closed` predicates are fully observed (missing atoms are false); open ones have targets.
    `explainable` marks predicates a person can understand (ESMS's alpha-explainability).
    `template` renders a ground atom in words, e.g. ``"{0} is friends with {1}"``.
    """

    name: str
    arity: int
    types: tuple[str, ...] = ()
    closed: bool = True
    explainable: bool = True
    template: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise DataError(f"invalid predicate name {self.name!r} (letters, digits and _ only)")
        if self.arity < 0:
            raise DataError(f"predicate {self.name}: arity must be >= 0, got {self.arity}")
        if not self.types:
            object.__setattr__(self, "types", tuple("entity" for _ in range(self.arity)))
        if len(self.types) != self.arity:
            raise DataError(
                f"predicate {self.name}: {len(self.types)} argument types given for arity {self.arity}"
            )
        object.__setattr__(self, "types", tuple(str(t) for t in self.types))

    @property
    def columns(self) -> list[str]:
        """Argument column names of this predicate's tables: a0, a1, ..."""
        return arg_columns(self.arity)

    def render(self, args: Sequence[object]) -> str:
        """Natural-language text of a ground atom, or its canonical text without a template."""
        if self.template:
            try:
                return self.template.format(*args)
            except (IndexError, KeyError, ValueError):
                pass
        return self.atom_text(args)

    def atom_text(self, args: Sequence[object]) -> str:
        """Canonical text of a ground atom: ``name(a, b)``."""
        return f"{self.name}({', '.join(str(a) for a in args)})"

    def with_flags(self, **changes: object) -> "Predicate":
        """A copy with some fields changed (closed, explainable, template, types)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        """Manifest entry of this predicate."""
        out: dict[str, object] = {
            "name": self.name,
            "arity": self.arity,
            "types": list(self.types),
            "closed": self.closed,
            "explainable": self.explainable,
        }
        if self.template:
            out["template"] = self.template
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, d: dict[str, object], file: str | None = None) -> "Predicate":
        """Build from a manifest entry; bad entries raise DataError naming the file."""
        try:
            name = str(d["name"])
            types = d.get("types") or ()
            arity = int(d.get("arity", len(types)))  # type: ignore[arg-type]
            return cls(
                name=name,
                arity=arity,
                types=tuple(types),  # type: ignore[arg-type]
                closed=bool(d.get("closed", True)),
                explainable=bool(d.get("explainable", True)),
                template=(str(d["template"]) if d.get("template") else None),
                description=str(d.get("description", "")),
            )
        except DataError as e:
            raise DataError(e.problem, file=file) from None
        except (KeyError, TypeError, ValueError) as e:
            raise DataError(f"bad predicate declaration {d!r}: {e}", file=file) from None


def arg_columns(arity: int) -> list[str]:
    """Names of the argument columns of an atom table of this arity."""
    return [f"a{i}" for i in range(arity)]


@dataclass
class Schema:
    """An ordered collection of predicates, looked up by name."""

    predicates: dict[str, Predicate] = field(default_factory=dict)

    @classmethod
    def of(cls, preds: Sequence[Predicate]) -> "Schema":
        s = cls()
        for p in preds:
            if p.name in s.predicates:
                raise DataError(f"predicate {p.name} declared twice")
            s.predicates[p.name] = p
        return s

    def __getitem__(self, name: str) -> Predicate:
        try:
            return self.predicates[name]
        except KeyError:
            raise DataError(f"unknown predicate {name!r}; known: {', '.join(self.predicates) or 'none'}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.predicates

    def __iter__(self):
        return iter(self.predicates.values())

    def __len__(self) -> int:
        return len(self.predicates)

    @property
    def names(self) -> list[str]:
        return list(self.predicates)
