"""Loaders and writers of relational data; every loader returns a validated `RelationalDataset`.

Public API:

- ``load(source, name=None, fmt="auto", *, limits=None, **options)``: detect and load a path,
  folder, ``(filename, bytes)`` upload, list of uploads or zip (see `xcore.data.io.detect`).
- ``load_psl_folder`` / ``write_psl_folder``: manifest + tab-separated files per predicate.
- ``load_psl_project`` / ``read_project``: PSL's own projects (JSON config, or .data + .psl),
  the dataset carrying the project's rules.
- ``load_long_csv`` / ``write_long_csv``: one atom per CSV row.
- ``load_prolog`` / ``write_prolog``: Aleph-style ``.b``/``.f``/``.n`` ground facts.
- ``load_triples`` / ``write_triples``: ``head<TAB>relation<TAB>tail`` files (Neural-LP folders).
- ``load_tabular`` / ``write_tabular``: feature columns + label column.
- ``load_zip`` / ``write_zip``: any of the above in a zip (upload-safe).
- ``parse_manifest`` / ``write_manifest``; ``Limits`` / ``DEFAULT_LIMITS``.

Errors are always `xcore.errors.DataError` naming the file, the line and the problem.
"""

from xcore.data.io.archive import write_zip
from xcore.data.io.detect import FORMATS, detect_format, load, load_zip
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.data.io.long_csv import load_long_csv, write_long_csv
from xcore.data.io.manifest import Manifest, parse_manifest, write_manifest
from xcore.data.io.prolog import load_prolog, write_prolog
from xcore.data.io.psl_folder import load_psl_folder, write_psl_folder
from xcore.data.io.psl_project import load_psl_project, read_project
from xcore.data.io.tabular import load_tabular, write_tabular
from xcore.data.io.triples import load_triples, write_triples

__all__ = [
    "load", "detect_format", "FORMATS", "Limits", "DEFAULT_LIMITS",
    "load_psl_folder", "write_psl_folder", "load_psl_project", "read_project", "load_long_csv", "write_long_csv",
    "load_prolog", "write_prolog", "load_triples", "write_triples",
    "load_tabular", "write_tabular", "load_zip", "write_zip",
    "Manifest", "parse_manifest", "write_manifest",
]
