"""PSL projects read as PSL's own command line reads them (the layouts of linqs/psl-examples).

Two layouts:

* a runtime config (``psl --config X.json``; ``.yaml`` works too)::

      {
        "rules": ["20: Lived(P1, L) & Lived(P2, L) & (P1 != P2) -> Knows(P1, P2) ^2",
                  "Knows(P1, P2) = Knows(P2, P1) ."],        // or "rules": "model.psl"
        "predicates": {
          "Lived/2": {"observations": ["../data/lived_obs.txt"]},
          "Knows/2": {"targets": {"learn": [...], "infer": ["../data/knows_targets.txt"]},
                      "truth": [["Anna", "Bob", 1]], "evaluations": ["DiscreteEvaluator"]}
        },
        "options": {...}, "learn": {"rules": [...], "options": {...}}, "infer": {...}
      }

  Comments (``//``, ``/* */``, ``#``), trailing commas and single quotes are accepted, as PSL's
  Jackson reader does (`xcore.data.io.lenient_json`). A partition is a list (files, or inline
  rows of ``arity`` arguments and an optional value) or an object with ``all`` / ``learn`` /
  ``infer`` lists. A predicate is open when it has targets in the split or ``force-open``.
* the older pair ``--data X.data --model X.psl``: a YAML ``.data`` file with ``predicates:``
  (``Name/2: open|closed``) and ``observations:`` / ``targets:`` / ``truth:`` mapping predicates
  to a file or a list of files (optionally inside ``learn:`` / ``infer:`` sections), and a rule
  file with one rule per line. A folder or zip holding ``X-learn.data`` and ``X-eval.data`` is
  read as one project whose learn and infer splits come from those two files.

Names: PSL predicate names are case-insensitive (PSL upper-cases them). A predicate keeps the
spelling of its declaration (``Knows/2`` -> ``Knows``); data-section keys and rule atoms are
matched to it ignoring case, and rule atoms are rewritten to that spelling. Two declarations
that differ only in case are an error. PSL writes results as ``<NAME in upper case>.txt``
(`output_file_name`).

Splits: the ``infer`` split (the default) holds the ``all`` and ``infer`` data, ``learn`` the
``all`` and ``learn`` data. Paths are relative to the file that names them; on disk any path
works (as in PSL), inside an upload or zip a path must stay inside it. Predicate files are read
by `read_psl_file` (tab-separated arguments, optional value). Every problem raises `DataError`
naming the file, the line and the field.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset
from xcore.data.io.files import FileSet, Source, basename, decode_text, read_source, stem, suffix
from xcore.data.io.lenient_json import loads as lenient_json_loads
from xcore.data.io.limits import Limits
from xcore.data.io.manifest import MANIFEST_NAMES, parse_yaml
from xcore.data.io.psl_folder import read_psl_file
from xcore.data.schema import PARTITIONS, Predicate
from xcore.errors import DataError, ParseError

SPLITS = ("infer", "learn")
"""The data splits of a project: inference (default) and weight learning."""
_SPLIT_KEYS = ("all", "learn", "infer")
_CONFIG_PARTITIONS = {"observations": "obs", "targets": "targets", "truth": "truth"}
_PREDICATE_KEYS = {"name", "arity", "types", "force-open", "observations", "targets", "truth",
                   "evaluations", "options", "function", "model"}
_TOP_KEYS = {"rules", "predicates", "options", "learn", "infer"}
_PSL_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".data")
RULE_SUFFIXES = (".psl",)
UNLIMITED = Limits(max_file_bytes=1 << 62, max_total_bytes=1 << 62, max_members=1 << 30,
                   max_manifest_bytes=1 << 62, max_predicates=1 << 30)
"""Limits for local projects read by the command line (uploads keep the defaults)."""


def output_file_name(predicate: str) -> str:
    """The file PSL writes an open predicate's inferred values to: ``KNOWS.txt``."""
    return f"{predicate.upper()}.txt"


# ---------------------------------------------------------------------- data structures
@dataclass
class DataRef:
    """One data source of a partition: a file path (as written) or an inline row."""

    path: str | None
    row: list[Any] | None
    file: str
    """The config or .data file that names it."""
    line: int | None


@dataclass
class PredicateSpec:
    """A declared predicate with its data sources per partition and split key."""

    name: str
    arity: int
    file: str
    line: int | None
    force_open: bool = False
    declared_open: bool | None = None
    """Explicit open/closed of the .data layout (None in the JSON layout)."""
    sources: dict[tuple[str, str], list[DataRef]] = field(default_factory=dict)
    """(partition, split key) -> sources; partitions obs/targets/truth, keys all/learn/infer."""
    evaluations: list[Any] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def refs(self, partition: str, split: str) -> list[DataRef]:
        return self.sources.get((partition, "all"), []) + self.sources.get((partition, split), [])

    def is_open(self, split: str) -> bool:
        if self.declared_open is not None:
            return self.declared_open
        return self.force_open or bool(self.refs("targets", split))


@dataclass
class RuleSpec:
    """One rule as written, with where it was written."""

    text: str
    file: str
    line: int
    is_path: bool = False
    """True when `text` is the path of a rule file (``"rules": "model.psl"``), read later."""


@dataclass
class PSLProject:
    """A parsed PSL project: predicates, rules, options and evaluations; data is read on demand."""

    name: str
    config: str
    predicates: dict[str, PredicateSpec]
    """Upper-case name -> spec (PSL names are case-insensitive)."""
    rules: dict[str, list[RuleSpec]]
    """Split key (all/learn/infer) -> rules."""
    options: dict[str, Any] = field(default_factory=dict)
    split_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    reader: "ProjectFiles | None" = None

    @property
    def has_learn_split(self) -> bool:
        return bool(self.rules.get("learn")) or any(k[1] == "learn" for p in self.predicates.values()
                                                    for k in p.sources)

    @property
    def evaluations(self) -> dict[str, list[Any]]:
        """Declared evaluators per predicate (kept as written; ``--eval`` reports metrics)."""
        return {p.name: p.evaluations for p in self.predicates.values() if p.evaluations}

    def predicate_name(self, name: str) -> str | None:
        """The declared spelling of a predicate named in any case, or None."""
        spec = self.predicates.get(name.upper())
        return spec.name if spec else None

    def rule_specs(self, split: str = "infer") -> list[RuleSpec]:
        _check_split(split)
        return list(self.rules.get("all", [])) + list(self.rules.get(split, []))

    def parsed_rules(self, split: str = "infer") -> list:
        """The split's rules parsed, with predicates renamed to their declared spelling and checked."""
        return [self._parse_rule(r) for r in self.rule_specs(split)]

    def _parse_rule(self, spec: RuleSpec):
        from xcore.logic.parser import parse_rule

        try:
            rule = parse_rule(spec.text, dialect="psl")
        except ParseError as e:
            raise DataError(f"rule `{spec.text.strip()}`, column {e.column}: {e.problem}",
                            file=spec.file, line=spec.line) from e

        def rename(atom):
            declared = self.predicates.get(atom.predicate.upper())
            if declared is None:
                known = ", ".join(p.name for p in self.predicates.values()) or "none"
                raise DataError(f"rule `{spec.text.strip()}` uses predicate {atom.predicate!r}, which the "
                                f"project does not declare (declared: {known})", file=spec.file, line=spec.line)
            if len(atom.args) != declared.arity:
                raise DataError(f"rule `{spec.text.strip()}`: {declared.name} takes {declared.arity} "
                                f"argument{'s' if declared.arity != 1 else ''} but `{atom}` has "
                                f"{len(atom.args)}", file=spec.file, line=spec.line)
            return type(atom)(declared.name, atom.args)

        return rule.map_atoms(rename)

    def dataset(self, split: str = "infer", limits: Limits | None = None) -> RelationalDataset:
        """The split's data as a `RelationalDataset` carrying the split's rules (PSL text)."""
        _check_split(split)
        if split == "learn" and not self.has_learn_split:
            raise DataError("the project has no learn split (no 'learn' data or rules)", file=self.config)
        rules = self.parsed_rules(split)
        reader = self.reader or ProjectFiles(None, disk=True, limits=limits)
        preds: list[Predicate] = []
        parts: Parts = {}
        for spec in self.predicates.values():
            is_open = spec.is_open(split)
            if spec.declared_open is False and spec.refs("targets", split):
                raise DataError(f"predicate {spec.name} is declared closed but has targets",
                                file=spec.file, line=spec.line)
            try:
                pred = Predicate(spec.name, spec.arity, closed=not is_open)
            except DataError as e:
                raise DataError(e.problem, file=spec.file, line=spec.line) from None
            preds.append(pred)
            for key, part in _CONFIG_PARTITIONS.items():
                for ref in spec.refs(part, split):
                    add(parts, pred.name, part, _read_ref(ref, pred, key, reader))
        ds = build_dataset(preds, parts, self.name)
        ds.rules = tuple(r.text("psl") for r in rules)
        return ds


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise DataError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")


# ---------------------------------------------------------------------- reading files
class ProjectFiles:
    """Resolves paths written in a project file and reads them (from disk or an in-memory file set)."""

    def __init__(self, files: FileSet | None, disk: bool, limits: Limits | None = None) -> None:
        self.files = files or {}
        self.disk = disk
        """On disk, paths resolve like PSL's (anywhere); `files` then only caches what was read."""
        self.limits = limits
        self.root = _common_root(list(self.files)) if not disk else None

    def resolve(self, ref: str, base: str, file: str, line: int | None) -> str:
        """The key (in memory) or path (on disk) that `ref`, written in `base`, names."""
        if self.disk:
            p = Path(ref)
            return os.path.normpath(p if p.is_absolute() else Path(base).parent / p)
        norm = ref.replace("\\", "/")
        if norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
            raise DataError(f"absolute path {ref!r} in an upload: paths must be relative to the project",
                            file=file, line=line)
        key = posixpath.normpath(posixpath.join(posixpath.dirname(base.replace("\\", "/")), norm))
        if key == ".." or key.startswith("../") or (self.root and not (key + "/").startswith(self.root + "/")):
            raise DataError(f"path {ref!r} leaves the project (it resolves outside the upload)",
                            file=file, line=line)
        return key

    def read(self, ref: str, base: str, file: str, line: int | None, what: str) -> tuple[str, bytes]:
        """(display name, bytes) of the file `ref`; a missing file names `file`, `line` and `what`."""
        key = self.resolve(ref, base, file, line)
        if key in self.files:
            return key, self.files[key]
        if self.disk and Path(key).is_file():
            (name, data), = read_source(key, self.limits).items()
            return name, data
        raise DataError(f"{what} file {ref!r} does not exist (looked for {key})", file=file, line=line)


def _common_root(keys: list[str]) -> str:
    """The folder every key of an in-memory file set lies under ("" if none)."""
    dirs = [posixpath.dirname(k.replace("\\", "/")) for k in keys]
    if not dirs:
        return ""
    try:
        return posixpath.commonpath(dirs) if all(dirs) else ""
    except ValueError:
        return ""


def _read_ref(ref: DataRef, pred: Predicate, key: str, reader: ProjectFiles):
    """The atom table of one data source (a file via `read_psl_file`, or an inline row)."""
    if ref.row is not None:
        return _inline_frame(ref, pred, key)
    name, data = reader.read(ref.path or "", ref.file, ref.file, ref.line, f"{pred.name} {key}")
    if not data.strip(b" \t\r\n\xef\xbb\xbf"):  # PSL accepts empty data files
        return atom_frame([[] for _ in range(pred.arity)], None, name, np.zeros(0, dtype=np.int64))
    return read_psl_file(data, name, pred)


def _inline_frame(ref: DataRef, pred: Predicate, key: str):
    row = ref.row or []
    k = pred.arity
    if len(row) not in (k, k + 1):
        raise DataError(f"{pred.name} {key}: inline row {row!r} has {len(row)} values; {pred.name} "
                        f"has arity {k} (expected {k} arguments and an optional value)",
                        file=ref.file, line=ref.line)
    texts = []
    for v in row:
        if v is None or isinstance(v, (list, dict)):
            raise DataError(f"{pred.name} {key}: inline row {row!r} holds {v!r}; values must be text or "
                            f"numbers", file=ref.file, line=ref.line)
        texts.append(("true" if v else "false") if isinstance(v, bool) else str(v))
    args = [[t] for t in texts[:k]]
    values = np.array([texts[k]], dtype=object) if len(row) == k + 1 else None
    return atom_frame(args, values, ref.file, np.array([ref.line or 1], dtype=np.int64))


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
    import json

    for needle in (json.dumps(value), f"'{value}'", value):
        line = _line_of(text, needle, start_line)
        if line is not None:
            return line
    return None


# ---------------------------------------------------------------------- JSON/YAML runtime config
def parse_config(data: bytes, file: str) -> PSLProject:
    """Parse a runtime config (JSON with PSL's lenient syntax, or YAML) into a `PSLProject`."""
    text = decode_text(data, file)
    doc = parse_yaml(text, file) if suffix(file) in (".yaml", ".yml") else lenient_json_loads(text, file)
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
    return PSLProject(name=_project_name(file), config=file, predicates=preds, rules=rules,
                      options=_options(doc.get("options"), text, file, "options"),
                      split_options=split_options)


def _project_name(file: str) -> str:
    name = re.sub(r"[-_.]?(eval|learn|infer)$", "", stem(file))
    return name or stem(file)


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
            raise DataError(f"'{where}' entry {i + 1} must be a rule string, got {r!r}", file=file, line=line)
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
    for json_key, part in _CONFIG_PARTITIONS.items():
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
                                    f"(lists), got {item!r}", file=file, line=line)
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
        if not isinstance(value, str) or value.strip().lower() not in ("open", "closed"):
            raise DataError(f"predicate {key!r}: write 'open' or 'closed', got {value!r}", file=file, line=line)
        if "/" not in key:
            raise DataError(f"predicate {key!r}: write the arity after the slash ('Name/2')", file=file, line=line)
        name, arity = _name_and_arity(key, {}, file, line)
        spec = PredicateSpec(name=name, arity=arity, file=file, line=line,
                             declared_open=value.strip().lower() == "open")
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


def _data_partition(section: str, body: Any, split: str, preds: dict[str, PredicateSpec], text: str,
                    file: str) -> None:
    part = _CONFIG_PARTITIONS.get(section.lower())
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
            raise DataError(f"'{section}' names predicate {pred_name!r}, which 'predicates:' does not declare",
                            file=file, line=pline)
        items = [paths] if isinstance(paths, str) else paths
        if not isinstance(items, list) or not all(isinstance(p, str) for p in items):
            raise DataError(f"'{section}' of {pred_name}: expected a file path or a list of paths", file=file,
                            line=pline)
        refs = spec.sources.setdefault((part, split), [])
        for p in items:
            refs.append(DataRef(p.strip(), None, file, _line_of(text, p.strip(), pline or 1) or pline))


def parse_rule_file(data: bytes, file: str) -> list[RuleSpec]:
    """One rule per non-blank line of a ``.psl`` file (``#``, ``//`` and ``/* */`` comments skipped)."""
    text = decode_text(data, file, allow_empty=True)
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    out = []
    for i, line in enumerate(text.split("\n")):
        body = re.sub(r"(#|//).*$", "", line) if "'" not in line and '"' not in line else line
        if body.strip():
            out.append(RuleSpec(text=line, file=file, line=i + 1))
    return out


# ---------------------------------------------------------------------- finding and loading projects
def looks_like_config(data: bytes, file: str) -> bool:
    """Whether a file is a PSL project file: a runtime config or a ``.data`` YAML."""
    if basename(file).lower() in MANIFEST_NAMES:
        return False
    head = data[:65536].decode("utf-8-sig", "replace")
    sfx = suffix(file)
    if sfx == ".data":
        return re.search(r"^predicates\s*:", head, re.M) is not None
    if sfx in (".json", ".yaml", ".yml"):
        return (re.search(r"""["']?rules["']?\s*:""", head) is not None
                and re.search(r"""["']?[A-Za-z_$][\w$]*/\d+["']?\s*:""", head) is not None)
    return False


def find_configs(names: list[str], read: Callable[[str], bytes]) -> list[str]:
    """The project files among `names`, best first: JSON/YAML configs, then ``.data`` (eval first)."""
    found = [n for n in sorted(names) if suffix(n) in CONFIG_SUFFIXES and looks_like_config(read(n), n)]
    configs = [n for n in found if suffix(n) != ".data"]
    data = sorted((n for n in found if suffix(n) == ".data"), key=lambda n: ("learn" in stem(n).lower(), n))
    return configs + data


def read_project(source: Source | None = None, *, config: str | None = None, data: str | None = None,
                 model: str | None = None, limits: Limits | None = None) -> PSLProject:
    """Parse a PSL project (no data read yet).

    `source` is a config file, a ``.data`` file, a folder, a zip, or an in-memory file set; or
    give `config` (JSON/YAML), or `data` (``.data``) with `model` (``.psl``), as paths. In a
    folder or file set, `config` / `data` / `model` may name the files to use.
    """
    if source is None:
        if config is not None:
            source = config
        elif data is not None:
            source = data
        else:
            raise DataError("give a PSL config (--config X.json) or a .data file and a model (--data, --model)")
    if model is not None and Path(model).is_file():
        model = os.path.abspath(model)  # a path given on the command line is relative to the cwd
    if isinstance(source, (str, os.PathLike)) and Path(source).is_file() and suffix(str(source)) != ".zip":
        reader = ProjectFiles(None, disk=True, limits=limits or UNLIMITED)
        path = str(source)
        raw = reader.read(path, path, path, None, "project")[1]
        return _from_file(path, raw, reader, model, lambda ref: reader.read(ref, path, path, None, "rules"))
    on_disk = isinstance(source, (str, os.PathLike)) and Path(source).is_dir()
    files = _file_set(source, limits)
    reader = ProjectFiles(files, disk=on_disk, limits=limits)
    return project_from_files(files, reader, config=config or data, model=model)


def _file_set(source: Source, limits: Limits | None) -> FileSet:
    from xcore.data.io.archive import is_zip, read_zip

    files = read_source(source, limits, suffixes=(*CONFIG_SUFFIXES, *RULE_SUFFIXES, ".txt", ".tsv", ".csv",
                                                  ".zip"))
    if len(files) == 1:
        (name, data), = files.items()
        if suffix(name) == ".zip" or is_zip(data):
            return read_zip(data, name, limits)
    return files


def project_from_files(files: FileSet, reader: ProjectFiles, config: str | None = None,
                       model: str | None = None) -> PSLProject:
    """The project in an in-memory file set (a folder, zip or uploads)."""
    if config is not None:
        chosen = [k for k in files if k == config or basename(k) == basename(config)]
        if not chosen:
            raise DataError(f"no project file named {config!r}", file=_common_root(list(files)) or None)
        candidates = chosen
    else:
        candidates = find_configs(list(files), files.__getitem__)
    if not candidates:
        raise DataError("no PSL config (.json with 'rules' and 'predicates') or .data file found",
                        file=next(iter(sorted(files)), None))
    first = candidates[0]
    if suffix(first) != ".data":
        jsons = [c for c in candidates if suffix(c) != ".data"]
        if len(jsons) > 1 and config is None:
            raise DataError(f"several PSL configs ({', '.join(basename(c) for c in jsons)}); choose one",
                            file=jsons[1])
        return _from_file(first, files[first], reader, model, lambda ref: reader.read(ref, first, first, None, "rules"))
    datas = [c for c in candidates if suffix(c) == ".data"]
    learn = next((d for d in datas if "learn" in stem(d).lower()), None)
    infer = [d for d in datas if d != learn]
    if len(infer) > 1 and config is None:
        raise DataError(f"several .data files ({', '.join(basename(d) for d in infer)}); choose one",
                        file=infer[1])
    main = infer[0] if infer else datas[0]
    model_key = _find_model(files, main, model)
    project = _from_data_files(main, files[main], learn if (learn and learn != main) else None,
                               files[learn] if learn and learn != main else None)
    project.rules["all"] = parse_rule_file(files[model_key], model_key)
    project.reader = reader
    return project


def _find_model(files: FileSet, data_key: str, model: str | None) -> str:
    rules = [k for k in files if suffix(k) in RULE_SUFFIXES]
    if model is not None:
        hit = [k for k in rules if k == model or basename(k) == basename(model)]
        if not hit:
            raise DataError(f"no rule file named {model!r}", file=data_key)
        return hit[0]
    if len(rules) == 1:
        return rules[0]
    base = _project_name(data_key)
    same = [k for k in rules if stem(k) == base or stem(k) == stem(data_key)]
    if len(same) == 1:
        return same[0]
    if not rules:
        raise DataError("a .data project needs its rules: add the .psl model file", file=data_key)
    raise DataError(f"several rule files ({', '.join(basename(r) for r in rules)}); choose one", file=data_key)


def _from_file(path: str, raw: bytes, reader: ProjectFiles, model: str | None,
               read_rules: Callable[[str], tuple[str, bytes]]) -> PSLProject:
    if suffix(path) == ".data":
        project = _from_data_files(path, raw, None, None)
        if model is None:
            sibling = _disk_model(path) if reader.disk else None
            if sibling is None:
                raise DataError("a .data project needs its rules: give the model (--model X.psl)", file=path)
            model = sibling
        name, data = read_rules(model)
        project.rules["all"] = parse_rule_file(data, name)
    else:
        project = parse_config(raw, path)
        for split, specs in list(project.rules.items()):
            if len(specs) == 1 and specs[0].is_path:  # "rules": "model.psl"
                name, data = reader.read(specs[0].text, path, path, specs[0].line, "rules")
                project.rules[split] = parse_rule_file(data, name)
    project.reader = reader
    return project


def _disk_model(data_path: str) -> str | None:
    folder = Path(data_path).parent
    rules = sorted(folder.glob("*.psl"))
    if len(rules) == 1:
        return str(rules[0])
    base = _project_name(data_path)
    same = [r for r in rules if r.stem in (base, Path(data_path).stem)]
    return str(same[0]) if len(same) == 1 else None


def _from_data_files(main: str, main_bytes: bytes, learn: str | None, learn_bytes: bytes | None) -> PSLProject:
    preds: dict[str, PredicateSpec] = {}
    parse_data_file(main_bytes, main, "infer" if learn else "all", into=preds)
    if learn is not None and learn_bytes is not None:
        parse_data_file(learn_bytes, learn, "learn", into=preds)
    return PSLProject(name=_project_name(main), config=main, predicates=preds, rules={"all": []})


def load_psl_project(source: Source | None = None, name: str | None = None, *, split: str = "infer",
                     config: str | None = None, data: str | None = None, model: str | None = None,
                     limits: Limits | None = None) -> RelationalDataset:
    """Load a PSL project's data (the `split`) as a dataset carrying the project's rules."""
    project = read_project(source, config=config, data=data, model=model, limits=limits)
    ds = project.dataset(split, limits)
    if name:
        ds.name = name
    return ds
