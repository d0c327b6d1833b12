"""`Explainer`: an explanation algorithm for a fitted model (PyG's Explainer/ExplainerAlgorithm split),
and the `Measurement` its interventions return."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from xcore.data.dataset import RelationalDataset
from xcore.explain.types import Explanation, ExplanationSet, ScoreSpec
from xcore.runtime import Progress

if TYPE_CHECKING:
    from xcore.methods.run import Run
    from xcore.methods.settings import Settings


class Explainer:
    """An explanation algorithm for a fitted model: a stable `name`, a `score_spec`, `supports`, `explain`.

    `settings_fields` names the fields of the method's `Settings` that are this explainer's own
    settings (defaults, bounds and help live there once); `prediction_column` is the column of the
    model's predictions its explanations explain (None when it explains another model, such as the
    bag-of-words classifier of LIME and SHAP). `measure` checks its items against the model by
    intervention (`xcore.methods.verify`); None where the score is not an effect.

    Attributes
    ----------
    name : str
        Stable registry name (``"esms:ground-rules"``, ``"plkb:decisive"``, ...), kept in files.
    title : str
        Human title shown on the pages.
    score_spec : ScoreSpec
        What the score means: its unit, range, and whether it has a direction.
    settings_fields : tuple of str
        Fields of the method's `Settings` that belong to this explainer (not part of the fit key).
    prediction_column : str or None
        Column of ``Run.predictions`` its explanations explain; None for another model's output.

    Notes
    -----
    Subclasses implement `explain(model, data=None, targets=None, progress=None)`: ``model`` is the
    fitted estimator (`supports` says whether it can be explained), ``data`` the data to explain its
    predictions on (None: the data it was fitted on), ``targets`` the target texts to explain (None: every
    prediction), ``progress`` a `xcore.runtime.Progress`. It returns an `ExplanationSet` passed through
    `finish`; the explain driver (`xcore.methods.driver`) validates it against the run's predictions.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    score_spec: ClassVar[ScoreSpec]
    settings_fields: ClassVar[tuple[str, ...]] = ()
    prediction_column: ClassVar[str | None] = "prediction"

    def settings_of(self, settings: "Settings") -> dict[str, Any]:
        """This explainer's own settings within a method's settings."""
        return settings.explainer_settings(self.settings_fields)

    def key(self, settings: "Settings") -> str:
        """A stable content hash of this explainer and its own settings (with the model key, a run's
        explanations are keyed by it)."""
        text = json.dumps(self.settings_of(settings), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{self.name}|{text}".encode()).hexdigest()[:24]

    def measure(self, run: "Run", data: RelationalDataset | None, explanation: Explanation,
                k: int) -> "Measurement | None":
        """The change of the explained prediction that each of the top-`k` items stands for, measured
        on the fitted model by intervention the way the method defines the item (remove the ground
        rule, zero the formula's weight, mask the features, re-infer); None: the score is not an
        effect, so there is nothing directional to check."""
        return None

    def supports(self, model: Any) -> str | None:
        """None if this explainer can explain `model`, else the reason it cannot."""
        return None

    def explain(self, model: Any, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:  # pragma: no cover
        """Explanations of the predictions of the fitted `model` for `targets` (see the class Notes).

        Parameters
        ----------
        model : Estimator
            The fitted estimator (or the object the method's run keeps as its model).
        data : RelationalDataset, optional
            The data whose predictions are explained; None for the data the model was fitted on.
        targets : list of str, optional
            Target texts (``"rating(u1, a2)"``, ``"row 17"``) to explain; None explains every prediction.
        progress : callable, optional
            ``progress(fraction, message)``; it raises `Cancelled` when the user cancels.
        """
        raise NotImplementedError

    def finish(self, explanations: ExplanationSet) -> ExplanationSet:
        """The set stamped with this explainer's registry name and score meaning on every member."""
        for e in explanations:
            e.method = self.name
            e.score_spec = self.score_spec
        return ExplanationSet(explanations.explanations, method=self.name, meta=explanations.meta,
                              score_spec=self.score_spec)


@dataclass
class Measurement:
    """What an intervention measured for the top items of one explanation: `change[i]` is the
    prediction with item i minus the prediction without it (NaN where it could not be measured), and
    changes within `tolerance` (solver or Monte Carlo precision) count as not moved."""

    change: Any
    tolerance: float
    how: str = ""
