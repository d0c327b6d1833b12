"""The same KB LP as a readable `pulp` model (for inspection, .lp/.mps export and cross-checks).

Unlike the HiGHS fast path (`xcore.plkb.lp`), this model keeps every unknown of the paper's
formulation by name: ``w<id>_<atom>`` = omega(atom), ``n<id>_<atom>`` = omega(~atom) with
``neg_<id>: w + n = 1``, ``c<i>`` = omega(clause i) (shared by repeated copies of clause i), ``over<i>``/``under<i>`` its deviation from p_i.
Query atoms are fixed through variable bounds (not substituted), so agreement with the HiGHS path
also checks the substitution there.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pulp

from xcore.errors import XcoreError
from xcore.plkb.kb import KB
from xcore.plkb.literals import FALSE, FREE, POS, TRUE
from xcore.plkb.lp import DEFAULT_FACE_TOL, Interval, LPError

PRINT_PRECISION = 1e-8
"""Per-clause slack for the face constraint in the pulp path (solution files carry ~8 digits)."""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)[:40]


def _var(prob: pulp.LpProblem, name: str, lo: float | None, up: float | None) -> pulp.LpVariable:
    if hasattr(prob, "add_variable"):  # pulp >= 3.3
        return prob.add_variable(name, lowBound=lo, upBound=up)
    return pulp.LpVariable(name, lowBound=lo, upBound=up)  # pragma: no cover - older pulp


def build_pulp(kb: KB, codes: np.ndarray | None = None, name: str = "plkb") -> tuple[pulp.LpProblem, dict]:
    """Stage-1 pulp model of `kb` under a query; returns the problem and its named variables."""
    dom = kb.domain
    states = np.full(dom.n_atoms, FREE, dtype=np.int8) if codes is None else dom.atom_states(codes)
    names = dom.atom_names()
    prob = pulp.LpProblem(_safe(name) or "plkb", pulp.LpMinimize)
    atoms = np.union1d([0], kb.atoms)
    w, nw = {}, {}
    for a in atoms.tolist():
        label = POS if a == 0 else f"{a}_{_safe(names[a])}"
        st = int(states[a])
        lo = 1.0 if st == TRUE else 0.0
        up = 0.0 if st == FALSE else 1.0
        w[a] = _var(prob, f"w_{label}", lo, up)
        nw[a] = _var(prob, f"n_{label}", 0.0, 1.0)
        prob += w[a] + nw[a] == 1, f"neg_{label}"
    n = len(kb)
    group = kb.clause_group  # one omega(c) per distinct clause, named after its first occurrence
    first: dict[int, int] = {}
    for i, gid in enumerate(group.tolist()):
        first.setdefault(gid, i)
    c_of = {gid: _var(prob, f"c{i}", 0.0, 1.0) for gid, i in first.items()}
    c = [c_of[gid] for gid in group.tolist()]
    over = [_var(prob, f"over{i}", 0.0, None) for i in range(n)]
    under = [_var(prob, f"under{i}", 0.0, None) for i in range(n)]
    objective = pulp.lpSum(float(kb.weight[i]) * (over[i] + under[i]) for i in range(n))
    prob += objective
    for i in range(n):
        s, e = int(kb.indptr[i]), int(kb.indptr[i + 1])
        if first[int(group[i])] == i:
            lits = [w[a] if pos else nw[a] for a, pos in zip(kb.atoms[s:e].tolist(), kb.positive[s:e].tolist())]
            prob += c[i] <= pulp.lpSum(lits), f"boole_c{i}"
            for j, lit in enumerate(lits):
                prob += c[i] >= lit, f"mono_c{i}_{j}"
        prob += c[i] - over[i] + under[i] == float(kb.prob[i]), f"dev_c{i}"
    return prob, {"w": w, "n": nw, "c": c, "over": over, "under": under, "objective": objective}


def _solver(solver: str | pulp.LpSolver | None, time_limit: float | None = None) -> pulp.LpSolver:
    if isinstance(solver, pulp.LpSolver):
        return solver
    name = (solver or "cbc").lower()
    if name in ("cbc", "pulp_cbc_cmd"):
        if pulp.COIN_CMD(msg=False).available():
            return pulp.COIN_CMD(msg=False, timeLimit=time_limit)
        with warnings.catch_warnings():  # the CBC bundled with pulp is deprecated but still the default
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit)
    if name in ("highs", "pulp-highs"):
        return pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1)  # one HiGHS scheduler per process (see lp.py)
    raise XcoreError(f"unknown pulp solver {solver!r}; use 'cbc' or 'highs'")


def _check(prob: pulp.LpProblem, what: str) -> None:
    status = pulp.LpStatus.get(prob.status, str(prob.status))
    if status != "Optimal":
        raise LPError(f"pulp: {what} ended with status {status}")


def solve_pulp(kb: KB, codes: np.ndarray | None = None, solver: str | pulp.LpSolver | None = "cbc",
               face_tol: float = DEFAULT_FACE_TOL) -> Interval:
    """[min, max] of omega(POS) on the optimal face, via pulp (stage 1, then min and max).

    CBC hands back values with about 8 significant digits, so the recomputed optimum can be off
    by ~1e-8 per clause: the face tolerance here is ``face_tol + 1e-8 * n_clauses`` (absolute),
    widened tenfold (up to three times) if stage 2 still comes back infeasible.
    """
    prob, var = build_pulp(kb, codes)
    slv = _solver(solver)
    prob.solve(slv)
    _check(prob, "stage 1 (optimal objective)")
    fstar = float(pulp.value(var["objective"]) or 0.0)
    tol = face_tol + PRINT_PRECISION * max(1, len(kb))
    pos = var["w"][0]
    prob.setObjective(1.0 * pos)
    prob.sense = pulp.LpMinimize
    face = var["objective"] <= fstar + tol
    prob += face, "face"
    for attempt in range(4):
        face.changeRHS(fstar + tol)
        prob.solve(slv)
        if pulp.LpStatus.get(prob.status) == "Optimal" or attempt == 3:
            break
        tol *= 10
    _check(prob, "stage 2 (min omega(POS))")
    lo = float(pos.value())
    prob.sense = pulp.LpMaximize
    prob.solve(slv)
    _check(prob, "stage 2 (max omega(POS))")
    hi = float(pos.value())
    lo, hi = min(lo, hi), max(lo, hi)
    return Interval(min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi)), fstar, len(kb))


def export_lp(kb: KB, path: str | Path, codes: np.ndarray | None = None, fmt: str | None = None) -> Path:
    """Write the stage-1 LP of `kb` (under a query) as .lp or .mps (by `fmt` or the suffix)."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".") or "lp").lower()
    prob, _ = build_pulp(kb, codes)
    if fmt == "lp":
        prob.writeLP(str(path))
    elif fmt == "mps":
        prob.writeMPS(str(path))
    else:
        raise XcoreError(f"unknown LP file format {fmt!r}; use 'lp' or 'mps'")
    return path


def lp_text(kb: KB, codes: np.ndarray | None = None, fmt: str = "lp") -> str:
    """The stage-1 LP as .lp (or .mps) text, for a download button."""
    with tempfile.TemporaryDirectory() as tmp:
        p = export_lp(kb, Path(tmp) / f"plkb.{fmt}", codes, fmt)
        return p.read_text()
