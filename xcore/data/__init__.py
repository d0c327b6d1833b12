"""Relational datasets: schema, atom tables, loaders, writers and generators."""

from xcore.data.dataset import RelationalDataset, empty_table
from xcore.data.schema import PARTITIONS, Predicate, Schema, arg_columns

__all__ = ["RelationalDataset", "Predicate", "Schema", "PARTITIONS", "arg_columns", "empty_table"]
