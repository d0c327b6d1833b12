"""m-NLIL on data it was not fitted on: the learned networks are over operators (relations, their
inverses, unary filters), not entities, so they run on another data set's facts once its operator bank
has the fitted one's predicates in the same order."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.nlil.graph import KB, kb_from_dataset
from xcore.nlil.mnlil import LabelRules


def aligned_kb(data: RelationalDataset, fitted: KB, head: str) -> KB:
    """The observed facts of `data` (the head left out) over the fitted KB's predicates: a predicate the
    data lacks has no facts, one the fitted KB lacks is left out (the networks have no weight for it)."""
    new = kb_from_dataset(data, exclude=(head,))
    unary = {p: new.unary.get(p, np.zeros(0, dtype=np.int64)) for p in fitted.unary}
    binary = {p: new.binary.get(p, np.zeros((2, 0), dtype=np.int64)) for p in fitted.binary}
    return KB(new.entities, unary, binary)


def same_facts(a: KB, b: KB) -> bool:
    """True when two KBs hold the same facts by entity name (their entity indexes may differ)."""
    if a.unary.keys() != b.unary.keys() or a.binary.keys() != b.binary.keys():
        return False
    for p in a.unary:
        if not np.array_equal(np.sort(a.entities[a.unary[p]].astype(str)), np.sort(b.entities[b.unary[p]].astype(str))):
            return False
    for p in a.binary:
        ea, eb = a.binary[p], b.binary[p]
        if ea.shape != eb.shape:
            return False
        pa = np.sort(np.char.add(np.char.add(a.entities[ea[0]].astype(str), "\x00"), a.entities[ea[1]].astype(str)))
        pb = np.sort(np.char.add(np.char.add(b.entities[eb[0]].astype(str), "\x00"), b.entities[eb[1]].astype(str)))
        if not np.array_equal(pa, pb):
            return False
    return True


def rules_on(rules: LabelRules, kb: KB) -> LabelRules:
    """The label's networks over `kb`'s operator bank (same learned weights; the fitted ones unchanged)."""
    ops = kb.operators()
    models = []
    for m in rules.models:
        clone = copy.copy(m)  # shares the parameters; only the operator bank differs
        clone.ops = ops
        models.append(clone)
    return dataclasses.replace(rules, models=models)
