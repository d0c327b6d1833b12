"""ESMS's explainers, one per module."""
