"""Relational stability of ESMS explanations: perturb one observed atom, re-infer, compare scores.

Measured: change observed atom x_k by epsilon (kept in [0, 1]), redo MAP (warm start), and take the
largest change of any explanation score ``f_ji = |w_j dphi_j/dy_i|`` over all (target, ground
rule) pairs.

Bound (our reading of the paper's ``2R(epsilon + B)``, derived for squared hinges). Write ground
rule j as ``h_j = a_j . y + c_j . x + b_j`` (a_j: target coefficients, c_j: observed ones). Then
``f_ji = 2 w_j |a_ji| max(0, h_j)``, so

    |f'_ji - f_ji| <= 2 w_j |a_ji| (||a_j||_1 ||dy||_inf + |c_jk| epsilon) <= 2 R (epsilon + B)

with ``R = max_j w_j max_i |a_ji| max(||a_j||_1, max_k |c_jk|)`` (rule weight times the
coefficient norms: how strongly one ground rule couples an atom to the rest) and B any bound on
the MAP change ``||y' - y||_inf``. B: the squared potentials that are active everywhere on the box
(e.g. the priors) make the energy mu-strongly convex with ``mu = lambda_min(2 sum_j w_j a_j a_j^T)``
over those rows; with the optimality conditions of both MAP problems this gives
``||y' - y||_2 <= ||grad E(y'; x) - grad E(y'; x')||_2 / mu <= 2 epsilon || |A|^T (w * |c_k|) ||_2 / mu``,
and ``B = min(that, 1)`` since predictions live in [0, 1].
The bound needs every weighted potential squared (a linear hinge's score jumps when it switches
on) and mu > 0 (a prior or another always-active squared rule on every target); otherwise
`applicable` is False and the bound is infinite. Hard constraints must not involve x_k.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from xcore.errors import XcoreError
from xcore.optional_deps import import_optional
from xcore.psl.explain import explanation_scores
from xcore.psl.inference import map_inference
from xcore.psl.program import HingeProgram
from xcore.runtime import limited_threads

if TYPE_CHECKING:  # pragma: no cover
    from xcore.psl.model import PSLModel

EXACT_EIG_LIMIT = 1000
"""Up to this many targets mu is the exact smallest eigenvalue; above, a diagonal lower bound."""


@dataclass
class StabilityReport:
    """Measured largest explanation-score change after perturbing one observed atom, and its bound."""

    atom: str
    atom_id: int
    epsilon: float
    max_change: float
    bound: float
    R: float
    B: float
    mu: float
    map_change: float
    applicable: bool
    note: str = ""
    changes: pd.DataFrame = field(default_factory=pd.DataFrame)
    """The largest score changes: target, ground rule, score before and after."""

    @property
    def holds(self) -> bool:
        """True when the measured change is within the bound (up to solver tolerance)."""
        return bool(self.max_change <= self.bound * (1 + 1e-6) + 1e-7)

    def to_dict(self) -> dict[str, object]:
        """The scalar figures (for a table row)."""
        return {k: getattr(self, k) for k in ("atom", "atom_id", "epsilon", "max_change", "bound", "R", "B",
                                              "mu", "map_change", "applicable", "note")} | {"holds": self.holds}


# ---------------------------------------------------------------------- model pieces
def observed_coefficients(model: "PSLModel", hard: bool = False) -> sp.csr_matrix:
    """Coefficients c_jk of every observed atom k in every program row j (rows as in the program).

    Soft rows by default, hard-constraint rows with `hard=True`; columns are atom ids.
    """
    store = model.store_
    if model.forms_ is None or store is None:
        raise XcoreError("ground the model first")
    blocks = []
    for k, (rule, form) in enumerate(zip(model.rules, model.forms_)):
        if rule.is_hard != hard:
            continue
        g = model.grounded_[k]
        ids = g.atom_ids[form.rows]
        n, L = ids.shape
        rows, cols, vals = [], [], []
        for j in range(L):  # per literal of the rule, not per ground rule
            col = ids[:, j]
            obs = (col >= 0) & ~np.append(store.is_target, False)[col]
            rows.append(np.flatnonzero(obs))
            cols.append(col[obs])
            vals.append(np.full(int(obs.sum()), -float(g.signs[j])))
        blocks.append(sp.csr_matrix((np.concatenate(vals) if vals else np.zeros(0),
                                     (np.concatenate(rows) if rows else np.zeros(0, int),
                                      np.concatenate(cols) if cols else np.zeros(0, int))),
                                    shape=(n, store.n_atoms)))
    if not blocks:
        return sp.csr_matrix((0, store.n_atoms))
    out = sp.vstack(blocks, format="csr")
    out.sum_duplicates()
    return out


def coupling_constant(prog: HingeProgram, C_obs: sp.csr_matrix) -> float:
    """R = max_j w_j max_i |a_ji| max(||a_j||_1, max_k |c_jk|) over weighted potentials."""
    if prog.n_potentials == 0:
        return 0.0
    absA = abs(prog.A).tocsr()
    a_max = _row_max(absA)
    a_l1 = np.asarray(absA.sum(axis=1)).ravel()
    c_max = _row_max(abs(C_obs).tocsr()) if C_obs.shape[0] else np.zeros(prog.n_potentials)
    return float(np.max(prog.w * a_max * np.maximum(a_l1, c_max), initial=0.0))


def strong_convexity(prog: HingeProgram) -> tuple[float, str]:
    """mu: smallest eigenvalue of the Hessian of the squared potentials active on the whole box."""
    A = prog.A.tocsr()
    n = prog.n_atoms
    if n == 0:
        return 0.0, "no targets"
    lowest = prog.b + np.asarray(A.minimum(0).sum(axis=1)).ravel()  # min of A_j y + b_j over [0, 1]^n
    rows = np.flatnonzero(prog.squared & (prog.w > 0) & (lowest >= 0))
    if not len(rows):
        return 0.0, "no squared potential is active on the whole box (add priors)"
    As = A[rows]
    H = 2.0 * (As.T @ sp.diags(prog.w[rows]) @ As)
    if n <= EXACT_EIG_LIMIT:
        eigvalsh = import_optional("scipy.linalg").eigvalsh  # start-up: LAPACK only for small programs' exact bound

        with limited_threads(1):
            lam = float(eigvalsh(H.toarray(), subset_by_index=[0, 0])[0])
        return max(lam, 0.0), "exact smallest eigenvalue"
    single = np.diff(As.indptr) == 1
    diag = np.bincount(As[single].indices, weights=2.0 * prog.w[rows][single] * As[single].data ** 2, minlength=n)
    return float(diag.min()), "lower bound from single-atom potentials"


def _row_max(M: sp.csr_matrix) -> np.ndarray:
    out = np.zeros(M.shape[0])
    nz = np.diff(M.indptr) > 0
    if nz.any():
        out[nz] = np.maximum.reduceat(M.data, M.indptr[:-1][nz])
    return out


# ---------------------------------------------------------------------- the check
def relational_stability(model: "PSLModel", atom: int | str | None = None, epsilon: float = 0.05,
                         top: int = 20) -> StabilityReport:
    """Perturb one observed atom by `epsilon`, re-infer, and compare every explanation score with the bound.

    `atom`: an atom id or canonical text (``friend(a, b)``); default the observed atom that occurs
    in the most ground rules. The sign of epsilon flips if needed to stay within [0, 1].
    """
    if epsilon <= 0:
        raise XcoreError(f"epsilon must be > 0, got {epsilon}")
    prog = model._need_program()
    y = model._need_map()
    store = model.store_
    C = observed_coefficients(model)
    k = _pick_atom(model, atom, C)
    x = float(store.value[k])
    delta = epsilon if x + epsilon <= 1.0 else -epsilon
    if x + delta < 0:
        delta = 1.0 - x if (1.0 - x) >= x else -x
    ck = np.asarray(C[:, k].toarray()).ravel()
    hard_ck = np.zeros(0)
    if prog.C.shape[0]:
        hard_ck = np.asarray(observed_coefficients(model, hard=True)[:, k].toarray()).ravel()
    new = HingeProgram(prog.A, prog.b + ck * delta, prog.w, prog.squared,
                       C=prog.C if prog.C.shape[0] else None,
                       d=(prog.d + hard_ck * delta) if prog.C.shape[0] else None,
                       equality=prog.equality if prog.C.shape[0] else None, rule_index=prog.rule_index)
    with limited_threads(1):
        y_new = map_inference(new, model.inference, y0=y).y
    S0, S1 = explanation_scores(prog, y), explanation_scores(new, y_new)
    diff = (S1 - S0).tocoo()
    max_change = float(np.abs(diff.data).max(initial=0.0))

    eps = abs(delta)
    R = coupling_constant(prog, C)
    mu, mu_note = strong_convexity(prog)
    weighted = prog.w > 0
    notes = []
    applicable = True
    if np.any(weighted & ~prog.squared):
        applicable = False
        notes.append("the model has linear (non-squared) hinges: their scores jump, the bound needs ^2 rules")
    if len(hard_ck) and np.any(hard_ck != 0):
        applicable = False
        notes.append("the perturbed atom occurs in a hard constraint")
    if mu <= 0:
        applicable = False
        notes.append(f"MAP is not strongly convex ({mu_note})")
    grad_change = 2.0 * eps * np.linalg.norm(abs(prog.A).T @ (prog.w * np.abs(ck) * prog.squared))
    B = min(grad_change / mu, 1.0) if mu > 0 else float("inf")  # y lives in [0, 1]: never more than 1
    bound = 2.0 * R * (eps + B) if applicable else float("inf")
    notes.append(f"mu: {mu_note}")
    return StabilityReport(
        atom=str(store.atom_text([k])[0]), atom_id=int(k), epsilon=float(delta), max_change=max_change,
        bound=float(bound), R=R, B=float(B), mu=mu, map_change=float(np.abs(y_new - y).max(initial=0.0)),
        applicable=applicable, note="; ".join(notes), changes=_top_changes(model, diff, S0, S1, top))


def stability_table(model: "PSLModel", atoms=None, epsilon: float = 0.05, n_atoms: int = 5) -> pd.DataFrame:
    """`relational_stability` for several observed atoms (default: the `n_atoms` most connected)."""
    if atoms is None:
        C = observed_coefficients(model)
        counts = np.diff(C.tocsc().indptr)
        atoms = [int(a) for a in np.argsort(-counts, kind="stable")[:n_atoms] if counts[a] > 0]
    return pd.DataFrame([relational_stability(model, a, epsilon).to_dict() for a in atoms])


def _pick_atom(model: "PSLModel", atom, C: sp.csr_matrix) -> int:
    store = model.store_
    if atom is None:
        counts = np.diff(C.tocsc().indptr)
        if not counts.any():
            raise XcoreError("no observed atom occurs in a ground rule with a target: nothing to perturb")
        return int(np.argmax(counts))
    if isinstance(atom, str):
        obs = np.flatnonzero(~store.is_target)
        texts = store.atom_text(obs)
        hit = np.flatnonzero(texts == atom.replace("'", "").replace('"', ""))
        if not len(hit):
            raise XcoreError(f"{atom!r} is not an observed atom of the grounded dataset")
        return int(obs[hit[0]])
    k = int(atom)
    if not 0 <= k < store.n_atoms or store.is_target[k]:
        raise XcoreError(f"atom id {atom} is not an observed atom")
    return k


def _top_changes(model: "PSLModel", diff: sp.coo_matrix, S0: sp.csr_matrix, S1: sp.csr_matrix,
                 top: int) -> pd.DataFrame:
    if not diff.nnz:
        return pd.DataFrame(columns=["target", "ground", "rule", "before", "after", "change"])
    order = np.argsort(-np.abs(diff.data), kind="stable")[:top]
    r, c = diff.row[order], diff.col[order]
    store = model.store_
    return pd.DataFrame({
        "target": store.atom_text(store.target_ids[c]), "ground": r,
        "rule": [model.rules[int(i)].text() for i in model.program_.rule_index[r]],
        "before": np.asarray(S0[r, c]).ravel(), "after": np.asarray(S1[r, c]).ravel(),
        "change": diff.data[order]})
