"""The lifted-rule explainer: a target's label rules (one per cluster), each saying whether it fires."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.methods.base import Explainer
from xcore.nlil.estimator import RULE_SCORE, NLILEstimator
from xcore.runtime import Progress

RULES = "nlil:rules"


def prediction_rows(model: NLILEstimator, data: RelationalDataset | None, targets: list[str] | None,
                    limit: int) -> tuple[list[str], pd.DataFrame]:
    """(the targets to explain: `targets`, else the first `limit` targets of `data`; their predictions by
    target, those outside `data` predicted from their text)."""
    preds = model.predict(data)
    wanted = list(preds["target"][:limit]) if targets is None else list(targets)
    missing = [t for t in wanted if t not in set(preds["target"])]
    if missing:
        preds = pd.concat([preds, model.predict_atoms(missing)], ignore_index=True)
    return wanted, preds.set_index("target")


def fired_rules(model: NLILEstimator, wanted: list[str], heads: np.ndarray) -> dict[str, np.ndarray]:
    """Target -> whether each cluster rule of its head fires, one DuckDB execution per head."""
    fired: dict[str, np.ndarray] = {}
    for h in dict.fromkeys(heads):
        mine = [t for t, hh in zip(wanted, heads) if hh == h]
        kb, lr = model.kbs_[h], model.labels_[h]
        frame = pd.concat([model.one(h, t).frame(kb) for t in mine], ignore_index=True)
        flags = kb.store().fires(lr.rules, frame)
        fired.update({t: flags[i] for i, t in enumerate(mine)})
    return fired


class RuleExplainer(Explainer):
    """A target's label rules (one per cluster), ranked by precision, each saying whether it fires for it."""

    name = RULES
    title = "Lifted rules per label (m-NLIL)"
    score_spec = RULE_SCORE
    settings_fields = ("explain_targets",)

    def supports(self, model: object) -> str | None:
        if not isinstance(model, NLILEstimator):
            return "explains m-NLIL models only"
        return None if model.is_fitted() else "the model is not fitted"

    def explain(self, model: NLILEstimator, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:
        model.check_fitted()
        wanted, rows = prediction_rows(model, data, targets, model.settings.explain_targets)
        table = model.rule_frame().set_index(["head", "cluster"])
        heads = rows.loc[wanted, "head"].to_numpy() if wanted else np.array([], dtype=object)
        fired = fired_rules(model, wanted, heads)
        exps = []
        for t, h in zip(wanted, heads):
            lr, f = model.labels_[h], fired[t]
            items = []
            for c, rule in enumerate(lr.rules):
                row = table.loc[(h, str(c))]
                items.append(ExplanationItem(
                    kind="rule", text=rule.text, score=float(row["precision"]),
                    natural=f"{'fires' if f[c] else 'does not fire'}: {rule.text}",
                    extras={"cluster": c, "fires": bool(f[c]), "recall": float(row["recall"]),
                            "support": int(row["support"]), "members": int(row["members"])}))
            which = np.flatnonzero(f)
            text = f"{t}: rule of cluster {which[0]} fires" if len(which) else f"{t}: no rule fires"
            truth = rows.loc[t, "truth"]
            exps.append(Explanation(target=t, target_text=text, prediction=float(rows.loc[t, "prediction"]),
                                    prediction_kind="probability",
                                    truth=None if pd.isna(truth) else float(truth), items=items))
        return self.finish(ExplanationSet(exps, method=self.name))
