"""The data and run bundles a command reads: a dataset from a path or `sample:NAME`, a table's label
asked for, a user's model's predictions as the labels, a run bundle read back."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from xcore.commands.progress import StderrProgress
from xcore.data import load
from xcore.data.predictions import read_predictions, with_predictions
from xcore.data.samples import list_samples, load_sample
from xcore.errors import ConfigError, DataError, XcoreError
from xcore.explain.model_file import load_model_file
from xcore.methods.run import Run


def load_data(source: str, fmt: str = "auto", label: str | None = None) -> Any:
    """A dataset from a path (the app's loaders) or `sample:NAME` (a bundled sample)."""
    if source.startswith("sample:"):
        name = source.split(":", 1)[1]
        names = [s.name for s in list_samples()]
        if name not in names:
            raise DataError(f"no bundled sample {name!r}; samples: {', '.join(names)}", file=source)
        return load_sample(name)
    if not Path(source).exists():
        raise DataError("no such file or folder", file=source)
    options = {"label": label} if label else {}
    return load(source, fmt=fmt, **options)


def check_label_given(dataset: Any, source: str, label: str | None) -> None:
    """A table file read without --label: exit 2 naming the columns that could be the label (no
    silent pick of the last column)."""
    if label is not None or getattr(dataset, "tabular", None) is None or source.startswith("sample:") \
            or not Path(source).is_file():
        return
    # the classifier's notion of a label column; a method package, imported only for a table without --label
    from xcore.plkb.tables import label_candidates

    candidates = label_candidates(dataset.tabular) or [str(c) for c in dataset.tabular.columns]
    raise ConfigError(f"{source} is a table: say which column is the label with --label COLUMN "
                      f"(candidates: {', '.join(candidates[:20])})", field="--label")


def with_user_model(dataset: Any, args: argparse.Namespace, progress: StderrProgress) -> Any:
    """`dataset` with the user's model's predictions as its labels (--explain-predictions or --model), if given."""
    if getattr(args, "explain_predictions", None) and getattr(args, "model", None):
        raise ConfigError("give either --explain-predictions or --model, not both", field="--model")
    if getattr(args, "explain_predictions", None):
        progress.note(f"reading your model's predictions from {args.explain_predictions}")
        return with_predictions(dataset, read_predictions(args.explain_predictions, dataset))
    if getattr(args, "model", None):
        progress.note(f"predicting the table's rows with your model {args.model}")
        return with_predictions(dataset, load_model_file(args.model, dataset).user_predictions(dataset))
    return dataset


def read_run(path: str) -> Run:
    """A `Run` read back from a run bundle file; problems are `DataError`s naming the file."""
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read the run bundle: {e.strerror or e}", file=str(p)) from None
    try:
        return Run.from_bundle(text)
    except XcoreError as e:
        raise DataError(str(e), file=str(p)) from None
