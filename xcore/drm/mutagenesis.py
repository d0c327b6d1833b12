"""Mutagenesis 188 for DRM: the bundled Prolog facts as a `RelationalDataset` plus the standard folds.

Facts are read with the Prolog term reader (ring facts hold lists of lists) and restricted to the
188 compounds. Aleph's mode language (the paper's, from the ILP literature) compares atoms' partial
charges and ``lumo``/``logp`` with constants through its ``gteq``/``lteq`` helper rules; DRM's features
are drawn from facts, so ``atm`` drops the charge and (``charges=10``, the default) the loader writes
``charge_at_most(atom, t)`` / ``charge_at_least(atom, t)`` facts for the nine decile cut points t of all
atoms' charges (label-free; `charge_facts`). On Mut188 (the data's folds, three feature draws) they
raised the network from 0.874 to 0.894 and L2 logistic regression from 0.871 to 0.900 (issue 31,
bench/RESULTS.md); ``charges=0`` leaves them out. By default ``lumo``/``logp`` become quartile bins (``q1``..``q4``);
``numbers="thresholds"`` writes the comparisons as facts instead: ``lumo_at_most(d, t)`` and
``lumo_at_least(d, t)`` (likewise ``logp``) for the nine decile cut points t of the 188 values
(label-free). On Mut188 the thresholds did not raise the network's accuracy (issue 31,
bench/RESULTS.md), so the bins stay the default. The fold of each compound is the ``cv_fold/2`` predicate, which DRM uses for the folds and
leaves out of the background knowledge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.samples import sample_data_dir
from xcore.data.schema import Predicate
from xcore.errors import DataError
from xcore.logic.terms import Struct, read_clauses, term_text

FOLD_PREDICATE = "cv_fold"
RINGS = ("benzene", "carbon_5_aromatic_ring", "carbon_6_ring", "hetero_aromatic_6_ring", "hetero_aromatic_5_ring",
         "ring_size_6", "ring_size_5", "nitro", "methyl", "anthracene", "phenanthrene", "ball3")


def mutagenesis_folder() -> Path:
    return sample_data_dir() / "mutagenesis188"


def read_facts(path: Path) -> dict[str, list[tuple[str, ...]]]:
    """The ground facts of a Prolog file, by predicate name (shared with the Carcinogenesis loader)."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for c in read_clauses(path.read_text(), path.name):
        t = c.term
        if isinstance(t, Struct) and c.directive is None and t.name != ":-":
            out.setdefault(t.name, []).append(tuple(term_text(a) for a in t.args))
    return out


def obs_table(rows: list[tuple[str, ...]] | pd.DataFrame, arity: int) -> dict[str, pd.DataFrame]:
    """An observation table (a0.., value 1) of distinct rows, in the dataset's table layout."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows, columns=[f"a{i}" for i in range(arity)])
    frame = frame.astype(str).drop_duplicates(ignore_index=True)
    frame["value"] = 1.0
    return {"obs": frame}


def threshold_facts(values: pd.Series, cuts: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(at_most, at_least) rows (a0 = the compound, a1 = t) for the `cuts`-quantile cut points t of
    `values` (indexed by compound): Aleph's ``lteq(+x, #t)`` / ``gteq(+x, #t)`` as facts."""
    ts = np.unique(np.round(np.quantile(values.to_numpy(float), np.arange(1, cuts) / cuts), 3))
    v = values.to_numpy(float)[:, None]
    names = np.asarray(values.index, dtype=str)[:, None].repeat(len(ts), axis=1)
    text = np.array([f"{t:g}" for t in ts])[None, :].repeat(len(v), axis=0)
    frame = lambda keep: pd.DataFrame({"a0": names[keep], "a1": text[keep]})  # noqa: E731
    return frame(v <= ts[None, :]), frame(v >= ts[None, :])


def charge_facts(atm: list[tuple[str, ...]], cuts: int) -> dict[str, pd.DataFrame]:
    """``charge_at_most(atom, t)`` / ``charge_at_least(atom, t)`` rows for the `cuts`-quantile cut points t
    of the atoms' partial charges (the fifth argument of ``atm``; label-free): Aleph's ``lteq(+charge, #t)``
    / ``gteq(+charge, #t)`` on ``atm(+drug,-atomid,#element,#int,-charge)`` written as facts."""
    rows = pd.DataFrame(atm).iloc[:, [1, 4]]
    charge = pd.Series(rows[4].astype(float).to_numpy(), index=rows[1].to_numpy())
    at_most, at_least = threshold_facts(charge[~charge.index.duplicated()], cuts)
    return {"charge_at_most": at_most, "charge_at_least": at_least}


def add_charges(schema: list[Predicate], tables: dict[str, dict[str, pd.DataFrame]], atm: list[tuple[str, ...]],
                cuts: int) -> None:
    """Add the atoms' charge threshold predicates (`charge_facts`) to a loader's schema and tables."""
    for name, part in charge_facts(atm, cuts).items():
        side = name.removeprefix("charge_").replace("_", " ")
        schema.append(Predicate(name, 2, ("atomid", "charge"),
                                description=f"the atom's partial charge is {side} the constant"))
        tables[name] = obs_table(part, 2)


def read_folds(root: Path) -> tuple[dict[str, float], dict[str, int]]:
    """Each compound's label (``active(d)`` 1, ``:- active(d)`` 0) and fold (0-9) from ``folds188/s1..s10.pl``."""
    labels: dict[str, float] = {}
    fold: dict[str, int] = {}
    for k in range(1, 11):
        path = root / "folds188" / f"s{k}.pl"
        for c in read_clauses(path.read_text(), path.name):
            goal = c.directive if c.directive is not None else c.term
            if not (isinstance(goal, Struct) and goal.name == "active" and len(goal.args) == 1):
                raise DataError(f"expected active(d) or :- active(d), got {term_text(c.term)}", file=path.name,
                                line=c.line)
            drug = term_text(goal.args[0])
            labels[drug] = 0.0 if c.directive is not None else 1.0
            fold[drug] = k - 1
    return labels, fold


def load_mutagenesis(folder: str | Path | None = None,
                     numbers: Literal["quartiles", "thresholds"] = "quartiles", charges: int = 10) -> RelationalDataset:
    """The 188 compounds with atoms, bonds, rings, lumo/logp (decile thresholds or quartile bins),
    indicators, labels and folds; `charges` >= 2 adds the atoms' charge thresholds at that many quantiles
    (`charge_facts`; default deciles), 0 leaves the charges out."""
    root = Path(folder) if folder is not None else mutagenesis_folder()
    if not (root / "folds188").is_dir():
        raise DataError("no folds188/ folder here (expected the Mutagenesis 188 files)", file=str(root))
    labels, fold = read_folds(root)
    drugs = list(labels)
    keep = set(drugs)
    ab = read_facts(root / "atom_bond.pl")
    atm5 = [r for r in ab.get("atm", []) if r[0] in keep]
    atm = [r[:4] for r in atm5]
    bond = [r for r in ab.get("bond", []) if r[0] in keep]
    rings = read_facts(root / "ring_struc.pl")
    schema = [Predicate("atm", 4, ("drug", "atomid", "element", "atomtype")),
              Predicate("bond", 4, ("drug", "atomid", "atomid", "bondtype"))]
    tables: dict[str, dict[str, pd.DataFrame]] = {"atm": obs_table(atm, 4), "bond": obs_table(bond, 4)}
    if charges >= 2:
        add_charges(schema, tables, atm5, charges)
    for name in RINGS:
        rows = [r for r in rings.get(name, []) if r[0] in keep]
        if rows:
            schema.append(Predicate(name, 2, ("drug", "ring")))
            tables[name] = obs_table(rows, 2)
    for name in ("lumo", "logp"):
        rows = [r for r in read_facts(root / f"{name}.pl").get(name, []) if r[0] in keep]
        frame = pd.DataFrame(rows, columns=["a0", "a1"])
        if numbers == "thresholds":
            at_most, at_least = threshold_facts(frame.set_index("a0")["a1"].astype(float))
            for side, part in (("at_most", at_most), ("at_least", at_least)):
                schema.append(Predicate(f"{name}_{side}", 2, ("drug", name),
                                        description=f"{name} of the compound is {side.replace('_', ' ')} the constant"))
                tables[f"{name}_{side}"] = obs_table(part, 2)
            continue
        frame["a1"] = pd.qcut(frame["a1"].astype(float), 4, labels=["q1", "q2", "q3", "q4"]).astype(str)
        schema.append(Predicate(name, 2, ("drug", f"{name}_bin")))
        tables[name] = obs_table(frame, 2)
    for name in ("ind1", "inda"):
        rows = [r for r in read_facts(root / f"{name}.pl").get(name, []) if r[0] in keep]
        schema.append(Predicate(name, 2, ("drug", "indicator")))
        tables[name] = obs_table(rows, 2)
    schema.append(Predicate(FOLD_PREDICATE, 2, ("drug", "fold"), explainable=False,
                            description="cross-validation fold (not background knowledge)"))
    tables[FOLD_PREDICATE] = obs_table([(d, str(fold[d])) for d in drugs], 2)
    schema.append(Predicate("active", 1, ("drug",), closed=False))
    tables["active"] = {"targets": pd.DataFrame({"a0": drugs, "value": np.nan}),
                        "truth": pd.DataFrame({"a0": drugs, "value": [labels[d] for d in drugs]})}
    return RelationalDataset(schema, tables, name="Mutagenesis 188",
                             description="188 nitroaromatic compounds, active/1, with the standard 10 folds")
