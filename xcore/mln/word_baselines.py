"""Non-relational baselines of the I-Explain paper: a bag-of-words logistic regression explained
by LIME (local weighted ridge surrogate) and by SHAP (exact linear Shapley values).

The classifier sees only the words of a review (the ``has_word(R, W)`` evidence), never the
links, so its explanations can only name word formulas. Every item is written as the MLN word
formula it corresponds to, in the same canonical text as the Markov-logic explanations
(``has_word(r12, great) -> positive(r12)``, atoms as `AtomStore.atom_text` writes them), so the
two kinds of explanation can be compared item by item.

LIME (Ribeiro et al. 2016, text mode): perturb the review by deleting a random number of its
words (the first sample is the review itself), weight each perturbation by the exponential
kernel ``sqrt(exp(-d^2 / width^2))`` on its cosine distance d to the review, and fit a weighted
ridge regression (scikit-learn `Ridge` with sample weights) of P(positive) on the word-presence
indicators. The default `kernel_width` is 0.75 on the unscaled distance d. LIME's own text default
(width 25 on 100 * d) corresponds to 0.25 here: pass ``kernel_width=0.25`` to reproduce it.

SHAP: for a linear model in log-odds space with independent (interventional) features, the exact
Shapley value of word j is ``phi_j = coef_j * (x_j - E_bg[x_j])`` (Lundberg & Lee 2017); the
values add up to ``f(x) - E_bg[f]``. The optional `shap` package (`shap.LinearExplainer`) gives the
same numbers and is used when installed and asked for.
"""

from __future__ import annotations

import zlib
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression, Ridge

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.runtime import Progress, throttled

WORD_ITEM_KIND = "word"
"""Kind of the word items: "word" once `xcore.explain.types` knows it, else "feature_clause"."""


# ---------------------------------------------------------------------- classifier
class BagOfWordsClassifier:
    """Logistic regression on a binary review x word matrix built from a dataset's word evidence.

    `fit` trains on the reviews whose label atom (``positive(R)``) is observed; the test reviews
    are the label predicate's targets. Words are the observed ``has_word(R, W)`` atoms with value
    >= 0.5; the vocabulary is every such word (sorted).
    """

    def __init__(self, C: float = 1.0, seed: int = 0, word_predicate: str = "has_word",
                 label_predicate: str = "positive", max_iter: int = 2000) -> None:
        self.C = C
        self.seed = seed
        self.word_predicate = word_predicate
        self.label_predicate = label_predicate
        self.max_iter = max_iter

    # ------------------------------------------------------------------ building
    def _index(self, dataset: RelationalDataset) -> None:
        """Vocabulary, review -> words table, labels and splits from `dataset`."""
        wp, lp = dataset.predicate(self.word_predicate), dataset.predicate(self.label_predicate)
        if wp.arity != 2:
            raise XcoreError(f"word predicate {wp.name} must have arity 2 (review, word), not {wp.arity}")
        if lp.arity != 1:
            raise XcoreError(f"label predicate {lp.name} must have arity 1 (review), not {lp.arity}")
        self.word_pred_: Predicate = wp
        self.label_pred_: Predicate = lp
        words = dataset.table(wp.name, "obs")
        words = words.loc[words["value"].to_numpy() >= 0.5, ["a0", "a1"]].astype(str)
        words = words.drop_duplicates().rename(columns={"a0": "review", "a1": "word"}).reset_index(drop=True)
        self.vocabulary_ = np.array(sorted(words["word"].unique()), dtype=object)
        self.word_index_ = pd.Index(self.vocabulary_)
        self.doc_words_ = words.assign(column=self.word_index_.get_indexer(words["word"]))
        obs = dataset.table(lp.name, "obs")
        truth = dataset.table(lp.name, "truth")
        self.train_reviews_ = obs["a0"].astype(str).to_numpy(dtype=object)
        self.train_labels_ = (obs["value"].to_numpy(dtype=float) >= 0.5).astype(np.int64)
        self.test_reviews_ = dataset.table(lp.name, "targets")["a0"].astype(str).to_numpy(dtype=object)
        known = pd.concat([obs[["a0", "value"]], truth[["a0", "value"]]], ignore_index=True).dropna()
        self.labels_: dict[str, float] = dict(zip(known["a0"].astype(str), known["value"].astype(float)))
        self.observed_: set[str] = set(self.train_reviews_.tolist())

    def fit(self, dataset: RelationalDataset) -> "BagOfWordsClassifier":
        """Index `dataset` and fit the logistic regression on the reviews with an observed label."""
        self._index(dataset)
        if len(self.train_reviews_) == 0:
            raise XcoreError(f"no observed {self.label_predicate} atoms to train the bag-of-words classifier on")
        if len(np.unique(self.train_labels_)) < 2:
            raise XcoreError(f"the observed {self.label_predicate} labels are all "
                             f"{int(self.train_labels_[0])}: a classifier needs both classes")
        model = LogisticRegression(C=self.C, random_state=self.seed, max_iter=self.max_iter)
        model.fit(self.matrix(self.train_reviews_), self.train_labels_)
        self.coef_ = model.coef_[0].astype(np.float64)
        self.intercept_ = float(model.intercept_[0])
        self.model_ = model
        return self

    @classmethod
    def with_coefficients(cls, dataset: RelationalDataset, coef: Mapping[str, float], intercept: float = 0.0,
                          **options) -> "BagOfWordsClassifier":
        """A classifier with given word coefficients (missing words: 0) instead of fitted ones."""
        clf = cls(**options)
        clf._index(dataset)
        unknown = sorted(set(coef) - set(clf.vocabulary_.tolist()))
        if unknown:
            raise XcoreError(f"coefficients given for words not in the dataset: {', '.join(unknown[:5])}")
        clf.coef_ = np.array([float(coef.get(w, 0.0)) for w in clf.vocabulary_], dtype=np.float64)
        clf.intercept_ = float(intercept)
        return clf

    # ------------------------------------------------------------------ features
    def _need_fit(self) -> None:
        if not hasattr(self, "coef_"):
            raise XcoreError("fit the bag-of-words classifier first: BagOfWordsClassifier().fit(dataset)")

    def matrix(self, reviews: Iterable[str]) -> sp.csr_matrix:
        """(n_reviews, n_words) binary CSR matrix; reviews without words (or unknown) get empty rows."""
        if not hasattr(self, "vocabulary_"):
            raise XcoreError("fit the bag-of-words classifier first: BagOfWordsClassifier().fit(dataset)")
        reviews = np.asarray(list(reviews) if not isinstance(reviews, np.ndarray) else reviews, dtype=object)
        uniq, inverse = np.unique(reviews.astype(str), return_inverse=True)
        dw = self.doc_words_
        row = pd.Index(uniq).get_indexer(dw["review"])
        keep = row >= 0
        m = sp.csr_matrix((np.ones(int(keep.sum())), (row[keep], dw["column"].to_numpy()[keep])),
                          shape=(len(uniq), len(self.vocabulary_)), dtype=np.float64)
        return m[inverse.ravel()].tocsr()

    def word_columns(self, review: str) -> np.ndarray:
        """Vocabulary columns of the words of one review (ascending)."""
        return np.sort(self.doc_words_["column"].to_numpy()[self.doc_words_["review"].to_numpy() == str(review)])

    # ------------------------------------------------------------------ predictions
    def decision_matrix(self, X: sp.spmatrix | np.ndarray) -> np.ndarray:
        """Log-odds of P(positive) for the rows of a review x word matrix."""
        self._need_fit()
        if X.shape[1] != len(self.coef_):
            raise XcoreError(f"matrix has {X.shape[1]} word columns, the classifier {len(self.coef_)}")
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def proba_matrix(self, X: sp.spmatrix | np.ndarray) -> np.ndarray:
        """P(positive) for the rows of a review x word matrix."""
        return 1.0 / (1.0 + np.exp(-self.decision_matrix(X)))

    def decision_function(self, reviews: Iterable[str]) -> np.ndarray:
        """Log-odds of P(positive) per review."""
        return self.decision_matrix(self.matrix(reviews))

    def predict_proba(self, reviews: Iterable[str]) -> np.ndarray:
        """(n, 2) class probabilities [P(negative), P(positive)] per review (sklearn layout)."""
        p = self.proba_matrix(self.matrix(reviews))
        return np.column_stack([1.0 - p, p])

    def predict(self, reviews: Iterable[str]) -> np.ndarray:
        """0/1 label per review (P(positive) >= 0.5)."""
        return (self.predict_proba(reviews)[:, 1] >= 0.5).astype(np.int64)

    # ------------------------------------------------------------------ texts
    def target_atom(self, review: str) -> str:
        """Canonical text of the label atom of a review, e.g. ``positive(r12)``."""
        return self.label_pred_.atom_text([review])

    def word_item(self, review: str, column: int, score: float, present: bool = True,
                  extras: Mapping[str, object] | None = None) -> ExplanationItem:
        """The item for word `column` of `review`: the ground MLN word formula
        ``has_word(review, word) -> positive(review)`` (``!has_word(...)`` for an absent word)."""
        word = str(self.vocabulary_[column])
        wp, lp = self.word_pred_, self.label_pred_
        w_atom, q_atom = wp.atom_text([review, word]), lp.atom_text([review])
        w_nat = wp.render([review, word])
        if not present:
            w_nat = f"not ({w_nat})"
        text = f"{'' if present else '!'}{w_atom} -> {q_atom}"
        ex = {"word": word, "coef": float(self.coef_[column]), "value": 1.0 if present else 0.0,
              "present": bool(present), "direction": int(np.sign(score))}
        ex.update(extras or {})
        return ExplanationItem(
            kind=WORD_ITEM_KIND, text=text, natural=f"if {w_nat}, then {lp.render([review])}", score=float(score),
            direction=int(np.sign(score)), effect=float(score),
            atoms=[w_atom, q_atom], target_index=1, roles=["body", "head"],
            observed=[True, str(review) in self.observed_],
            explainable=bool(wp.explainable and lp.explainable), extras=ex)

    def explanation(self, review: str, method: str, items: list[ExplanationItem], prediction: float,
                    meta: Mapping[str, object]) -> Explanation:
        """An `Explanation` of the label atom of `review` with the given items."""
        truth = self.labels_.get(str(review))
        return Explanation(target=self.target_atom(review), target_text=self.label_pred_.render([review]),
                           method=method, prediction=float(prediction), prediction_kind="probability",
                           truth=truth, items=items,
                           meta={"intercept": self.intercept_, "model": "bag_of_words_logistic", **meta})


def _reviews(clf: BagOfWordsClassifier, reviews: Iterable[str] | None) -> np.ndarray:
    clf._need_fit()
    out = clf.test_reviews_ if reviews is None else np.asarray(list(reviews), dtype=object).astype(str)
    if len(np.unique(out)) != len(out):
        raise XcoreError("each review may be explained once: the review list has duplicates")
    return out.astype(object)


# ---------------------------------------------------------------------- LIME
def weighted_ridge(X: np.ndarray, y: np.ndarray, w: np.ndarray, alpha: float = 1.0) -> tuple[np.ndarray, float, float]:
    """Weighted ridge regression with an unpenalised intercept: (coef, intercept, weighted R^2).

    scikit-learn's `Ridge` with `sample_weight` (exact Cholesky solve); R^2 is 1 when `y` is constant.
    """
    w = np.asarray(w, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    model = Ridge(alpha=alpha, solver="cholesky").fit(X, y, sample_weight=w)
    coef, intercept = np.asarray(model.coef_, dtype=np.float64), float(model.intercept_)
    ym = float(w @ y) / w.sum()
    resid = y - (X @ coef + intercept)
    tot = float(w @ (y - ym) ** 2)
    r2 = 1.0 - float(w @ resid ** 2) / tot if tot > 0 else 1.0
    return coef, intercept, r2


def _review_rng(seed: int, review: str) -> np.random.Generator:
    """A generator seeded by `seed` and the review name, so a review's LIME sample does not depend
    on which other reviews are explained."""
    return np.random.default_rng([int(seed), zlib.crc32(str(review).encode("utf-8"))])


def lime_explain(clf: BagOfWordsClassifier, review: str, n_samples: int = 1000, kernel_width: float = 0.75,
                 top_k: int | None = 10, seed: int = 0, alpha: float = 1.0) -> Explanation:
    """LIME explanation of P(positive) of one review: its words ranked by |surrogate coefficient|.

    `kernel_width` (default 0.75) applies to the unscaled cosine distance; 0.25 is LIME's text default.

    The item score is the ridge coefficient of the word's presence (change of P(positive) when the
    word is present); extras also hold the classifier's own coefficient (log-odds units).
    """
    clf._need_fit()
    if n_samples < 2:
        raise XcoreError(f"LIME needs at least 2 samples, got {n_samples}")
    if not kernel_width > 0:
        raise XcoreError(f"kernel_width must be positive, got {kernel_width}")
    review = str(review)
    cols = clf.word_columns(review)
    d = len(cols)
    x0 = sp.csr_matrix((np.ones(d), (np.zeros(d, dtype=np.int64), cols)), shape=(1, len(clf.vocabulary_)))
    p0 = float(clf.proba_matrix(x0)[0])
    meta = {"n_samples": int(n_samples), "kernel_width": float(kernel_width), "alpha": float(alpha),
            "n_words": int(d), "seed": int(seed)}
    if d == 0:
        return clf.explanation(review, "LIME", [], p0, {**meta, "note": "the review has no words"})
    rng = _review_rng(seed, review)
    n_remove = rng.integers(1, d + 1, n_samples - 1)
    ranks = rng.random((n_samples - 1, d)).argsort(axis=1).argsort(axis=1)  # a random order per sample
    z = np.ones((n_samples, d), dtype=bool)
    z[1:] = ranks >= n_remove[:, None]  # drop exactly n_remove words
    r, j = np.nonzero(z)
    X = sp.csr_matrix((np.ones(len(r)), (r, cols[j])), shape=(n_samples, len(clf.vocabulary_)))
    y = clf.proba_matrix(X)
    kept = z.sum(axis=1)
    dist = 1.0 - np.sqrt(kept / d)  # cosine distance of a 0/1 mask to the all-ones review
    weights = np.sqrt(np.exp(-dist ** 2 / kernel_width ** 2))
    coef, intercept, r2 = weighted_ridge(z.astype(np.float64), y, weights, alpha)
    order = np.argsort(-np.abs(coef), kind="stable")
    if top_k is not None:
        order = order[:top_k]
    items = [clf.word_item(review, int(cols[i]), float(coef[i])) for i in order]
    meta.update({"surrogate_intercept": float(intercept), "surrogate_r2": float(r2),
                 "local_prediction": float(intercept + coef.sum())})
    return clf.explanation(review, "LIME", items, p0, meta)


def lime_explain_all(clf: BagOfWordsClassifier, reviews: Iterable[str] | None = None, n_samples: int = 1000,
                     kernel_width: float = 0.75, top_k: int | None = 10, seed: int = 0,
                     alpha: float = 1.0, progress: Progress | None = None) -> ExplanationSet:
    """`lime_explain` for many reviews (default: the test reviews); one surrogate per review
    (`progress` hears each)."""
    todo = list(_reviews(clf, reviews))
    tick = throttled(progress)
    exps = []
    for i, r in enumerate(todo):
        if tick is not None:
            tick(i / max(len(todo), 1), f"LIME surrogate {i + 1} of {len(todo)}")
        exps.append(lime_explain(clf, r, n_samples, kernel_width, top_k, seed, alpha))
    return ExplanationSet(exps, method="LIME", meta={"n_samples": int(n_samples), "kernel_width": float(kernel_width)})


# ---------------------------------------------------------------------- SHAP
def _background_matrix(clf: BagOfWordsClassifier,
                       background: Sequence[str] | np.ndarray | sp.spmatrix | None) -> sp.csr_matrix:
    if background is None:
        X = clf.matrix(clf.train_reviews_)
    elif sp.issparse(background) or (isinstance(background, np.ndarray) and background.ndim == 2):
        X = sp.csr_matrix(background, dtype=np.float64)
    else:
        X = clf.matrix(background)  # review ids
    if X.shape[0] == 0:
        raise XcoreError("the SHAP background has no reviews")
    if X.shape[1] != len(clf.vocabulary_):
        raise XcoreError(f"background matrix has {X.shape[1]} word columns, the classifier {len(clf.vocabulary_)}")
    return X


def shap_values(clf: BagOfWordsClassifier, reviews: Iterable[str],
                background: Sequence[str] | np.ndarray | sp.spmatrix | None = None,
                method: str = "auto") -> tuple[np.ndarray, float, str]:
    """(n_reviews, n_words) SHAP values in log-odds space, the expected log-odds over the background,
    and the backend used ("closed_form" or "shap").

    `method`: "closed_form" (``coef * (x - E_bg[x])``), "shap" (`shap.LinearExplainer`, raises if
    the package is missing) or "auto" (the package when installed, else the closed form).
    `background`: review ids or a review x word matrix; default the training reviews.
    """
    clf._need_fit()
    if method not in ("auto", "shap", "closed_form"):
        raise XcoreError(f"unknown SHAP method {method!r}; use 'auto', 'shap' or 'closed_form'")
    X = clf.matrix(reviews)
    B = _background_matrix(clf, background)
    mean = np.asarray(B.mean(axis=0)).ravel()
    expected = clf.intercept_ + float(clf.coef_ @ mean)
    backend = "closed_form"
    if method in ("auto", "shap"):
        try:
            import shap  # optional dependency
        except ImportError:
            if method == "shap":
                raise XcoreError("method='shap' needs the optional `shap` package (pip install shap)") from None
        else:
            explainer = shap.LinearExplainer((clf.coef_, clf.intercept_), B)
            values = explainer.shap_values(X)
            values = values.toarray() if sp.issparse(values) else np.asarray(values, dtype=np.float64)
            return values.reshape(X.shape), float(np.ravel(explainer.expected_value)[0]), "shap"
    values = (X.toarray() - mean[None, :]) * clf.coef_[None, :]
    return values, expected, backend


def shap_explain_all(clf: BagOfWordsClassifier, reviews: Iterable[str] | None = None,
                     background: Sequence[str] | np.ndarray | sp.spmatrix | None = None, top_k: int | None = 10,
                     method: str = "auto", present_only: bool = True) -> ExplanationSet:
    """SHAP explanations of many reviews (default: the test reviews), all values computed at once.

    Items are words ranked by |phi| (log-odds units). With `present_only` (default) only the
    review's own words are listed (the word formulas grounded for it); otherwise absent words
    (phi = -coef * E_bg[x]) may appear too, as ``!has_word(...) -> positive(...)``.
    """
    revs = _reviews(clf, reviews)
    phi, expected, backend = shap_values(clf, revs, background, method)
    X = clf.matrix(revs)
    f = clf.decision_matrix(X)
    exps = []
    for i, review in enumerate(revs.tolist()):  # one Explanation object per review
        present = X.indices[X.indptr[i]:X.indptr[i + 1]]
        cols = np.sort(present) if present_only else np.arange(X.shape[1])
        order = cols[np.argsort(-np.abs(phi[i, cols]), kind="stable")]
        if top_k is not None:
            order = order[:top_k]
        is_present = np.isin(order, present)
        items = [clf.word_item(review, int(c), float(phi[i, c]), bool(p)) for c, p in zip(order, is_present)]
        meta = {"expected_log_odds": expected, "log_odds": float(f[i]), "backend": backend,
                "sum_phi": float(phi[i].sum()), "present_only": bool(present_only)}
        exps.append(clf.explanation(review, "SHAP", items, float(1.0 / (1.0 + np.exp(-f[i]))), meta))
    return ExplanationSet(exps, method="SHAP", meta={"backend": backend, "expected_log_odds": expected})


def shap_explain(clf: BagOfWordsClassifier, review: str,
                 background: Sequence[str] | np.ndarray | sp.spmatrix | None = None, top_k: int | None = 10,
                 method: str = "auto", present_only: bool = True) -> Explanation:
    """SHAP explanation of P(positive) of one review (see `shap_explain_all`)."""
    return shap_explain_all(clf, [review], background, top_k, method, present_only)[0]
