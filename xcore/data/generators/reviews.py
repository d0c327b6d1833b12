"""Synthetic restaurant reviews with planted explanations (the I-Explain paper's Yelp setting).

The generator and the annotation loader; the MLN rules of the setting (`review_rules`,
`true_weights`) and the sample writer live in `xcore.mln.reviews`.

Generative process (`generate_reviews`, fully seeded, vectorised):

1. Latent groups (think neighbourhoods): ``n_groups`` groups with leanings spread evenly over
   [-`group_scale`, `group_scale`] (in a seeded random order). Each user and each restaurant
   belongs to a uniformly drawn group and gets the latent *leaning* ``group leaning +
   N(0, individual_scale^2)``. Every review is written by a uniformly drawn user about a
   restaurant of the user's own group with probability `loyalty` (else any restaurant); its
   class is ``label ~ Bernoulli(sigmoid(user leaning + restaurant leaning + class_bias))``, so
   reviews of one user / one restaurant tend to share their class (homophily).
2. Words. A review's *tone* is its label, flipped with probability `tone_flip` (default 0; mixed
   or sarcastic reviews, where the words point the wrong way). Given the tone, each of the 20
   planted words of that tone appears independently with probability `p_planted`, each planted
   word of the other tone with `p_opposite`, and each of the 80 neutral words with `p_neutral`
   (class-independent). Reviews with few or mixed planted words are ambiguous, so a bag-of-words
   classifier is good but not perfect (about 84 % accuracy on the 300-review demo, 86 % with
   a few thousand reviews); the links add signal.
3. Links. For each review, up to `max_links` partners are drawn among the other reviews of the
   same user (``same_user``) and, separately, of the same restaurant (``same_restaurant``); the
   links are then made symmetric (both directions stored). Then ``noise_links`` x (number of
   such group links) random pairs of reviews from *different* users (resp. restaurants) are
   added as noise links (think of mis-attributed accounts), also in both directions.
4. A seeded random `train_fraction` of the reviews is training data (``positive(R)`` observed
   with its 0/1 label); the others are test reviews (``positive(R)`` a target, with its truth).

Annotation (the planted ground truth for explanations): `planted_words` maps the 40 planted
words to +1 / -1; a **true link** is a stored ``same_user`` (``same_restaurant``) link whose two
reviews have the same latent user (restaurant) AND the same class -- it really carries
homophily; noise links and in-group links between reviews of different classes are not true
links. Both directions of a true link are listed. `labels` holds every review's class.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.review_links import choose_restaurants, link_tables
from xcore.data.io import load_psl_folder
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError, XcoreError

POSITIVE_WORDS: tuple[str, ...] = (
    "great", "delicious", "friendly", "amazing", "fresh", "excellent", "tasty", "perfect",
    "wonderful", "attentive", "cozy", "generous", "recommend", "love", "fantastic", "flavorful",
    "welcoming", "crispy", "best", "lovely",
)
"""Planted positive words (drive ``positive``)."""

NEGATIVE_WORDS: tuple[str, ...] = (
    "awful", "rude", "bland", "terrible", "cold", "greasy", "slow", "dirty", "overpriced", "stale",
    "disappointing", "worst", "soggy", "noisy", "burnt", "salty", "horrible", "mediocre",
    "unfriendly", "avoid",
)
"""Planted negative words (drive ``!positive``)."""

NEUTRAL_WORDS: tuple[str, ...] = (
    "menu", "table", "ordered", "waiter", "dinner", "lunch", "kitchen", "plate", "chicken", "salad",
    "pasta", "pizza", "burger", "fries", "soup", "rice", "sauce", "dessert", "coffee", "tea",
    "wine", "beer", "drinks", "price", "bill", "tip", "reservation", "parking", "downtown", "street",
    "friday", "weekend", "evening", "night", "family", "friends", "group", "portion", "side",
    "appetizer", "entree", "bread", "cheese", "steak", "fish", "shrimp", "tacos", "noodles", "sushi",
    "bar", "patio", "counter", "booth", "staff", "owner", "chef", "server", "hostess", "visit",
    "order", "waited", "minutes", "hour", "seated", "came", "asked", "brought", "tried", "shared",
    "split", "took", "place", "spot", "location", "restaurant", "food", "meal", "dish", "special",
    "today",
)
"""Class-independent filler words."""

VOCABULARY: tuple[str, ...] = POSITIVE_WORDS + NEGATIVE_WORDS + NEUTRAL_WORDS
"""All words, planted positive first, then planted negative, then neutral."""

LINK_PREDICATES: tuple[str, ...] = ("same_user", "same_restaurant")
TARGET, WORD = "positive", "has_word"

DEFAULTS: dict[str, float] = {
    "reviews_per_user": 5.0, "reviews_per_restaurant": 8.0, "reviews_per_group": 60.0, "group_scale": 3.0,
    "individual_scale": 0.5, "loyalty": 0.85, "class_bias": 0.0,
    "tone_flip": 0.0, "p_planted": 0.15, "p_opposite": 0.04, "p_neutral": 0.07, "max_links": 3,
    "noise_links": 0.25, "train_fraction": 0.5,
}
"""Default knobs of `generate_reviews` (see the module docstring)."""


@dataclass(frozen=True)
class ReviewAnnotation:
    """Planted ground truth: word polarities, the links that carry homophily, every review's class."""

    planted_words: dict[str, int]
    """word -> +1 (drives positive) / -1 (drives negative); neutral words are absent."""
    true_links: frozenset[tuple[str, str, str]]
    """(predicate, review_a, review_b), both directions: in-group links between same-class reviews."""
    labels: dict[str, int]
    """review -> 0/1 true class (all reviews)."""

    def to_json(self) -> dict:
        """Plain-JSON form (sorted, so files are stable)."""
        return {"planted_words": dict(sorted(self.planted_words.items())),
                "true_links": [list(t) for t in sorted(self.true_links)],
                "labels": dict(sorted(self.labels.items()))}


@dataclass
class ReviewData:
    """A generated review dataset: the relational data, its annotation and the readable reviews."""

    dataset: RelationalDataset
    annotation: ReviewAnnotation
    docs: pd.DataFrame
    """One row per review: review, user, restaurant, label, split ("train"/"test"), text."""
    vocabulary: list[str]
    params: dict = field(default_factory=dict)
    """The generator call: n_reviews, seed and every knob."""
    link_predicates: tuple[str, ...] = LINK_PREDICATES


def review_schema(item_type: str = "review", links: Mapping[str, str] | None = None,
                  target_template: str = "{0} is a positive review") -> Schema:
    """Predicates of the review setting (``links``: link predicate -> template)."""
    links = links if links is not None else {"same_user": "{0} and {1} are by the same user",
                                             "same_restaurant": "{0} and {1} are about the same restaurant"}
    preds = [Predicate(WORD, 2, (item_type, "word"), closed=True,
                       template=f"{item_type} {{0}} contains '{{1}}'",
                       description="the text contains the word (observed evidence)")]
    preds += [Predicate(name, 2, (item_type, item_type), closed=True, template=t,
                        description="symmetric link (both directions stored)") for name, t in links.items()]
    preds.append(Predicate(TARGET, 1, (item_type,), closed=False, template=target_template,
                           description="the class: observed for training items, target for test items"))
    return Schema.of(preds)


# ---------------------------------------------------------------------- generation
def generate_reviews(n_reviews: int = 300, seed: int = 0, **knobs: float) -> ReviewData:
    """Generate `n_reviews` reviews with planted words and homophilous links (module docstring).

    Knobs (defaults in `DEFAULTS`): reviews_per_user, reviews_per_restaurant, reviews_per_group,
    group_scale, individual_scale, loyalty, class_bias, tone_flip, p_planted, p_opposite,
    p_neutral, max_links, noise_links, train_fraction. Vectorised: 3,000 reviews take well under
    a second.
    """
    k = _checked_knobs(n_reviews, knobs)
    n = int(n_reviews)
    rng = np.random.default_rng(seed)
    world = _plant(rng, n, k)
    label = world.label
    # 2. words
    tone = np.where(rng.random(n) < float(k["tone_flip"]), 1 - label, label)
    present = rng.random((n, len(VOCABULARY))) < word_probabilities(k)[tone]  # (2, V): row = tone
    order_keys = rng.random(present.shape)
    # 3. links
    width = len(str(n - 1))
    names = np.array([f"r{i:0{width}d}" for i in range(n)], dtype=object)
    link_frames, true_links = link_tables({"same_user": world.user, "same_restaurant": world.rest}, label, names,
                                          int(k["max_links"]), float(k["noise_links"]), rng)
    # 4. split
    n_train = min(max(int(round(float(k["train_fraction"]) * n)), 1), n - 1)
    is_train = np.zeros(n, dtype=bool)
    is_train[rng.permutation(n)[:n_train]] = True

    desc = (f"Synthetic restaurant reviews (seed {seed}): {n} reviews by {world.n_users} users about {world.n_rest} "
            f"restaurants in {world.n_groups} latent groups, {len(VOCABULARY)} words "
            f"({len(POSITIVE_WORDS)} planted positive, {len(NEGATIVE_WORDS)} planted negative), {len(link_frames['same_user']) // 2} same-user and "
            f"{len(link_frames['same_restaurant']) // 2} same-restaurant links (with noise links), "
            f"{n_train} training reviews.")
    dataset = RelationalDataset(review_schema(), _tables(names, present, label, link_frames, is_train),
                                name="reviews", description=desc)
    annotation = ReviewAnnotation(
        planted_words={**{w: 1 for w in POSITIVE_WORDS}, **{w: -1 for w in NEGATIVE_WORDS}},
        true_links=true_links,
        labels=dict(zip(names.tolist(), label.tolist())),
    )
    params = {"n_reviews": n, "seed": int(seed), **{key: k[key] for key in DEFAULTS}}
    return ReviewData(dataset, annotation, _docs(names, world, present, order_keys, is_train), list(VOCABULARY), params)


def _checked_knobs(n_reviews: int, knobs: Mapping[str, float]) -> dict[str, float]:
    """The knobs over `DEFAULTS`, or an XcoreError naming the first bad one."""
    unknown = set(knobs) - set(DEFAULTS)
    if unknown:
        raise XcoreError(f"generate_reviews: unknown option(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(DEFAULTS)}")
    if isinstance(n_reviews, bool) or int(n_reviews) != n_reviews or n_reviews < 4:
        raise XcoreError(f"generate_reviews: n_reviews must be an integer >= 4, got {n_reviews}")
    k = {**DEFAULTS, **knobs}
    for name in ("loyalty", "tone_flip", "p_planted", "p_opposite", "p_neutral", "train_fraction"):
        if not 0.0 <= float(k[name]) <= 1.0:
            raise XcoreError(f"generate_reviews: {name} must be in [0, 1], got {k[name]}")
    if not 0.0 < float(k["train_fraction"]) < 1.0:
        raise XcoreError("generate_reviews: train_fraction must be strictly between 0 and 1")
    for name in ("reviews_per_user", "reviews_per_restaurant", "reviews_per_group"):
        if not float(k[name]) > 0:
            raise XcoreError(f"generate_reviews: {name} must be > 0, got {k[name]}")
    for name in ("group_scale", "individual_scale", "noise_links", "max_links"):
        if not float(k[name]) >= 0:
            raise XcoreError(f"generate_reviews: {name} must be >= 0, got {k[name]}")
    return k


@dataclass(frozen=True)
class _Planted:
    """Step 1: each review's user, restaurant and class, from latent groups with leanings."""

    user: np.ndarray
    rest: np.ndarray
    label: np.ndarray
    n_users: int
    n_rest: int
    n_groups: int


def _plant(rng: np.random.Generator, n: int, k: Mapping[str, float]) -> _Planted:
    """Latent groups, leanings and classes (step 1 of the module docstring)."""
    n_users = max(2, int(round(n / float(k["reviews_per_user"]))))
    n_rest = max(2, int(round(n / float(k["reviews_per_restaurant"]))))
    n_groups = max(2, int(round(n / float(k["reviews_per_group"]))))
    group_lean = rng.permutation(np.linspace(-float(k["group_scale"]), float(k["group_scale"]), n_groups))
    user_group, rest_group = rng.integers(0, n_groups, n_users), rng.integers(0, n_groups, n_rest)
    user_lean = group_lean[user_group] + rng.normal(0.0, float(k["individual_scale"]), n_users)
    rest_lean = group_lean[rest_group] + rng.normal(0.0, float(k["individual_scale"]), n_rest)
    user = rng.integers(0, n_users, n)
    rest = choose_restaurants(user_group[user], rest_group, float(k["loyalty"]), rng)
    logit = user_lean[user] + rest_lean[rest] + float(k["class_bias"])
    label = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return _Planted(user, rest, label, n_users, n_rest, n_groups)


def _tables(names: np.ndarray, present: np.ndarray, label: np.ndarray, link_frames: Mapping[str, pd.DataFrame],
            is_train: np.ndarray) -> dict[str, dict[str, pd.DataFrame]]:
    """The dataset's tables: words, links, and the class observed on training reviews, held out on the rest."""
    rows, cols = np.nonzero(present)
    words = np.array(VOCABULARY, dtype=object)
    lab = label.astype(float)
    return {
        WORD: {"obs": pd.DataFrame({"a0": names[rows], "a1": words[cols], "value": 1.0})},
        **{p: {"obs": f} for p, f in link_frames.items()},
        TARGET: {"obs": pd.DataFrame({"a0": names[is_train], "value": lab[is_train]}),
                 "targets": pd.DataFrame({"a0": names[~is_train]}),
                 "truth": pd.DataFrame({"a0": names[~is_train], "value": lab[~is_train]})},
    }


def _docs(names: np.ndarray, world: _Planted, present: np.ndarray, order_keys: np.ndarray,
          is_train: np.ndarray) -> pd.DataFrame:
    """One row per review with readable text: its words in a random order."""
    rows, cols = np.nonzero(present)
    words = np.array(VOCABULARY, dtype=object)
    key = np.lexsort((order_keys[rows, cols], rows))
    text = pd.Series(words[cols[key]]).groupby(rows[key]).agg(" ".join)
    return pd.DataFrame({
        "review": names, "user": [f"u{i}" for i in world.user], "restaurant": [f"b{i}" for i in world.rest],
        "label": world.label, "split": np.where(is_train, "train", "test"),
        "text": text.reindex(np.arange(len(names)), fill_value="").to_numpy(dtype=object),
    })


def word_probabilities(knobs: Mapping[str, float] | None = None) -> np.ndarray:
    """(2, len(VOCABULARY)) probability of each word given the review's tone (row 0 negative, 1 positive)."""
    k = {**DEFAULTS, **(knobs or {})}
    hi, lo, mid = float(k["p_planted"]), float(k["p_opposite"]), float(k["p_neutral"])
    npos, nneg, nneu = len(POSITIVE_WORDS), len(NEGATIVE_WORDS), len(NEUTRAL_WORDS)
    pos_tone = np.r_[np.full(npos, hi), np.full(nneg, lo), np.full(nneu, mid)]
    neg_tone = np.r_[np.full(npos, lo), np.full(nneg, hi), np.full(nneu, mid)]
    return np.vstack([neg_tone, pos_tone])


# ---------------------------------------------------------------------- files
def json_lines_text(payload: Mapping[str, object]) -> str:
    """JSON with one line per entry of each top-level list or object (readable diffs, small files)."""
    parts = []
    for key, value in payload.items():
        if isinstance(value, dict) and value:
            inner = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            parts.append(f" {json.dumps(key)}: {{\n{inner}\n }}")
        elif isinstance(value, list) and value:
            inner = ",\n".join(f"  {json.dumps(v)}" for v in value)
            parts.append(f" {json.dumps(key)}: [\n{inner}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _read_annotation_json(folder: str | Path) -> tuple[dict, str]:
    file = Path(folder) / "annotation.json"
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(f"cannot read the annotation: {e.strerror or e}", file=str(file)) from None
    except UnicodeDecodeError:
        raise DataError("annotation is not UTF-8 text", file=str(file)) from None
    return _parse_annotation_text(text, str(file)), str(file)


def _parse_annotation_text(text: str, file: str) -> dict:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg} (column {e.colno})", file=file, line=e.lineno) from None
    if not isinstance(obj, dict):
        raise DataError("annotation must be a JSON object", file=file)
    return obj


def annotation_from_json(text: str, file: str = "annotation.json") -> ReviewAnnotation:
    """An annotation from JSON text (e.g. an upload); malformed content raises DataError naming `file`."""
    return _annotation_from_object(_parse_annotation_text(text, file), file)


def load_review_annotation(folder: str | Path) -> ReviewAnnotation:
    """Read annotation.json of a saved review sample; malformed content raises DataError naming it."""
    obj, file = _read_annotation_json(folder)
    return _annotation_from_object(obj, file)


def _annotation_from_object(obj: dict, file: str) -> ReviewAnnotation:
    for key in ("planted_words", "true_links", "labels"):
        if key not in obj:
            raise DataError(f"missing key {key!r}", file=file)
    pw, tl, lb = obj["planted_words"], obj["true_links"], obj["labels"]
    if not isinstance(pw, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v in (-1, 1)
                                           for v in pw.values()):
        raise DataError("planted_words must map words to +1 or -1", file=file)
    if not isinstance(tl, list) or not all(isinstance(t, list) and len(t) == 3 and all(isinstance(s, str) for s in t)
                                           for t in tl):
        raise DataError("true_links must be a list of [predicate, review_a, review_b] string triples", file=file)
    if not isinstance(lb, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v in (0, 1)
                                           for v in lb.values()):
        raise DataError("labels must map reviews to 0 or 1", file=file)
    return ReviewAnnotation(dict(pw), frozenset(tuple(t) for t in tl), dict(lb))


def load_review_sample(folder: str | Path) -> ReviewData:
    """A saved review sample (PSL folder + annotation.json) back as `ReviewData`."""
    folder = Path(folder)
    annotation = load_review_annotation(folder)
    obj, file = _read_annotation_json(folder)
    dataset = load_psl_folder(folder, name=folder.name)
    reviews, params = obj.get("reviews", {}), obj.get("generator", {})
    vocab = obj.get("vocabulary", list(VOCABULARY))
    if not isinstance(reviews, dict) or not isinstance(params, dict):
        raise DataError("'reviews' and 'generator' must be JSON objects", file=file)
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        raise DataError("'vocabulary' must be a list of words", file=file)
    try:
        docs = pd.DataFrame({
            "review": list(reviews), "user": [str(v["user"]) for v in reviews.values()],
            "restaurant": [str(v["restaurant"]) for v in reviews.values()],
            "label": [int(annotation.labels[r]) for r in reviews],
            "split": [str(v["split"]) for v in reviews.values()], "text": [str(v["text"]) for v in reviews.values()],
        })
    except (KeyError, TypeError) as e:
        raise DataError(f"'reviews' entries need user, restaurant, split and text, and a label: {e}",
                        file=file) from None
    return ReviewData(dataset, annotation, docs, vocab, dict(params))
