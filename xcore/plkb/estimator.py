"""The probabilistic-logic classifier as an estimator: `fit(data)` learns a KB from every labelled row
of a dataset's table, `predict(data)` answers every row of any table with the same columns."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.splits import row_text
from xcore.errors import DataError, XcoreError
from xcore.explain.types import Explanation, ExplanationItem
from xcore.methods.base import Estimator, prediction_frame
from xcore.plkb.classifier import PLKBClassifier
from xcore.plkb.scores import CLAUSE_SCORE, DECISIVE, DECISIVE_SCORE, undecided_note
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.tables import ask_positive_class, table_of
from xcore.runtime import Progress


class PLKBEstimator(Estimator):
    """The KB classifier of Fan, Liu & Henderson on a dataset's table (one row is one unit).

    Parameters
    ----------
    settings : PLKBSettings
        The label column, the KB learner and its knobs, the explanation knobs.

    Attributes
    ----------
    classifier_ : PLKBClassifier
        The fitted classifier: discretiser, domain, knowledge base and LP reasoner.
    X_train_ : pandas.DataFrame
        The feature columns of the rows it learned from (at most ``max_rows``, a seeded sample above).
    y_train_ : pandas.Series
        Their labels (text).
    X_test_ : pandas.DataFrame or None
        The held-out rows a run predicted and explains (set by `xcore.plkb.runs.run` on its copy of the
        estimator; None after a plain `fit`). Never learned from.
    y_test_ : pandas.Series or None
        Their labels.
    user_model_ : object or None
        The user's own model (an ONNX file) this classifier is a surrogate of, if the data came with one.
    user_table_ : pandas.DataFrame or None
        The table the user's model is explained on (with `user_model_`).
    """

    X_test_: pd.DataFrame | None = None
    y_test_: pd.Series | None = None

    def __init__(self, settings: PLKBSettings) -> None:
        self.settings = settings

    def units(self, data: RelationalDataset) -> pd.DataFrame:
        """The rows whose `settings.label` is known, stratified by it (the label may differ from the data's)."""
        table, _ = table_of(data)
        label = self._check_label(table)
        truth = table[label]
        known = truth.notna().to_numpy()
        return pd.DataFrame({"unit": [row_text(i) for i in table.index[known]], "predicate": None,
                             "stratum": truth[known].astype(str).to_numpy()})

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "PLKBEstimator":
        """Learn from every labelled row of `data`'s table (`fit_table`); remember the user's model if any."""
        table, _ = table_of(data)
        self.fit_table(table, progress)
        user = getattr(data, "user_predictions", None)
        self.user_model_ = getattr(user, "model", None)
        self.user_table_ = table if self.user_model_ is not None else None
        return self

    def fit_table(self, table: pd.DataFrame, progress: Progress | None = None) -> "PLKBEstimator":
        """Learn the KB from the labelled rows of a table (a seeded sample of `max_rows` above that)."""
        s = self.settings
        table = table.dropna(subset=[self._check_label(table)])
        if len(table) > s.max_rows:  # the cost cap of the algorithm (LP size grows with the KB)
            table = table.sample(s.max_rows, random_state=s.seed)
        X = self.features(table)
        if X.shape[1] == 0:
            raise DataError("no feature columns are left: un-tick some of the dropped columns")
        y = table[s.label].astype(str)
        if y.nunique() < 2:
            raise DataError(f"label {s.label!r} has a single class in the training rows; need two or more")
        if y.nunique() > 2 and s.positive_class is None:
            raise DataError(ask_positive_class(s.label, y))
        self.classifier_: PLKBClassifier = s.classifier().fit(X, y, progress=progress)
        self.X_train_, self.y_train_ = X, y
        self.user_model_, self.user_table_ = None, None
        return self

    def _check_label(self, table: pd.DataFrame) -> str:
        label = self.settings.label
        if label not in table.columns:
            raise DataError(f"label column {label!r} is not in the table "
                            f"(columns: {', '.join(map(str, table.columns[:20]))})")
        return label

    def features(self, table: pd.DataFrame) -> pd.DataFrame:
        """The feature columns of a table: all but the label and the dropped ones."""
        return table.drop(columns=[self.settings.label, *self.settings.drop], errors="ignore")

    def predict(self, data: RelationalDataset | None = None, progress: Progress | None = None) -> pd.DataFrame:
        """Every row of `data`'s table (None: the held-out rows of the run, `X_test_`), one frame shape; the
        label, where present, is only copied to ``truth``."""
        self.check_fitted()
        if data is None:
            if self.X_test_ is None:
                raise XcoreError("no held-out rows: pass the data to predict (predict(data))")
            X, y = self.X_test_, self.y_test_
        else:
            table, _ = table_of(data)
            X = self.features(table)
            y = table[self.settings.label].astype(str) if self.settings.label in table else None
        p = self.classifier_.predictions_frame(X, y, progress=progress)
        truth = p["truth"] if "truth" in p.columns else None
        extra = {c: p[c] for c in ("lo", "hi", "mid", "correct", "n_clauses") if c in p.columns}
        return prediction_frame(p["row"].map(row_text), p["prediction"].astype(str),
                                None if truth is None else truth.astype(str), **extra)

    def rows(self, data: RelationalDataset | None = None) -> pd.DataFrame:
        """The feature rows explanations are asked about: `data`'s, else the held-out rows, else the training rows."""
        if data is not None and data.tabular is not None:
            return self.features(data.tabular)
        return self.X_test_ if self.X_test_ is not None else self.X_train_

    def row(self, target: str, data: RelationalDataset | None = None) -> pd.DataFrame:
        """The row named by a target text (``row 17``) as a one-row frame (looked up as `rows` says)."""
        self.check_fitted()
        index = target[4:] if target.startswith("row ") else target
        for X in (self.rows(data), self.X_train_):
            hits = [i for i, ix in enumerate(X.index) if str(ix) == index]
            if hits:
                return X.iloc[[hits[0]]]
        raise XcoreError(f"{target!r} is not a row this model knows (held-out or training rows)")

    def feature_options(self) -> dict[str, list]:
        """Each feature column with the values seen in training (numeric columns: their sorted unique values)."""
        self.check_fitted()
        X = self.X_train_
        return {str(c): sorted(pd.unique(X[c].dropna()).tolist(), key=lambda v: (str(type(v)), v)) for c in X.columns}

    def what_if(self, values: dict[str, object], k: int | None = None) -> Explanation:
        """The decisive-feature explanation of a row built from `values` (feature -> value; a missing or
        None value leaves that feature unknown), with omega(POS)'s interval for the whole row in meta."""
        self.check_fitted()
        columns = list(self.X_train_.columns)
        unknown = sorted(set(values) - set(map(str, columns)))
        if unknown:
            raise XcoreError(f"unknown feature {unknown[0]!r}; the model's features are: {', '.join(map(str, columns))}")
        row = pd.DataFrame([{c: values.get(str(c)) for c in columns}], index=["what-if"])
        for c in columns:  # keep the training dtypes so numeric bins apply
            if pd.api.types.is_numeric_dtype(self.X_train_[c]):
                row[c] = pd.to_numeric(row[c], errors="coerce")
        k = min(k or self.settings.k, len(columns))
        exp = self.classifier_.explain(row, k).to_explanation()
        iv = self.classifier_.predict_interval(row).iloc[0]
        meta = {**exp.meta, **undecided_note(exp.items, k), "omega_lo": float(iv["lo"]), "omega_hi": float(iv["hi"]),
                "row": {str(c): values.get(str(c)) for c in columns}}
        if getattr(self, "user_model_", None) is not None:
            meta.update(self.user_model_what_if(values))
        return replace(exp, target="row what-if", prediction=float(iv["mid"]), meta=meta,
                       method=DECISIVE, score_spec=DECISIVE_SCORE)

    def user_model_what_if(self, values: dict[str, object]) -> dict[str, object]:
        """The user's model's prediction of the edited row (columns it reads but `values` lacks: unknown)."""
        model, table = self.user_model_, self.user_table_
        row = pd.DataFrame([{c: values.get(c) for c in model.columns}])
        for c in model.columns:
            if pd.api.types.is_numeric_dtype(table[c]):
                row[c] = pd.to_numeric(row[c], errors="coerce")
        said = model.what_if(row, {})
        probs = ", ".join(f"P({k}) = {v:.3f}" for k, v in said["probabilities"].items())
        return {"your_model": said["prediction"], "your_model_probabilities": said["probabilities"],
                "note": f"Your model predicts {said['prediction']} for this row" + (f" ({probs})" if probs else "")
                        + "; the decisive features below are the surrogate's."}

    def kb_summary(self) -> Explanation:
        """The knowledge base as one explanation: each clause with its probability."""
        self.check_fitted()
        kb = self.classifier_.kb_.to_frame()
        items = [ExplanationItem(kind="feature_clause", text=str(r.clause), natural=str(r.clause), score=float(r.p),
                                 extras={"support": int(r.support)})
                 for r in kb.itertuples(index=False)]
        return Explanation(target="model", target_text=f"{self.settings.kb} KB for {self.settings.label}",
                           method="plkb", items=items, ordering="given", score_spec=CLAUSE_SCORE)
