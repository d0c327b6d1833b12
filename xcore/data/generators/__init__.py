"""Synthetic relational datasets from known (planted) processes, for demos, tests and benchmarks.

Modules: `lastfm` (ratings), `reviews` (planted review words and links, with the annotation
loader), `friends_smokers`, `strings` (the PLKB paper's synthetic strings), `titanic` (a
Titanic-shaped table).
"""

from xcore.data.generators.friends_smokers import friends_smokers_dataset
from xcore.data.generators.lastfm import PRESETS as LASTFM_PRESETS
from xcore.data.generators.lastfm import lastfm_preset, lastfm_schema, make_lastfm, write_lastfm_demo
from xcore.data.generators.reviews import ReviewAnnotation, ReviewData, generate_reviews, load_review_sample
from xcore.data.generators.strings import SyntheticStrings, make_strings
from xcore.data.generators.titanic import make_titanic_like

__all__ = ["make_lastfm", "lastfm_preset", "lastfm_schema", "write_lastfm_demo", "LASTFM_PRESETS",
           "generate_reviews", "load_review_sample", "ReviewAnnotation", "ReviewData",
           "friends_smokers_dataset", "make_strings", "SyntheticStrings", "make_titanic_like"]
