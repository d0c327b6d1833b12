"""Rule blocks of a hinge program: each grounded rule as ``max(0, A y + b)`` over the targets, stacked
into one `HingeProgram` (soft rules as potentials, hard rules as constraints)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.logic.ast import ArithmeticRule, Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import GroundRules
from xcore.psl.program import HingeProgram


# ---------------------------------------------------------------------- program assembly
@dataclass
class RuleForm:
    """One rule's ground rules as a hinge block over the targets: distance ``max(0, A y + b)``.

    `rows` are the rule's ground-rule positions (in its `GroundRules`) that involve a target.
    """

    A: sp.csr_matrix
    b: np.ndarray
    rows: np.ndarray
    n_ground: int
    equality: bool = False
    """Hard rows that must hold with equality (a hard arithmetic ``=`` rule)."""


def hinge_form(g: GroundRules) -> bool:
    """Whether a rule's rows come in two directions: a weighted arithmetic ``=`` (two hinges, as PSL)."""
    return isinstance(g.rule, ArithmeticRule) and g.rule.relation == "=" and not g.rule.is_hard


def hinge_rows(g: GroundRules, store: AtomStore) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """``(A, b, ground_row)``: every potential (or hard row) ``A y + b`` of one grounded rule;
    a weighted arithmetic equality gives both ``e <= 0`` and ``-e <= 0`` for its expression e."""
    A, b = g.linear_form(store)
    A = sp.csr_matrix(A)
    rows = np.arange(g.n)
    if hinge_form(g):
        A, b, rows = sp.vstack([A, -A], format="csr"), np.concatenate([b, -b]), np.concatenate([rows, rows])
    return A, b, rows


def rule_form(g: GroundRules, store: AtomStore) -> RuleForm:
    """The hinge block of one grounded rule, keeping only ground rules with a target atom."""
    A, b, rows = hinge_rows(g, store)
    keep = np.flatnonzero(np.diff(A.indptr) > 0)
    equality = isinstance(g.rule, ArithmeticRule) and g.rule.relation == "=" and g.rule.is_hard
    return RuleForm(A[keep], b[keep], rows[keep], g.n, equality)


def assemble_program(forms: Sequence[RuleForm], rules: Sequence[Rule], n_targets: int) -> HingeProgram:
    """Stack rule blocks into one `HingeProgram` (soft rules -> potentials, hard -> constraints)."""
    soft = [k for k, r in enumerate(rules) if not r.is_hard]
    hard = [k for k, r in enumerate(rules) if r.is_hard]
    empty = sp.csr_matrix((0, n_targets))

    def stack(idx):
        if not idx:
            return empty, np.zeros(0)
        return (sp.vstack([forms[k].A for k in idx], format="csr"),
                np.concatenate([forms[k].b for k in idx]))

    A, b = stack(soft)
    w = np.concatenate([np.full(len(forms[k].b), float(rules[k].weight)) for k in soft]) if soft else np.zeros(0)
    sq = np.concatenate([np.full(len(forms[k].b), bool(rules[k].squared)) for k in soft]) if soft else np.zeros(0, bool)
    ridx = np.concatenate([np.full(len(forms[k].b), k) for k in soft]) if soft else np.zeros(0, int)
    if hard:
        C, d = stack(hard)
        eq = np.concatenate([np.full(len(forms[k].b), forms[k].equality) for k in hard])
        return HingeProgram(A, b, w, sq, C=C, d=d, equality=eq, rule_index=ridx)
    return HingeProgram(A, b, w, sq, rule_index=ridx)


def check_constant_hard_rows(g: GroundRules, store: AtomStore, form: RuleForm) -> None:
    """A hard ground rule without targets must already hold; otherwise the evidence contradicts it."""
    A, b = g.linear_form(store)
    const = np.diff(sp.csr_matrix(A).indptr) == 0
    violated = (np.abs(b) > 1e-9) if form.equality else (b > 1e-9)
    bad = np.flatnonzero(const & violated)
    if len(bad):
        text = g.texts(store, bad[:1])[0]
        raise XcoreError(f"hard rule {g.rule.text()} is violated by the observations: {text}")
