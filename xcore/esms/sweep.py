"""The page's explainability sweep: the ESMS search once per gamma on one run's parts (paper Fig. 1 and
Fig. 2 data), each best model evaluated on the held-out test part."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.esms.estimator import executor_for
from xcore.esms.runs import held_out_split
from xcore.esms.search import DEFAULT_GAMMA_GRID, gamma_sweep
from xcore.esms.settings import ESMSSettings
from xcore.esms.validation_split import split_targets
from xcore.runtime import Progress


def sweep(ds: RelationalDataset, settings: ESMSSettings, grid: Sequence[float] = DEFAULT_GAMMA_GRID,
          progress: Progress | None = None) -> pd.DataFrame:
    """The gamma sweep on the same parts as the run of `settings` (its held-out test part, and its
    training part split into the search's training and validation parts)."""
    est, rest, test = held_out_split(ds, settings)
    train, valid = split_targets(rest, settings.target, est.inner_valid_fraction(), settings.seed + 1)
    kwargs = settings.search_kwargs()
    kwargs.pop("gamma")
    with executor_for(settings) as executor:
        return gamma_sweep(train, valid, settings.target, grid=list(grid), test_ds=test,
                           progress=progress, executor=executor, **kwargs)


def as_float_grid(text: str) -> list[float]:
    """Parse a user's gamma grid like '0, 0.25, 0.5' (each in [0, 1])."""
    try:
        grid = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise XcoreError(f"gamma grid {text!r}: write numbers separated by commas") from None
    if not grid or any(not 0 <= g <= 1 or np.isnan(g) for g in grid):
        raise XcoreError(f"gamma grid {text!r}: every value must be in [0, 1]")
    return grid
