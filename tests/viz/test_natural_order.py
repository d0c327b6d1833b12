"""Targets are listed in natural order ("row 2" before "row 10"), wherever predictions are listed.

Found in the browser: the predictions browser sorted its default column as text: row 1, row 10,
row 100, row 101, ..., row 2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.viz.common import natural_key, natural_sorted, sort_frame


def test_natural_key_orders_numbers_by_value():
    names = ["row 101", "row 2", "row 10", "row 1", "Row 3", "u10(a)", "u9(a)", "u9(b)"]
    assert natural_sorted(names) == ["row 1", "row 2", "Row 3", "row 10", "row 101", "u9(a)", "u9(b)", "u10(a)"]
    assert natural_key("friends(u2, u10)") < natural_key("friends(u10, u2)")


def test_sort_frame_is_natural_stable_and_puts_missing_last():
    rng = np.random.default_rng(0)
    n = 150
    frame = pd.DataFrame({"target": [f"row {i}" for i in rng.permutation(n)], "prediction": rng.random(n)})
    frame.loc[5, "target"] = None
    up = sort_frame(frame, "target")
    present = list(up["target"].dropna())
    assert len(present) == n - 1 and present == sorted(present, key=lambda t: int(t.split()[1]))
    assert pd.isna(up["target"].iloc[-1])
    down = sort_frame(frame, "target", ascending=False)
    assert list(down["target"].dropna()) == present[::-1] and pd.isna(down["target"].iloc[-1])
    assert list(sort_frame(frame, "prediction")["prediction"]) == sorted(frame["prediction"])
    ties = pd.DataFrame({"target": ["a2", "A2", "a10"], "i": [0, 1, 2]})
    assert list(sort_frame(ties, "target")["i"]) == [0, 1, 2]  # stable among equal keys
