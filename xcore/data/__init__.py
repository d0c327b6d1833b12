"""Relational datasets: schema, atom tables, loaders, writers and generators.

Loading: ``load(source, name=None, fmt="auto", **options)`` detects the format (PSL folder,
long CSV, Prolog, triples, tabular CSV, or a zip of one); the per-format loaders and writers are
in `xcore.data.io`. Bundled samples: ``list_samples()`` and ``load_sample(name)``.
"""

from xcore.data.dataset import RelationalDataset, empty_table
from xcore.data.io import (Limits, load, load_long_csv, load_prolog, load_psl_folder, load_tabular,
                           load_triples, load_zip, write_long_csv, write_prolog, write_psl_folder,
                           write_tabular, write_triples)
from xcore.data.samples import SampleInfo, list_samples, load_sample
from xcore.data.schema import PARTITIONS, Predicate, Schema, arg_columns

__all__ = [
    "RelationalDataset", "Predicate", "Schema", "PARTITIONS", "arg_columns", "empty_table",
    "load", "load_psl_folder", "load_long_csv", "load_prolog", "load_triples", "load_tabular",
    "load_zip", "write_psl_folder", "write_long_csv", "write_prolog", "write_triples",
    "write_tabular", "Limits", "SampleInfo", "list_samples", "load_sample",
]
