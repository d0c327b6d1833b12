"""Random Michalski-style trains labelled by a hidden rule (the rule is the ground truth for tests).

Each train has 2-4 cars; each car is short or long, closed or open, has a shape, 2 or 3 wheels and
a load (shape, count). A train is eastbound iff the hidden rule's body holds for it; the default
rule is the classic ``eastbound(A) :- has_car(A,B), short(B), closed(B)``. Vectorised and seeded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.drm.clauses import Clause, Lit
from xcore.drm.features import Evaluator
from xcore.drm.problem import build_problem
from xcore.errors import ConfigError
from xcore.logic.terms import Var

SHAPES = ("rectangle", "u_shaped", "bucket", "hexagon", "ellipse")
LOADS = ("circle", "triangle", "rectangle", "hexagon")
CLASSIC = Clause(Lit("eastbound", (Var("A"),)), (Lit("has_car", (Var("A"), Var("B"))), Lit("short", (Var("B"),)),
                                                  Lit("closed", (Var("B"),))))
"""The hidden rule of the default generator."""


def generate_trains(n: int = 100, seed: int = 0, rule: Clause = CLASSIC) -> RelationalDataset:
    """`n` random trains labelled by `rule` (evaluated with the DRM's own join evaluator)."""
    if n < 2:
        raise ConfigError("generate at least 2 trains", field="n")
    rng = np.random.default_rng(seed)
    cars_per = rng.integers(2, 5, size=n)
    train_of = np.repeat(np.arange(n), cars_per)
    m = len(train_of)
    trains = np.array([f"t{i + 1}" for i in range(n)], dtype=object)
    cars = np.array([f"c{i + 1}" for i in range(m)], dtype=object)
    short = rng.random(m) < 0.5
    closed = rng.random(m) < 0.35
    shape = np.array(SHAPES, dtype=object)[rng.integers(len(SHAPES), size=m)]
    wheels = np.where(short, 2, rng.integers(2, 4, size=m)).astype(str)
    load = np.array(LOADS, dtype=object)[rng.integers(len(LOADS), size=m)]
    count = rng.integers(0, 4, size=m).astype(str)

    def obs(*cols: np.ndarray) -> dict[str, pd.DataFrame]:
        frame = pd.DataFrame({f"a{i}": pd.Series(c, dtype=object).astype(str) for i, c in enumerate(cols)})
        frame["value"] = 1.0
        return {"obs": frame}

    schema = [Predicate("has_car", 2, ("train", "car")), Predicate("short", 1, ("car",)),
              Predicate("long", 1, ("car",)), Predicate("closed", 1, ("car",)), Predicate("open_car", 1, ("car",)),
              Predicate("shape", 2, ("car", "shape")), Predicate("wheels", 2, ("car", "int")),
              Predicate("load", 3, ("car", "shape", "int")), Predicate("eastbound", 1, ("train",), closed=False)]
    tables = {"has_car": obs(trains[train_of], cars), "short": obs(cars[short]), "long": obs(cars[~short]),
              "closed": obs(cars[closed]), "open_car": obs(cars[~closed]), "shape": obs(cars, shape),
              "wheels": obs(cars, wheels), "load": obs(cars, load, count)}
    placeholder = pd.DataFrame({"a0": trains, "value": np.nan})
    truth = pd.DataFrame({"a0": trains, "value": (np.arange(n) % 2).astype(float)})  # provisional
    tables["eastbound"] = {"targets": placeholder, "truth": truth}
    ds = RelationalDataset(schema, tables, name=f"random trains (n={n}, seed={seed})",
                           description=f"Random trains labelled by the hidden rule {rule.text()}")
    labels = rule_labels(ds, rule)
    if labels.min() == labels.max():
        raise ConfigError(f"the rule labels all {n} trains alike; use more trains or another seed", field="n")
    tables["eastbound"]["truth"] = pd.DataFrame({"a0": trains, "value": labels.astype(float)})
    return RelationalDataset(schema, tables, name=ds.name, description=ds.description)


def rule_labels(ds: RelationalDataset, rule: Clause) -> np.ndarray:
    """Whether `rule`'s body holds for each example of `ds` (in truth-table order)."""
    return Evaluator(build_problem(ds)).covered(rule).astype(np.int64)
