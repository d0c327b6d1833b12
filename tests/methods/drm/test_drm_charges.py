"""Atom partial charges as threshold facts (issue 31): Aleph's ``atm(+drug,-atomid,#element,#int,-charge)``
with ``gteq``/``lteq`` on the charge, written as ``charge_at_least(atom, t)`` / ``charge_at_most(atom, t)`` at
label-free quantile cut points. On planted compounds whose class is "an atom with charge >= t" the rule
is a drawn feature with the charges and no feature without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xcore.drm.estimator import input_candidates
from xcore.drm.features import Evaluator, draw_features
from xcore.drm.mutagenesis import charge_facts, load_mutagenesis
from xcore.drm.network import train_network
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings

N, ATOMS, CUTS = 60, 4, 4


def _planted(tmp_path: Path, seed: int = 0) -> tuple[Path, np.ndarray]:
    """A Mutagenesis-shaped folder: N compounds of ATOMS carbon atoms with random charges, active iff an
    atom's charge is at least the upper quartile cut point of all charges (what the loader's cut is)."""
    rng = np.random.default_rng(seed)
    charge = rng.integers(-300, 301, size=(N, ATOMS)) / 1000
    t = np.round(np.quantile(charge.ravel(), 0.75), 3)
    active = (charge >= t).any(axis=1)
    (tmp_path / "folds188").mkdir()
    for k in range(10):
        (tmp_path / "folds188" / f"s{k + 1}.pl").write_text("".join(
            f"{'' if active[i] else ':- '}active(d{i}).\n" for i in range(k, N, 10)))
    atoms = "".join(f"atm(d{i},d{i}_{a},c,22,{charge[i, a]:g}).\n" for i in range(N) for a in range(ATOMS))
    bonds = "".join(f"bond(d{i},d{i}_{a},d{i}_{a + 1},7).\n" for i in range(N) for a in range(ATOMS - 1))
    (tmp_path / "atom_bond.pl").write_text(atoms + bonds)
    (tmp_path / "ring_struc.pl").write_text("".join(f"benzene(d{i},[d{i}_0]).\n" for i in range(0, N, 3)))
    for name in ("lumo", "logp"):
        (tmp_path / f"{name}.pl").write_text("".join(f"{name}(d{i},{rng.normal():.3f}).\n" for i in range(N)))
    for name in ("ind1", "inda"):
        (tmp_path / f"{name}.pl").write_text("".join(f"{name}(d{i},{rng.integers(2)}).\n" for i in range(N)))
    return tmp_path, active


def test_charge_facts_against_a_direct_comparison():
    atm = [("d1", "a1", "c", "22", "-0.1"), ("d1", "a2", "o", "40", "0.3"), ("d2", "a3", "c", "22", "0.05"),
           ("d2", "a4", "n", "38", "0.2")]
    facts = charge_facts(atm, 4)
    cuts = np.round(np.quantile([-0.1, 0.3, 0.05, 0.2], [0.25, 0.5, 0.75]), 3)
    value = {a: float(c) for _, a, _, _, c in atm}
    for name, keep in (("charge_at_most", lambda v, t: v <= t), ("charge_at_least", lambda v, t: v >= t)):
        want = {(a, f"{t:g}") for a in value for t in cuts if keep(value[a], t)}
        assert set(map(tuple, facts[name][["a0", "a1"]].to_numpy().tolist())) == want


@pytest.mark.slow
def test_planted_charge_rule_is_a_feature_only_with_charges(tmp_path):
    folder, active = _planted(tmp_path)
    found = {}
    for charges in (0, CUTS):
        ds = load_mutagenesis(folder, charges=charges)
        problem = build_problem(ds, exclude=("cv_fold",))
        y = problem.labels.astype(bool)
        assert y.tolist() == [active[int(e[1:])] for e in problem.examples]
        feats = draw_features(problem, 600, seed=0, max_literals=3, depth=2)
        X = Evaluator(problem).matrix(feats).astype(bool)
        found[charges] = [f.definition() for f in feats if (X[:, f.index] == y).all()]
        fold = ds.observations("cv_fold").set_index("a0")["a1"].astype(int).reindex(problem.examples).to_numpy()
        test = fold < 5  # half of the 10 folds held out; the network searches the default grid on the rest
        Xf, yi, s = X.astype(np.float32), y.astype(np.int64), default_settings(ds)
        net = train_network(Xf[~test], yi[~test], s.hidden, s.learning_rates, s.dropout, s.max_epochs, 0,
                            s.weight_decays, s.inner_folds, column_sets=input_candidates(Xf[~test], True))
        found[f"acc{charges}"] = float(np.mean(net.predict(Xf[test][:, net.columns]) == yi[test]))
    assert not found[0] and found[CUTS]  # the rule is expressible only with the charge thresholds
    assert any("charge_at_least" in d for d in found[CUTS])
    assert found[f"acc{CUTS}"] >= 0.9 and found["acc0"] <= 0.8  # 0.967 and 0.6 when written


@pytest.mark.slow
def test_charges_by_default_at_decile_cuts_on_the_bundled_atoms():
    assert "charge_at_least" not in {p.name for p in load_mutagenesis(charges=0).predicates}
    ds = load_mutagenesis()
    assert ds.predicate("charge_at_least").types == ("atomid", "charge")
    most, least = ds.observations("charge_at_most"), ds.observations("charge_at_least")
    assert most["a1"].nunique() == least["a1"].nunique() == 9  # nine decile cut points
    atoms = set(ds.observations("atm")["a1"])
    assert set(most["a0"]) | set(least["a0"]) == atoms  # every atom is on one side of each cut
    modes = {str(m) for m in build_problem(ds, exclude=("cv_fold",)).language.modeb}
    assert "modeb(*,charge_at_least(+atomid,#charge))" in modes
