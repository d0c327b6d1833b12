"""Piecewise pseudolikelihood (PPLL) weight learning for one PSL rule at a time (ESMS).

For a rule r and each scored atom i, Phi_i(t) = sum over r's ground rules containing i of
phi_j with y_i = t and every other atom at its true value. PPLL maximises
    L(w) = sum_i [ -w Phi_i(y*_i) - log Z_i(w) ],   Z_i(w) = int_0^1 exp(-w Phi_i(t)) dt,
which is concave in w (L'' = -sum_i Var[Phi_i]) and involves no other rule, so a rule's weight
is learned once and cached. Phi_i is piecewise quadratic in t with a kink at each ground rule's
hinge point, so Z_i is computed EXACTLY per piece with erf/erfcx in log space: no sampling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import erf, erfcx

LOG_SQRT_PI_2 = 0.5 * np.log(np.pi) - np.log(2.0)


@dataclass
class PiecewiseQuadratics:
    """Phi_i(t) on [0, 1] for many atoms: segment s of atom `atom[s]` is alpha t^2 + beta t + gamma."""

    atom: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    observed: np.ndarray
    """Phi_i(y*_i) per atom (index = position in `atoms`)."""
    atoms: np.ndarray
    """Atom ids (columns of A) that are scored, in order."""

    def log_partition(self, w: float) -> np.ndarray:
        """log Z_i(w) per scored atom, exact up to floating point."""
        logi = _log_segment_integrals(w, self.lo, self.hi, self.alpha, self.beta, self.gamma)
        return _grouped_logsumexp(logi, self.atom, len(self.atoms))

    def expected(self, w: float) -> np.ndarray:
        """E[Phi_i] under p_i(t) ∝ exp(-w Phi_i(t)) = -d log Z_i / dw (central difference)."""
        h = 1e-6 * max(1.0, w)
        lo = max(w - h, 0.0)
        return -(self.log_partition(w + h) - self.log_partition(lo)) / (w + h - lo)

    def objective(self, w: float) -> float:
        """The PPLL log-likelihood L(w)."""
        return float(-w * self.observed.sum() - self.log_partition(w).sum())

    def gradient(self, w: float) -> float:
        """dL/dw = sum_i (E[Phi_i] - Phi_i(y*_i)): expected minus observed potential."""
        return float((self.expected(w) - self.observed).sum())


def build_pieces(A: sp.csr_matrix, b: np.ndarray, squared: np.ndarray | bool,
                 y_true: np.ndarray, scored: np.ndarray | None = None) -> PiecewiseQuadratics:
    """Piecewise-quadratic Phi_i for the atoms in `scored` (default: every atom with a finite truth).

    `A`, `b`, `squared` are one rule's ground rules (distance = max(0, A y + b)); `y_true` holds
    the true value of every atom (the context of the other atoms in each ground rule).
    """
    atoms, atom, a, c, sq, observed = _terms(A, b, squared, y_true, scored)
    b_atom, b_t, first, start, stop = _boundaries(atom, a, c, len(atoms))
    nb = len(b_t)
    diffs = [_running_sum(coef, start, stop, first, nb)
             for coef in (np.where(sq, a * a, 0.0), np.where(sq, 2 * a * c, a), np.where(sq, c * c, c))]
    seg = np.ones(nb, dtype=bool)
    seg[np.append(first[1:] - 1, nb - 1)] = False  # each atom's boundary 1 starts no segment
    seg_pos = np.flatnonzero(seg)
    return PiecewiseQuadratics(
        atom=b_atom[seg_pos], lo=b_t[seg_pos], hi=b_t[seg_pos + 1],
        alpha=diffs[0][seg_pos], beta=diffs[1][seg_pos], gamma=diffs[2][seg_pos],
        observed=observed, atoms=atoms)


def _terms(A: sp.csr_matrix, b: np.ndarray, squared: np.ndarray | bool, y_true: np.ndarray,
           scored: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Each (ground rule, scored atom) term as ``a * t + c`` with the atom's value t and the others at
    their truth: (scored atoms, term's atom position, a, c, squared, each atom's observed penalty)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    m, n = A.shape
    sq_rows = np.broadcast_to(np.asarray(squared, dtype=bool), (m,))
    y = np.asarray(y_true, dtype=np.float64)
    scored = np.isfinite(y) if scored is None else np.asarray(scored, dtype=bool)
    ctx = np.where(np.isfinite(y), y, 0.0)
    atoms = np.flatnonzero(scored)
    pos_of_atom = np.full(n, -1)
    pos_of_atom[atoms] = np.arange(len(atoms))
    coo = A.tocoo()
    keep = scored[coo.col] & (coo.data != 0)
    row, col, a = coo.row[keep], coo.col[keep], coo.data[keep]
    dist = A @ ctx + b
    c = dist[row] - a * ctx[col]  # the term is a * t + c with y_i = t
    sq = sq_rows[row]
    atom = pos_of_atom[col]
    hinge = np.maximum(a * ctx[col] + c, 0)
    observed = np.bincount(atom, np.where(sq, hinge ** 2, hinge), minlength=len(atoms))
    return atoms, atom, a, c, sq, observed


def _boundaries(atom: np.ndarray, a: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """Every atom's sorted segment boundaries (0, 1 and each term's hinge point inside) and where each
    term switches on and off along them: (boundary atom, boundary t, each atom's first boundary,
    term start, term stop; -1 for none)."""
    t0 = -c / a
    inside = (t0 > 0.0) & (t0 < 1.0)
    b_atom = np.concatenate([np.arange(k), np.arange(k), atom[inside]])
    b_t = np.concatenate([np.zeros(k), np.ones(k), t0[inside]])
    b_tag = np.concatenate([np.full(2 * k, -1), np.flatnonzero(inside)])  # term id or -1
    order = np.lexsort((b_t, b_atom))
    b_atom, b_t, b_tag = b_atom[order], b_t[order], b_tag[order]
    first = np.searchsorted(b_atom, np.arange(k))  # position of each atom's boundary 0
    pos_of_term = np.full(len(a), -1)
    tagged = b_tag >= 0
    pos_of_term[b_tag[tagged]] = np.flatnonzero(tagged)
    start = np.full(len(a), -1)
    stop = np.full(len(a), -1)
    up, down = a > 0, a < 0
    start[up & (t0 <= 0)] = first[atom[up & (t0 <= 0)]]
    start[up & inside] = pos_of_term[up & inside]
    start[down & (t0 > 0)] = first[atom[down & (t0 > 0)]]
    stop[down & inside] = pos_of_term[down & inside]
    return b_atom, b_t, first, start, stop


def _running_sum(coef: np.ndarray, start: np.ndarray, stop: np.ndarray, first: np.ndarray, nb: int) -> np.ndarray:
    """At each boundary, the sum of `coef` over the terms switched on there (restarting at each atom)."""
    d = np.zeros(nb)
    on = start >= 0
    np.add.at(d, start[on], coef[on])
    off = stop >= 0
    np.add.at(d, stop[off], -coef[off])
    cs = np.cumsum(d)
    base = np.where(first > 0, cs[np.maximum(first - 1, 0)], 0.0)
    return cs - np.repeat(base, np.diff(np.append(first, nb)))


def _log_segment_integrals(w: float, lo, hi, alpha, beta, gamma) -> np.ndarray:
    """log of int_lo^hi exp(-w (alpha t^2 + beta t + gamma)) dt, per segment, stably.

    A piece whose integral underflows gives -inf (it then adds nothing to log Z).
    """
    with np.errstate(divide="ignore"):
        return _log_segment_integrals_unchecked(w, lo, hi, alpha, beta, gamma)


def _log_segment_integrals_unchecked(w: float, lo, hi, alpha, beta, gamma) -> np.ndarray:
    out = np.full(len(lo), -np.inf)
    length = hi - lo
    ok = length > 0
    wa = w * np.maximum(alpha, 0.0)
    quad = ok & (wa > 1e-12)
    lin = ok & ~quad
    if quad.any():
        al, be, ga = alpha[quad], beta[quad], gamma[quad]
        v = -be / (2 * al)
        mval = ga - be * be / (4 * al)
        s = np.sqrt(wa[quad])
        ul, uh = s * (lo[quad] - v), s * (hi[quad] - v)
        out[quad] = -w * mval - np.log(s) + _log_gauss_integral(ul, uh)
    if lin.any():
        be, ga = beta[lin], gamma[lin]
        L = length[lin]
        wb = w * be
        small = np.abs(wb * L) < 1e-10
        f_lo = be * lo[lin] + ga
        f_hi = be * hi[lin] + ga
        res = np.empty(len(L))
        res[small] = -w * (be[small] * (lo[lin][small] + hi[lin][small]) / 2 + ga[small]) + np.log(L[small])
        pos = ~small & (wb > 0)
        neg = ~small & (wb < 0)
        res[pos] = -w * f_lo[pos] + np.log(-np.expm1(-wb[pos] * L[pos])) - np.log(wb[pos])
        res[neg] = -w * f_hi[neg] + np.log(-np.expm1(wb[neg] * L[neg])) - np.log(-wb[neg])
        out[lin] = res
    return out


def _log_gauss_integral(ul: np.ndarray, uh: np.ndarray) -> np.ndarray:
    """log int_ul^uh exp(-x^2) dx for ul < uh, without cancellation in the tails."""
    out = np.empty(len(ul))
    right = ul >= 0
    left = uh <= 0
    mid = ~right & ~left
    if right.any():
        a, b = ul[right], uh[right]
        out[right] = LOG_SQRT_PI_2 - a * a + np.log(erfcx(a) - erfcx(b) * np.exp(a * a - b * b))
    if left.any():
        a, b = -uh[left], -ul[left]
        out[left] = LOG_SQRT_PI_2 - a * a + np.log(erfcx(a) - erfcx(b) * np.exp(a * a - b * b))
    if mid.any():
        out[mid] = LOG_SQRT_PI_2 + np.log(erf(uh[mid]) - erf(ul[mid]))
    return out


def _grouped_logsumexp(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """logsumexp of `values` per group id (groups are contiguous and sorted)."""
    if n_groups == 0:
        return np.zeros(0)
    starts = np.searchsorted(group, np.arange(n_groups))
    mx = np.maximum.reduceat(values, starts)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    return mx + np.log(np.add.reduceat(np.exp(values - mx[group]), starts))


@dataclass
class PPLLResult:
    """A learned rule weight with its log-likelihood and gradient at the optimum."""

    weight: float
    objective: float
    gradient: float
    n_atoms: int


def learn_weight(A: sp.csr_matrix, b: np.ndarray, squared: np.ndarray | bool, y_true: np.ndarray,
                 scored: np.ndarray | None = None, w_max: float = 100.0) -> PPLLResult:
    """PPLL weight of one rule: argmax_{0 <= w <= w_max} L(w) (concave, bounded Brent search).

    `w_max` caps rules that no training atom violates (their likelihood grows without bound).
    """
    pieces = build_pieces(A, b, squared, y_true, scored)
    if len(pieces.atoms) == 0:
        return PPLLResult(0.0, 0.0, 0.0, 0)
    if pieces.gradient(0.0) <= 0:
        w = 0.0
    elif pieces.gradient(w_max) >= 0:
        w = w_max
    else:
        res = minimize_scalar(lambda x: -pieces.objective(x), bounds=(0.0, w_max), method="bounded",
                              options={"xatol": 1e-9})
        w = float(res.x)
    return PPLLResult(w, pieces.objective(w), pieces.gradient(w), len(pieces.atoms))
