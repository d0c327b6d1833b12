"""Dataset manifests (``manifest.yaml`` or ``manifest.json``): name, description and predicates.

Format::

    name: friends_smokers
    description: Who smokes, and who gets cancer?
    predicates:
      - {name: friends, arity: 2, types: [person, person], closed: true,
         explainable: true, template: "{0} is friends with {1}"}

`predicates` may also be a mapping from name to the other fields. Only ``yaml.safe_load`` and
``json.loads`` read manifests; every field is type-checked, and problems raise `DataError`.
"""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, Union

from xcore.data.io.files import FileSet, basename, decode_text, read_source, suffix
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError
from xcore.optional_deps import import_optional

MANIFEST_NAMES = ("manifest.yaml", "manifest.yml", "manifest.json")
MAX_ARITY = 64

_PRED_KEYS = {"name", "arity", "types", "closed", "explainable", "template", "description"}


@dataclass
class Manifest:
    """A parsed manifest: dataset name (None if absent), description and predicates."""

    name: str | None
    description: str
    predicates: list[Predicate] = field(default_factory=list)
    file: str = "manifest.yaml"


SchemaLike = Union[Schema, Sequence[Predicate], str, os.PathLike, tuple[str, bytes]]
"""A schema given to a loader: a Schema, a list of predicates, or a manifest path or upload."""


def find_manifest(files: FileSet) -> str | None:
    """Key of the single manifest in a file set, None if there is none; two -> DataError."""
    found = [k for k in files if basename(k).lower() in MANIFEST_NAMES]
    if len(found) > 1:
        raise DataError(f"several manifests ({', '.join(basename(f) for f in found)}); keep one",
                        file=found[1])
    return found[0] if found else None


def parse_manifest(data: bytes, file: str, limits: Limits | None = None) -> Manifest:
    """Parse and check a YAML or JSON manifest (JSON when the file name ends in .json)."""
    limits = limits or DEFAULT_LIMITS
    if len(data) > limits.max_manifest_bytes:
        raise DataError(f"manifest is {len(data):,} bytes, above the limit of "
                        f"{limits.max_manifest_bytes:,}", file=file)
    text = decode_text(data, file)
    doc = _parse_json(text, file) if suffix(file) == ".json" else _parse_yaml(text, file)
    try:
        return _manifest(doc, file)
    except DataError as e:
        if e.line is not None:
            raise
        raise DataError(e.problem, file=file, line=_locate(text, e.problem)) from None


def _locate(text: str, problem: str) -> int:
    """Line of the first quoted name of `problem` in the manifest text (1 if none is found)."""
    for name in re.findall(r"'([^']+)'|\b([A-Za-z_][A-Za-z0-9_]*)\b", problem):
        word = name[0] or name[1]
        m = re.search(rf"^.*\b{re.escape(word)}\b", text, re.M) if len(word) > 2 else None
        if m:
            return text.count("\n", 0, m.start()) + 1
    return 1


def _manifest(doc: Any, file: str) -> Manifest:
    """Check a parsed manifest document and build the `Manifest`."""
    if not isinstance(doc, dict):
        raise DataError("manifest must be a mapping with a 'predicates' entry", file=file)
    name = _opt_str(doc, "name", file)
    description = _opt_str(doc, "description", file) or ""
    raw = doc.get("predicates")
    if isinstance(raw, dict):
        raw = [{"name": k, **v} if isinstance(v, dict) else {"name": k, "_bad": v} for k, v in raw.items()]
    if not isinstance(raw, list) or not raw:
        raise DataError("manifest needs a non-empty 'predicates' list", file=file)
    preds = [_predicate(entry, i, file) for i, entry in enumerate(raw)]
    seen: set[str] = set()
    for p in preds:
        if p.name in seen:
            raise DataError(f"predicate {p.name} declared twice", file=file)
        seen.add(p.name)
    return Manifest(name=name, description=description, predicates=preds, file=file)


class _MergeKey(Exception):
    """Raised by `_no_merge_loader`'s loader at a ``<<`` merge key (carries its 1-based line)."""


_LOADER: list[type] = []


def _no_merge_loader() -> type:
    """`yaml.SafeLoader` that refuses merge keys (``<<``): merging copies mappings, so a few
    hundred bytes of nested ``<<: [*a, *a]`` expand exponentially (aliases alone only share).
    Built on first use: PyYAML is imported only when YAML is read or written."""
    if not _LOADER:
        yaml = import_optional("yaml")  # start-up: PyYAML loads only when YAML is read or written

        class _NoMergeLoader(yaml.SafeLoader):
            def flatten_mapping(self, node: yaml.MappingNode) -> None:
                """Refuse the mapping if it has a merge key, before anything is copied."""
                for key, _ in node.value:
                    if key.tag == "tag:yaml.org,2002:merge":
                        raise _MergeKey(key.start_mark.line + 1)
                super().flatten_mapping(node)

        _LOADER.append(_NoMergeLoader)
    return _LOADER[0]


def parse_yaml(text: str, file: str) -> Any:
    """Safe YAML (no merge keys, no tags); errors raise DataError naming `file` and the line."""
    return _parse_yaml(text, file)


def _expanded_size(doc: Any, limit: int) -> int | None:
    """How many values `doc` holds with every shared alias written out, if that is above `limit`
    (or it is recursive, ``&a [*a]``); None when it is within. Linear in the distinct values."""
    sizes: dict[int, int] = {}
    open_ids: set[int] = set()
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        obj, children_done = stack.pop()
        key = id(obj)
        items = list(obj.values()) + list(obj) if isinstance(obj, dict) else obj
        if children_done:
            open_ids.discard(key)
            total = 1 + sum(sizes.get(id(c), 1) for c in items)
            if total > limit:
                return total
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in open_ids:
            return limit + 1
        open_ids.add(key)
        stack.append((obj, True))
        for c in items:
            if isinstance(c, (list, dict)):
                if id(c) in open_ids:
                    return limit + 1
                if id(c) not in sizes:
                    stack.append((c, False))
    return None


def _parse_yaml(text: str, file: str) -> Any:
    yaml = import_optional("yaml")  # start-up: PyYAML loads only when YAML is read or written
    try:
        doc = yaml.load(text, Loader=_no_merge_loader())  # noqa: S506 - a SafeLoader subclass
    except _MergeKey as e:
        raise DataError("YAML merge keys (<<) are not supported in manifests; write the entries out",
                        file=file, line=e.args[0]) from None
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark is not None else None
        raise DataError(f"not valid YAML: {e.problem or e}", file=file, line=line) from None
    except Exception as e:  # noqa: BLE001 - any failure of a foreign parser is a data problem
        raise DataError(f"not valid YAML: {type(e).__name__}: {e}", file=file) from None
    if isinstance(doc, (list, dict)):
        limit = max(100_000, 4 * len(text))
        expanded = _expanded_size(doc, limit)
        if expanded is not None:
            raise DataError(f"YAML aliases (*name) expand this {len(text):,}-character file to more than "
                            f"{limit:,} values (or into itself): write the values out instead of sharing "
                            f"them", file=file, line=_first_alias_line(text))
    return doc


def _first_alias_line(text: str) -> int | None:
    """Line of the first alias (``*name``) in a YAML text, if any."""
    m = re.search(r"(?:^|[\s\[{,:-])\*[^\s,\[\]{}]+", text)
    return None if m is None else text.count("\n", 0, m.start() + 1) + 1


def _parse_json(text: str, file: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON: {e.msg}", file=file, line=e.lineno) from None
    except Exception as e:  # noqa: BLE001 - RecursionError, ValueError (huge ints), ...
        raise DataError(f"not valid JSON: {type(e).__name__}", file=file) from None


def _opt_str(doc: dict, key: str, file: str) -> str | None:
    v = doc.get(key)
    if v is None:
        return None
    if not isinstance(v, (str, int, float)) or isinstance(v, bool):
        raise DataError(f"manifest field {key!r} must be text", file=file)
    return str(v)


def _predicate(entry: object, i: int, file: str) -> Predicate:
    where = f"predicate #{i + 1}"
    if not isinstance(entry, dict):
        raise DataError(f"{where} must be a mapping with name, arity, types, ...", file=file)
    extra = set(map(str, entry)) - _PRED_KEYS
    if extra:
        raise DataError(f"{where}: unknown field(s) {', '.join(sorted(extra))}; "
                        f"allowed: {', '.join(sorted(_PRED_KEYS))}", file=file)
    name = entry.get("name")
    if not isinstance(name, str):
        raise DataError(f"{where}: 'name' must be text", file=file)
    where = f"predicate {name!r}"
    types = entry.get("types")
    if types is not None:
        if not isinstance(types, list) or len(types) > MAX_ARITY or not all(
                isinstance(t, str) and t.strip() for t in types):
            raise DataError(f"{where}: 'types' must be a list of type names", file=file)
    arity = entry.get("arity", None if types is None else len(types))
    if isinstance(arity, str) and arity.strip().isdigit() and len(arity) < 4:
        arity = int(arity)
    if isinstance(arity, bool) or not isinstance(arity, int) or not 0 <= arity <= MAX_ARITY:
        raise DataError(f"{where}: 'arity' must be a whole number from 0 to {MAX_ARITY}", file=file)
    flags = {}
    for key in ("closed", "explainable"):
        v = entry.get(key, True)
        if not isinstance(v, bool):
            raise DataError(f"{where}: {key!r} must be true or false", file=file)
        flags[key] = v
    texts = {}
    for key in ("template", "description"):
        v = entry.get(key)
        if v is not None and not isinstance(v, str):
            raise DataError(f"{where}: {key!r} must be text", file=file)
        texts[key] = v
    template = texts["template"] or None
    if template:
        _check_template(template, arity, where, file)
    try:
        return Predicate(name=name, arity=arity, types=tuple(t.strip() for t in types or ()),
                         closed=flags["closed"], explainable=flags["explainable"], template=template,
                         description=texts["description"] or "")
    except DataError as e:
        raise DataError(e.problem, file=file) from None


def _check_template(template: str, arity: int, where: str, file: str) -> None:
    """Templates may only use plain fields {0}..{arity-1} (no format specs: those can be abused)."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as e:
        raise DataError(f"{where}: template {template!r} is malformed ({e})", file=file) from None
    for _, fname, spec, conv in fields:
        if fname is None:
            continue
        if spec or conv or not fname.isdigit() or int(fname) >= arity:
            raise DataError(f"{where}: template {template!r} may only use the fields "
                            f"{{0}}..{{{arity - 1}}}" if arity else
                            f"{where}: template {template!r} of a 0-ary predicate has a field",
                            file=file)


# ---------------------------------------------------------------------- writing
def manifest_dict(name: str, description: str, predicates: Sequence[Predicate]) -> dict[str, Any]:
    """The manifest content of a dataset as plain data."""
    return {"name": name, "description": description, "predicates": [p.to_dict() for p in predicates]}


def write_manifest(ds: Any, path: str | os.PathLike) -> Path:
    """Write the schema of a `RelationalDataset` as a manifest (JSON if `path` ends in .json)."""
    path = Path(path)
    doc = manifest_dict(ds.name, ds.description, ds.predicates)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    else:
        yaml = import_optional("yaml")  # start-up: PyYAML loads only when YAML is read or written
        path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=False), encoding="utf-8")
    return path


def schema_from(schema: SchemaLike, limits: Limits | None = None) -> tuple[Schema, Manifest | None]:
    """A Schema from a Schema, a list of predicates, or a manifest path/upload (then also it)."""
    if isinstance(schema, Schema):
        return schema, None
    if isinstance(schema, (list, tuple)) and all(isinstance(p, Predicate) for p in schema) and (
            not schema or not isinstance(schema[0], str)):
        return Schema.of(list(schema)), None
    files = read_source(schema, limits, suffixes=(".yaml", ".yml", ".json"))  # type: ignore[arg-type]
    file = find_manifest(files) or (next(iter(files)) if len(files) == 1 else None)
    if file is None:
        raise DataError("no manifest (manifest.yaml or manifest.json) found for the schema")
    data = files[file]
    m = parse_manifest(data, file, limits)
    return Schema.of(m.predicates), m
