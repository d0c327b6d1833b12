"""Dev-only check of the Gibbs R-hat against ArviZ (skipped when arviz is not installed).

xcore computes the classic split-chain R-hat (Gelman et al., BDA3 sec. 11.4: each chain cut into
two halves, no rank normalisation), which is ``arviz.rhat(..., method="split")``; arviz's default
("rank", rank-normalised and folded) is a different statistic, and "identity" does not split
chains, so only "split" is compared. With one sample per batch the batch counts are the traces;
with equal batches the R-hat is the same (0/1 values: counts give the exact within variance).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from xcore.mln.gibbs import gibbs
from xcore.mln.synthetic import random_ground_mln

az = pytest.importorskip("arviz")


def _arviz_split_rhat(atom_counts: np.ndarray) -> np.ndarray:
    """Per atom, arviz's split R-hat of (n_draws, n_atoms, n_chains) 0/1 traces."""
    traces = atom_counts.transpose(1, 2, 0).astype(np.float64)  # atoms, chains, draws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([float(az.rhat(t, method="split")) for t in traces])


@pytest.mark.parametrize("scale, seed", [(1.5, 3), (6.0, 7)])
def test_gibbs_rhat_matches_arviz_split(scale, seed):
    mln = random_ground_mln(12, 30, seed=seed, scale=scale)
    res = gibbs(mln, n_samples=400, burn_in=0, n_chains=4, seed=seed, n_batches=400)
    assert (res.batch_sizes == 1).all()
    ref = _arviz_split_rhat(res.atom_counts)
    ok = np.isfinite(ref)
    assert ok.sum() >= 6
    np.testing.assert_allclose(res.rhat[ok], ref[ok], rtol=1e-10)
    batched = gibbs(mln, n_samples=400, burn_in=0, n_chains=4, seed=seed, n_batches=20)
    np.testing.assert_allclose(batched.rhat[ok], ref[ok], rtol=1e-10)  # same chains, counted in batches
