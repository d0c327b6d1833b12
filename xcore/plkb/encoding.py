"""One-hot encoding of the classifier's discretised tables for the scikit-learn baselines and SHAP."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.preprocessing import OneHotEncoder


def one_hot(train: pd.DataFrame, *others: pd.DataFrame):
    """One-hot encode string tables (fit on `train`; unknown values get all zeros)."""
    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float64)
    out = [enc.fit_transform(train.astype(str))]
    out += [enc.transform(o[train.columns].astype(str)) for o in others]
    return enc, out
