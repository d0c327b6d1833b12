"""ESMS/PSL explanations of arithmetic and summation ground rules: force = -d(energy)/dy, natural text.

The energy is written out by hand (not taken from xcore's hinge program), each rule as PSL defines
its potentials, and differentiated by central differences at the MAP state.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.psl.explain import explain_targets
from xcore.psl.model import PSLModel

PAPERS = [f"p{i}" for i in range(5)]
CATS = ["c1", "c2", "c3"]
RULES = """
1.0: HasCat(A, C) & Link(A, B) -> HasCat(B, C) ^2
2.0: HasCat(A, +C) = 1 ^2
1.0: HasCat(A, 'c1') - HasCat(A, 'c2') >= 0.9 ^2
0.3: HasCat(A, +C) - 2 * HasCat(A, 'c3') <= 0.1 ^2
0.1: ~HasCat(A, C) ^2
"""


def citations(seed: int):
    rng = np.random.default_rng(seed)
    links = {(a, b): round(float(rng.uniform(0.5, 1)), 2) for a in PAPERS for b in PAPERS
             if a != b and rng.random() < 0.5}
    observed = {("p0", "c1"): 1.0, ("p1", "c2"): 1.0}
    targets = [(p, c) for p in PAPERS[2:] for c in CATS]
    ds = RelationalDataset(
        [Predicate("Link", 2, template="{0} cites {1}"),
         Predicate("HasCat", 2, closed=False, template="{0} is about {1}")],
        {"Link": {"obs": pd.DataFrame([(a, b, v) for (a, b), v in links.items()], columns=["a0", "a1", "value"])},
         "HasCat": {"obs": pd.DataFrame([(a, c, v) for (a, c), v in observed.items()], columns=["a0", "a1", "value"]),
                    "targets": pd.DataFrame(targets, columns=["a0", "a1"])}})
    return ds, links, observed, targets


def energies(y: dict, links: dict, observed: dict) -> dict[int, float]:
    """Each rule's energy at the values `y` (targets) and `observed`, written from PSL's definitions."""
    def v(p, c):
        return y.get((p, c), observed.get((p, c), 0.0))

    exists = {*y, *observed}
    e = {k: 0.0 for k in range(5)}
    for (a, b), lv in links.items():  # body atoms must exist; a missing head atom is 0
        for c in CATS:
            if (a, c) in exists:
                e[0] += max(0.0, v(a, c) + lv - 1.0 - v(b, c)) ** 2
    for p in PAPERS:
        atoms = [(p, c) for c in CATS if (p, c) in exists]
        if atoms:  # "= 1" weighted: both hinges, (s - 1)^2 squared
            s = sum(v(*a) for a in atoms)
            e[1] += 2.0 * (max(0.0, s - 1) ** 2 + max(0.0, 1 - s) ** 2)
        if (p, "c1") in exists and (p, "c2") in exists:
            e[2] += 1.0 * max(0.0, 0.9 - (v(p, "c1") - v(p, "c2"))) ** 2
        if atoms and (p, "c3") in exists:
            s = sum(v(*a) for a in atoms)
            e[3] += 0.3 * max(0.0, s - 2 * v(p, "c3") - 0.1) ** 2
    e[4] = sum(0.1 * v(*a) ** 2 for a in exists)
    return e


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_arithmetic_and_summation_forces_are_minus_the_energy_derivative(seed):
    ds, links, observed, targets = citations(seed)
    model = PSLModel(RULES)
    model.ground(ds)
    model.infer()
    store = model.store_
    cols = np.arange(store.n_targets)
    names = [tuple(t.split("(")[1].rstrip(")").split(", ")) for t in store.atom_text(store.target_ids[cols])]
    assert sorted(names) == sorted(targets)
    y = {names[c]: float(model.y_[c]) for c in cols}
    explanations = explain_targets(model, cols, keep_zero=True)
    h = 1e-6
    checked = 0
    for c, expl in zip(cols, explanations):
        atom = names[c]
        up, down = dict(y), dict(y)
        up[atom] += h
        down[atom] -= h
        e_up, e_down = energies(up, links, observed), energies(down, links, observed)
        for k in range(5):
            force = sum(it.effect for it in expl.items if it.extras["rule_index"] == k)
            assert force == pytest.approx(-(e_up[k] - e_down[k]) / (2 * h), abs=1e-6), (atom, k)
        for it in expl.items:
            if it.extras["rule_index"] in (1, 2, 3):
                assert it.atoms[it.target_index] == f"HasCat({atom[0]}, {atom[1]})"
                assert set(it.roles) == {"body"} and not any(it.observed)
                assert it.direction == int(np.sign(it.effect))
                checked += 1
    assert checked >= 3 * len(cols)  # every target sits in ground rules of each arithmetic rule


def test_natural_text_of_arithmetic_ground_rules():
    ds, *_ = citations(0)
    model = PSLModel(RULES)
    model.ground(ds)
    model.infer()
    store = model.store_
    c = int(np.flatnonzero(store.atom_text(store.target_ids) == "HasCat(p2, c3)")[0])
    items = {it.extras["rule_index"]: it for it in explain_targets(model, [c], keep_zero=True)[0].items}
    assert items[1].natural == "“p2 is about c1” + “p2 is about c2” + “p2 is about c3” should equal 1"
    assert items[1].text == "HasCat(p2, c1) + HasCat(p2, c2) + HasCat(p2, c3) = 1.0"
    # the target appears twice (summed and named): its force uses its net coefficient 1 - 2 = -1
    assert items[3].natural == ("“p2 is about c1” + “p2 is about c2” + “p2 is about c3” − 2 × “p2 is about c3” "
                                "should be at most 0.1")
    assert items[3].extras["coefficient"] == -1.0
    c1 = int(np.flatnonzero(store.atom_text(store.target_ids) == "HasCat(p2, c1)")[0])
    item = next(it for it in explain_targets(model, [c1], keep_zero=True)[0].items if it.extras["rule_index"] == 2)
    assert item.natural == "“p2 is about c1” − “p2 is about c2” should be at least 0.9"
    assert item.atoms == ["HasCat(p2, c1)", "HasCat(p2, c2)"] and item.target_index == 0


def test_hard_summation_rule_reads_always():
    from xcore.logic.atom_text import ground_rule_texts

    ds, *_ = citations(0)
    model = PSLModel("1.0: HasCat(A, C) & Link(A, B) -> HasCat(B, C) ^2\nHasCat(A, +C) = 1 .")
    model.ground(ds)
    g = model.grounded_[1]
    t = ground_rule_texts(g, model.store_, np.arange(g.n))
    assert "always: “p2 is about c1” + “p2 is about c2” + “p2 is about c3” should equal 1" in list(t["natural"])
    assert "always: “p0 is about c1” should equal 1" in list(t["natural"])  # p0's only atom, observed
