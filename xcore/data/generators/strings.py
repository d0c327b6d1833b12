"""The paper's synthetic strings: positive iff the string matches a seed string in exactly 5 places.

Strings have length L over an alphabet of size A. Positives pick the matching positions
uniformly and a non-seed letter elsewhere (that is, uniform strings conditioned on exactly
`n_match` matches); negatives are uniform strings conditioned on any other number of matches
(vectorised rejection sampling). Classes are balanced. The matching positions of a row are the
ground-truth explanation ("Syn L/A": Syn 10/4, 10/8, 12/4, 12/8).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

from xcore.errors import XcoreError

PAPER_SETS = ((10, 4), (10, 8), (12, 4), (12, 8))


def alphabet(size: int) -> list[str]:
    """Letter names: a, b, c, ... (then l26, l27, ... past z)."""
    return [chr(ord("a") + i) if i < 26 else f"l{i}" for i in range(size)]


@dataclass
class SyntheticStrings:
    """Rows as a table (columns p1..pL), labels, the seed string and the true matching positions."""

    X: pd.DataFrame
    y: pd.Series
    seed_string: tuple[str, ...]
    matches: np.ndarray
    length: int
    alphabet_size: int

    @property
    def name(self) -> str:
        return f"Syn {self.length}/{self.alphabet_size}"

    def seed_frame(self) -> pd.DataFrame:
        """The seed string as a one-row table (to encode it like any row)."""
        return pd.DataFrame([list(self.seed_string)], columns=self.X.columns)


def make_strings(length: int = 10, alphabet_size: int = 4, n: int = 1000, n_match: int = 5,
                 seed: int = 0) -> SyntheticStrings:
    """Generate `n` balanced rows of Syn length/alphabet_size (seeded)."""
    if length < n_match or n_match < 0:
        raise XcoreError(f"need 0 <= n_match <= length, got n_match={n_match}, length={length}")
    if alphabet_size < 2:
        raise XcoreError("the alphabet needs at least 2 letters")
    if n < 2:
        raise XcoreError("need at least 2 rows")
    rng = np.random.default_rng(seed)
    seed_codes = rng.integers(0, alphabet_size, size=length)
    n_pos, n_neg = n // 2, n - n // 2
    # positives: choose n_match positions, the rest get a uniformly chosen non-seed letter
    pos_match = np.zeros((n_pos, length), dtype=bool)
    chosen = np.argsort(rng.random((n_pos, length)), axis=1)[:, :n_match]
    np.put_along_axis(pos_match, chosen, True, axis=1)
    shift = rng.integers(1, alphabet_size, size=(n_pos, length))
    pos_rows = np.where(pos_match, seed_codes, (seed_codes + shift) % alphabet_size)
    # negatives: uniform strings whose number of matches is not n_match
    neg_parts, have = [], 0
    p_pos_exact = _binom_pmf(length, n_match, 1 / alphabet_size)
    while have < n_neg:
        batch = int((n_neg - have) / max(1 - p_pos_exact, 1e-3) * 1.2) + 16
        cand = rng.integers(0, alphabet_size, size=(batch, length))
        keep = cand[(cand == seed_codes).sum(axis=1) != n_match]
        neg_parts.append(keep)
        have += len(keep)
    neg_rows = np.concatenate(neg_parts)[:n_neg]
    rows = np.concatenate([pos_rows, neg_rows])
    y = np.concatenate([np.ones(n_pos, bool), np.zeros(n_neg, bool)])
    order = rng.permutation(n)
    rows, y = rows[order], y[order]
    letters = np.asarray(alphabet(alphabet_size), dtype=object)
    cols = [f"p{i + 1}" for i in range(length)]
    X = pd.DataFrame(letters[rows], columns=cols)
    return SyntheticStrings(X, pd.Series(y, name="label"), tuple(letters[seed_codes]), rows == seed_codes,
                            length, alphabet_size)


def _binom_pmf(n: int, k: int, p: float) -> float:
    return comb(n, k) * p ** k * (1 - p) ** (n - k)
