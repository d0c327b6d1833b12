"""User-study mode: blinded explanation studies, stored safely, and their analysis.

- `definition`: the frozen `Study` (conditions, items with rendered explanations, questions, seeds),
  exported/imported as one JSON file; question templates (Explanation Satisfaction Scale, I-Explain's
  per-part usefulness ratings, attention checks).
- `build`: conditions from runs (`xcore.methods.Run`, in memory or from bundles), item selection,
  rendering blind by construction (each reason's words, direction and relative strength; one caption).
- `design`: balanced Latin squares and per-participant plans from stored seeds.
- `store`: SQLAlchemy Core storage (SQLite WAL by default), hashed tokens, protected append-only tables,
  reads that never wait behind a writer, read-only opening of archived copies.
- `access`: the researcher key (minimum length, constant-time compare, rate limit and lockouts).
- `export`: CSV exports with formula cells neutralised.
- `analysis` / `report`: tests, Student-t intervals, diverging bars, one-file HTML report.
- `simulate`: synthetic participants from known distributions; `cli`: `xcore study ...` (also
  `python -m xcore.study`), including `serve`, the participant-only server.
"""

from xcore.study.access import configured_key, key_matches
from xcore.study.analysis import StudyAnalysis, analyse
from xcore.study.build import ConditionSource, build_study, candidate_targets, pick_items, render
from xcore.study.definition import TEMPLATES, Condition, Question, Study, StudyItem
from xcore.study.design import balanced_latin_square, participant_plan
from xcore.study.simulate import simulate
from xcore.study.store import (
                               AccessDenied,
                               ParticipantSession,
                               ReplayRejected,
                               StudyClosed,
                               StudyError,
                               StudyStore,
                               SubmissionRejected,
)

__all__ = ["AccessDenied", "Condition", "ConditionSource", "ParticipantSession", "Question", "ReplayRejected",
           "Study", "StudyAnalysis", "StudyClosed", "StudyError", "StudyItem", "StudyStore", "SubmissionRejected",
           "TEMPLATES", "analyse", "balanced_latin_square", "build_study", "candidate_targets", "configured_key",
           "key_matches", "participant_plan", "pick_items", "render", "simulate"]
