"""`PLKBClassifier`: learn a probabilistic KB from a table, classify by LP inference, explain.

    clf = PLKBClassifier(kb="tree").fit(X_train, y_train, progress=callback)
    clf.predict_interval(X_test)          # lo, hi, mid of omega(POS), prediction
    clf.explain(X_test.iloc[[3]], k=2)    # k most decisive features + candidate table + clauses
    clf.shapley(X_test.iloc[[3]])         # Shapley values of the KB classifier itself
    clf.kb_.to_text()                     # the KB as text (p: POS | ~a_v | ...)

Numeric columns are cut into quantile bins (`n_bins`, per-column `bins`); a multi-class label
is made binary one-vs-rest with `positive_class` (default: for two classes the "positive-
looking" or last one, otherwise the most frequent), shown as `positive_class_`.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from xcore.errors import DataError, XcoreError
from xcore.explain.types import Explanation, ExplanationItem
from xcore.plkb.direct import direct_kb
from xcore.plkb.discretize import Discretizer
from xcore.plkb.explain import DecisiveResult, ShapleyResult, decisive_features, shapley_values
from xcore.plkb.inference import Reasoner
from xcore.plkb.kb import KB
from xcore.plkb.literals import ABSENT, Domain
from xcore.plkb.lp import DEFAULT_FACE_TOL
from xcore.plkb.tree import forest_kb, id3, nodes_frame, tree_kb
from xcore.runtime import Progress

KB_KINDS = ("tree", "direct")
_POSITIVE_NAMES = ("1", "true", "yes", "y", "pos", "positive", "p", "t")


def choose_positive_class(y: pd.Series, positive_class: Any = None) -> Any:
    """The class treated as POS: the given one (checked), else a default (see module docstring)."""
    values = pd.Series(y).dropna()
    classes = pd.unique(values)
    as_text = {str(c): c for c in classes}
    if positive_class is not None:
        if str(positive_class) not in as_text:
            raise DataError(f"positive class {positive_class!r} does not occur in the labels "
                            f"(classes: {', '.join(sorted(as_text)[:20])})")
        return as_text[str(positive_class)]
    if len(classes) < 2:
        raise DataError(f"the label has a single class ({classes[0] if len(classes) else 'none'}); "
                        f"need two or more")
    if len(classes) == 2:
        named = [c for c in classes if str(c).strip().lower() in _POSITIVE_NAMES]
        if len(named) == 1:
            return named[0]
        return sorted(classes, key=str)[-1]
    return values.value_counts().index[0]


def _as_frame(X: Any) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        return X.to_frame().T
    if isinstance(X, Mapping):
        return pd.DataFrame([dict(X)])
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise DataError(f"features must be a table (2-D), got an array of shape {arr.shape}")
    return pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])


class PLKBClassifier(ClassifierMixin, BaseEstimator):
    """Probabilistic-logic KB classifier (Fan, Liu, Henderson): Tree or Direct KB + LP inference.

    kb: "tree" (ID3 paths; `all_nodes`, `n_trees` > 1 for a bootstrap forest, `max_depth`,
    `max_features` per split in forests) or "direct" (all k-combinations up to `max_k` with at
    least `min_support` rows). knowledge: extra clauses in the text format, used like learned
    ones. solver: "highs" (fast path), "pulp" (CBC) or "pulp-highs". scope: "relevant" or "full".
    """

    def __init__(self, kb: str = "tree", max_k: int = 2, min_support: int | float = 1,
                 all_nodes: bool = False, n_trees: int = 1, max_depth: int | None = None,
                 max_features: int | str | None = "sqrt", n_bins: int = 4,
                 bins: Mapping[str, int | Sequence[float]] | None = None, positive_class: Any = None,
                 knowledge: str = "", solver: str = "highs", scope: str = "relevant",
                 face_tol: float = DEFAULT_FACE_TOL, random_state: int = 0) -> None:
        self.kb = kb
        self.max_k = max_k
        self.min_support = min_support
        self.all_nodes = all_nodes
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.max_features = max_features
        self.n_bins = n_bins
        self.bins = bins
        self.positive_class = positive_class
        self.knowledge = knowledge
        self.solver = solver
        self.scope = scope
        self.face_tol = face_tol
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X: pd.DataFrame, y: Sequence | pd.Series, progress: Progress | None = None) -> "PLKBClassifier":
        """Discretise, learn the KB, add the knowledge clauses; `progress(fraction, message)`."""
        if self.kb not in KB_KINDS:
            raise XcoreError(f"kb must be one of {', '.join(KB_KINDS)}, got {self.kb!r}")
        X = _as_frame(X)
        y_arr = np.asarray(y)
        if y_arr.ndim != 1 or len(X) != len(y_arr):
            raise DataError(f"{len(X)} feature rows but {len(y_arr)} labels")
        y = pd.Series(y_arr, index=X.index, name=getattr(y, "name", None) or "label")
        if len(X) == 0:
            raise DataError("no training rows")
        if y.isna().any():
            raise DataError(f"{int(y.isna().sum())} labels are missing")
        report = progress or (lambda f, m: None)
        report(0.0, "discretising")
        pc = choose_positive_class(y, self.positive_class)
        self.positive_class_ = pc.item() if isinstance(pc, np.generic) else pc
        classes = pd.unique(y)
        if len(classes) == 2:
            neg = [c for c in classes if str(c) != str(self.positive_class_)][0]
            neg = neg.item() if isinstance(neg, np.generic) else neg
        else:
            neg = f"not {self.positive_class_}"
        self.classes_ = np.array([neg, self.positive_class_], dtype=object)
        self.n_classes_original_ = len(classes)
        yb = self.binary_labels(y)
        self.discretizer_ = Discretizer(self.n_bins, dict(self.bins or {})).fit(X)
        Xd = self.discretizer_.transform(X)
        self.domain_ = Domain.from_frame(Xd, self.discretizer_.orders())
        self.feature_names_in_ = np.array(self.domain_.features, dtype=object)
        codes = self.domain_.encode(Xd)
        self.nodes_ = None

        def sub(lo: float, hi: float) -> Progress:
            return lambda f, m: report(lo + (hi - lo) * f, m)

        report(0.05, f"learning the {self.kb} KB")
        if self.kb == "tree":
            if int(self.n_trees) <= 1:
                self.nodes_ = id3(codes, yb, self.domain_, max_depth=self.max_depth)
                learned = tree_kb(self.nodes_, self.domain_, self.all_nodes)
            else:
                learned = forest_kb(codes, yb, self.domain_, int(self.n_trees), self.max_features,
                                    self.all_nodes, self.max_depth, seed=self.random_state,
                                    progress=sub(0.05, 0.9))
        else:
            learned = direct_kb(codes, yb, self.domain_, int(self.max_k), self.min_support,
                                progress=sub(0.05, 0.9))
        self.learned_kb_ = learned
        self.knowledge_kb_ = (KB.from_text(self.knowledge, self.domain_, source="user", name="knowledge")
                              if self.knowledge and self.knowledge.strip() else KB.empty(self.domain_))
        self._set_kb(KB.concat([learned, self.knowledge_kb_]))
        self.n_train_ = len(y)
        report(1.0, f"{len(self.kb_):,} clauses")
        return self

    def _set_kb(self, kb: KB) -> None:
        self.kb_ = kb
        self.reasoner_ = Reasoner(kb, self.solver, self.scope, self.face_tol)

    def _check_fitted(self) -> None:
        if not hasattr(self, "kb_"):
            raise XcoreError("the classifier is not fitted yet; call fit first")

    def add_knowledge(self, text: str, source: str = "user") -> KB:
        """Parse domain-knowledge clauses (text format) and add them to the KB; returns them."""
        self._check_fitted()
        extra = KB.from_text(text, self.domain_, source=source, name="knowledge")
        self.knowledge_kb_ = KB.concat([self.knowledge_kb_, extra])
        self._set_kb(KB.concat([self.kb_, extra]))
        return extra

    def with_kb(self, kb: KB) -> "PLKBClassifier":
        """A copy of this fitted classifier reasoning with `kb` (same domain); this one is left as it is,
        so a cached, shared classifier can serve experiments from several sessions at once."""
        self._check_fitted()
        if kb.domain != self.domain_:
            raise XcoreError("the new KB has a different domain from the fitted one")
        other = copy.copy(self)
        other._set_kb(kb)
        return other

    def set_kb(self, kb: KB) -> "PLKBClassifier":
        """Replace the KB (same domain), e.g. a polluted copy for the pollution experiment."""
        self._check_fitted()
        if kb.domain != self.domain_:
            raise XcoreError("the new KB has a different domain from the fitted one")
        self._set_kb(kb)
        return self

    # ------------------------------------------------------------------ labels and queries
    def binary_labels(self, y: Sequence | pd.Series) -> np.ndarray:
        """True where the label is the positive class (one-vs-rest)."""
        return pd.Series(np.asarray(y)).astype(str).to_numpy() == str(self.positive_class_)

    def encode(self, X: Any) -> np.ndarray:
        """Query codes of rows (a missing column or value leaves that feature out of the query)."""
        self._check_fitted()
        Xf = _as_frame(X)
        return self.domain_.encode(self.discretizer_.transform(Xf))

    def _one_query(self, x: Any) -> np.ndarray:
        if isinstance(x, np.ndarray) and x.dtype.kind == "i" and x.ndim == 1 and len(x) == self.domain_.n_features:
            return x.astype(np.int64)
        codes = self.encode(x)
        if len(codes) != 1:
            raise DataError(f"expected one row to explain, got {len(codes)}")
        return codes[0]

    # ------------------------------------------------------------------ predict
    def predict_interval(self, X: Any, progress: Progress | None = None) -> pd.DataFrame:
        """Per row: lo, hi, mid of omega(POS), objective, n_clauses, positive, prediction."""
        self._check_fitted()
        Xf = _as_frame(X)
        out = self.reasoner_.intervals(self.encode(Xf), progress)
        out.index = Xf.index
        out["prediction"] = np.where(out["positive"].to_numpy(), self.classes_[1], self.classes_[0])
        return out

    def predict(self, X: Any) -> np.ndarray:
        return self.predict_interval(X)["prediction"].to_numpy()

    def predict_proba(self, X: Any) -> np.ndarray:
        """[1 - mid, mid] per row (the midpoint of the omega(POS) interval as P(positive))."""
        mid = self.predict_interval(X)["mid"].to_numpy()
        return np.column_stack([1 - mid, mid])

    def decision_function(self, X: Any) -> np.ndarray:
        return self.predict_interval(X)["mid"].to_numpy() - 0.5

    def score(self, X: Any, y: Sequence | pd.Series, sample_weight=None) -> float:
        """Accuracy on the one-vs-rest task."""
        pred = self.predict_interval(X)["positive"].to_numpy()
        return float(np.average(pred == self.binary_labels(y), weights=sample_weight))

    def predictions_frame(self, X: Any, y: Sequence | pd.Series | None = None,
                          progress: Progress | None = None) -> pd.DataFrame:
        """Predictions for browsing/download: row, query, lo, hi, mid, prediction (+ truth, correct)."""
        Xf = _as_frame(X)
        iv = self.predict_interval(Xf, progress)
        frame = pd.DataFrame({"row": Xf.index, "lo": iv["lo"].to_numpy(), "hi": iv["hi"].to_numpy(),
                              "mid": iv["mid"].to_numpy(), "prediction": iv["prediction"].to_numpy(),
                              "n_clauses": iv["n_clauses"].to_numpy()})
        if y is not None:
            yb = self.binary_labels(y)
            frame["truth"] = np.where(yb, self.classes_[1], self.classes_[0])
            frame["correct"] = iv["positive"].to_numpy() == yb
        return frame

    # ------------------------------------------------------------------ explain
    def explain(self, x: Any, k: int = 2, max_exhaustive: int = 3000, restarts: int = 3,
                target: str | None = None) -> "PLKBExplanation":
        """The k most decisive features of one row's prediction, with the candidate table and
        the clauses of the winning sub-query and of the full query."""
        self._check_fitted()
        codes = self._one_query(x)
        res = decisive_features(self.reasoner_, codes, k, None, max_exhaustive, restarts, self.random_state)
        sub = np.full_like(codes, ABSENT)
        sub[list(res.features)] = codes[list(res.features)]
        return PLKBExplanation(self, codes, res, lambda: self.driving_clauses(sub), target or "row")

    def shapley(self, x: Any, exact_max: int = 12, n_permutations: int = 200) -> ShapleyResult:
        """Shapley values of this classifier for one row (partial queries as the value function)."""
        self._check_fitted()
        return shapley_values(self.reasoner_, self._one_query(x), exact_max, n_permutations, self.random_state)

    def driving_clauses(self, x: Any) -> pd.DataFrame:
        """Clauses in the row's LP with p, omega at both ends of the optimal face and deviation."""
        self._check_fitted()
        return self.reasoner_.clause_solution(self._one_query(x))

    def describe_feature(self, feature: str, value: str | None) -> str:
        """Readable condition (``22 < Age <= 28``) for a feature value."""
        return self.discretizer_.value_text(feature, "?" if value is None else value)

    # ------------------------------------------------------------------ sizes and exports
    def kb_summary(self) -> dict[str, Any]:
        """KB size (clauses, literal occurrences, atoms; clauses per source) and full-KB LP size."""
        self._check_fitted()
        out: dict[str, Any] = dict(self.kb_.summary())
        out["by_source"] = pd.Series(self.kb_.source).value_counts().to_dict()
        out["full_lp"] = self.reasoner_.lp_size(None)
        out["positive_class"] = self.positive_class_
        return out

    def lp_size(self, x: Any = None) -> dict[str, int]:
        """Rows/cols/non-zeros of the LP: the full KB (x None) or one row's query LP."""
        self._check_fitted()
        return self.reasoner_.lp_size(None if x is None else self._one_query(x))

    def tree_frame(self) -> pd.DataFrame | None:
        """The ID3 tree's nodes (single-tree KBs only)."""
        return None if self.nodes_ is None else nodes_frame(self.nodes_, self.domain_)

    def kb_text(self) -> str:
        self._check_fitted()
        header = (f"PLKB {self.kb} KB, positive class {self.positive_class_!r}, {len(self.kb_)} clauses\n"
                  f"format: p: LIT | LIT ...   (POS, feature_value, ~ for not)")
        return self.kb_.to_text(header=header)

    def lp_file_text(self, x: Any = None, fmt: str = "lp") -> str:
        """The (stage-1) LP of a row's query, or of the whole KB, as .lp/.mps text via pulp."""
        from xcore.plkb.lp_pulp import lp_text  # pulp loads only when a readable LP file is asked for

        self._check_fitted()
        codes = None if x is None else self._one_query(x)
        kb = self.kb_ if codes is None else self.reasoner_.query_kb(codes)
        return lp_text(kb, codes, fmt)


class PLKBExplanation:
    """One row's k-feature explanation: the decisive sub-query, its candidates and clauses."""

    def __init__(self, clf: PLKBClassifier, codes: np.ndarray, result: DecisiveResult,
                 clauses: pd.DataFrame | Callable[[], pd.DataFrame], target: str) -> None:
        self.codes = codes
        self.result = result
        self._clauses = clauses
        self.target = target
        dom = clf.domain_
        query = dom.decode(codes)
        self.query = query
        self.positive_class = clf.positive_class_
        self.prediction = clf.classes_[1] if result.full.positive else clf.classes_[0]
        self.features = [dom.features[f] for f in result.features]
        self.values = [query[f] for f in self.features]
        self.natural = [clf.describe_feature(f, v) for f, v in zip(self.features, self.values)]

    @property
    def candidates(self) -> pd.DataFrame:
        return self.result.candidates

    @property
    def clauses(self) -> pd.DataFrame:
        """The winning sub-query's clauses (solved on first use: a k search that tries several k needs only the last)."""
        if callable(self._clauses):
            self._clauses = self._clauses()
        return self._clauses

    @property
    def interval(self):
        return self.result.interval

    def text(self) -> str:
        cond = " and ".join(self.natural) or "(no features)"
        word = "POS" if self.result.positive else "not POS"
        iv = self.result.interval
        return (f"{cond} -> {word}: omega(POS) in [{iv.lo:.3f}, {iv.hi:.3f}] "
                f"(full query [{self.result.full.lo:.3f}, {self.result.full.hi:.3f}])")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (query, prediction, chosen features, intervals, candidates)."""
        r = self.result
        return {
            "target": self.target, "query": self.query, "positive_class": str(self.positive_class),
            "prediction": str(self.prediction), "k": r.k, "method": r.method,
            "features": self.features, "values": self.values, "natural": self.natural,
            "interval": r.interval.as_dict(), "full_interval": r.full.as_dict(),
            "candidates": r.candidates.assign(features=r.candidates["features"].map(list)).to_dict("records"),
        }

    def to_explanation(self, max_items: int = 10):
        """The shared `xcore.explain.Explanation` (kind "feature_set" items, best sub-query first)."""
        r = self.result
        items = []
        for row in r.candidates.head(max_items).itertuples(index=False):
            feats = list(row.features)
            atoms = [f"{f}_{self.query[f]}" for f in feats]
            lean = float(row.omega_mid) - 0.5  # a sub-query above the undecided 0.5 pushes towards POS
            items.append(ExplanationItem(
                kind="feature_set", text=row.query, natural=row.query, score=lean,
                direction=int(np.sign(lean)), effect=lean, atoms=atoms, explainable=True,
                extras={"features": [str(f) for f in feats], "omega_mid": float(row.omega_mid),
                        "omega_lo": float(row.omega_lo),
                        "omega_hi": float(row.omega_hi),
                        "size": int(row.size), "rank": int(row.rank)}))
        return Explanation(
            target=self.target, target_text=self.text(), method=f"plkb-decisive-k{r.k}",
            prediction=float(r.full.mid), prediction_kind="probability", items=items, ordering="given",
            meta={"positive_class": str(self.positive_class), "prediction": str(self.prediction),
                  "search": r.method, "n_evaluated": r.n_evaluated,
                  "full_interval": [r.full.lo, r.full.hi]})

