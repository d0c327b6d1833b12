"""What an explanation's scores mean (`ScoreSpec`): label, meaning, sign, unit, direction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xcore.explain.json_checks import ExplanationError, check_bool, check_keys, check_string


@dataclass(frozen=True)
class ScoreSpec:
    """What an explanation's scores mean: a short label, a sentence, whether the sign matters, a unit.

    Pages caption every score with `caption()`; the study page and reports read it from the JSON.
    """

    label: str
    measures: str
    signed: bool = False
    """The score's sign is the item's direction (Shapley values, LIME/SHAP coefficients, forces)."""
    unit: str = ""
    directed: bool = True
    """Items carry a direction at all; False for scores such as fidelity, coverage or precision."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", check_string(self.label, "score label"))
        object.__setattr__(self, "measures", check_string(self.measures, "score meaning"))
        object.__setattr__(self, "signed", check_bool(self.signed, "score signed flag"))
        object.__setattr__(self, "unit", check_string(self.unit, "score unit"))
        object.__setattr__(self, "directed", check_bool(self.directed, "score directed flag"))
        if self.signed and not self.directed:
            raise ExplanationError(f"score {self.label!r}: a signed score gives its items a direction")

    def caption(self) -> str:
        """One sentence for a chart caption from this spec alone: label, meaning, how direction is shown, unit."""
        if self.signed:
            sign = "Its sign is the direction: positive pushes the prediction up, negative pushes it down."
        elif self.directed:
            sign = ("Larger means more influence; the score has no sign of its own, so each reason's direction "
                    "(up or down) is shown by its colour and its words.")
        else:
            sign = "Larger means more influence; this score has no direction (it says neither up nor down)."
        unit = f" Unit: {self.unit}." if self.unit else ""
        return f"Score {self.label}: {self.measures} {sign}{unit}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "measures": self.measures, "signed": self.signed, "unit": self.unit,
                "directed": self.directed}

    @classmethod
    def from_dict(cls, data: Any, where: str = "score spec") -> "ScoreSpec":
        data = check_keys(data, where, required=("label", "measures"), optional=("signed", "unit", "directed"))
        return cls(**data)
