"""Parsing PSL project files: runtime configs (JSON/YAML) and ``.data`` YAML files (``.psl`` rule files:
`xcore.data.io.psl_rule_file`).

Each parser returns declarations (`PredicateSpec`, `RuleSpec`, `PSLProject`) that name the file
and line of everything they hold, so that later problems (a missing file, a bad rule) name them.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from xcore.data.io.files import basename, decode_text, stem, suffix
from xcore.data.io.lenient_json import loads as lenient_json_loads
from xcore.data.io.manifest import MANIFEST_NAMES, parse_yaml
from xcore.data.io.psl_spec import CONFIG_PARTITIONS, SPLITS, DataRef, PredicateSpec, PSLProject, RuleSpec, project_name
from xcore.errors import DataError, brief

_SPLIT_KEYS = ("all", "learn", "infer")
_PREDICATE_KEYS = {"name", "arity", "types", "force-open", "observations", "targets", "truth",
                   "evaluations", "options", "function", "model"}
_TOP_KEYS = {"rules", "predicates", "options", "learn", "infer"}
_PSL_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".data")
RULE_SUFFIXES = (".psl",)


# ---------------------------------------------------------------------- text positions
def _line_of(text: str, needle: str, start_line: int = 1) -> int | None:
    """1-based line of the first occurrence of `needle` at or after `start_line`."""
    offset = 0
    if start_line > 1:
        offset = -1
        for _ in range(start_line - 1):
            offset = text.find("\n", offset + 1)
            if offset < 0:
                return None
    i = text.find(needle, max(offset, 0))
    return None if i < 0 else text.count("\n", 0, i) + 1


def _quoted_line(text: str, value: str, start_line: int = 1) -> int | None:
    """Line of `value` written as a JSON/YAML string (double, single or no quotes)."""
    for needle in (json.dumps(value), f"'{value}'", value):
        line = _line_of(text, needle, start_line)
        if line is not None:
            return line
    return None


# ---------------------------------------------------------------------- JSON/YAML runtime config
def parse_config(data: bytes, file: str) -> PSLProject:
    """Parse a runtime config (JSON with PSL's lenient syntax, or YAML) into a `PSLProject`."""
    text = decode_text(data, file)
    doc = _read_document(data, suffix(file) in (".yaml", ".yml"), text, file, keep=False)
    if not isinstance(doc, dict):
        raise DataError("a PSL config must be an object with 'rules' and 'predicates'", file=file, line=1)
    extra = sorted(set(map(str, doc)) - _TOP_KEYS)
    if extra:
        raise DataError(f"unknown config key(s) {', '.join(map(repr, extra))}; PSL configs have "
                        f"{', '.join(sorted(_TOP_KEYS))}", file=file, line=_quoted_line(text, extra[0]))
    raw_preds = doc.get("predicates")
    if not isinstance(raw_preds, dict) or not raw_preds:
        raise DataError("'predicates' must be a non-empty object keyed 'Name/arity'", file=file,
                        line=_quoted_line(text, "predicates"))
    preds: dict[str, PredicateSpec] = {}
    for key, body in raw_preds.items():
        spec = _config_predicate(str(key), body, text, file)
        _declare(preds, spec)
    rules: dict[str, list[RuleSpec]] = {"all": _config_rules(doc.get("rules"), text, file, "rules")}
    split_options: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        section = doc.get(split)
        if section is None:
            continue
        if not isinstance(section, dict) or set(section) - {"rules", "options"}:
            raise DataError(f"'{split}' must be an object with 'rules' and/or 'options'", file=file,
                            line=_quoted_line(text, split))
        rules[split] = _config_rules(section.get("rules"), text, file, f"{split}.rules")
        split_options[split] = _options(section.get("options"), text, file, f"{split}.options")
    return PSLProject(name=project_name(file), config=file, predicates=preds, rules=rules,
                      options=_options(doc.get("options"), text, file, "options"),
                      split_options=split_options)


def _options(raw: Any, text: str, file: str, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise DataError(f"'{where}' must be an object of option names to values", file=file,
                        line=_quoted_line(text, where.split(".")[-1]))
    return {str(k): v for k, v in raw.items()}


def _config_rules(raw: Any, text: str, file: str, where: str) -> list[RuleSpec]:
    """Rules given as a list of strings, or as the path of a rule file (read later)."""
    if raw is None:
        return []
    if isinstance(raw, str):
        return [RuleSpec(text=raw, file=file, line=_quoted_line(text, raw) or 1, is_path=True)]
    if not isinstance(raw, list):
        raise DataError(f"'{where}' must be a list of rule strings or the path of a rule file", file=file,
                        line=_quoted_line(text, where.split(".")[-1]))
    out: list[RuleSpec] = []
    line = _quoted_line(text, where.split(".")[-1]) or 1
    for i, r in enumerate(raw):
        if not isinstance(r, str):
            raise DataError(f"'{where}' entry {i + 1} must be a rule string, got {brief(r)}", file=file, line=line)
        line = _quoted_line(text, r, line) or line
        out.append(RuleSpec(text=r, file=file, line=line))
    return out


def _config_predicate(key: str, body: Any, text: str, file: str) -> PredicateSpec:
    line = _quoted_line(text, key)
    where = f"predicate {key!r}"
    if not isinstance(body, dict):
        raise DataError(f"{where} must be an object (observations, targets, truth, ...)", file=file, line=line)
    extra = sorted(set(map(str, body)) - _PREDICATE_KEYS)
    if extra:
        raise DataError(f"{where}: unknown field(s) {', '.join(map(repr, extra))}; allowed: "
                        f"{', '.join(sorted(_PREDICATE_KEYS))}", file=file,
                        line=_quoted_line(text, extra[0], line or 1) or line)
    for unsupported in ("function", "model"):
        if body.get(unsupported) is not None:
            raise DataError(f"{where}: '{unsupported}' predicates (PSL's external functions and supporting "
                            f"models) are not supported by xcore", file=file, line=line)
    name, arity = _name_and_arity(key, body, file, line)
    spec = PredicateSpec(name=name, arity=arity, file=file, line=line)
    force = body.get("force-open", False)
    if not isinstance(force, bool):
        raise DataError(f"{where}: 'force-open' must be true or false", file=file, line=line)
    spec.force_open = force
    for json_key, part in CONFIG_PARTITIONS.items():
        raw = body.get(json_key)
        if raw is None:
            continue
        splits = {"all": raw} if isinstance(raw, list) else raw
        if not isinstance(splits, dict):
            raise DataError(f"{where}: '{json_key}' must be a list (files or rows) or an object with "
                            f"all/learn/infer lists", file=file, line=line)
        for split, items in splits.items():
            if split not in _SPLIT_KEYS:
                raise DataError(f"{where}: unknown split {split!r} in '{json_key}'; use all, learn or infer",
                                file=file, line=line)
            if not isinstance(items, list):
                raise DataError(f"{where}: '{json_key}.{split}' must be a list of files or rows",
                                file=file, line=line)
            refs = spec.sources.setdefault((part, split), [])
            for item in items:
                if isinstance(item, str):
                    refs.append(DataRef(item, None, file, _quoted_line(text, item, line or 1) or line))
                elif isinstance(item, list):
                    refs.append(DataRef(None, item, file, line))
                else:
                    raise DataError(f"{where}: '{json_key}' entries must be file paths or rows "
                                    f"(lists), got {brief(item)}", file=file, line=line)
    evals = body.get("evaluations") or []
    if not isinstance(evals, list):
        raise DataError(f"{where}: 'evaluations' must be a list", file=file, line=line)
    spec.evaluations = list(evals)
    spec.options = _options(body.get("options"), text, file, f"{key}.options")
    return spec


def _name_and_arity(key: str, body: dict, file: str, line: int | None) -> tuple[str, int]:
    name, _, arity_text = key.partition("/")
    name = name.strip()
    declared = body.get("arity")
    types = body.get("types")
    arity: int | None = None
    if arity_text:
        if not arity_text.strip().isdigit():
            raise DataError(f"predicate {key!r}: write the arity after the slash ('Name/2')", file=file, line=line)
        arity = int(arity_text)
    if declared is not None:
        if isinstance(declared, bool) or not isinstance(declared, int):
            raise DataError(f"predicate {key!r}: 'arity' must be a whole number", file=file, line=line)
        if arity is not None and arity != declared:
            raise DataError(f"predicate {key!r}: arity {declared} disagrees with the name's arity {arity}",
                            file=file, line=line)
        arity = declared
    if types is not None:
        if not isinstance(types, list):
            raise DataError(f"predicate {key!r}: 'types' must be a list", file=file, line=line)
        if arity is not None and len(types) != arity:
            raise DataError(f"predicate {key!r}: {len(types)} types for arity {arity}", file=file, line=line)
        arity = len(types) if arity is None else arity
    if arity is None or arity <= 0:
        raise DataError(f"predicate {key!r}: missing or bad arity (write 'Name/2')", file=file, line=line)
    if not _PSL_NAME.match(name):
        raise DataError(f"predicate {key!r}: {name!r} is not a predicate name", file=file, line=line)
    return name, arity


def _declare(preds: dict[str, PredicateSpec], spec: PredicateSpec) -> None:
    """Add a declaration; PSL names are case-insensitive, so names equal ignoring case clash."""
    upper = spec.name.upper()
    old = preds.get(upper)
    if old is None:
        preds[upper] = spec
        return
    if old.name != spec.name or old.arity != spec.arity:
        raise DataError(f"predicate {spec.name}/{spec.arity} is declared again as {old.name}/{old.arity} "
                        f"(PSL predicate names ignore case)", file=spec.file, line=spec.line)
    if old.declared_open is not None and spec.declared_open is not None and old.declared_open != spec.declared_open:
        raise DataError(f"predicate {spec.name} is open in one data file and closed in another",
                        file=spec.file, line=spec.line)
    for k, refs in spec.sources.items():
        old.sources.setdefault(k, []).extend(refs)


# ---------------------------------------------------------------------- .data + .psl
def parse_data_file(data: bytes, file: str, split_key: str = "all",
                    into: dict[str, PredicateSpec] | None = None) -> dict[str, PredicateSpec]:
    """Parse an older ``.data`` YAML file into predicate specs (its data under `split_key`)."""
    text = decode_text(data, file)
    doc = parse_yaml(text, file)
    if not isinstance(doc, dict) or not isinstance(doc.get("predicates"), dict):
        raise DataError("a PSL .data file needs a 'predicates:' block ('Name/2: open' or 'closed')",
                        file=file, line=1)
    preds = into if into is not None else {}
    local: dict[str, PredicateSpec] = {}
    for key, value in doc["predicates"].items():
        key = str(key)
        line = _line_of(text, key)
        is_open, details = _data_predicate(key, value, file, line)
        if "/" not in key:
            raise DataError(f"predicate {key!r}: write the arity after the slash ('Name/2')", file=file, line=line)
        name, arity = _name_and_arity(key, details, file, line)
        spec = PredicateSpec(name=name, arity=arity, file=file, line=line, declared_open=is_open)
        if name.upper() in local:
            raise DataError(f"predicate {name} declared twice (PSL names ignore case)", file=file, line=line)
        local[name.upper()] = spec
    for section, body in doc.items():
        lower = str(section).lower()
        if lower in ("predicates", "predicatedetails"):
            continue
        if lower in SPLITS and split_key == "all":
            if not isinstance(body, dict):
                raise DataError(f"'{section}:' must map observations/targets/truth to files", file=file,
                                line=_line_of(text, f"{section}:"))
            for sub, sub_body in body.items():
                _data_partition(str(sub), sub_body, lower, local, text, file)
            continue
        _data_partition(str(section), body, split_key, local, text, file)
    for spec in local.values():
        _declare(preds, spec)
    return preds


def _data_predicate(key: str, value: Any, file: str, line: int | None) -> tuple[bool, dict]:
    """Open or closed, and the details (``types``), of a ``.data`` predicate entry.

    PSL reads ``Name/2: open`` or a list such as ``[closed, block, {types: [UniqueIntID, ...]}]``
    (``block`` marks a blocking predicate, which is closed; it changes nothing else here).
    """
    items = value if isinstance(value, list) else [value]
    states: list[str] = []
    details: dict = {}
    for item in items:
        if isinstance(item, str) and item.strip().lower() in ("open", "closed", "block"):
            states.append(item.strip().lower())
        elif isinstance(item, dict) and set(map(str, item)) <= {"types"}:
            details.update({str(k): v for k, v in item.items()})
        else:
            raise DataError(f"predicate {key!r}: expected 'open', 'closed', 'block' or 'types: [...]', got "
                            f"{brief(item)}", file=file, line=line)
    kinds = {s for s in states if s != "block"}
    if len(kinds) != 1:
        raise DataError(f"predicate {key!r}: write exactly one of 'open' or 'closed', got {brief(value)}",
                        file=file, line=line)
    if "open" in kinds and "block" in states:
        raise DataError(f"predicate {key!r}: a blocking predicate must be closed", file=file, line=line)
    return kinds == {"open"}, details


def _data_partition(section: str, body: Any, split: str, preds: dict[str, PredicateSpec], text: str,
                    file: str) -> None:
    part = CONFIG_PARTITIONS.get(section.lower())
    line = _line_of(text, f"{section}:")
    if part is None:
        raise DataError(f"unknown section {section!r}; a .data file has predicates, observations, targets "
                        f"and truth (and optionally learn/infer sections of them)", file=file, line=line)
    if body is None:
        return
    if not isinstance(body, dict):
        raise DataError(f"'{section}:' must map predicates to a file or a list of files", file=file, line=line)
    for pred_name, paths in body.items():
        pline = _line_of(text, f"{pred_name}", line or 1) or line
        spec = preds.get(str(pred_name).upper())
        if spec is None:
            raise DataError(f"'{section}' names predicate {brief(pred_name)}, which 'predicates:' does not declare",
                            file=file, line=pline)
        items = [paths] if isinstance(paths, str) else paths
        if not isinstance(items, list) or not all(isinstance(p, str) for p in items):
            raise DataError(f"'{section}' of {pred_name}: expected a file path or a list of paths", file=file,
                            line=pline)
        refs = spec.sources.setdefault((part, split), [])
        for p in items:
            refs.append(DataRef(p.strip(), None, file, _line_of(text, p.strip(), pline or 1) or pline))


# ---------------------------------------------------------------------- finding and loading projects
def looks_like_config(data: bytes, file: str) -> bool:
    """Whether a file is a PSL project file: a runtime config or a ``.data`` YAML.

    Decided on the whole file with the parser's own reader, so detection and parsing agree: a
    ``.json``/``.yaml`` config is a mapping with a ``predicates`` mapping and ``rules`` (at the top
    or in ``learn``/``infer``), however its predicates are declared (``Name/2``, ``arity`` or
    ``types``) and wherever the keys come in the file. A file the reader rejects still counts when
    its text has both keys, so that parsing reports the syntax error with its line.
    """
    if basename(file).lower() in MANIFEST_NAMES:
        return False
    sfx = suffix(file)
    if sfx not in CONFIG_SUFFIXES:
        return False
    return _looks_like_config(data, sfx)


_DOCUMENTS: dict[tuple[bytes, bool], Any] = {}
"""The last config document detection read, by (bytes, is YAML): parsing takes it instead of
reading the file a second time (at most one is kept; parsing removes it)."""


def _read_document(data: bytes, is_yaml: bool, text: str, file: str, keep: bool) -> Any:
    """A config's document (YAML, or JSON as PSL reads it); `keep` it for the parse that follows."""
    key = (data, is_yaml)
    doc = _DOCUMENTS.pop(key, _DOCUMENTS) if not keep else _DOCUMENTS.get(key, _DOCUMENTS)
    if doc is not _DOCUMENTS:
        return doc  # read-only: parsing keeps references to its rows
    doc = parse_yaml(text, file) if is_yaml else lenient_json_loads(text, file)
    if keep:
        _DOCUMENTS.clear()
        _DOCUMENTS[key] = doc
    return doc


def _looks_like_config(data: bytes, sfx: str) -> bool:
    """`looks_like_config` by suffix."""
    if data.find(b"\x00") >= 0:
        return False
    try:
        text, readable = decode_text(data, "<config>"), True  # decoded as parsing decodes it
    except DataError:
        text, readable = data.decode("utf-8-sig", "replace"), False
    if sfx == ".data":
        return re.search(r"^predicates\s*:", text, re.M) is not None
    if readable:
        try:
            doc = _read_document(data, sfx in (".yaml", ".yml"), text, "<config>", keep=True)
        except DataError:
            readable = False
    if not readable:  # parsing will name the problem and its line
        return (re.search(r"""["']?\brules["']?\s*:""", text) is not None
                and re.search(r"""["']?\bpredicates["']?\s*:""", text) is not None)
    if not isinstance(doc, dict) or not isinstance(doc.get("predicates"), dict):
        return False
    return "rules" in doc or any(isinstance(doc.get(s), dict) and "rules" in doc[s] for s in SPLITS)


def find_configs(names: list[str], read: Callable[[str], bytes]) -> list[str]:
    """The project files among `names`, best first: JSON/YAML configs, then ``.data`` (eval first)."""
    found = [n for n in sorted(names) if suffix(n) in CONFIG_SUFFIXES and looks_like_config(read(n), n)]
    configs = [n for n in found if suffix(n) != ".data"]
    data = sorted((n for n in found if suffix(n) == ".data"), key=lambda n: ("learn" in stem(n).lower(), n))
    return configs + data


