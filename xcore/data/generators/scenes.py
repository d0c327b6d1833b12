"""GQA-like scene graphs with planted labelling rules (m-NLIL's setting), and a reader of GQA's
node-type task format.

Object types and relations are drawn with the real GQA frequencies (NLIL's tables, shipped in
``sample_data/nlil_gqa_meta``); each label is the truth of a planted disjunction of lifted rules
(``street(X) <- car(Y) & on(Y, X) | bus(Y) & on(Y, X) | road(Y) & near(Y, X)``), evaluated on the
generated graph, then flipped with probability `noise`, so every label has known rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.samples import sample_data_dir
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError

META_FILES = ("obj_freq.txt", "rel_freq.txt")


def gqa_meta_dir() -> Path:
    """The shipped copy of NLIL's GQA frequency tables."""
    return sample_data_dir() / "nlil_gqa_meta"


def _clean(name: str) -> str:
    """A predicate name from a GQA name (``in front of`` -> ``in_front_of``)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", name.strip()).strip("_").lower()


def read_frequencies(path: Path) -> pd.DataFrame:
    """A GQA ``name count`` table (first line ``total ...``) as columns name, count; DataError names the line."""
    path = Path(path)
    if not path.is_file():
        raise DataError("frequency table not found", file=str(path))
    names, counts = [], []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("total"):
            continue
        head, _, tail = line.rstrip().rpartition(" ")
        if not head or not tail.isdigit():
            raise DataError(f"expected 'name count', got {line!r}", file=str(path), line=i)
        names.append(_clean(head))
        counts.append(int(tail))
    frame = pd.DataFrame({"name": names, "count": counts})
    return frame[frame["name"] != ""].groupby("name", sort=False, as_index=False)["count"].sum()


@dataclass(frozen=True)
class PlantedRule:
    """One alternative of a label: ``label(X) <- obj(Y) & rel(Y, X)`` (or ``rel(X, Y)`` if not `into`)."""

    obj: str
    rel: str
    into: bool = True

    def text(self, label: str) -> str:
        atom = f"{self.rel}(Y, X)" if self.into else f"{self.rel}(X, Y)"
        return f"{label}(X) <- {self.obj}(Y) & {atom}"


DEFAULT_LABELS: dict[str, tuple[PlantedRule, ...]] = {
    "street": (PlantedRule("car", "on"), PlantedRule("bus", "on"), PlantedRule("road", "near")),
    "table": (PlantedRule("plate", "on"), PlantedRule("cup", "on")),
}
"""The labels planted by default, each with several alternative rules (the issue's example)."""


def make_scenes(n_scenes: int = 60, objects_per_scene: int = 8, targets_per_scene: int = 3,
                labels: dict[str, tuple[PlantedRule, ...]] | None = None, n_types: int = 25,
                n_relations: int = 8, edges_per_object: float = 1.5, plant_rate: float = 0.5,
                noise: float = 0.05, test_fraction: float = 0.3, seed: int = 0,
                meta: Path | None = None) -> RelationalDataset:
    """A dataset of GQA-like scenes: typed objects, relations, and labelled target objects.

    Per scene, `objects_per_scene` context objects get a type drawn with GQA object frequencies
    (the `n_types` most frequent, plus the planted ones); `edges_per_object` relations per object
    join random pairs with GQA relation frequencies. `targets_per_scene` objects carry no type;
    with probability `plant_rate` one planted alternative of a random label is made true for each.
    Labels are the planted disjunctions evaluated on the final graph, flipped with prob. `noise`;
    a `test_fraction` of targets are held out (targets/truth), the rest are labelled observations.
    """
    labels = dict(DEFAULT_LABELS if labels is None else labels)
    if n_scenes < 1 or objects_per_scene < 1 or targets_per_scene < 1:
        raise DataError("scenes, objects per scene and targets per scene must be at least 1")
    if not 0.0 <= noise < 0.5 or not 0.0 <= plant_rate <= 1.0 or not 0.0 < test_fraction < 1.0:
        raise DataError("noise must be in [0, 0.5), plant_rate in [0, 1], test_fraction in (0, 1)")
    types, relt = _vocabulary(labels, n_types, n_relations, Path(meta) if meta is not None else gqa_meta_dir())
    rng = np.random.default_rng(seed)
    S, K, T = n_scenes, objects_per_scene, targets_per_scene
    ctx, tgt, ctx_type, edges = _random_scenes(rng, S, K, T, types, relt, edges_per_object)
    edges, types_frame = _plant(rng, labels, tgt, plant_rate, edges, ctx, ctx_type)
    truth = _labels(rng, labels, tgt, edges, types_frame, noise)
    test = rng.random(len(tgt)) < test_fraction
    preds, tables = _scene_tables(types_frame, edges, labels, truth, tgt, test)
    return RelationalDataset(Schema.of(preds), tables, name=f"scenes_{n_scenes}x{objects_per_scene}_seed{seed}",
                             description="GQA-like scene graphs (GQA object/relation frequencies) with planted "
                                         "rules: " + "; ".join(r.text(lab) for lab, rs in labels.items() for r in rs))


def _vocabulary(labels: dict[str, tuple[PlantedRule, ...]], n_types: int, n_relations: int,
                folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(object types, relation types) with GQA counts: the most frequent ones plus every planted one."""
    objs = read_frequencies(folder / "obj_freq.txt")
    rels = read_frequencies(folder / "rel_freq.txt")
    planted_objs = {r.obj for alts in labels.values() for r in alts}
    planted_rels = {r.rel for alts in labels.values() for r in alts}
    objs = objs[~objs["name"].isin(labels)]
    types = objs.head(n_types)
    types = pd.concat([types, objs[objs["name"].isin(planted_objs - set(types["name"]))]])
    relt = pd.concat([rels.head(n_relations), rels[rels["name"].isin(planted_rels - set(rels.head(n_relations)["name"]))]])
    missing = (planted_objs - set(types["name"])) | (planted_rels - set(relt["name"]))
    if missing:
        raise DataError(f"planted names not in the GQA tables: {', '.join(sorted(missing))}", file=str(folder))
    return types, relt


def _random_scenes(rng: np.random.Generator, S: int, K: int, T: int, types: pd.DataFrame, relt: pd.DataFrame,
                   edges_per_object: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """(context objects, target objects, context types, relations): random relations inside each scene,
    between any two distinct objects (context or target), types and relations by GQA frequency."""
    tname, tp = types["name"].to_numpy(), types["count"].to_numpy(float)
    rname, rp = relt["name"].to_numpy(), relt["count"].to_numpy(float)
    ctx = np.array([f"s{s}_o{k}" for s in range(S) for k in range(K)], dtype=object)
    tgt = np.array([f"s{s}_t{k}" for s in range(S) for k in range(T)], dtype=object)
    ctx_type = rng.choice(tname, size=S * K, p=tp / tp.sum()).astype(object)
    n_edges = int(round(edges_per_object * (K + T))) * S
    scene = rng.integers(0, S, n_edges)
    a = rng.integers(0, K + T, n_edges)
    b = (a + rng.integers(1, K + T, n_edges)) % (K + T)

    def name(s: np.ndarray, i: np.ndarray) -> np.ndarray:
        return np.where(i < K, np.char.add(np.char.add("s", s.astype(str)), np.char.add("_o", i.astype(str))),
                        np.char.add(np.char.add("s", s.astype(str)), np.char.add("_t", (i - K).astype(str))))
    edges = pd.DataFrame({"rel": rng.choice(rname, size=n_edges, p=rp / rp.sum()),
                          "a0": name(scene, a).astype(object), "a1": name(scene, b).astype(object)})
    return ctx, tgt, ctx_type, edges


def _plant(rng: np.random.Generator, labels: dict[str, tuple[PlantedRule, ...]], tgt: np.ndarray, plant_rate: float,
           edges: pd.DataFrame, ctx: np.ndarray, ctx_type: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(relations, typed objects) after planting: for a fraction of targets, a fresh typed object related
    to it by one alternative of a random label."""
    alts = [(lab, r) for lab, rs in labels.items() for r in rs]
    chosen = rng.random(len(tgt)) < plant_rate
    pick = rng.integers(0, len(alts), len(tgt))
    new_objs = np.array([f"{t}_p" for t in tgt[chosen]], dtype=object)
    new_type = np.array([alts[j][1].obj for j in pick[chosen]], dtype=object)
    new_rel = np.array([alts[j][1].rel for j in pick[chosen]], dtype=object)
    into = np.array([alts[j][1].into for j in pick[chosen]], dtype=bool)
    planted = pd.DataFrame({"rel": new_rel, "a0": np.where(into, new_objs, tgt[chosen]),
                            "a1": np.where(into, tgt[chosen], new_objs)})
    edges = pd.concat([edges, planted], ignore_index=True).drop_duplicates(ignore_index=True)
    types_frame = pd.DataFrame({"type": np.concatenate([ctx_type, new_type]),
                                "obj": np.concatenate([ctx, new_objs])})
    return edges, types_frame


def _labels(rng: np.random.Generator, labels: dict[str, tuple[PlantedRule, ...]], tgt: np.ndarray,
            edges: pd.DataFrame, types_frame: pd.DataFrame, noise: float) -> dict[str, np.ndarray]:
    """Each label's truth on the targets: the planted disjunction evaluated on the graph (vectorised
    joins), then flipped with probability `noise`."""
    truth = {}
    for lab, rs in labels.items():
        hit = np.zeros(len(tgt), dtype=bool)
        for r in rs:
            e = edges[edges["rel"] == r.rel]
            ends = e.rename(columns={"a0": "other", "a1": "x"}) if r.into else e.rename(columns={"a1": "other", "a0": "x"})
            typed = ends.merge(types_frame[types_frame["type"] == r.obj], left_on="other", right_on="obj")
            hit |= np.isin(tgt, typed["x"].to_numpy())
        flip = rng.random(len(tgt)) < noise
        truth[lab] = (hit ^ flip).astype(float)
    return truth


def _scene_tables(types_frame: pd.DataFrame, edges: pd.DataFrame, labels: dict[str, tuple[PlantedRule, ...]],
                  truth: dict[str, np.ndarray], tgt: np.ndarray,
                  test: np.ndarray) -> tuple[list[Predicate], dict[str, dict[str, pd.DataFrame]]]:
    """The schema and tables: one unary predicate per type, one binary per relation, the labels
    observed on training targets and held out on the `test` ones."""
    preds, tables = [], {}
    for t, g in types_frame.groupby("type", sort=True):
        preds.append(Predicate(str(t), 1, ("object",)))
        tables[str(t)] = {"obs": pd.DataFrame({"a0": g["obj"].to_numpy()})}
    for r, g in edges.groupby("rel", sort=True):
        preds.append(Predicate(str(r), 2, ("object", "object")))
        tables[str(r)] = {"obs": g[["a0", "a1"]].reset_index(drop=True)}
    for lab in labels:
        preds.append(Predicate(lab, 1, ("object",), closed=False))
        v = truth[lab]
        tables[lab] = {"obs": pd.DataFrame({"a0": tgt[~test], "value": v[~test]}),
                       "targets": pd.DataFrame({"a0": tgt[test]}),
                       "truth": pd.DataFrame({"a0": tgt[test], "value": v[test]})}
    return preds, tables


def planted_rules(labels: dict[str, tuple[PlantedRule, ...]] | None = None) -> dict[str, list[str]]:
    """The planted rule texts per label."""
    labels = DEFAULT_LABELS if labels is None else labels
    return {lab: [r.text(lab) for r in rs] for lab, rs in labels.items()}


def read_gqa_node_task(folder: Path, target: str) -> RelationalDataset:
    """GQA node-type task files (one fact file per scene: ``pred(a)`` / ``pred(a,b)`` lines, a leading
    ``0``/``1`` label column optional) as one dataset; `target` facts become labelled observations."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.suffix == ".txt") if folder.is_dir() else []
    if not files:
        raise DataError("no scene fact files (*.txt) found", file=str(folder))
    atom = re.compile(r"^\s*(?:([01])\s+)?([A-Za-z_][\w ]*?)\s*\(\s*([^,()\s]+)\s*(?:,\s*([^,()\s]+)\s*)?\)\s*\.?\s*$")
    rows = []
    for f in files:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("%"):
                continue
            m = atom.match(line)
            if not m:
                raise DataError(f"expected a fact like 'on(a, b)', got {line!r}", file=str(f), line=i)
            lab, pred, x, y = m.groups()
            prefix = f.stem + "_"
            rows.append((_clean(pred), prefix + x.strip(), None if y is None else prefix + y.strip(),
                         1.0 if lab is None else float(lab)))
    frame = pd.DataFrame(rows, columns=["pred", "a0", "a1", "value"])
    preds, tables = [], {}
    for p, g in frame.groupby("pred", sort=True):
        arity = 1 if g["a1"].isna().all() else 2
        if arity == 2 and g["a1"].isna().any():
            raise DataError(f"predicate {p} is used with one and with two arguments", file=str(folder))
        preds.append(Predicate(str(p), arity, ("object",) * arity, closed=p != _clean(target)))
        cols = ["a0"] if arity == 1 else ["a0", "a1"]
        tables[str(p)] = {"obs": g[cols + ["value"]].reset_index(drop=True)}
    if _clean(target) not in tables:
        raise DataError(f"target predicate {target!r} does not occur in the scene files", file=str(folder))
    return RelationalDataset(Schema.of(preds), tables, name=f"gqa_{folder.name}")
