"""One entry point, `load`: detect the format of a path, folder, upload or zip and load it.

Formats (the `fmt` names): ``psl`` (manifest + tab files), ``psl_project`` (a PSL project:
JSON config, or ``.data`` + ``.psl``; see `xcore.data.io.psl_project`), ``long_csv``, ``prolog``,
``triples``, ``tabular``, ``mln`` (Markov logic ``.mln`` + ``.db``, `xcore.data.io.mln_files`),
``nlil`` (``pred.txt`` + labelled atom files, `xcore.data.io.nlil_files`) and ``zip``. Detection,
in order: a ``.mln`` file means Markov logic (``.db`` and ``.conf`` files are read only then); a
``pred.txt`` of declarations beside ``fact.txt`` means NLIL (checked before triples); a manifest means a PSL folder (or a
long CSV with that schema when the only data file is one); a PSL config (a ``.json``/``.yaml``
that reads as a mapping with a ``predicates`` mapping and ``rules``, see `looks_like_config`) or
a ``.data`` YAML with a ``predicates:`` block means
a PSL project (a project on disk is read from disk, so its paths may leave its folder; options
``split`` = infer|learn, ``config``, ``model``); ``.b``/``.f``/``.n``/``.pl`` files
mean Prolog; one ``.csv``/``.data`` file is a long CSV when its header has ``predicate`` and
``partition`` or ``value``, else a table; ``.txt``/``.tsv`` files whose first line has three
tab-separated fields are triples ("first line" and "header": the first non-blank line after
BOM removal and ``\r``/``\r\n`` normalisation, as the parsers see it, however many blank lines
come first); a ``.tsv`` otherwise is a table. Anything else raises
`DataError` naming the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa

from xcore.data.dataset import RelationalDataset
from xcore.data.io.archive import ZipSource, is_zip, read_zip, zip_bytes
from xcore.data.io.files import FileSet, Source, basename, first_line_number, read_source, source_label, stem, suffix
from xcore.data.io.limits import Limits
from xcore.data.io.long_csv import long_csv_from_bytes, looks_like_long_csv
from xcore.data.io.manifest import MANIFEST_NAMES, find_manifest, parse_manifest, schema_from
from xcore.data.io.mln_files import mln_from_files, parse_error_as_data
from xcore.data.io.nlil_files import looks_like_nlil, nlil_from_files
from xcore.data.io.prolog import ROLES, prolog_from_files
from xcore.data.io.psl_folder import is_psl_data_file, psl_from_files
from xcore.data.io.psl_project import (
    CONFIG_SUFFIXES,
    ProjectFiles,
    find_configs,
    looks_like_config,
    project_from_files,
    read_project,
)
from xcore.data.io.tabular import tabular_from_bytes
from xcore.data.io.triples import DEFAULT_ROLES, looks_like_triples, triples_from_files
from xcore.errors import DataError, ParseError

FORMATS = ("psl", "psl_project", "long_csv", "prolog", "triples", "tabular", "mln", "nlil", "zip")
KNOWN_SUFFIXES = (".txt", ".tsv", ".csv", ".data", ".yaml", ".yml", ".json", ".zip", ".psl", *ROLES,
                  ".mln", ".db", ".conf", ".pracmln")
OPTIONS = {
    "psl": set(),
    "psl_project": {"split", "config", "model"},
    "long_csv": {"schema"},
    "prolog": set(),
    "triples": {"roles", "default_role"},
    "tabular": {"label", "sep", "header", "missing"},
    "mln": {"program", "evidence"},
    "nlil": {"heads"},
}
"""Keyword options each format accepts (besides `limits`)."""

_TABLES = (".csv", ".data")
_MLN_ONLY = (".db", ".conf", ".pracmln")
"""Files read only as part of a Markov logic project (a .mln program in the set)."""


def names_of(files: FileSet) -> str | None:
    return next(iter(sorted(files)), None)


def load(source: Source, name: str | None = None, fmt: str = "auto", *,
         limits: Limits | None = None, **options: Any) -> RelationalDataset:
    """Load a dataset from a file or folder path, ``(filename, bytes)`` or a list of uploads.

    `fmt` is "auto" (detect) or one of `FORMATS`; `options` go to the format's loader
    (``schema`` for long_csv; ``roles``, ``default_role`` for triples; ``label``, ``sep``,
    ``header``, ``missing`` for tabular). Every problem raises `DataError` naming the file.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise DataError(f"unknown format {fmt!r}; use auto or one of {', '.join(FORMATS)}")
    if _is_disk_project(source, fmt):
        return _load_project(source, None, name, limits, options)
    if isinstance(source, (str, os.PathLike)) and Path(source).is_file() \
            and basename(str(source)).lower() in MANIFEST_NAMES:
        source = Path(source).parent
    label = source_label(source)
    files = read_source(source, limits, suffixes=KNOWN_SUFFIXES)
    if not files:
        raise DataError(f"no data files found (looked for {', '.join(KNOWN_SUFFIXES)})",
                        file=str(source) if isinstance(source, (str, os.PathLike)) else label)
    if fmt == "zip" or (len(files) == 1 and _is_zip_file(*next(iter(files.items())))):
        if len(files) != 1:
            raise DataError("expected a single zip file", file=label)
        inner = "auto" if fmt == "zip" else fmt  # a zip of the named format
        return load_zip(next(iter(files.items())), name, inner, limits=limits, **options)
    return load_files(files, fmt, name, default_name=label, limits=limits, **options)


def load_zip(source: ZipSource, name: str | None = None, fmt: str = "auto", *,
             limits: Limits | None = None, **options: Any) -> RelationalDataset:
    """Load a zip of any supported format (detected from the files inside, or `fmt`).

    Lives here, not in `archive`, because it recurses into `load_files` (no import cycle).
    """
    zip_name, data = zip_bytes(source, limits)
    files = read_zip(data, zip_name, limits)
    return load_files(files, fmt, name, default_name=stem(zip_name), limits=limits, **options)


def _is_disk_project(source: Source, fmt: str) -> bool:
    """A PSL project on disk (a config or .data file, or a folder holding one and no manifest):
    read from disk so that its relative paths may leave the folder, as PSL allows."""
    if fmt not in ("auto", "psl_project") or not isinstance(source, (str, os.PathLike)):
        return False
    path = Path(source)
    if path.is_file():
        if suffix(path.name) not in CONFIG_SUFFIXES:
            return False
        with open(path, "rb") as fh:
            return fmt == "psl_project" or looks_like_config(fh.read(), path.name)
    if not path.is_dir() or any(next(path.rglob(n), None) for n in MANIFEST_NAMES):
        return False
    return fmt == "psl_project" or any(
        looks_like_config(f.read_bytes(), f.name)
        for f in path.rglob("*") if f.is_file() and suffix(f.name) in CONFIG_SUFFIXES)


def _load_project(source: Source, files: FileSet | None, name: str | None, limits: Limits | None,
                  options: dict) -> RelationalDataset:
    extra = set(options) - OPTIONS["psl_project"]
    if extra:
        raise DataError(f"option(s) {', '.join(sorted(extra))} do not apply to a PSL project; it accepts "
                        f"{', '.join(sorted(OPTIONS['psl_project']))}")
    split = options.get("split", "infer")
    if files is None:
        project = read_project(source, config=options.get("config"), model=options.get("model"), limits=limits)
    else:
        project = project_from_files(files, ProjectFiles(files, disk=False, limits=limits),
                                     config=options.get("config"), model=options.get("model"))
    ds = project.dataset(split, limits)
    if name:
        ds.name = name
    return ds


def _is_zip_file(file: str, data: bytes) -> bool:
    return suffix(file) == ".zip" or is_zip(data)


def detect_format(files: FileSet) -> str:
    """The format of a file set (see the module docstring); unknown -> DataError naming a file."""
    if not files:
        raise DataError("no data files found")
    if any(suffix(n) == ".mln" for n in files):
        return "mln"
    kept = {k: v for k, v in files.items() if suffix(k) not in _MLN_ONLY}
    if not kept:
        raise DataError("evidence (.db) without a Markov logic program (.mln)", file=names_of(files))
    files = kept
    names = sorted(files)
    tables = [n for n in names if suffix(n) in _TABLES]
    if find_manifest(files):
        if not any(is_psl_data_file(n) for n in names) and len(tables) == 1 \
                and looks_like_long_csv(files[tables[0]]):
            return "long_csv"
        return "psl"
    if find_configs(names, files.__getitem__):
        return "psl_project"
    if any(suffix(n) in ROLES for n in names):
        return "prolog"
    if tables:
        if len(tables) > 1:
            raise DataError(f"several tables ({', '.join(basename(t) for t in tables)}); "
                            f"load one at a time", file=tables[1])
        return "long_csv" if looks_like_long_csv(files[tables[0]]) else "tabular"
    texts = [n for n in names if suffix(n) in (".txt", ".tsv")]
    if looks_like_nlil(files):
        return "nlil"
    if any(is_psl_data_file(n) for n in texts):
        raise DataError("looks like a PSL folder but has no manifest.yaml or manifest.json",
                        file=next(n for n in texts if is_psl_data_file(n)))
    data_texts = [n for n in texts if DEFAULT_ROLES.get(stem(n).lower()) != "skip"]
    if data_texts and all(looks_like_triples(files[n]) for n in data_texts):
        return "triples"
    if len(data_texts) == 1 and suffix(data_texts[0]) == ".tsv":
        return "tabular"
    bad = next((n for n in data_texts if not looks_like_triples(files[n])), names[0])
    raise DataError("unknown data format: expected a PSL folder with a manifest, Prolog "
                    "(.b/.f/.n/.pl), a CSV, tab-separated triples or a zip of these", file=bad,
                    line=first_line_number(files[bad]))


def load_files(files: FileSet, fmt: str = "auto", name: str | None = None, *,
               default_name: str = "dataset", limits: Limits | None = None,
               **options: Any) -> RelationalDataset:
    """Load an in-memory file set in the given (or detected, for "auto") format.

    `name` overrides the dataset name; otherwise a manifest's name or `default_name` is used.
    """
    try:
        return _load_files(files, fmt, name, default_name=default_name, limits=limits, **options)
    except (pa.ArrowException, MemoryError) as e:  # a foreign failure is still a data problem
        raise DataError(f"cannot load the data ({type(e).__name__}: {' '.join(str(e).split())[:200]})",
                        file=next(iter(sorted(files)), None)) from None


def _load_files(files: FileSet, fmt: str, name: str | None, *, default_name: str,
                limits: Limits | None, **options: Any) -> RelationalDataset:
    """`load_files` without the wrapping of foreign exceptions."""
    if fmt == "auto":
        fmt = detect_format(files)
    if fmt == "zip":
        raise DataError("a zip inside a zip is not supported")
    if fmt not in OPTIONS:
        raise DataError(f"unknown format {fmt!r}; use auto or one of {', '.join(FORMATS)}")
    extra = set(options) - OPTIONS[fmt]
    if extra:
        raise DataError(f"option(s) {', '.join(sorted(extra))} do not apply to {fmt} data; "
                        f"{fmt} accepts {', '.join(sorted(OPTIONS[fmt])) or 'no options'}")
    if fmt == "mln":
        try:
            return mln_from_files(files, name or default_name, limits, **options)
        except ParseError as e:
            raise parse_error_as_data(e) from None
    files = {k: v for k, v in files.items() if suffix(k) not in _MLN_ONLY} or files
    if fmt == "nlil":
        return nlil_from_files(files, name or default_name, options.get("heads"))
    if fmt == "psl":
        return psl_from_files(files, name, default_name, limits)
    if fmt == "psl_project":
        return _load_project(files, files, name, limits, options)
    if fmt == "prolog":
        return prolog_from_files({k: v for k, v in files.items() if suffix(k) in ROLES},
                                 name or default_name, limits)
    if fmt == "triples":
        texts = {k: v for k, v in files.items() if suffix(k) in (".txt", ".tsv")}
        return triples_from_files(texts, name or default_name, options.get("roles"),
                                  options.get("default_role", "obs"), limits)
    table = _single_table(files, fmt)
    if fmt == "tabular":
        return tabular_from_bytes(files[table], table, name or default_name, limits=limits, **options)
    schema, description = None, ""
    if options.get("schema") is not None:
        schema, manifest = schema_from(options["schema"], limits)
        description = manifest.description if manifest else ""
    elif (mkey := find_manifest(files)) is not None:
        manifest = parse_manifest(files[mkey], mkey, limits)
        schema, description = schema_from(manifest.predicates)[0], manifest.description
        name = name or manifest.name
    return long_csv_from_bytes(files[table], table, name or default_name, schema, description, limits)


def _single_table(files: FileSet, fmt: str) -> str:
    tables = [n for n in sorted(files) if suffix(n) in (*_TABLES, ".tsv")]
    if len(tables) == 1:
        return tables[0]
    if len(files) == 1:
        return next(iter(files))
    raise DataError(f"{fmt} data needs exactly one table file, found {len(tables)}",
                    file=tables[0] if tables else None)
