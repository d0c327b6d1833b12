"""I-Explain and R-Explain: formula-importance explanations of a Markov logic network from many
small coalitions (Al Farabi, Sarkhel, Dey, Venugopal 2021).

M-Explain (`xcore.mln.importance`) needs inference on the whole network. I-Explain instead:

1. embeds the objects of one domain (e.g. reviews) from their co-occurrence in ground formulas
   (`xcore.mln.embeddings`), clusters them, and cuts `T` coalitions: sub-networks over objects
   sampled from every cluster, without approximately symmetric clauses
   (`xcore.mln.coalitions`, where the dropping and its importance mapping are documented);
2. runs inference on every coalition and computes I(f, Q) there; coalition i gets the list weight
   ``beta_i = 1 - z_i / sum(z)`` from the Frobenius norm z_i of its importance matrix
   (`xcore.explain.rank_aggregation.coalition_weights`);
3. for a query Q, takes from every coalition its top-k ground formulas by |I(f, Q)|. When Q is not
   in coalition i it *borrows*: the nearest query of the same predicate in coalition i (Euclidean
   distance between the concatenated embeddings of their embedded-domain arguments; only queries
   that have a list there) lends its list, with its objects replaced by Q's in every formula; a
   mapped formula is kept only if it is a ground formula of Q in the full network (its value is
   the lender's importance);
4. merges the T lists with weighted Cross-Entropy Monte Carlo rank aggregation (`cemc`, weights
   beta); ``aggregation="exact_footrule"`` instead solves the same weighted-footrule problem
   exactly as a linear assignment (`footrule_assignment`), far faster. The score shown for a formula
   is the beta-weighted mean of its importance over the coalitions that ranked it (equal weights
   when those betas are all 0).

Sampling work: with ``work="equal"`` the T coalitions together make as many Gibbs atom updates as
one run of the given options on the full network (M-Explain's budget), each coalition with its own
seed; ``work="per_coalition"`` (the paper) runs the options in every coalition. `explain_all`'s meta
reports the atom updates, samples per coalition and the queries in no coalition.

R-Explain, the paper's baseline, samples each coalition as a uniform random set of ground formulas
(of the size of the matching I-Explain coalition when given one) and borrows nothing.

Formulas are identified by their clause index in the full folded network (`MLNModel.mln_`), so
the items carry the same texts, atoms and extras as M-Explain's (`explain_atom`).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.mln.coalition_explainer import CoalitionExplainer
from xcore.mln.coalition_tables import TABLE_KEYS, check_fraction, check_int, need_mln, substitute_formulas
from xcore.mln.coalitions import Coalition, cluster_objects, cut_coalition, sample_objects
from xcore.mln.embeddings import CONTEXTS, ObjectEmbedding, embed_objects
from xcore.mln.network_index import NetworkIndex, build_index
from xcore.optional_deps import import_optional
from xcore.runtime import Progress, scaled


class IExplainer(CoalitionExplainer):
    """I-Explain: explanations from embedding-guided coalitions merged by weighted rank aggregation.

    ``IExplainer(C=0.2, S=0.5, T=10).fit(model, "review").explain("positive(r7)")``; `model` is a
    grounded `MLNModel`. `C` is the fraction of objects that become clusters, `S` the fraction of
    every cluster sampled into a coalition, `T` the number of coalitions.
    """

    method = "I-Explain"

    def __init__(self, C: float = 0.2, S: float = 0.5, T: int = 10, top_k: int = 10, embedding_dim: int = 16,
                 gibbs_options: dict | None = None, seed: int = 0, inference: str = "gibbs",
                 embedding_epochs: int = 20, context: str = "body", dedup: bool = True,
                 cemc_options: dict | None = None, aggregation: str = "cemc", work: str = "per_coalition") -> None:
        super().__init__(T, top_k, gibbs_options, seed, inference, cemc_options, aggregation, work)
        self.C = C
        self.S = S
        self.embedding_dim = embedding_dim
        self.embedding_epochs = embedding_epochs
        self.context = context
        self.dedup = dedup

    def fit(self, model, domain_type: str, progress: Progress | None = None) -> "IExplainer":
        """Embed, cluster, cut and solve `T` coalitions, weight them and prepare every query's lists."""
        check_fraction("C", self.C)
        check_fraction("S", self.S)
        self._check_common()
        check_int("embedding_dim", self.embedding_dim)
        check_int("embedding_epochs", self.embedding_epochs)
        if self.context not in CONTEXTS:
            raise XcoreError(f"unknown context {self.context!r}; use one of {', '.join(CONTEXTS)}")
        mln = need_mln(model)
        index = build_index(mln, domain_type)  # validates the domain type
        total = self.T + 2
        t0 = time.perf_counter()
        if progress:
            progress(0.0, f"embedding the {domain_type} objects")
        emb = embed_objects(mln, domain_type, dim=self.embedding_dim, epochs=self.embedding_epochs, seed=self.seed,
                            context=self.context, progress=scaled(progress, 0.0, 1 / total) if progress else None)
        t_emb = time.perf_counter() - t0
        labels = cluster_objects(emb.vectors, self.C, seed=self.seed)
        n_const = mln.store.n_constants
        cluster_of = np.full(n_const, -1, dtype=np.int64)
        cluster_of[emb.constant_ids] = labels
        if progress:
            progress(1 / total, f"{labels.max() + 1} clusters of {len(labels)} objects")
        seeds = np.random.SeedSequence(self.seed).spawn(self.T)
        self.stage_seconds_ = {"embedding (skip-gram)": t_emb, "clustering (k-means)": time.perf_counter() - t0 - t_emb}
        t1 = time.perf_counter()
        coalitions, sampled_rows, rngs = [], [], []
        for ss in seeds:  # one pass per coalition
            rng = np.random.default_rng(ss)
            mask = sample_objects(labels, self.S, rng)
            sampled = np.zeros(n_const, dtype=bool)
            sampled[emb.constant_ids[mask]] = True
            coalitions.append(cut_coalition(index, sampled, cluster_of, dedup=self.dedup, objects=emb.names[mask]))
            sampled_rows.append(mask)
            rngs.append(rng)
        self.stage_seconds_["cutting coalitions"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        self._solve_all(coalitions, rngs, mln, index, progress, 2, total, "coalition")
        solve = time.perf_counter() - t1
        sampling = float(sum(c.seconds for c in coalitions))
        self.stage_seconds_["coalition sampling (Gibbs)"] = sampling
        self.stage_seconds_["coalition grounding and importance"] = solve - sampling
        t1 = time.perf_counter()
        self.index_ = index
        self.domain_type_ = domain_type
        self.embedding_ = emb
        self.clusters_ = labels
        self.sampled_ = np.array(sampled_rows, dtype=bool).reshape(self.T, len(labels))
        self.coalitions_ = [c.objects for c in coalitions]
        self._atom_vectors, self._atom_group = self._query_vectors(index, emb)
        self._finish(model, mln, coalitions, borrow=True)
        self.stage_seconds_["weights, ranked lists, borrowing"] = time.perf_counter() - t1
        self.fit_seconds_ = time.perf_counter() - t0
        if progress:
            progress(1.0, f"{self.T} coalitions in {self.fit_seconds_:.1f} s")
        return self

    # ------------------------------------------------------------------ borrowing
    @staticmethod
    def _query_vectors(index: NetworkIndex, emb: ObjectEmbedding) -> tuple[np.ndarray, np.ndarray]:
        """Per query atom: concatenated embeddings of its embedded-domain arguments (zeros elsewhere)
        and a group id (same predicate and same other arguments: only those can lend to each other)."""
        row = np.full(index.n_constants + 1, -1, dtype=np.int64)
        row[emb.constant_ids] = np.arange(len(emb.constant_ids))
        args, dom = index.atom_args, index.atom_domain
        parts = []
        for p in range(args.shape[1]):
            r = row[args[:, p]]
            v = np.where((dom[:, p] & (r >= 0))[:, None], emb.vectors[np.maximum(r, 0)], 0.0)
            parts.append(v)
        vecs = np.concatenate(parts, axis=1) if parts else np.zeros((len(args), 0))
        key = np.column_stack([index.atom_pred.astype(np.int64), np.where(dom, -2, args)])
        group = np.unique(key, axis=0, return_inverse=True)[1].reshape(-1)
        return vecs, group

    def _borrow(self, coalition: Coalition, table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Add borrowed lists for the queries outside the coalition (see the module docstring)."""
        NearestNeighbors = import_optional("sklearn.neighbors").NearestNeighbors  # heavy: only when lists are borrowed
        index = self.index_
        n = index.mln.n_atoms
        member = np.zeros(n, dtype=bool)
        member[coalition.members] = True
        has_list = np.zeros(n, dtype=bool)
        has_list[table["atom"]] = True
        borrowers, lenders = [], []
        for g in np.unique(self._atom_group).tolist():  # one pass per query group (predicate)
            in_g = self._atom_group == g
            miss = np.flatnonzero(in_g & ~member)
            have = np.flatnonzero(in_g & has_list)
            if not len(miss) or not len(have):
                continue
            nn = NearestNeighbors(n_neighbors=1).fit(self._atom_vectors[have])
            near = nn.kneighbors(self._atom_vectors[miss], return_distance=False)[:, 0]
            borrowers.append(miss)
            lenders.append(have[near])
        if not borrowers:
            return table
        b, l = np.concatenate(borrowers), np.concatenate(lenders)
        lo = np.searchsorted(table["atom"], l, "left")
        hi = np.searchsorted(table["atom"], l, "right")
        counts = hi - lo
        rows = np.repeat(lo, counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        bq, lq = np.repeat(b, counts), np.repeat(l, counts)
        mapped = substitute_formulas(index, table["clause"][rows], lq, bq)
        ok = mapped >= 0
        rows, bq, lq, mapped = rows[ok], bq[ok], lq[ok], mapped[ok]
        _, first = np.unique(bq * index.mln.n_clauses + mapped, return_index=True)  # a formula once per query
        first = np.sort(first)
        rows, bq, lq, mapped = rows[first], bq[first], lq[first], mapped[first]
        new = {"atom": bq, "rank": table["rank"][rows], "clause": mapped, "importance": table["importance"][rows],
               "expected": table["expected"][rows], "expected_given_atom": table["expected_given_atom"][rows],
               "lender": lq}
        out = {k: np.concatenate([table[k], new[k]]) for k in TABLE_KEYS}
        order = np.lexsort((out["rank"], out["atom"]))
        return {k: v[order] for k, v in out.items()}

    # ------------------------------------------------------------------ plotting data
    def coalition_summary(self) -> pd.DataFrame:
        """One row per coalition: objects sampled, ground formulas kept, symmetric formulas merged
        into a representative, and its weight beta."""
        self._need_fit()
        return pd.DataFrame({"coalition": np.arange(1, len(self.coalitions_) + 1),
                             "objects": [len(c) for c in self.coalitions_],
                             "ground formulas": [len(d.clauses) for d in self.coalition_details_],
                             "symmetric formulas merged": [len(d.dropped) for d in self.coalition_details_],
                             "beta": np.asarray(self.betas_, dtype=float)})

    def coalition_frame(self) -> pd.DataFrame:
        """One row per embedded object: object, x, y (2-D PCA of the embedding), cluster and the
        number of coalitions it was sampled into."""
        self._need_fit()
        return object_frame(self.embedding_, self.clusters_, self.sampled_.sum(axis=0))


def _pca_2d(vectors: np.ndarray) -> np.ndarray:
    """(n, 2) principal-component coordinates (zeros where there are fewer components)."""
    n, d = vectors.shape
    out = np.zeros((n, 2))
    if n < 2 or d == 0:
        return out
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(2, vt.shape[0])
    coords = centred @ vt[:k].T
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), np.arange(k)])  # deterministic orientation
    out[:, :k] = coords * np.where(signs == 0, 1.0, signs)
    return out


def object_frame(emb: ObjectEmbedding, clusters: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    xy = _pca_2d(emb.vectors)
    return pd.DataFrame({"object": pd.Series(emb.names, dtype=object), "x": xy[:, 0], "y": xy[:, 1],
                         "cluster": np.asarray(clusters, dtype=np.int64),
                         "n_coalitions": np.asarray(counts, dtype=np.int64)})


