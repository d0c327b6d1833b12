"""MLN side of the planted review setting: rules, generating weights and the sample writer.

The generator and the annotation loader live in `xcore.data.generators.reviews`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import (
    DEFAULTS,
    TARGET,
    VOCABULARY,
    WORD,
    ReviewData,
    json_lines_text,
    word_probabilities,
)
from xcore.data.io import write_psl_folder
from xcore.errors import XcoreError
from xcore.logic.ast import Atom, Constant, Literal, Rule, Variable
from xcore.logic.parser import parse_rules
from xcore.mln.learning import fit_pll, ground_training_world


# ---------------------------------------------------------------------- rules
def review_rules(word_weights: Mapping[str, float], link_weights: Mapping[str, float],
                 prior: float | None = None, target: str = TARGET, word_predicate: str = WORD) -> str:
    """MLN text: one ``w has_word(r, 'word') => positive(r)`` per word with a nonzero weight, one
    ``w link(r1, r2) ^ positive(r1) => positive(r2)`` per link predicate, and the optional prior
    ``w positive(r)``. Link predicate names are the keys of `link_weights` (e.g. ``cites``)."""
    rules: list[Rule] = []
    r, r1, r2 = Variable("r"), Variable("r1"), Variable("r2")
    for word, w in word_weights.items():
        w = _weight(w, f"word {word!r}")
        if w == 0.0:
            continue
        rules.append(Rule((Literal(Atom(word_predicate, (r, Constant(str(word))))),),
                          (Literal(Atom(target, (r,))),), w, dialect="mln"))
    for pred, w in link_weights.items():
        w = _weight(w, f"link {pred!r}")
        rules.append(Rule((Literal(Atom(str(pred), (r1, r2))), Literal(Atom(target, (r1,)))),
                          (Literal(Atom(target, (r2,))),), w, dialect="mln"))
    if prior is not None:
        rules.append(Rule((), (Literal(Atom(target, (r,))),), _weight(prior, "prior"), dialect="mln"))
    return "\n".join(rule.text("mln") for rule in rules) + ("\n" if rules else "")


def _weight(w: object, what: str) -> float:
    try:
        v = float(w)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise XcoreError(f"weight of {what} is not a number: {w!r}") from None
    if not math.isfinite(v):
        raise XcoreError(f"weight of {what} must be finite, got {v}")
    return v


def true_weights(data: ReviewData) -> tuple[dict[str, float], dict[str, float]]:
    """Generating weights, so a demo can run without learning (rounded to 4 decimals).

    Word weight = the log odds ratio ``log [p+ (1 - p-)] / [p- (1 - p+)]`` of the word's
    probabilities p+ / p- in positive / negative reviews (tone flips included): with words
    independent given the class, it is exactly the word's coefficient in the logistic posterior
    P(positive | words) (absent words' terms cancel between the symmetric planted lists); neutral
    words get 0. The planted links have no weight of their own (homophily comes from latent
    groups), so a link weight is the best MLN fit: the maximum pseudo-likelihood weight (with a
    prior, tiny L2) on the world where every review's label is known (oracle knowledge), with the
    word weights held at the values above.
    """

    p = word_probabilities(data.params)
    f = float(data.params.get("tone_flip", DEFAULTS["tone_flip"]))
    given_pos = (1 - f) * p[1] + f * p[0]
    given_neg = (1 - f) * p[0] + f * p[1]
    ww = np.log(given_pos * (1 - given_neg) / (given_neg * (1 - given_pos)))
    words = {w: round(float(v), 4) for w, v in zip(VOCABULARY, ww)}
    ds = data.dataset
    labels = pd.DataFrame({"a0": list(data.annotation.labels), "value": np.array(list(data.annotation.labels.values()),
                                                                               dtype=float)})
    tables = {p.name: {part: ds.table(p.name, part) for part in ("obs", "targets", "truth")} for p in ds.predicates}
    tables[TARGET] = {"obs": labels}
    full = RelationalDataset(ds.schema, tables, name=ds.name)
    links = list(data.link_predicates)
    nonzero = {w: v for w, v in words.items() if v != 0.0}
    rules = parse_rules(review_rules(nonzero, {p: 0.0 for p in links}, prior=0.0), dialect="mln")
    mln, x = ground_training_world(rules, full)
    init = np.array([float(r.weight) for r in rules])  # type: ignore[arg-type]
    free = np.zeros(len(rules), dtype=bool)
    free[len(nonzero):] = True
    theta = fit_pll(mln, x, init, free, l2=1e-3)
    return words, {p: round(float(theta[len(nonzero) + k]), 4) for k, p in enumerate(links)}


# ---------------------------------------------------------------------- files
SAMPLE_README = """\
# Restaurant reviews (synthetic, planted explanations)

**Generated data**, not real reviews: {summary}

Made by `xcore.data.generators.reviews.generate_reviews({n_reviews}, seed={seed})` and written with
`xcore.mln.reviews.write_review_sample`; regenerate with

```
{command}
```

Predicates: `has_word(review, word)` (the review contains the word), `same_user(r1, r2)` and
`same_restaurant(r1, r2)` (symmetric links, some of them random noise), `positive(review)`
(observed for training reviews; targets with truth for test reviews). `model.mln` holds the
Markov-logic rules with the generating weights (`true_weights`).

`annotation.json` (plain JSON) is the planted ground truth for judging explanations:
`planted_words` (word -> +1 positive / -1 negative), `true_links` ([predicate, review_a,
review_b], both directions: links within one latent user/restaurant between reviews of the same
class), `labels` (review -> 0/1), `reviews` (user, restaurant, split and text of each review),
`generator` (the arguments of the generator) and `vocabulary`. `load_review_sample` reads it all back.
The process is described in the docstring of `xcore/mln/reviews.py`.

**Citation**: the setting follows the Yelp review experiments of K. M. Al Farabi, S. Sarkhel,
S. Dey and D. Venugopal, "Interpretable Explanations for Probabilistic Inference in Markov Logic"
(I-Explain, 2021). No Yelp data is included.

**Licence**: generated by xcore and released under the project's licence (MIT).

**Changes**: none (generated data).
"""


def write_review_sample(data: ReviewData, folder: str | Path) -> Path:
    """Write `data` as a PSL folder plus annotation.json, model.mln and README.md."""

    path = Path(folder)
    ds = data.dataset
    ds_named = RelationalDataset(ds.schema, ds.tables, name=path.name, description=ds.description)
    write_psl_folder(ds_named, path)
    payload = data.annotation.to_json()
    payload["generator"] = dict(data.params)
    payload["vocabulary"] = list(data.vocabulary)
    docs = data.docs.set_index("review")
    payload["reviews"] = {r: {"user": str(row.user), "restaurant": str(row.restaurant), "split": str(row.split),
                              "text": str(row.text)} for r, row in docs.iterrows()}
    (path / "annotation.json").write_text(json_lines_text(payload), encoding="utf-8", newline="\n")
    words, links = true_weights(data)
    (path / "model.mln").write_text(review_rules(words, links), encoding="utf-8", newline="\n")
    call = f"generate_reviews({data.params['n_reviews']}, seed={data.params['seed']})"
    command = ('python -c "from xcore.data.generators.reviews import generate_reviews; '
               f"from xcore.mln.reviews import write_review_sample; write_review_sample({call}, "
               f"'sample_data/reviews_demo')\"")
    (path / "README.md").write_text(SAMPLE_README.format(summary=ds.description, n_reviews=data.params["n_reviews"],
                                                         seed=data.params["seed"], command=command),
                                    encoding="utf-8", newline="\n")
    return path


