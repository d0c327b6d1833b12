"""Loaders of published benchmark datasets (Cora, CiteSeer, ...) for tests and benchmarks only, never shipped."""
