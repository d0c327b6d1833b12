"""Carcinogenesis (NTP, "Canc330") for DRM benchmarks: a `RelationalDataset` from the Prolog files.

Tests and benchmarks only (the data may not ship): read from the shared data folder. The 298
training compounds and the 39 PTE-1 test compounds are the examples (337 with labels); ``atm``
drops the partial charge (DRM features use constants); ``charges=10`` adds charge thresholds as for
Mutagenesis (`xcore.drm.mutagenesis.charge_facts`), off by default: on Canc330 they did not raise either
model (issue 31, bench/RESULTS.md); rings and groups are ``p(Drug, [Atoms])``
facts; alerts, genetic tests and the Ames test are kept as they are. No folds ship with the data:
DRM's seeded stratified folds are used.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.drm.mutagenesis import add_charges, obs_table, read_facts
from xcore.errors import DataError

RELEVANCE = """# Canc330 relevance (paper Appendix 0.B, from R. D. King), least relevant first
1: atm, bond
2: {groups}
3: ashby_alert, ind
4: ames, has_property
"""


def load_carcinogenesis(folder: str | Path, charges: int = 0) -> tuple[RelationalDataset, str]:
    """The labelled compounds with atoms, bonds, groups, alerts and tests (`charges` >= 2: the atoms' charge
    thresholds, `xcore.drm.mutagenesis.charge_facts`); and the paper's relevance text."""
    root = Path(folder)
    if not (root / "atoms.pl").exists():
        raise DataError("no atoms.pl here (expected the Carcinogenesis files)", file=str(root))
    labels: dict[str, float] = {}
    for name, value in (("train_pos.pl", 1.0), ("train_neg.pl", 0.0), ("pte1_test_pos.f", 1.0),
                        ("pte1_test_neg.n", 0.0)):
        for (drug,) in read_facts(root / name).get("active", []):
            labels[drug] = value
    keep = set(labels)
    drugs = list(labels)
    atoms = read_facts(root / "atoms.pl")
    bonds = read_facts(root / "bonds.pl")
    schema = [Predicate("atm", 4, ("drug", "atomid", "element", "atomtype")),
              Predicate("bond", 4, ("drug", "atomid", "atomid", "bondtype"))]
    atm5 = [r for r in atoms.get("atm", []) if r[0] in keep]
    tables: dict[str, dict[str, pd.DataFrame]] = {
        "atm": obs_table([r[:4] for r in atm5], 4),
        "bond": obs_table([r for r in bonds.get("bond", []) if r[0] in keep], 4)}
    if charges >= 2:
        add_charges(schema, tables, atm5, charges)
    groups = read_facts(root / "newgroups.pl")
    for name in sorted(groups):
        rows = [r for r in groups[name] if r[0] in keep]
        if rows:
            schema.append(Predicate(name, 2, ("drug", f"{name}_atoms")))  # each group kind its own objects
            tables[name] = obs_table(rows, 2)
    alerts = [(r[1], r[0], r[2]) for r in read_facts(root / "ind_pos.pl").get("ashby_alert", []) if r[1] in keep]
    schema.append(Predicate("ashby_alert", 3, ("drug", "alert", "alert_atoms")))
    tables["ashby_alert"] = obs_table(alerts, 3)
    schema.append(Predicate("ind", 3, ("drug", "alert", "count")))
    tables["ind"] = obs_table([r for r in read_facts(root / "ind_nos.pl").get("ind", []) if r[0] in keep], 3)
    schema.append(Predicate("ames", 1, ("drug",)))
    tables["ames"] = obs_table([r for r in read_facts(root / "ames.pl").get("ames", []) if r[0] in keep], 1)
    schema.append(Predicate("has_property", 3, ("drug", "test", "outcome")))
    tables["has_property"] = obs_table([r for r in read_facts(root / "gentoxprops.pl").get("has_property", [])
                                   if r[0] in keep], 3)
    schema.append(Predicate("active", 1, ("drug",), closed=False))
    tables["active"] = {"targets": pd.DataFrame({"a0": drugs, "value": np.nan}),
                        "truth": pd.DataFrame({"a0": drugs, "value": [labels[d] for d in drugs]})}
    ds = RelationalDataset(schema, tables, name="Carcinogenesis (Canc330)",
                           description="NTP compounds, active/1 (training set and PTE-1 test set)")
    return ds, RELEVANCE.format(groups=", ".join(sorted(groups)))
