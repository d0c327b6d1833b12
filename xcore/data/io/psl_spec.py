"""What a PSL project declares, and reading its data into a dataset (see `xcore.data.io.psl_project`).

`PSLProject` holds the predicates (with their data sources per partition and split), the rules
as written and the options; `PSLProject.dataset` reads the split's files through `ProjectFiles`
(with `read_psl_file`) and inline rows, and parses the rules with the declared predicate names.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset
from xcore.data.io.files import FileSet, read_source, stem
from xcore.data.io.limits import Limits
from xcore.data.io.psl_folder import read_psl_file
from xcore.data.schema import Predicate
from xcore.errors import DataError, ParseError, brief
from xcore.logic.parser import parse_rule
from xcore.logic.rule_identity import first_of_each

SPLITS = ("infer", "learn")
"""The data splits of a project: inference (default) and weight learning."""
CONFIG_PARTITIONS = {"observations": "obs", "targets": "targets", "truth": "truth"}
"""PSL's partition names and the dataset's."""


def project_name(file: str) -> str:
    """A project's name from its config or .data file (``lastfm-eval.data`` -> ``lastfm``)."""
    name = re.sub(r"[-_.]?(eval|learn|infer)$", "", stem(file))
    return name or stem(file)


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
        """The split's rules parsed, with predicates renamed to their declared spelling and checked,
        without the rules Java PSL's model skips as already added (`xcore.logic.rule_identity`)."""
        return first_of_each([self._parse_rule(r) for r in self.rule_specs(split)])[0]

    def split_rules(self, split: str) -> list:
        """The parsed rules written for the split itself (not for every split), duplicates skipped as
        in `parsed_rules`: what a model learned on another split infers with beside its own rules."""
        common = first_of_each([self._parse_rule(r) for r in self.rules.get("all", [])])[0]
        return self.parsed_rules(split)[len(common):]

    def duplicate_rules(self, split: str = "infer") -> list[tuple[RuleSpec, RuleSpec]]:
        """(skipped, kept) pairs of rules Java PSL counts as one rule (same clause, weight aside)."""
        specs = self.rule_specs(split)
        _, pairs = first_of_each([self._parse_rule(r) for r in specs])
        return [(specs[i], specs[j]) for i, j in pairs]

    def _parse_rule(self, spec: RuleSpec):
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
            for key, part in CONFIG_PARTITIONS.items():
                refs = spec.refs(part, split)
                rows = [r for r in refs if r.row is not None]
                if rows:
                    add(parts, pred.name, part, _inline_frame(rows, pred, key))
                for ref in refs:
                    if ref.row is None:
                        add(parts, pred.name, part, _read_file(ref, pred, key, reader))
        self._check_latent(split, rules)
        ds = build_dataset(preds, parts, self.name)
        ds.rules = tuple(r.text("psl") for r in rules)
        return ds

    def _check_latent(self, split: str, rules: list) -> None:
        """Refuse open predicates a rule uses that have no atoms at all in the split (latent ones).

        Their atoms would count as 0 everywhere, a silently different model; PSL itself asks for
        them as targets ("RandomVariableAtoms ... not explicitly specified in the targets").
        """
        used = {p for r in rules for p in r.predicates}
        for spec in self.predicates.values():
            if spec.name in used and spec.is_open(split) and not any(
                    spec.refs(part, split) for part in ("obs", "targets")):
                raise DataError(f"predicate {spec.name} is open and used by the rules but has no targets or "
                                f"observations in the {split} split: list its atoms as targets (latent "
                                f"predicates without targets are not supported)", file=spec.file, line=spec.line)


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
        self.root = common_root(list(self.files)) if not disk else None

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


def common_root(keys: list[str]) -> str:
    """The folder every key of an in-memory file set lies under ("" if none)."""
    dirs = [posixpath.dirname(k.replace("\\", "/")) for k in keys]
    if not dirs:
        return ""
    try:
        return posixpath.commonpath(dirs) if all(dirs) else ""
    except ValueError:
        return ""


def _read_file(ref: DataRef, pred: Predicate, key: str, reader: ProjectFiles):
    """The atom table of one data file (via `read_psl_file`); an empty file has no atoms, as in PSL."""
    name, data = reader.read(ref.path or "", ref.file, ref.file, ref.line, f"{pred.name} {key}")
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body or body.isspace():
        return atom_frame([[] for _ in range(pred.arity)], None, name, np.zeros(0, dtype=np.int64))
    return read_psl_file(data, name, pred)


_LINE_BREAKING = re.compile(r"[\t\r\n]")
"""Characters a constant cannot hold: they split PSL's tab-separated lines (data and results)."""


def _inline_frame(refs: list[DataRef], pred: Predicate, key: str):
    """One atom table for the inline rows of a partition (``["Anna", "Bob"]``, ``["Bob", 1]``)."""
    k = pred.arity
    args: list[list[str]] = [[] for _ in range(k)]
    values: list[object] = []
    for ref in refs:  # rows written in the config itself: already Python lists
        row = ref.row or []
        if len(row) not in (k, k + 1):
            raise DataError(f"{pred.name} {key}: inline row {brief(row)} has {len(row)} values; {pred.name} "
                            f"has arity {k} (expected {k} arguments and an optional value)",
                            file=ref.file, line=ref.line)
        if any(v is None or isinstance(v, (list, dict)) for v in row):
            raise DataError(f"{pred.name} {key}: inline row {brief(row)} holds a value that is not text or a "
                            f"number", file=ref.file, line=ref.line)
        texts = [("true" if v else "false") if isinstance(v, bool) else str(v) for v in row]
        broken = next((t for t in texts if _LINE_BREAKING.search(t)), None)
        if broken is not None:
            raise DataError(f"{pred.name} {key}: inline row {brief(row)} has the constant {brief(broken)} with a "
                            f"tab, carriage return or line break; PSL data and result files are tab-separated "
                            f"lines, so a constant cannot hold one", file=ref.file, line=ref.line)
        for i in range(k):
            args[i].append(texts[i])
        values.append(texts[k] if len(row) > k else "")
    lines = np.array([r.line or 1 for r in refs], dtype=np.int64)
    files = np.array([r.file for r in refs], dtype=object)
    return atom_frame(args, np.array(values, dtype=object), files, lines)


