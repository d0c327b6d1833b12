"""The Markov-logic explanation workflow behind the I-Explain page, usable from scripts and notebooks.

    setting = detect_setting(dataset)                  # target, word and link predicates, object type
    model = MLNModel(rules).ground(dataset).infer("gibbs", n_samples=1000, seed=0)
    run = run_explainers(model, dataset, setting, ExplainSettings(C=0.2, S=0.5, T=10))
    run.explanations["I-Explain"]["positive(r0007)"]  # one Explanation per method and query
    evaluation_table(run, annotation)                 # xcore.mln.run_evaluation: precision@5, Top-Exp-Acc, ...

Methods: I-Explain (embedding coalitions + CEMC), M-Explain (importance on the full network),
R-Explain (random coalitions of the same sizes), and, when the data has word evidence, LIME and
SHAP on a bag-of-words logistic regression (the paper's baselines).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.generators.reviews import ReviewAnnotation, load_review_annotation
from xcore.data.samples import list_samples
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationSet
from xcore.mln.evaluation import LINK_PREDICATES, WORD_PREDICATES, formula_kind
from xcore.mln.gibbs import GibbsResult
from xcore.mln.iexplain import IExplainer
from xcore.mln.importance import FormulaTexts, explain_atom, importance_frame
from xcore.mln.mcsat import run_sampler
from xcore.mln.model import MLNModel
from xcore.mln.reviews import review_rules
from xcore.mln.rexplain import RExplainer
from xcore.mln.synthetic import FRIENDS_SMOKERS_RULES
from xcore.mln.word_baselines import BagOfWordsClassifier, lime_explain_all, shap_explain_all
from xcore.runtime import Progress

METHODS: tuple[str, ...] = ("I-Explain", "M-Explain", "R-Explain", "LIME", "SHAP")
"""Every explanation method the workflow runs (LIME and SHAP need word evidence)."""
WORD_METHODS: tuple[str, ...] = ("LIME", "SHAP")


@dataclass(frozen=True)
class TextSetting:
    """What the data looks like: the query predicate, its word and link evidence, the object type."""

    target: str
    domain_type: str
    word_predicate: str | None = None
    link_predicates: tuple[str, ...] = ()

    @property
    def has_words(self) -> bool:
        return self.word_predicate is not None


@dataclass(frozen=True)
class ExplainSettings:
    """Parameters of one explanation run (all methods share the seed and the Gibbs options)."""

    methods: tuple[str, ...] = METHODS
    C: float = 0.2
    S: float = 0.5
    T: int = 10
    top_k: int = 10
    n_samples: int | None = None
    """Gibbs samples per chain of the full network (M-Explain) and the budget the coalitions share;
    None: those of the model's own inference run (1000 when it was exact)."""
    burn_in: int | None = None
    n_chains: int | None = None
    sampler: str = "auto"
    """"gibbs", "mcsat" or "auto" (`xcore.mln.mcsat.choose_sampler`, decided per network: the full
    network and every coalition)."""
    lime_samples: int = 1000
    aggregation: str = "exact_footrule"
    """"exact_footrule" (CEMC's weighted-footrule objective solved exactly; never worse than CEMC,
    and about 100x faster per query) or "cemc" (the paper's stochastic search)."""
    work: str = "equal"
    """"equal": M-Explain runs these Gibbs options on the full network and I-/R-Explain's
    coalitions together make the same number of atom updates; "per_coalition": every coalition runs
    them (the paper; T coalitions of about S-sized networks then sample several times more)."""
    seed: int = 0

    def gibbs_options(self) -> dict:
        """Sampling options without a seed (each coalition draws its own from the explainer's seed);
        unset ones are left out (Gibbs defaults)."""
        opts = {"n_samples": self.n_samples, "burn_in": self.burn_in, "n_chains": self.n_chains,
                "sampler": self.sampler}
        return {k: v for k, v in opts.items() if v is not None}

    def resolved(self, model: MLNModel) -> "ExplainSettings":
        """These settings with unset sampling options taken from the model's own Gibbs run (so the
        default comparison reuses it, at equal and explicit work), else the Gibbs defaults."""
        res = model.result_
        own = {"n_samples": res.n_samples, "burn_in": res.burn_in, "n_chains": res.n_chains} \
            if isinstance(res, GibbsResult) else {"n_samples": 1000, "burn_in": 200, "n_chains": 4}
        return replace(self, **{k: v for k, v in own.items() if getattr(self, k) is None})

    def model_gibbs_options(self) -> dict:
        """The full network's sampling options (M-Explain, the model's inference), with the seed."""
        return {**self.gibbs_options(), "seed": self.seed}


@dataclass
class ExplainerRun:
    """Explanations of every query by every method, with the fitted explainers and timings."""

    model: MLNModel
    setting: TextSetting
    settings: ExplainSettings
    explanations: dict[str, ExplanationSet]
    iexplainer: IExplainer | None = None
    rexplainer: RExplainer | None = None
    classifier: BagOfWordsClassifier | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    def explanation(self, method: str, atom: str) -> Explanation:
        """The explanation of query `atom` (text, e.g. ``positive(r0007)``) by `method`."""
        if method not in self.explanations:
            raise XcoreError(f"{method} was not run; methods run: {', '.join(self.explanations)}")
        return self.explanations[method][atom]


# ---------------------------------------------------------------------- the data
def query_predicates(dataset: RelationalDataset) -> list[str]:
    """Open predicates with query atoms, of any arity (I-, R- and M-Explain explain them all):
    ``positive`` first, then a loaded program's declared query predicates, then unary ones."""
    names = [p for p in dataset.predicates if not p.closed and len(dataset.targets(p.name))]
    order = sorted(names, key=lambda p: (p.name != "positive", p.description != "query predicate", p.arity != 1))
    return [p.name for p in order]


def object_type(dataset: RelationalDataset, predicate: str) -> str:
    """The argument type of `predicate` whose objects I-Explain clusters and samples into coalitions:
    a unary predicate's type; for an n-ary one the argument type with the most constants (first
    position on ties), e.g. ``paper`` for ``category(paper, cat)`` and ``person`` for
    ``advisedBy(person, person)``: sampling a small type (ten categories) would barely cut the network."""
    types = dataset.predicate(predicate).types
    sizes = [len(dataset.constants(t)) for t in types]
    return types[max(range(len(types)), key=lambda i: (sizes[i], -i))]


def detect_setting(dataset: RelationalDataset, target: str | None = None) -> TextSetting:
    """Find the query predicate (an open predicate with query atoms, of any arity; `target` to
    choose, else `query_predicates`' first), the object type whose objects form coalitions
    (`object_type`), its word predicate (unary queries only: closed, binary, first argument the
    query's type, second another type) and link predicates (closed, binary, both arguments of the
    object type)."""
    candidates = query_predicates(dataset)
    if target is not None:
        if target not in candidates:
            raise XcoreError(f"{target!r} is not an open predicate with query atoms in {dataset.name!r}")
        candidates = [target]
    if not candidates:
        raise XcoreError(f"dataset {dataset.name!r} has no open predicate with query atoms to explain "
                         "(I-Explain explains queries such as positive(review) or advisedBy(x, y))")
    query = dataset.predicate(candidates[0])
    obj = object_type(dataset, query.name)
    binary = [p for p in dataset.predicates if p.arity == 2 and p.closed]
    words = [p for p in binary if p.types[0] == obj and p.types[1] != obj] if query.arity == 1 else []
    word = next((p for p in words if "word" in p.name), words[0] if words else None)
    links = tuple(p.name for p in binary if p.types == (obj, obj))
    return TextSetting(query.name, obj, word.name if word is not None else None, links)


def sample_folder(dataset: RelationalDataset) -> Path | None:
    """The bundled sample folder a dataset was loaded from (by name), if any; a part of a sample
    (``reviews_demo (train)``, as `xcore.data.splits` names them) is found by the sample's name."""
    name = dataset.name
    while True:
        found = next((s.path for s in list_samples() if s.name == name), None)
        base = re.sub(r" \([^()]*\)$", "", name)
        if found is not None or base == name:
            return found
        name = base


def find_annotation(dataset: RelationalDataset) -> ReviewAnnotation | None:
    """The planted annotation next to a bundled sample (annotation.json), if there is one."""
    folder = sample_folder(dataset)
    if folder is None or not (folder / "annotation.json").is_file():
        return None
    return load_review_annotation(folder)


def starting_rules(dataset: RelationalDataset, setting: TextSetting | None = None) -> str:
    """Rules to start from: the sample's model.mln, else word + link formulas with zero weights
    (to be learned), else the friends-and-smokers rules when they fit, else empty."""
    if dataset.rules and dataset.description.startswith("Markov logic program"):
        return "\n".join(dataset.rules)  # a loaded .mln program
    folder = sample_folder(dataset)
    if folder is not None and (folder / "model.mln").is_file():
        return (folder / "model.mln").read_text(encoding="utf-8")
    if setting is not None and setting.has_words:
        table = dataset.observations(setting.word_predicate)
        words = sorted(pd.unique(table["a1"].astype(str)))
        return review_rules({w: 0.001 for w in words}, {p: 0.001 for p in setting.link_predicates},
                            target=setting.target, word_predicate=setting.word_predicate)
    if {"smokes", "cancer", "friends"} <= set(dataset.schema.names):
        return FRIENDS_SMOKERS_RULES
    return ""


# ---------------------------------------------------------------------- explaining
def run_explainers(model: MLNModel, dataset: RelationalDataset, setting: TextSetting,
                   settings: ExplainSettings = ExplainSettings(), progress: Progress | None = None) -> ExplainerRun:
    """Explain every query of a grounded, inferred `model` with each method of `settings.methods`."""
    if model.mln_ is None or model.result_ is None:
        raise XcoreError("ground the model and run inference before explaining")
    unknown = [m for m in settings.methods if m not in METHODS]
    if unknown:
        raise XcoreError(f"unknown method {unknown[0]!r}; use any of {', '.join(METHODS)}")
    methods = [m for m in settings.methods if m in available_methods(setting)]
    if "R-Explain" in methods and "I-Explain" not in methods:
        methods.insert(methods.index("R-Explain"), "I-Explain")  # R-Explain is sized like I-Explain
    report = progress or (lambda f, m: None)
    settings = settings.resolved(model)
    run = ExplainerRun(model, setting, settings, {})
    queries = [a for a in model.mln_.atoms_text().tolist() if a.startswith(setting.target + "(")]
    share = 1.0 / max(len(methods), 1)
    for i, method in enumerate(methods):
        base = i * share
        report(base, f"{method}…")
        t = time.perf_counter()
        def sub(f, msg, base=base):
            return report(base + share * 0.8 * f, f"{method}: {msg}")
        if method == "M-Explain":
            run.explanations[method], sampling = m_explain(model, queries, settings, progress=sub)
            t -= sampling  # count the full network's sampling too, even when the model's run is reused
        elif method == "I-Explain":
            run.iexplainer = IExplainer(C=settings.C, S=settings.S, T=settings.T, top_k=settings.top_k,
                                        gibbs_options=settings.gibbs_options(), seed=settings.seed,
                                        aggregation=settings.aggregation, work=settings.work)
            run.iexplainer.fit(model, setting.domain_type, progress=sub)
            run.explanations[method] = _only(run.iexplainer.explain_all(), queries, "I-Explain")
        elif method == "R-Explain":
            run.rexplainer = RExplainer(top_k=settings.top_k, gibbs_options=settings.gibbs_options(),
                                        seed=settings.seed, match=run.iexplainer, aggregation=settings.aggregation,
                                        work=settings.work)
            run.rexplainer.fit(model, setting.domain_type, progress=sub)
            run.explanations[method] = _only(run.rexplainer.explain_all(), queries, "R-Explain")
        else:
            if run.classifier is None:
                run.classifier = BagOfWordsClassifier(seed=settings.seed, word_predicate=setting.word_predicate,
                                                      label_predicate=setting.target).fit(dataset)
            reviews = [query_object(setting, q) for q in queries]
            if method == "LIME":
                run.explanations[method] = lime_explain_all(run.classifier, reviews, n_samples=settings.lime_samples,
                                                            top_k=settings.top_k, seed=settings.seed, progress=sub)
            else:
                run.explanations[method] = shap_explain_all(run.classifier, reviews, top_k=settings.top_k)
        run.seconds[method] = time.perf_counter() - t
    report(1.0, "done")
    return run


def m_explain(model: MLNModel, queries: Sequence[str], settings: ExplainSettings,
              progress: Progress | None = None) -> tuple[ExplanationSet, float]:
    """M-Explain of `queries` with an explicit sampling budget: the model's own Gibbs run when it
    used `settings`' options (reused), else a fresh run of them on the full network (the model is
    left as it is); exact results are used as they are. Returns the set (meta: work) and the
    seconds of sampling reused from the model (to add to M-Explain's time)."""

    res, mln = model.result_, model.mln_
    opts = settings.model_gibbs_options()
    reused = not isinstance(res, GibbsResult) or (
        (res.n_samples, res.burn_in, res.n_chains) == (opts["n_samples"], opts["burn_in"], opts["n_chains"])
        and getattr(model, "options_", {}).get("seed", 0) == opts["seed"]
        and opts.get("sampler", "auto") in ("auto", res.sampler))
    if reused:
        exps = [model.explain(a, top_k=settings.top_k) for a in queries]
        sampling = float(res.seconds) if isinstance(res, GibbsResult) else 0.0
    else:
        res = run_sampler(mln, progress=progress, **opts)
        if model._texts is None:
            model._texts = FormulaTexts(mln)
        texts, frame = model._texts, importance_frame(mln, res)
        exps = [explain_atom(mln, res, model.atom_column(a), top_k=settings.top_k, method=f"M-Explain ({res.sampler})",
                             texts=texts, frame=frame) for a in queries]
        sampling = 0.0
    gib = isinstance(res, GibbsResult)
    meta = {"work": "full network", "atom_updates": int(res.atom_updates) if gib else 0,
            "n_samples": int(res.n_samples) if gib else 0, "burn_in": int(res.burn_in) if gib else 0,
            "n_chains": int(res.n_chains) if gib else 0, "inference": res.sampler if gib else "exact", "reused_model_inference": bool(reused),
            "queries_in_no_coalition": 0}
    return ExplanationSet(exps, method="M-Explain", meta=meta), sampling


def _only(exps: ExplanationSet, queries: Sequence[str], method: str) -> ExplanationSet:
    """The explanations of `queries` (the target predicate's atoms), in that order, with the set's
    meta (the count of queries in no coalition recounted over them)."""
    keep = set(queries)
    kept = [e for e in exps if e.target in keep]
    meta = {**exps.meta, "queries_in_no_coalition": sum(e.meta.get("coalitions_with_query", 1) == 0 for e in kept)}
    return ExplanationSet(kept, method=method, meta=meta)


def split_by_kind(exp: Explanation, k: int = 5, setting: TextSetting | None = None) -> dict[str, Explanation]:
    """The explanation's top-`k` word formulas, top-`k` relational formulas and top-`k` other formulas
    (priors, formulas over non-link predicates such as smokes => cancer), as three explanations (the
    paper shows words and links separately). Word and link predicates come from `setting` (the
    data's own), else the review data's defaults."""
    words = (setting.word_predicate,) if setting is not None and setting.word_predicate else \
        (() if setting is not None else WORD_PREDICATES)
    links = setting.link_predicates if setting is not None else LINK_PREDICATES
    parts: dict[str, list] = {"word": [], "relational": [], "other": []}
    for it in exp.ranked():
        parts[formula_kind(it, words, links)].append(it)
    return {kind: replace(exp, items=items[:k], meta={**exp.meta, "kind": kind}) for kind, items in parts.items()}


def normalised(exp: Explanation, absolute: bool = False) -> Explanation:
    """The explanation with scores divided by the largest |score| (so they lie in [-1, 1]), or with
    `absolute` their magnitudes so scaled (in [0, 1]; the signed score is kept in extras["score"])."""
    top = max((abs(it.score) for it in exp.items), default=0.0)
    if top == 0:
        return exp
    if absolute:
        items = [replace(it, score=abs(it.score) / top, extras={**it.extras, "score": it.score}) for it in exp.items]
    else:
        items = [replace(it, score=it.score / top) for it in exp.items]
    return replace(exp, items=items, meta={**exp.meta, "normalised_by": top})


def query_object(setting: TextSetting, atom: str) -> str:
    """The object of a query atom text: ``positive(r0007)`` -> ``r0007``."""
    prefix = setting.target + "("
    if not (atom.startswith(prefix) and atom.endswith(")")):
        raise XcoreError(f"{atom!r} is not an atom of {setting.target}")
    return atom[len(prefix):-1]


def available_methods(setting: TextSetting) -> list[str]:
    """The methods that apply to the data (LIME and SHAP need word evidence)."""
    return [m for m in METHODS if setting.has_words or m not in WORD_METHODS]
