"""Ground-rule explanations of a PSL model (ESMS shows them): the ground rules containing a target atom, ranked
by |w * dphi/dy_i| at MAP.

For target Y_i, its explanations G_i are the ground rules j with Y_i in them; ground rule j scores
``f_ji = |w_j * d phi_j / d y_i|`` at the MAP state: ``w_j |A_ji|`` for a violated linear hinge,
``2 w_j |A_ji| max(0, A_j y + b_j)`` for a squared one (A_ji is Y_i's coefficient, so an atom
occurring twice counts twice). Scores come from one sparse product for all pairs at once
(`explanation_scores`); ranking is a sort. By default pairs with score 0 (satisfied ground rules,
which exert no force on Y_i) are left out. A ground rule is explainable when its lifted rule is
alpha-explainable. ``force = -w dphi/dy`` is signed: > 0 pushes the prediction up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from xcore.explain.types import Explanation, ExplanationItem
from xcore.logic.atom_text import ground_rule_texts, natural_atom_text
from xcore.psl.program import HingeProgram

if TYPE_CHECKING:  # pragma: no cover
    from xcore.psl.model import PSLModel

FRAME_COLUMNS: tuple[str, ...] = (
    "target", "atom_id", "ground", "rule", "local_row", "weight", "coefficient", "derivative",
    "force", "score", "distance", "explainable", "rank")
"""Columns of `explanation_frame`."""


def explanation_scores(prog: HingeProgram, y: np.ndarray) -> sp.csr_matrix:
    """|w_j * d phi_j / d y_i| for every ground rule j (row) and target i (column), all at once."""
    return abs(sp.csr_matrix(sp.diags(prog.w) @ prog.potential_derivatives(y)))


def explanation_frame(model: "PSLModel", targets: np.ndarray | None = None, keep_zero: bool = False) -> pd.DataFrame:
    """All (target, ground rule) pairs with their scores, ranked per target (rank 1 = largest score).

    Vectorised: derivatives of every potential from one sparse product, one lexsort for the ranking.
    `targets` restricts to some target columns; `keep_zero` keeps satisfied ground rules (score 0).
    """
    y = model._need_map()
    prog = model._need_program()
    store = model.store_
    h = prog.A @ y + prog.b
    dist = np.maximum(h, 0.0)
    dphi = np.where(prog.squared, 2.0 * dist, (h > 0).astype(np.float64))  # as HingeProgram.potential_derivatives
    coo = prog.A.tocoo()
    row, col, coef = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    deriv = dphi[row] * coef
    keep = np.ones(len(row), dtype=bool) if keep_zero else (prog.w[row] * deriv != 0)
    if targets is not None:
        keep &= np.isin(col, np.asarray(targets, dtype=np.int64))
    row, col, coef, deriv = row[keep], col[keep], coef[keep], deriv[keep]
    w = prog.w[row]
    score = np.abs(w * deriv)
    order = np.lexsort((row, -score, col))
    row, col, deriv, coef, w, score = row[order], col[order], deriv[order], coef[order], w[order], score[order]
    rule = prog.rule_index[row].astype(np.int64)
    starts = np.searchsorted(col, col, side="left")
    rank = np.arange(len(col)) - starts + 1
    offsets = np.cumsum([0] + [len(f.b) for k, f in enumerate(model.forms_) if not model.rules[k].is_hard])
    soft_ids = [k for k, r in enumerate(model.rules) if not r.is_hard]
    pos_of_rule = np.full(len(model.rules), -1)
    pos_of_rule[soft_ids] = np.arange(len(soft_ids))
    within = row - offsets[pos_of_rule[rule]] if len(row) else row
    local = np.zeros(len(row), dtype=np.int64)
    for k in np.unique(rule):  # one step per lifted rule, not per ground rule
        m = rule == k
        local[m] = model.forms_[k].rows[within[m]]
    expl = model.rule_explainable()
    return pd.DataFrame({
        "target": col, "atom_id": store.target_ids[col], "ground": row, "rule": rule, "local_row": local,
        "weight": w, "coefficient": coef, "derivative": deriv, "force": -w * deriv, "score": score,
        "distance": dist[row], "explainable": expl[rule] if len(rule) else np.zeros(0, bool),
        "rank": rank.astype(np.int64),
    }, columns=list(FRAME_COLUMNS))


def mep_from_frame(frame: pd.DataFrame, n_targets: int, k: int) -> float:
    """MEP@K from an `explanation_frame`: share of targets with an explainable rule in their top K."""
    if n_targets <= 0:
        return float("nan")
    hit = frame["target"].to_numpy()[(frame["rank"].to_numpy() <= k) & frame["explainable"].to_numpy()]
    return float(len(np.unique(hit)) / n_targets)


def mep_from_program(prog: HingeProgram, y: np.ndarray, row_explainable: np.ndarray,
                     ks=(1, 2, 3)) -> dict[str, float]:
    """MEP@K straight from a hinge program and a MAP state (same ranking as `explanation_frame`).

    `row_explainable` flags each potential (row) as explainable; used by the search per candidate.
    """
    n = prog.n_atoms
    if n == 0:
        return {f"mep{k}": float("nan") for k in ks}
    h = prog.A @ y + prog.b
    dphi = np.where(prog.squared, 2.0 * np.maximum(h, 0.0), (h > 0).astype(np.float64))
    coo = prog.A.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    score = np.abs(prog.w[row] * dphi[row] * coo.data)
    keep = score != 0
    row, col, score = row[keep], col[keep], score[keep]
    order = np.lexsort((row, -score, col))
    row, col = row[order], col[order]
    rank = np.arange(len(col)) - np.searchsorted(col, col, side="left") + 1
    ex = np.asarray(row_explainable, dtype=bool)[row]
    return {f"mep{k}": float(len(np.unique(col[(rank <= k) & ex])) / n) for k in ks}


def mep_scores(model: "PSLModel", ks=(1, 2, 3)) -> dict[str, float]:
    """``{'mep1': .., 'mep2': .., 'mep3': ..}`` over every target of the grounded model."""
    frame = explanation_frame(model)
    n = model.store_.n_targets
    return {f"mep{k}": mep_from_frame(frame, n, k) for k in ks}


def explain_targets(model: "PSLModel", cols: np.ndarray, top_k: int | None = None,
                    keep_zero: bool = False) -> list[Explanation]:
    """`Explanation` objects (kind "ground_rule") for the given target columns, in that order."""
    cols = np.asarray(cols, dtype=np.int64)
    frame = explanation_frame(model, targets=cols, keep_zero=keep_zero)
    if top_k is not None:
        frame = frame[frame["rank"].to_numpy() <= top_k]
    items = _items(model, frame)
    store, y, truth = model.store_, model.y_, model.store_.truth
    tcol = frame["target"].to_numpy()
    ids = store.target_ids[cols]
    bounds = np.searchsorted(tcol, cols, side="left"), np.searchsorted(tcol, cols, side="right")
    out = []
    for c, lo, hi, tt, nt in zip(cols, bounds[0], bounds[1], store.atom_text(ids), natural_atom_text(store, ids)):
        out.append(Explanation(
            target=str(tt), target_text=str(nt), method="psl_ground_rules",
            prediction=float(y[c]), prediction_kind="soft truth", truth=None if not np.isfinite(truth[c]) else float(truth[c]),
            items=items[lo:hi], meta={"target_column": int(c)}))
    return out


def _ground_rule_parts(model: "PSLModel", frame: pd.DataFrame) -> dict[str, object]:
    """Per row of an explanation frame: the ground rule's text and natural text, its atoms, which are
    observed, the target's position among them; and per lifted rule its atoms' roles."""
    n = len(frame)
    parts: dict[str, np.ndarray] = {name: np.empty(n, dtype=object) for name in ("text", "natural", "atoms", "observed")}
    tindex = np.zeros(n, dtype=np.int64)
    roles_of: dict[int, list[str] | None] = {}
    rule_arr, local_arr, aid_arr = (frame[c].to_numpy() for c in ("rule", "local_row", "atom_id"))
    for k in np.unique(rule_arr):  # vectorised per lifted rule
        sel = np.flatnonzero(rule_arr == k)
        rows, inv = np.unique(local_arr[sel], return_inverse=True)
        t = ground_rule_texts(model.grounded_[int(k)], model.store_, rows)
        parts["text"][sel] = t["text"][inv]
        parts["natural"][sel] = t["natural"][inv]
        r = model.rules[int(k)]
        if t["atom_ids"].dtype == object:  # an arithmetic rule: its own atoms per ground rule
            for s, j in zip(sel, inv):
                parts["atoms"][s], parts["observed"][s] = t["atoms"][j], t["observed"][j]
                tindex[s] = int(np.flatnonzero(t["atom_ids"][j] == aid_arr[s])[0])
            roles_of[int(k)] = None  # every atom of `sum c*atom (rel) constant` is a term: "body" as in the rule
            continue
        parts["atoms"][sel] = list(t["atoms"][inv])
        parts["observed"][sel] = list(t["observed"][inv])
        tindex[sel] = np.argmax(t["atom_ids"][inv] == aid_arr[sel][:, None], axis=1)
        roles_of[int(k)] = ["body"] * len(r.body) + ["head"] * len(r.head)
    return {**parts, "tindex": tindex, "roles_of": roles_of}


def _items(model: "PSLModel", frame: pd.DataFrame) -> list[ExplanationItem]:
    """One `ExplanationItem` per row of an explanation frame (the shared type holds one object per item)."""
    parts = _ground_rule_parts(model, frame)
    text, natural, atoms, observed, tindex, roles_of = (
        parts[k] for k in ("text", "natural", "atoms", "observed", "tindex", "roles_of"))
    rule_text = {k: model.rules[k].text("psl") for k in roles_of}  # type: ignore[union-attr]
    col = {c: frame[c].to_numpy() for c in ("rule", "weight", "coefficient", "derivative", "force", "distance",
                                            "score", "explainable", "ground")}
    rule_arr, force = col["rule"], col["force"]
    return [ExplanationItem(
        kind="ground_rule", text=str(text[i]), natural=str(natural[i]), score=float(col["score"][i]),
        direction=int(np.sign(force[i])), effect=float(force[i]),
        atoms=[str(a) for a in atoms[i]], target_index=int(tindex[i]),
        roles=roles_of[int(rule_arr[i])] or ["body"] * len(atoms[i]),
        observed=[bool(o) for o in observed[i]], explainable=bool(col["explainable"][i]),
        extras={"rule": rule_text[int(rule_arr[i])], "rule_index": int(rule_arr[i]),
                "template": model.rules[int(rule_arr[i])].name, "weight": float(col["weight"][i]),
                "coefficient": float(col["coefficient"][i]), "derivative": float(col["derivative"][i]),
                "force": float(force[i]), "distance": float(col["distance"][i]),
                "ground_row": int(col["ground"][i])})
        for i in range(len(frame))]
