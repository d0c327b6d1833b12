"""Who sees what, in which order: balanced Latin squares and per-participant plans from stored seeds."""

from __future__ import annotations

import numpy as np

from xcore.errors import ConfigError
from xcore.study.definition import Study


def balanced_latin_square(n: int) -> np.ndarray:
    """Williams' balanced Latin square: rows are condition orders; every condition takes every position
    equally often and every ordered pair of conditions is adjacent equally often (n rows for even n,
    2n rows for odd n: the square and its mirror)."""
    if n < 1:
        raise ConfigError(f"a Latin square needs at least one condition, got {n}", field="conditions")
    j = np.arange(n)
    # first row 0, 1, n-1, 2, n-2, ...: even positions count down from 0, odd ones up from 1
    first = np.where(j % 2 == 1, (j + 1) // 2, (n - j // 2) % n)
    rows = (first[None, :] + np.arange(n)[:, None]) % n
    if n % 2 == 1 and n > 1:
        rows = np.vstack([rows, rows[:, ::-1]])
    return rows


def participant_rng(study: Study, number: int) -> np.random.Generator:
    """The random generator of participant `number`, from the study's stored seed (reproducible)."""
    return np.random.default_rng([int(study.seed), int(number)])


def participant_plan(study: Study, number: int) -> list[tuple[str, str]]:
    """(item id, condition code) for each position of participant `number` (0-based enrolment order).

    Between subjects: participant i gets condition i mod k (balanced group sizes), items in a seeded
    random order. Within subjects: items in a seeded random order, the condition of position j is
    column j mod k of balanced-Latin-square row i mod rows, so condition orders are counterbalanced.
    """
    codes = [c.code for c in study.conditions]
    rng = participant_rng(study, number)
    order = rng.permutation(len(study.items))
    items = [study.items[i].id for i in order]
    if study.design == "between":
        code = codes[number % len(codes)]
        return [(item, code) for item in items]
    square = balanced_latin_square(len(codes))
    row = square[number % len(square)]
    return [(item, codes[row[j % len(codes)]]) for j, item in enumerate(items)]
