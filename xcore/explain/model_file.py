"""A user's own model of a table, given as an ONNX file, run by onnxruntime (which executes no user
code): its predictions of every row (for a surrogate run), exact Shapley values of its probability over
the model function, and what-if predictions of edited rows (issue 28).

Only ONNX is accepted: pickles (.pkl, .joblib, .pt, ...) can run arbitrary code when loaded, so they are
refused with a message saying how to export to ONNX; nothing is ever unpickled. The model's inputs must
name the table's columns (one input per column, as skl2onnx exports a pipeline with a ColumnTransformer),
or be one 2-D tensor whose width is given by the metadata ``feature_names`` (comma-separated column names)
or equals the table's numeric feature columns in order; otherwise a `DataError` names the inputs and the
table's columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import factorial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from xcore.data.predictions import class_text, predictions_from_rows
from xcore.errors import DataError, XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.optional_deps import import_optional

if TYPE_CHECKING:
    from xcore.data.dataset import RelationalDataset
    from xcore.data.predictions import UserPredictions

REFUSED = {".pkl": "a Python pickle", ".pickle": "a Python pickle", ".joblib": "a joblib pickle",
           ".sav": "a pickle", ".pt": "a PyTorch pickle", ".pth": "a PyTorch pickle", ".ckpt": "a checkpoint pickle",
           ".h5": "a Keras/HDF5 model", ".keras": "a Keras model", ".bin": "a binary model file",
           ".npy": "a NumPy array file", ".npz": "a NumPy archive", ".json": "a JSON model dump",
           ".ubj": "an XGBoost model", ".txt": "a text model dump", ".cbm": "a CatBoost model"}
HOW_TO_EXPORT = ("export it to ONNX: scikit-learn with skl2onnx (to_onnx), XGBoost / LightGBM with onnxmltools, "
                 "PyTorch with torch.onnx.export")
MAX_BYTES = 500 * 1024 * 1024
EXACT_FEATURES = 12
"""Exact Shapley values (every coalition) up to this many features; beyond, shap's KernelExplainer."""

SHAP_SCORE = ScoreSpec(
    label="Shapley value φ of your model",
    measures="the feature's average marginal change of your model's probability for the explained class over "
             "coalitions of known features, unknown features drawn from background rows (interventional; exact up "
             "to 12 features, computed on the ONNX model with onnxruntime).",
    signed=True, unit="probability")


def _onnxruntime():
    return import_optional("onnxruntime", "reading ONNX models")  # optional extra, 0.3 s: only when a model is read


def check_model_file(name: str, data: bytes) -> None:
    """Refuse anything but an ONNX file, by name and by content (pickles, zip archives), naming the file."""
    suffix = Path(name).suffix.lower()
    if suffix in REFUSED:
        raise DataError(f"{REFUSED[suffix]} is not accepted: xcore never unpickles or executes model files; "
                        f"{HOW_TO_EXPORT}", file=name)
    if suffix != ".onnx":
        raise DataError(f"only ONNX model files (.onnx) are accepted, not {suffix or 'a file without suffix'}; "
                        f"{HOW_TO_EXPORT}", file=name)
    if data[:1] == b"\x80" or data[:2] == b"PK":
        raise DataError("this file is a pickle or a zip archive, not an ONNX model: xcore never unpickles model "
                        f"files; {HOW_TO_EXPORT}", file=name)
    if not data:
        raise DataError("the model file is empty", file=name)


@dataclass
class InputSpec:
    """One ONNX graph input: its name, element type (float, int64, string, ...) and shape."""

    name: str
    type: str
    shape: tuple

    @property
    def numpy_type(self) -> Any:
        t = self.type
        return (object if "string" in t else np.float64 if "double" in t else np.float32 if "float" in t
                else np.int64 if "int64" in t else np.int32 if "int32" in t else np.bool_ if "bool" in t else np.float32)


@dataclass
class OnnxTableModel:
    """An ONNX classifier of a table's rows: which columns it reads, its classes, and how to call it."""

    file: str
    session: Any
    inputs: list[InputSpec]
    columns: list[str]
    """The table's feature columns the model reads, in its input order."""
    label: str
    one_tensor: bool
    classes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ calling
    def _feeds(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        if self.one_tensor:
            spec = self.inputs[0]
            arr = X[self.columns].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
            return {spec.name: arr.astype(spec.numpy_type)}
        feeds = {}
        for spec, col in zip(self.inputs, self.columns):
            v = X[col]
            if spec.numpy_type is object:
                a = v.astype(object).where(v.notna(), "").astype(str).to_numpy(dtype=object)
            else:
                a = pd.to_numeric(v, errors="coerce").to_numpy(dtype=np.float64)
                if np.issubdtype(spec.numpy_type, np.integer):
                    if np.isnan(a).any():
                        raise DataError(f"column {col!r} has missing values but the model's input {spec.name!r} "
                                        "is an integer tensor", file=self.file)
                a = a.astype(spec.numpy_type)
            feeds[spec.name] = a.reshape(-1, 1)
        return feeds

    def run(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray | None]:
        """(predicted class texts, class probabilities [n, classes] or None) of the rows of `X`."""
        try:
            outs = self.session.run(None, self._feeds(X))
        except XcoreError:
            raise
        except Exception as e:  # noqa: BLE001 - onnxruntime's errors, wrapped at the boundary
            raise DataError(f"the ONNX model failed on the table's rows: {str(e).splitlines()[0][:300]}",
                            file=self.file) from None
        labels = np.asarray([class_text(v.decode() if isinstance(v, bytes) else v) for v in np.ravel(outs[0])],
                            dtype=object)
        proba = None
        if len(outs) > 1:
            p = outs[1]
            if isinstance(p, list) and p and isinstance(p[0], dict):  # skl2onnx's ZipMap: one dict per row
                keys = list(p[0].keys())
                if not self.classes:
                    self.classes = [class_text(k) for k in keys]
                proba = np.array([[row[k] for k in keys] for row in p], dtype=float)
            else:
                proba = np.asarray(p, dtype=float).reshape(len(labels), -1)
                if not self.classes:
                    self.classes = _classes_from(labels, proba)
        return labels, proba

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.run(X)[0]

    def proba_of(self, X: pd.DataFrame, cls: str | None = None) -> np.ndarray:
        """P(`cls`) per row (default: the model's last class, its positive class for two classes)."""
        labels, proba = self.run(X)
        if proba is None:
            raise XcoreError(f"the ONNX model {self.file} gives no probabilities, only classes")
        j = len(self.classes) - 1 if cls is None else self.classes.index(str(cls))
        return proba[:, j]

    @property
    def positive(self) -> str:
        return self.classes[-1] if self.classes else ""

    # ------------------------------------------------------------------ what it explains
    def user_predictions(self, dataset: "RelationalDataset") -> "UserPredictions":
        """The model's predictions of every row of `dataset`'s table, as predictions a user brought."""
        table = dataset.tabular
        if table is None:
            raise DataError(f"{self.file}: an ONNX model explains a table, and {dataset.name!r} has none", file=self.file)
        labels, proba = self.run(table)
        score = proba[:, -1] if proba is not None else np.full(len(labels), np.nan)
        rows = [(i + 1, [f"row {ix}", str(lab), "" if not np.isfinite(s) else repr(float(s))])
                for i, (ix, lab, s) in enumerate(zip(table.index, labels, score))]
        preds = predictions_from_rows(rows, dataset, self.file)
        preds.model = self  # the model itself, for SHAP values and the what-if view
        return preds

    def what_if(self, row: pd.DataFrame, changes: dict[str, Any]) -> dict[str, Any]:
        """The model's class and probabilities for one row with some feature values changed."""
        unknown = sorted(set(changes) - set(self.columns))
        if unknown:
            raise XcoreError(f"unknown feature {unknown[0]!r}; the model reads: {', '.join(self.columns)}")
        edited = row.iloc[[0]].copy()
        for k, v in changes.items():
            edited[k] = pd.Series([v], index=edited.index).astype(edited[k].dtype, errors="ignore")
        labels, proba = self.run(edited)
        return {"prediction": str(labels[0]),
                "probabilities": {} if proba is None else dict(zip(self.classes, map(float, proba[0])))}

    def shapley(self, row: pd.DataFrame, background: pd.DataFrame, cls: str | None = None) -> np.ndarray:
        """Interventional Shapley values of P(`cls`) for one row (`exact_shapley` over the model function;
        beyond 12 features shap's KernelExplainer)."""
        if len(self.columns) > EXACT_FEATURES:
            return self._kernel_shap(row, background, cls)
        return exact_shapley(lambda frame: self.proba_of(frame, cls), row, background, self.columns)

    def _kernel_shap(self, row: pd.DataFrame, background: pd.DataFrame, cls: str | None) -> np.ndarray:
        # an optional extra with numba: only for the Kernel SHAP reference
        shap = import_optional("shap", f"SHAP values of more than {EXACT_FEATURES} features")
        cols = self.columns
        if not all(pd.api.types.is_numeric_dtype(background[c]) for c in cols):
            raise XcoreError(f"more than {EXACT_FEATURES} features with text columns: exact Shapley values are "
                             "too many coalitions and KernelExplainer needs numbers")

        def f(a: np.ndarray) -> np.ndarray:
            return self.proba_of(pd.DataFrame(a, columns=cols), cls)

        ex = shap.KernelExplainer(f, background[cols].to_numpy(dtype=float), seed=0)
        return np.asarray(ex.shap_values(row[cols].to_numpy(dtype=float), nsamples=2 * len(cols) + 2048,
                                         silent=True)).reshape(-1)

    def shap_explanation(self, table: pd.DataFrame, target: str, background: int = 50, seed: int = 0,
                         cls: str | None = None) -> Explanation:
        """The Shapley-value explanation of one row (``row 17``) of the model's probability for `cls`."""
        ix = _row_index(table, target)
        row = table.loc[[ix]]
        bg = table.drop(index=ix).sample(min(background, len(table) - 1), random_state=seed)
        phi = self.shapley(row, bg, cls)
        labels, proba = self.run(row)
        cls_name = self.positive if cls is None else str(cls)
        p = float(proba[0, self.classes.index(cls_name)]) if proba is not None else float("nan")
        order = np.argsort(-np.abs(phi), kind="stable")
        items = [ExplanationItem(kind="feature", text=f"{self.columns[j]} = {row[self.columns[j]].iloc[0]}",
                                 natural=f"{self.columns[j]} is {row[self.columns[j]].iloc[0]}", score=float(phi[j]),
                                 atoms=[self.columns[j]], direction=int(np.sign(phi[j])), effect=float(phi[j]),
                                 extras={"feature": self.columns[j]})
                 for j in order]
        return Explanation(target=target, target_text=f"{target}: your model predicts {labels[0]} "
                                                      f"(P({cls_name}) = {p:.3f})",
                           method="model:shap", prediction=p, prediction_kind="probability", items=items,
                           score_spec=SHAP_SCORE, meta={"class": cls_name, "background": int(len(bg)),
                                                        "base_value": float(p - phi.sum())})


def exact_shapley(f: Any, row: pd.DataFrame, background: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Interventional Shapley values of the model function `f` (a frame of rows -> one number per row) for
    one row: every coalition S of `cols` is valued by the mean of f over `background` rows with S's columns
    set to the row's values (one batched call of f over 2^k * |background| rows), then each feature's value
    is the weighted sum of its marginal changes (exact, no sampling)."""
    k = len(cols)
    masks = np.array(list(product((False, True), repeat=k)), dtype=bool)  # 2^k coalitions, bit j = column j
    nb = len(background)
    x = row[cols].iloc[0].to_numpy(dtype=object)
    bg = background[cols].to_numpy(dtype=object)
    big = np.where(np.repeat(masks, nb, axis=0), x[None, :], np.tile(bg, (len(masks), 1)))
    frame = pd.DataFrame(big, columns=cols)
    for c in cols:  # keep the table's dtypes (numbers stay numbers)
        if pd.api.types.is_numeric_dtype(background[c]):
            frame[c] = pd.to_numeric(frame[c], errors="coerce")
    values = np.asarray(f(frame), dtype=float).reshape(len(masks), nb).mean(axis=1)
    size = masks.sum(axis=1)
    weight = np.array([factorial(n) * factorial(k - n - 1) / factorial(k) for n in range(k)] + [0.0])
    phi = np.zeros(k)
    for j in range(k):  # coalitions without j and their partner with j (bit j has weight 2^(k-1-j))
        without = np.flatnonzero(~masks[:, j])
        phi[j] = float((weight[size[without]] * (values[without + 2 ** (k - 1 - j)] - values[without])).sum())
    return phi


def _classes_from(labels: np.ndarray, proba: np.ndarray) -> list[str]:
    """Class names of probability columns: the label predicted where each column is the largest."""
    out = []
    arg = proba.argmax(axis=1)
    for j in range(proba.shape[1]):
        hit = labels[arg == j]
        out.append(str(hit[0]) if len(hit) else str(j))
    return out


def _row_index(table: pd.DataFrame, target: str) -> Any:
    key = target[4:] if target.startswith("row ") else target
    for ix in table.index:
        if str(ix) == key:
            return ix
    raise XcoreError(f"{target!r} is not a row of the table")


def load_model_file(source: str | Path | tuple[str, bytes], dataset: "RelationalDataset",
                    drop: tuple[str, ...] = ()) -> OnnxTableModel:
    """An ONNX model of `dataset`'s table, checked: only ONNX, inputs that name the table's columns."""
    if isinstance(source, tuple):
        name, data = str(source[0]), bytes(source[1])
    else:
        name = str(source)
        p = Path(source)
        if not p.is_file():
            raise DataError("no such model file", file=name)
        if p.stat().st_size > MAX_BYTES:
            raise DataError(f"the model file is larger than {MAX_BYTES // 2**20} MiB", file=name)
        data = p.read_bytes()
    check_model_file(name, data)
    if dataset.tabular is None or dataset.label is None:
        raise DataError("a model file explains a table: load a table with a label column first (the model's "
                        "predictions of other data are given as a predictions file)", file=name)
    ort = _onnxruntime()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime's parse errors, wrapped at the boundary
        raise DataError(f"not a readable ONNX model: {str(e).splitlines()[0][:300]}", file=name) from None
    inputs = [InputSpec(i.name, str(i.type), tuple(i.shape)) for i in session.get_inputs()]
    table = dataset.tabular
    features = [str(c) for c in table.columns if c != dataset.label and c not in drop]
    meta = session.get_modelmeta().custom_metadata_map or {}
    columns, one = _match_inputs(inputs, features, table, meta, name)
    model = OnnxTableModel(name, session, inputs, columns, dataset.label, one)
    model.run(table.head(min(len(table), 50)))  # a first call: fails early, learns the class names
    return model


def _match_inputs(inputs: list[InputSpec], features: list[str], table: pd.DataFrame, meta: dict, file: str
                  ) -> tuple[list[str], bool]:
    """The table columns behind the model's inputs, or a DataError naming inputs and columns."""
    lower = {c.lower(): c for c in features}
    if len(inputs) == 1 and len(inputs[0].shape) == 2 and not isinstance(inputs[0].shape[1], str) \
            and inputs[0].shape[1] not in (None, 1):
        width = int(inputs[0].shape[1])
        named = [n.strip() for n in str(meta.get("feature_names", "")).split(",") if n.strip()]
        if named:
            missing = [n for n in named if n.lower() not in lower]
            if missing or len(named) != width:
                raise DataError(f"the model's metadata feature_names names {', '.join(named)}; "
                                + (f"not columns of the table: {', '.join(missing)}" if missing
                                   else f"but its input {inputs[0].name!r} has {width} columns")
                                + f" (the table's columns: {', '.join(features)})", file=file)
            return [lower[n.lower()] for n in named], True
        numeric = [c for c in features if pd.api.types.is_numeric_dtype(table[c])]
        if len(numeric) == width:
            return numeric, True
        raise DataError(f"the model takes one tensor {inputs[0].name!r} of {width} features, which does not match "
                        f"the table's columns ({', '.join(features)}; numeric: {', '.join(numeric) or 'none'}): "
                        "export with one input per column (named as the columns), or set the ONNX metadata "
                        "'feature_names' to the columns it reads, in order", file=file)
    missing = [i.name for i in inputs if i.name.lower() not in lower]
    if missing:
        raise DataError(f"the model's inputs {', '.join(repr(m) for m in missing)} are not columns of the table; "
                        f"its inputs: {', '.join(i.name for i in inputs)}; the table's columns: {', '.join(features)}",
                        file=file)
    return [lower[i.name.lower()] for i in inputs], False
