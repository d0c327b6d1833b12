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
from pathlib import Path
from typing import Callable

from xcore.data.dataset import RelationalDataset
from xcore.data.io.archive import is_zip, read_zip
from xcore.data.io.files import FileSet, Source, basename, read_source, stem, suffix
from xcore.data.io.limits import Limits
from xcore.data.io.psl_config import (
    CONFIG_SUFFIXES,
    RULE_SUFFIXES,
    find_configs,
    looks_like_config,
    parse_config,
    parse_data_file,
)
from xcore.data.io.psl_rule_file import parse_rule_file
from xcore.data.io.psl_spec import (
    SPLITS,
    PredicateSpec,
    ProjectFiles,
    PSLProject,
    common_root,
    output_file_name,
    project_name,
)
from xcore.errors import DataError

__all__ = ["CONFIG_SUFFIXES", "PSLProject", "ProjectFiles", "SPLITS", "UNLIMITED", "find_configs",
           "load_psl_project", "looks_like_config", "output_file_name", "project_from_files", "read_project"]

UNLIMITED = Limits(max_file_bytes=1 << 62, max_total_bytes=1 << 62, max_members=1 << 30,
                   max_manifest_bytes=1 << 62, max_predicates=1 << 30)
"""Limits for local projects read by the command line (uploads keep the defaults)."""


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
        path = os.path.abspath(source)  # its files are found relative to its folder, not twice relative to the cwd
        raw = reader.read(path, path, path, None, "project")[1]
        return _from_file(path, raw, reader, model, lambda ref: reader.read(ref, path, path, None, "rules"))
    on_disk = isinstance(source, (str, os.PathLike)) and Path(source).is_dir()
    files = _file_set(source, limits)
    reader = ProjectFiles(files, disk=on_disk, limits=limits)
    return project_from_files(files, reader, config=config or data, model=model)


def _file_set(source: Source, limits: Limits | None) -> FileSet:
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
            raise DataError(f"no project file named {config!r}", file=common_root(list(files)) or None)
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
    base = project_name(data_key)
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
    base = project_name(data_path)
    same = [r for r in rules if r.stem in (base, Path(data_path).stem)]
    return str(same[0]) if len(same) == 1 else None


def _from_data_files(main: str, main_bytes: bytes, learn: str | None, learn_bytes: bytes | None) -> PSLProject:
    preds: dict[str, PredicateSpec] = {}
    parse_data_file(main_bytes, main, "infer" if learn else "all", into=preds)
    if learn is not None and learn_bytes is not None:
        parse_data_file(learn_bytes, learn, "learn", into=preds)
    return PSLProject(name=project_name(main), config=main, predicates=preds, rules={"all": []})


def load_psl_project(source: Source | None = None, name: str | None = None, *, split: str = "infer",
                     config: str | None = None, data: str | None = None, model: str | None = None,
                     limits: Limits | None = None) -> RelationalDataset:
    """Load a PSL project's data (the `split`) as a dataset carrying the project's rules."""
    project = read_project(source, config=config, data=data, model=model, limits=limits)
    ds = project.dataset(split, limits)
    if name:
        ds.name = name
    return ds
