"""A study definition: conditions, items with their explanations as rendered, questions and seeds.

A `Study` is a frozen, validated pydantic model, exported and imported as one JSON file
(format ``xcore.study``); once published its `digest()` pins exactly what participants see.
Conditions carry the researcher-only source (method, explainer, settings); the participant
screens built by `participant_screen` hold only the blinded code ("Explanation A").
"""

from __future__ import annotations

import hashlib
import json
import string
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from xcore.errors import ConfigError, XcoreError
from xcore.explain.types import ExplanationError, loads_strict
from xcore.methods.base import config_error
from xcore.optional_deps import import_optional

STUDY_FORMAT = "xcore.study"
STUDY_VERSION = 1
CODES = string.ascii_uppercase
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"

LIKERT5_AGREE: tuple[str, ...] = ("Strongly disagree", "Disagree", "Neither agree nor disagree", "Agree",
                                  "Strongly agree")
LIKERT5_USEFUL: tuple[str, ...] = ("Not at all useful", "Slightly useful", "Moderately useful", "Very useful",
                                   "Extremely useful")

RELATIONAL_KINDS = frozenset({"ground_rule", "ground_formula", "rule"})
"""Item kinds that are relational (rules and formulas over atoms); the others are non-relational."""


class StudyModel(BaseModel):
    """Frozen, strict base of every study model; a bad value raises `ConfigError` naming the field."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            first = e.errors()[0]
            inner = (first.get("ctx") or {}).get("error")
            if isinstance(inner, ConfigError):  # a nested model's error: name the full path to the field
                path = ".".join(str(p) for p in first.get("loc", ()))
                field = ".".join(x for x in (path, inner.field or "") if x)
                raise ConfigError(inner.problem, field=field) from None
            raise config_error(e, type(self).__name__) from None


class Question(StudyModel):
    """One question asked on an item screen.

    kinds: ``likert`` (a statement rated on the anchors), ``feature`` (how useful one part of the
    explanation is: its relational reasons, its non-relational reasons, or its reason ranked `rank`),
    ``free_text`` (optional comment) and ``attention`` (a check whose right answer is `expected`,
    asked on every `every`-th item).
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    kind: Literal["likert", "feature", "free_text", "attention"]
    text: str = Field(min_length=1, max_length=500)
    anchors: tuple[str, ...] = LIKERT5_AGREE
    part: Literal["relational", "non_relational", "rank"] | None = None
    rank: int | None = Field(default=None, ge=1, le=50)
    required: bool = True
    expected: int | None = None
    every: int = Field(default=1, ge=1, le=100)

    @model_validator(mode="after")
    def _consistent(self) -> "Question":
        if self.kind != "free_text" and not 2 <= len(self.anchors) <= 9:
            raise ValueError(f"question {self.id!r} needs 2 to 9 anchors")
        if self.kind == "feature" and self.part is None:
            raise ValueError(f"feature question {self.id!r} needs a part (relational, non_relational or rank)")
        if self.kind != "feature" and self.part is not None:
            raise ValueError(f"only feature questions have a part ({self.id!r} is {self.kind})")
        if self.part == "rank" and self.rank is None:
            raise ValueError(f"feature question {self.id!r} on a ranked reason needs its rank")
        if self.kind == "attention":
            if self.expected is None or not 1 <= self.expected <= len(self.anchors):
                raise ValueError(f"attention check {self.id!r} needs the expected answer (1..{len(self.anchors)})")
        elif self.expected is not None:
            raise ValueError(f"only attention checks have an expected answer ({self.id!r})")
        return self

    @property
    def scale(self) -> int:
        """Number of answer levels (0 for free text)."""
        return 0 if self.kind == "free_text" else len(self.anchors)

    @property
    def rated(self) -> bool:
        """True for questions whose answers are ratings to analyse (Likert and feature questions)."""
        return self.kind in ("likert", "feature")


CHECK_GRAPHS: ContextVar[bool] = ContextVar("xcore_study_check_graphs", default=True)


@contextmanager
def published_graphs() -> Iterator[None]:
    """Skip the Plotly check while loading a published definition (checked when it was built or imported;
    the stored digest pins it), so opening a large study stays fast."""
    token = CHECK_GRAPHS.set(False)
    try:
        yield
    finally:
        CHECK_GRAPHS.reset(token)


def plotly_figure_json(text: str) -> str:
    """`text` when it is a Plotly figure as JSON (an object with a list of traces, every property valid);
    ValueError otherwise, naming the first problem."""
    pio = import_optional("plotly.io")  # plotly: only when a definition carries a figure (xcore.study stays light)

    try:
        data = json.loads(text)
    except ValueError as e:
        raise ValueError(f"graph is not JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("data", []), list) or \
            not isinstance(data.get("layout", {}), dict) or not set(data) <= {"data", "layout", "frames"}:
        raise ValueError("graph must be a Plotly figure: a JSON object with 'data' (a list of traces) and 'layout'")
    try:
        pio.from_json(text, skip_invalid=False)
    except (ValueError, TypeError, KeyError) as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise ValueError(f"graph is not a valid Plotly figure: {first[:200]}") from None
    return text


class Reason(StudyModel):
    """One reason as participants see it: its words, its strength relative to the strongest reason shown
    (0..1), whether it is relational, and which way it pushes the prediction (+1, -1, 0 not given)."""

    natural: str
    score: float
    relational: bool
    direction: Literal[-1, 0, 1] = 0


class RenderedExplanation(StudyModel):
    """An explanation exactly as participants see it: a paragraph, ranked reasons and a graph."""

    text: str
    reasons: tuple[Reason, ...]
    score_caption: str = ""
    graph: str | None = None
    """The explanation graph as plotly figure JSON (None when the explanation has no graph)."""

    @field_validator("graph")
    @classmethod
    def _plotly_figure(cls, value: str | None) -> str | None:
        """Refuse a graph that is not a valid Plotly figure (on import, before it is published and frozen)."""
        if value is None or not CHECK_GRAPHS.get():
            return value
        return plotly_figure_json(value)

    def has_part(self, question: Question) -> bool:
        """True when this explanation has the part a feature question asks about."""
        if question.part == "relational":
            return any(r.relational for r in self.reasons)
        if question.part == "non_relational":
            return any(not r.relational for r in self.reasons)
        if question.part == "rank":
            return len(self.reasons) >= (question.rank or 1)
        return True


class StudyItem(StudyModel):
    """One prediction shown to participants, with its rendered explanation under every condition."""

    id: str = Field(pattern=ID_PATTERN)
    target: str
    prompt: str
    prediction: float | None = None
    truth: float | None = None
    correct: bool | None = None
    explanations: dict[str, RenderedExplanation]


class Condition(StudyModel):
    """One condition: its blinded code and (researcher only) where its explanations came from."""

    code: str = Field(pattern=r"^[A-Z]$")
    method: str
    explainer: str
    settings: dict[str, Any] = Field(default_factory=dict)
    source: str = ""

    @property
    def label(self) -> str:
        return f"Explanation {self.code}"


class Study(StudyModel):
    """A complete, frozen study definition (export it with `to_json`, import with `Study.from_json`)."""

    format: Literal["xcore.study"] = STUDY_FORMAT
    version: Literal[1] = STUDY_VERSION
    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=200)
    consent: str = Field(min_length=1, max_length=20_000)
    instructions: str = ""
    design: Literal["between", "within"] = "between"
    seed: int = Field(ge=0, le=2**63 - 1)
    conditions: tuple[Condition, ...] = Field(min_length=1, max_length=26)
    items: tuple[StudyItem, ...] = Field(min_length=1, max_length=500)
    questions: tuple[Question, ...] = Field(min_length=1, max_length=60)
    show_truth: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> "Study":
        codes = [c.code for c in self.conditions]
        if codes != list(CODES[:len(codes)]):
            raise ValueError(f"condition codes must be A, B, ... in order, got {codes}")
        for name, ids in (("item", [i.id for i in self.items]), ("question", [q.id for q in self.questions])):
            dup = sorted({x for x in ids if ids.count(x) > 1})
            if dup:
                raise ValueError(f"{name} id {dup[0]!r} is used twice")
        for item in self.items:
            if set(item.explanations) != set(codes):
                raise ValueError(f"item {item.id!r} must have one explanation per condition {codes}, "
                                 f"has {sorted(item.explanations)}")
        if self.design == "within" and len(self.items) < len(codes):
            raise ValueError(f"a within-subject study needs at least as many items as conditions ({len(codes)})")
        return self

    # ------------------------------------------------------------------ file form
    def to_json(self, indent: int | None = 1) -> str:
        """The definition file's text (canonical key order, so equal studies give equal text)."""
        return json.dumps(self.model_dump(mode="json"), indent=indent, sort_keys=True, allow_nan=False)

    def digest(self) -> str:
        """SHA-256 of the canonical JSON: what participants see is pinned by this value."""
        return hashlib.sha256(self.to_json(indent=None).encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str | bytes) -> "Study":
        """A study from its definition file, validated; bad files raise `ConfigError`/`XcoreError`."""
        try:
            data = loads_strict(text, "study definition")
        except ExplanationError as e:
            raise XcoreError(str(e)) from None
        if not isinstance(data, dict):
            raise ConfigError("a study definition must be a JSON object", field="study")
        if data.get("format") != STUDY_FORMAT:
            raise ConfigError(f"not an xcore study definition (format must be {STUDY_FORMAT!r})", field="format")
        return cls(**data)

    # ------------------------------------------------------------------ lookups
    def item(self, item_id: str) -> StudyItem:
        for it in self.items:
            if it.id == item_id:
                return it
        raise XcoreError(f"study {self.id!r} has no item {item_id!r}")

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise XcoreError(f"study {self.id!r} has no question {question_id!r}")

    def screen_questions(self, item_id: str, code: str, position: int) -> list[Question]:
        """The questions asked on one screen: attention checks on every `every`-th position, feature
        questions only when the explanation has that part."""
        exp = self.item(item_id).explanations[code]
        out = []
        for q in self.questions:
            if q.kind == "attention" and (position + 1) % q.every != 0:
                continue
            if q.kind == "feature" and not exp.has_part(q):
                continue
            out.append(q)
        return out

    def participant_screen(self, item_id: str, code: str, position: int) -> dict[str, Any]:
        """Everything one participant screen shows, and nothing else (no method, explainer or settings)."""
        item = self.item(item_id)
        exp = item.explanations[code]
        return {
            "position": position, "total": len(self.items), "label": f"Explanation {code}",
            "prompt": item.prompt, "prediction": item.prediction,
            "truth": item.truth if self.show_truth else None,
            "text": exp.text, "score_caption": exp.score_caption, "graph": exp.graph,
            "reasons": [r.model_dump() for r in exp.reasons],
            "questions": [q.model_dump(mode="json", exclude={"expected"})
                          for q in self.screen_questions(item_id, code, position)],
        }


# ---------------------------------------------------------------------- question templates
def explanation_satisfaction_scale() -> tuple[Question, ...]:
    """The Explanation Satisfaction Scale (Hoffman, Mueller, Klein & Litman 2018), 5-point agreement items."""
    texts = [
        ("ess_understand", "From the explanation, I understand how the model works."),
        ("ess_satisfying", "This explanation of how the model works is satisfying."),
        ("ess_detail", "This explanation of how the model works has sufficient detail."),
        ("ess_complete", "This explanation of how the model works seems complete."),
        ("ess_use", "This explanation of how the model works tells me how to use it."),
        ("ess_useful", "This explanation of how the model works is useful to my goals."),
        ("ess_accuracy", "This explanation shows me how accurate the model is."),
        ("ess_trust", "This explanation lets me judge when I should trust and not trust the model."),
    ]
    return tuple(Question(id=i, kind="likert", text=t, anchors=LIKERT5_AGREE) for i, t in texts)


def iexplain_feature_usefulness() -> tuple[Question, ...]:
    """The I-Explain paper's usability ratings: usefulness of the relational and of the non-relational
    (word) parts of each explanation on a 5-point scale (Usability section, Fig. 3)."""
    return (
        Question(id="useful_relational", kind="feature", part="relational", anchors=LIKERT5_USEFUL,
                 text="How useful are the relational parts of this explanation (rules and formulas over related facts)?"),
        Question(id="useful_non_relational", kind="feature", part="non_relational", anchors=LIKERT5_USEFUL,
                 text="How useful are the non-relational parts of this explanation (single words or features)?"),
    )


def top_reason_usefulness(k: int = 3) -> tuple[Question, ...]:
    """Per-reason ratings: how useful is the reason ranked 1..k."""
    return tuple(Question(id=f"useful_reason_{r}", kind="feature", part="rank", rank=r, anchors=LIKERT5_USEFUL,
                          text=f"How useful is reason {r} of this explanation?") for r in range(1, k + 1))


def attention_check(every: int = 4) -> Question:
    """An attention check asked on every `every`-th item: the right answer is "Agree"."""
    return Question(id="attention", kind="attention", every=every, anchors=LIKERT5_AGREE, expected=4,
                    text="To show you are reading carefully, please select \"Agree\" for this statement.")


def comment_question() -> Question:
    return Question(id="comment", kind="free_text", required=False,
                    text="Anything else about this explanation? (optional)")


TEMPLATES: dict[str, Any] = {
    "Explanation Satisfaction Scale (8 items)": explanation_satisfaction_scale,
    "I-Explain: usefulness of relational and non-relational parts": iexplain_feature_usefulness,
    "Usefulness of each of the top 3 reasons": top_reason_usefulness,
    "Attention check (every 4th item)": lambda: (attention_check(),),
    "Free-text comment": lambda: (comment_question(),),
}
"""Question templates the Study page offers, by title."""
