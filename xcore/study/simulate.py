"""Synthetic participants drawn from known rating distributions: fills a study through the same
participant API real answers take (so the analysis can be checked against the planted difference)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from xcore.errors import ConfigError
from xcore.study.store import StudyStore


def check_distributions(dists: Mapping[str, Sequence[float]], codes: list[str], scale: int,
                        questions: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """Probability vectors over levels 1..scale (validated): one per condition code, plus optional
    ``CODE:question_id`` entries for questions answered differently (e.g. relational vs word parts)."""
    for code in codes:
        if code not in dists:
            raise ConfigError(f"no rating distribution for condition {code}", field="distributions")
    out = {}
    for key, probs in dists.items():
        code, _, qid = key.partition(":")
        if code not in codes or (qid and qid not in questions):
            raise ConfigError(f"unknown condition or question {key!r}", field="distributions")
        p = np.asarray(probs, dtype=float)
        if p.shape != (scale,) or (p < 0).any() or not np.isclose(p.sum(), 1.0):
            raise ConfigError(f"{key}: need {scale} non-negative probabilities summing to 1, got "
                              f"{list(p)}", field="distributions")
        out[key] = p
    return out


def simulate(store: StudyStore, study_id: str, n: int, distributions: Mapping[str, Sequence[float]],
             seed: int = 0, attention_failure: float = 0.0, mean_ms: float = 15_000) -> list[str]:
    """Enrol `n` participants and answer every screen: ratings from the condition's distribution (or the
    ``CODE:question_id`` one),
    attention checks right (or wrong with probability `attention_failure`), lognormal times. Returns the tokens."""
    study = store.study(study_id)
    scale = max(q.scale for q in study.questions if q.rated)
    probs = check_distributions(distributions, [c.code for c in study.conditions], scale,
                                [q.id for q in study.questions if q.rated])
    rng = np.random.default_rng(seed)
    tokens = store.add_participants(study_id, n)
    for token in tokens:
        session = store.participant(study_id, token)
        session.consent()
        careless = rng.random() < attention_failure
        for pos in range(session.total):
            screen = session.screen(pos)
            answers: dict[str, object] = {}
            for q in screen.questions:
                if q.kind == "attention":
                    answers[q.id] = q.expected if not careless else (q.expected % q.scale) + 1
                elif q.kind == "free_text":
                    answers[q.id] = "" if not q.required else "ok"
                else:
                    dist = probs.get(f"{screen.code}:{q.id}", probs[screen.code])
                    p = dist[:q.scale] / dist[:q.scale].sum()
                    answers[q.id] = int(rng.choice(q.scale, p=p)) + 1
            session.submit(pos, answers, int(rng.lognormal(np.log(mean_ms), 0.4)))
    return tokens
