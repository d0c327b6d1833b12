"""Issue 31 item 8: where only the longer statement is right (a plate on X *with food on the plate*), NLIL
with path length 3 finds a rule as exact as the planted one, and the looser ``plate on X`` does not win;
with path length 1 no exact rule is expressible."""

from __future__ import annotations

import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.nlil.graph import kb_from_dataset, queries
from xcore.nlil.mnlil import Config, fit_label
from xcore.nlil.rules import Rule, Statement, fires, quality


def plates_with_food(n: int = 80) -> RelationalDataset:
    """table(X) iff a plate is on X and food is on that plate; the near misses are labelled false: an empty
    plate on X, food directly on X, food on a cup on X."""
    on, unary, lab = [], {"plate": [], "food": [], "cup": []}, []
    for i in range(n):
        x, p, f, c = f"t{i}", f"p{i}", f"f{i}", f"c{i}"
        kind = i % 4
        if kind == 0:
            on += [(p, x), (f, p)]
            unary["plate"].append(p)
            unary["food"].append(f)
        elif kind == 1:
            on += [(p, x)]
            unary["plate"].append(p)
        elif kind == 2:
            on += [(f, x), (c, x)]
            unary["food"].append(f)
            unary["cup"].append(c)
        else:
            on += [(c, x), (f, c)]
            unary["cup"].append(c)
            unary["food"].append(f)
        lab.append((x, 1.0 if kind == 0 else 0.0))
    tables = {"on": {"obs": pd.DataFrame(on, columns=["a0", "a1"])},
              **{u: {"obs": pd.DataFrame({"a0": v})} for u, v in unary.items()},
              "table": {"obs": pd.DataFrame(lab, columns=["a0", "value"])}}
    preds = [Predicate("on", 2), *[Predicate(u, 1) for u in unary], Predicate("table", 1, closed=False)]
    return RelationalDataset(Schema.of(preds), tables)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_only_the_longer_statement_is_right_and_path_length_3_finds_it(seed):
    ds = plates_with_food()
    kb = kb_from_dataset(ds, exclude=("table",))
    q = queries(ds, kb, "table", "obs")
    facts, frame = kb.facts(), q.frame(kb)
    planted = Rule("table", 1, Statement(("on^-1", "plate?", "on^-1"), "food"))
    loose = Rule("table", 1, Statement(("on^-1",), "plate"))
    assert quality(fires(planted, facts, frame), q.label)["precision"] == 1.0
    assert quality(fires(loose, facts, frame), q.label)["precision"] == 0.5
    res = fit_label(kb, kb.operators(), q, Config(clusters=1, depth=1, path_length=3, epochs=300, seed=seed))
    got = quality(fires(res.rules[0], facts, frame), q.label)
    assert got["precision"] == 1.0 and got["recall"] == 1.0, res.rules[0].text
    short = fit_label(kb, kb.operators(), q, Config(clusters=1, depth=1, path_length=1, epochs=150, seed=seed))
    assert quality(fires(short.rules[0], facts, frame), q.label)["precision"] < 1.0
