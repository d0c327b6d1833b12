"""The light method catalog: what `xcore methods`, `--help` and the app's navigation need without
importing a method package (torch, scikit-learn, scipy, DuckDB load only when a method runs).

`catalog.json` beside this module holds, per registered method, the title, bundled sample,
explainers, page, icon, paper and every setting (name, type in words, default, limits). It is
derived from the live `MethodSpec`s (the one source of truth) by

    python -m xcore.methods.catalog          # rewrite catalog.json from the registered methods
    python -m xcore.methods.catalog --check  # exit 1 and show the difference when it is stale

and a test fails when it is stale. This module imports nothing beyond the standard library and
`xcore.errors`, so reading it costs milliseconds.
"""

from __future__ import annotations

import difflib
import json
import sys
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from xcore.errors import ConfigError
from xcore.methods.registry import REGISTRY

CATALOG_FILE = Path(__file__).with_name("catalog.json")


class SettingInfo(NamedTuple):
    """One setting as the command line lists it."""

    name: str
    kind: str
    """The type in words: `int`, `str | None`, `one of tree|direct`, `comma list`."""
    default: str
    """The default as JSON text, or "required"."""
    limits: str = ""
    """Constraints in pydantic's words, e.g. ``Ge(ge=1) Le(le=200)``."""


class MethodInfo(NamedTuple):
    """A registered method's light metadata (everything but the code that runs it)."""

    key: str
    title: str
    sample: str
    explainers: tuple[str, ...]
    settings_name: str
    settings: tuple[SettingInfo, ...]
    page: str = ""
    icon: str = ""
    paper: str = ""
    surrogate: str = ""
    """What explains a user's model's predictions (empty: not a surrogate method)."""

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["explainers"] = list(self.explainers)
        data["settings"] = [s._asdict() for s in self.settings]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MethodInfo":
        return cls(**{**data, "explainers": tuple(data["explainers"]),
                      "settings": tuple(SettingInfo(**s) for s in data["settings"])})


# ---------------------------------------------------------------------- field types in words
def is_tuple_field(annotation: Any) -> bool:
    """True if a settings field's type is a tuple (optionally `| None`)."""
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(is_tuple_field(a) for a in typing.get_args(annotation))
    return False


def is_optional_field(annotation: Any) -> bool:
    """True if a settings field's type allows None."""
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def kind_of(annotation: Any) -> str:
    """A field type in words: `int`, `str | None`, `one of tree|direct`, `comma list`."""
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + "|".join(str(a) for a in typing.get_args(annotation))
    if is_tuple_field(annotation):
        return "comma list" + (" | None" if is_optional_field(annotation) else "")
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


# ---------------------------------------------------------------------- live specs -> catalog
def describe(spec: Any) -> MethodInfo:
    """The catalog entry of a live `MethodSpec` (imports its settings type's pydantic machinery)."""
    from pydantic_core import PydanticUndefined  # pydantic: only when the catalog is rebuilt from live specs

    settings = []
    for name, f in spec.settings_type.model_fields.items():
        default = "required" if f.default is PydanticUndefined else json.dumps(
            list(f.default) if isinstance(f.default, tuple) else f.default)
        settings.append(SettingInfo(name=name, kind=kind_of(f.annotation), default=default,
                                    limits=" ".join(str(m) for m in f.metadata)))
    return MethodInfo(key=spec.key, title=spec.title, sample=spec.sample, explainers=tuple(spec.explainers),
                      settings_name=spec.settings_type.__name__, settings=tuple(settings), page=spec.page,
                      icon=spec.icon, paper=spec.paper, surrogate=spec.surrogate)


def live_catalog() -> dict[str, MethodInfo]:
    """The catalog built from every registered method (imports every method package: slow)."""
    return {key: describe(REGISTRY[key]) for key in REGISTRY}


def catalog_text(entries: dict[str, MethodInfo]) -> str:
    """catalog.json's text for `entries` (stable: one key order, indented, a final newline)."""
    return json.dumps({k: v.to_dict() for k, v in entries.items()}, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------- reading
@lru_cache(maxsize=1)
def catalog() -> dict[str, MethodInfo]:
    """Every registered method's light metadata, in registry order, read from catalog.json."""
    data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return {k: MethodInfo.from_dict(v) for k, v in data.items()}


def method_info(key: str) -> MethodInfo:
    """The catalog entry of method `key`; an unknown key is a `ConfigError` naming the registered ones."""
    entries = catalog()
    if key not in entries:
        raise ConfigError(f"unknown method {key!r}; registered: {', '.join(entries)}", field="method")
    return entries[key]


def main(argv: list[str] | None = None) -> int:
    """Rewrite catalog.json from the registered methods, or with --check report whether it is current."""
    argv = sys.argv[1:] if argv is None else argv
    fresh = catalog_text(live_catalog())
    stored = CATALOG_FILE.read_text(encoding="utf-8") if CATALOG_FILE.exists() else ""
    if "--check" in argv:
        if fresh != stored:
            sys.stdout.writelines(difflib.unified_diff(stored.splitlines(True), fresh.splitlines(True),
                                                       "catalog.json (stored)", "catalog.json (live specs)"))
            return 1
        return 0
    if fresh != stored:
        CATALOG_FILE.write_text(fresh, encoding="utf-8")
        print(f"wrote {CATALOG_FILE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
