"""Relational datasets: schema, atom tables, loaders, writers and generators.

Loading: ``load(source, name=None, fmt="auto", **options)`` detects the format (PSL folder,
long CSV, Prolog, triples, tabular CSV, or a zip of one); the per-format loaders and writers are
in `xcore.data.io`. Bundled samples: ``list_samples()`` and ``load_sample(name)``.
Names load on first use (`xcore.lazy`): ``import xcore.data.schema`` does not import every loader.
"""

from xcore.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "xcore.data.dataset": ["RelationalDataset"],
    "xcore.data.table_checks": ["empty_table"],
    "xcore.data.schema": ["Predicate", "Schema", "PARTITIONS", "arg_columns"],
    "xcore.data.io": ["load", "load_psl_folder", "load_long_csv", "load_prolog", "load_triples", "load_tabular",
                      "load_zip", "write_psl_folder", "write_long_csv", "write_prolog", "write_triples",
                      "write_tabular", "Limits"],
    "xcore.data.samples": ["SampleInfo", "list_samples", "load_sample"],
})
