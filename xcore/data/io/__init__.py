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
Names load on first use (`xcore.lazy`): reading PSL files does not import every other format's loader.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.data.io.archive": ["write_zip"],
    "xcore.data.io.detect": ["FORMATS", "detect_format", "load", "load_zip"],
    "xcore.data.io.limits": ["DEFAULT_LIMITS", "Limits"],
    "xcore.data.io.long_csv": ["load_long_csv", "write_long_csv"],
    "xcore.data.io.manifest": ["Manifest", "parse_manifest", "write_manifest"],
    "xcore.data.io.prolog": ["load_prolog"],
    "xcore.data.io.prolog_writer": ["write_prolog"],
    "xcore.data.io.psl_folder": ["load_psl_folder", "write_psl_folder"],
    "xcore.data.io.psl_project": ["load_psl_project", "read_project"],
    "xcore.data.io.tabular": ["load_tabular", "write_tabular"],
    "xcore.data.io.triples": ["load_triples", "write_triples"],
})
