"""An ILP task read from a `RelationalDataset`: the target predicate, its labelled examples, the
background facts as integer-coded tables, and the mode language (given or derived from the data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import DataError
from xcore.logic.modes import Mode, ModeArg, ModeLanguage, read_declarations, read_language

NUMERIC = r"^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$"


def target_predicate(ds: RelationalDataset) -> str | None:
    """The unary predicate with labelled targets (truth atoms), or None if there is none."""
    for p in ds.predicates:
        if p.arity == 1 and len(ds.truth(p.name)) and len(ds.targets(p.name)):
            return p.name
    return None


def applicable(ds: RelationalDataset) -> str | None:
    """Why DRM cannot run on `ds`, or None when it can."""
    target = target_predicate(ds)
    if target is None:
        return ("DRM classifies relational instances: it needs a unary target predicate with labelled "
                "examples (e.g. Aleph .b/.f/.n files such as Michalski's trains)")
    labels = ds.truth(target)["value"].round()
    if labels.nunique() < 2:
        return f"the examples of {target} have only one class"
    if not any(p.closed and len(ds.observations(p.name)) and p.arity >= 1 for p in ds.predicates) \
            and not computed_predicates(ds, declared_language(ds), target):
        return "there are no background facts to build features from"
    return None


def background_declarations(ds: RelationalDataset) -> ModeLanguage | None:
    """The Aleph declarations (modes, determinations, settings, ``lazy_evaluate``, ``positive_only``) of a
    background the dataset keeps as written (a Prolog problem whose background has rules,
    `RelationalDataset.rules`), else None."""
    if not ds.rules or ds.description.startswith("Markov logic program"):
        return None
    return read_declarations("\n".join(ds.rules))


def declared_language(ds: RelationalDataset) -> ModeLanguage | None:
    """The mode language of an Aleph background the dataset keeps as written, else None."""
    lang = background_declarations(ds)
    return lang if lang is not None and lang.modeb else None


def lazy_predicates(ds: RelationalDataset, language: ModeLanguage, computed: frozenset[str]
                    ) -> tuple[frozenset[tuple[str, int]], frozenset[tuple[str, int]]]:
    """(lazily evaluated predicates, those of them evaluated on positives only): Aleph's ``lazy_evaluate/1``
    and ``positive_only/1`` declared in `language` or in the kept background, for mode predicates defined
    by background rules with a ``#`` argument (the constant the background's definition computes)."""
    background = background_declarations(ds) if computed else None
    declared = set(language.lazy) | set(background.lazy if background else ())
    positive = set(language.positive_only) | set(background.positive_only if background else ())
    lazy = frozenset(m.key for m in language.modeb
                     if m.key in declared and m.predicate in computed and m.positions("#"))
    return lazy, frozenset(positive & lazy)


def computed_predicates(ds: RelationalDataset, language: ModeLanguage | None, target: str) -> frozenset[str]:
    """Body-mode predicates of `language` that have no facts in the data but rules in its background
    (Aleph's arithmetic helpers ``gteq/2``, ``lteq/2``): SWI-Prolog saturates and evaluates them."""
    if language is None or not ds.rules:
        return frozenset()
    facts = {p.name for p in ds.predicates if p.closed and p.arity >= 1 and len(ds.observations(p.name))}
    return frozenset(m.predicate for m in language.modeb if m.predicate not in facts and m.predicate != target)


@dataclass
class Problem:
    """Examples of the target predicate, integer-coded background tables and the mode language."""

    target: str
    examples: np.ndarray
    """Example constants (strings), in the order of the truth table."""
    labels: np.ndarray
    """0/1 class of each example."""
    tables: dict[str, np.ndarray]
    """Predicate name -> int64 array (facts x arity) of constant codes, in file order."""
    vocab: np.ndarray
    """Code -> constant string."""
    language: ModeLanguage
    arities: dict[str, int] = field(default_factory=dict)
    computed: frozenset[str] = frozenset()
    """Mode predicates defined by background rules (``gteq/2``): saturated and evaluated by SWI-Prolog."""
    background: bytes = b""
    """The Aleph background as written (facts and rules), for SWI-Prolog when `computed` is not empty."""
    engine_cache: dict = field(default_factory=dict, repr=False)
    lazy: frozenset[tuple[str, int]] = frozenset()
    """Mode predicates evaluated lazily (Aleph's ``lazy_evaluate/1``): a feature's constant for them is
    computed by the background's definition from the training examples it covers
    (`xcore.drm.lazy_constants`), not taken from the bottom clause."""
    positive_only: frozenset[tuple[str, int]] = frozenset()
    """Lazy predicates whose definition sees the positive examples' values only (``positive_only/1``)."""

    def example_atoms(self) -> list[str]:
        """``target(example)`` texts of every example (for SWI-Prolog)."""
        return [f"{self.target}({e})" for e in self.examples]

    def example_files(self) -> tuple[bytes, bytes]:
        """The examples as Aleph ``.f`` and ``.n`` texts (positives answer recursive calls)."""
        atoms = self.example_atoms()
        pos = "".join(f"{a}.\n" for a, y in zip(atoms, self.labels) if y == 1)
        neg = "".join(f"{a}.\n" for a, y in zip(atoms, self.labels) if y == 0)
        return pos.encode(), neg.encode()

    @cached_property
    def codes(self) -> dict[str, int]:
        return {str(c): i for i, c in enumerate(self.vocab)}

    @cached_property
    def example_codes(self) -> np.ndarray:
        return np.array([self.codes[e] for e in self.examples], dtype=np.int64)

    def code(self, constant: str) -> int:
        """The code of a constant (-1 when it never occurs, so matching it finds nothing)."""
        return self.codes.get(constant, -1)

    def index_of(self, example: str) -> int:
        hits = np.flatnonzero(self.examples == example)
        if not len(hits):
            raise DataError(f"{example!r} is not an example of {self.target}")
        return int(hits[0])


def build_problem(ds: RelationalDataset, modes: str = "", exclude: tuple[str, ...] = ()) -> Problem:
    """The ILP task of `ds`: modes parsed from `modes` (Aleph directives) or derived from the data;
    predicates in `exclude` (such as a fold assignment) are not background knowledge."""
    reason = applicable(ds)
    if reason:
        raise DataError(reason, file=ds.name)
    target = target_predicate(ds)
    assert target is not None
    truth = ds.truth(target)
    examples = truth["a0"].astype(str).to_numpy(dtype=object)
    labels = (truth["value"].to_numpy(dtype=float) >= 0.5).astype(np.int64)
    declared = None if modes.strip() else declared_language(ds)
    if declared is not None and computed_predicates(ds, declared, target):
        language = declared  # Aleph's own modes: the data's facts cannot show modes of rule-defined predicates
    else:
        language = read_language(modes, "modes") if modes.strip() else derive_language(ds, target, exclude)
    if not language.modeh:
        language.modeh.append(Mode(1, target, (ModeArg("+", ds.predicate(target).types[0]),), head=True))
    return _coded(ds, target, examples, labels, language, exclude)


def new_examples_problem(ds: RelationalDataset, target: str, language: ModeLanguage,
                         exclude: tuple[str, ...] = ()) -> Problem:
    """The examples of `target` in new data (its target atoms, else its truth atoms) under a fitted
    model's language; labels are the truth where given, -1 where unknown."""
    try:
        pred = ds.predicate(target)
    except DataError:
        raise DataError(f"the new data has no predicate {target!r} to predict", file=ds.name) from None
    if pred.arity != 1:
        raise DataError(f"{target} must be unary in the new data (it has arity {pred.arity})", file=ds.name)
    targets = ds.targets(target)["a0"].astype(str)
    truth = ds.truth(target)
    names = pd.unique(pd.concat([targets, truth["a0"].astype(str)], ignore_index=True))
    if not len(names):
        raise DataError(f"the new data has no {target} atoms (targets or truth) to predict", file=ds.name)
    known = dict(zip(truth["a0"].astype(str), truth["value"].to_numpy(dtype=float)))
    labels = np.array([(-1 if known.get(n) is None or np.isnan(known[n]) else int(known[n] >= 0.5))
                       for n in names], dtype=np.int64)
    return _coded(ds, target, np.asarray(names, dtype=object), labels, language, exclude)


def _coded(ds: RelationalDataset, target: str, examples: np.ndarray, labels: np.ndarray, language: ModeLanguage,
           exclude: tuple[str, ...]) -> Problem:
    """The problem with background facts integer-coded (one vocabulary for examples and facts)."""
    raw = {p.name: ds.observations(p.name)[p.columns].astype(str).to_numpy(dtype=object)
           for p in ds.predicates if p.closed and p.arity >= 1 and p.name != target and p.name not in exclude}
    chunks = [examples] + [t.ravel() for t in raw.values() if t.size]
    vocab = np.asarray(pd.unique(np.concatenate(chunks)), dtype=object)
    index = pd.Index(vocab)
    tables = {name: index.get_indexer(t.ravel()).reshape(t.shape).astype(np.int64) if t.size
              else np.zeros((0, t.shape[1] if t.ndim == 2 else 0), dtype=np.int64) for name, t in raw.items()}
    arities = {p.name: p.arity for p in ds.predicates if p.name not in exclude}
    computed = computed_predicates(ds, language, target)
    _check_language(language, arities, target, computed)
    background = "\n".join(ds.rules).encode() if computed else b""
    lazy, positive_only = lazy_predicates(ds, language, computed)
    return Problem(target, examples, labels, tables, vocab, language, arities, computed, background,
                   lazy=lazy, positive_only=positive_only)


def _check_language(lang: ModeLanguage, arities: dict[str, int], target: str,
                    computed: frozenset[str] = frozenset()) -> None:
    for m in lang.modeb:
        if m.predicate in computed:
            continue
        if m.predicate not in arities or arities[m.predicate] != m.arity:
            alt = f"{m.predicate}_{m.arity}"
            if arities.get(alt) == m.arity:
                continue
            raise DataError(f"mode {m} names {m.predicate}/{m.arity}, which has no facts in the data",
                            file="modes")


def table_name(problem: Problem, mode: Mode) -> str:
    """The data predicate holding a mode's facts (``shape_1`` when the loader renamed ``shape/1``)."""
    if problem.arities.get(mode.predicate) == mode.arity:
        return mode.predicate
    return f"{mode.predicate}_{mode.arity}"


def derive_language(ds: RelationalDataset, target: str, exclude: tuple[str, ...] = (), many: int = 3) -> ModeLanguage:
    """Modes derived from the data's argument types, as an Aleph user would write them.

    Starting from the target's type, a type reached through a predicate is an *object* type (a
    ``-`` output, recall ``*``) when each of its constants there belongs to one object only
    (cars belong to one train). An argument of an object type is an input ``+`` when most of its
    constants are objects an earlier predicate introduced (bonds join atoms), else an output of
    the predicate's own objects (nitro groups are not benzene rings); other arguments and numbers are ``#`` constants, with recall 1
    when the inputs determine them for at least 95% of input values (each car has one shape; one
    of the 30 trains cars has two loads) and ``*`` otherwise. Predicates whose
    types never connect to the target (``car/1`` type declarations) get no mode.

    Where a literal has two or more constant arguments, each of them with at least `many` distinct
    values also gets a mode with that argument a variable (``load(+car,#shape,-int)``: a load of
    circles, any count), so that a feature need not fix every column; the variable is never an
    input elsewhere.
    """
    head_type = ds.predicate(target).types[0]
    objects = {head_type}
    members: dict[str, set[str]] = {head_type: set(ds.truth(target)["a0"].astype(str))}
    modes: dict[str, Mode] = {}
    variants: dict[str, list[Mode]] = {}
    order = [p for p in ds.predicates if p.closed and p.name != target and p.arity >= 1 and p.name not in exclude]
    changed = True
    while changed:
        changed = False
        for p in order:
            if p.name in modes or not any(t in objects for t in p.types):
                continue
            obs = ds.observations(p.name)[p.columns].astype(str)
            roles = _roles(p.types, obs, objects, members)
            types = p.types
            outs = [i for i, r in enumerate(roles) if r == "-"]
            modes[p.name] = Mode(None if outs else _recall(obs, roles), p.name,
                                 tuple(ModeArg(r, t) for r, t in zip(roles, types)))
            consts = [i for i, r in enumerate(roles) if r == "#"]
            if len(consts) >= 2:
                variants[p.name] = [Mode(None, p.name, tuple(ModeArg("-" if j == i else r, t)
                                                             for j, (r, t) in enumerate(zip(roles, types))))
                                    for i in consts if obs[f"a{i}"].nunique() >= many]
            for i in outs:
                members.setdefault(types[i], set()).update(obs[f"a{i}"])
                if types[i] not in objects:
                    objects.add(types[i])
                    changed = True
    lang = ModeLanguage(modeh=[Mode(1, target, (ModeArg("+", head_type),), head=True)])
    lang.modeb = [m for p in order if p.name in modes for m in [modes[p.name], *variants.get(p.name, [])]]
    return lang


def _roles(types: tuple[str, ...], obs: pd.DataFrame, objects: set[str], members: dict[str, set[str]]) -> list[str]:
    """The mode role of each argument of a predicate (see `derive_language`): ``+`` an input object,
    ``-`` its own objects, ``#`` a constant; the first argument of an object type is the input."""
    first = next(i for i, t in enumerate(types) if t in objects)
    roles: list[str] = []
    for i, t in enumerate(types):
        if t in objects and (i == first or _mostly_known(obs[f"a{i}"], members.get(t))):
            roles.append("+")
        elif t in objects and _is_owned(obs, i, first):
            roles.append("-")  # its own objects of a known type (nitro groups are not benzene rings)
        elif not obs[f"a{i}"].str.match(NUMERIC).all() and _is_owned(obs, i, first):
            roles.append("-")
        else:
            roles.append("#")
    return roles


def _recall(obs: pd.DataFrame, roles: list[str]) -> int | None:
    """Recall 1 when the inputs determine the other arguments for at least 95% of input values, else ``*``."""
    ins = [f"a{i}" for i, r in enumerate(roles) if r == "+"]
    counts = obs.groupby(ins).size()
    return 1 if (counts > 1).mean() <= 0.05 else None


def language_limits(language: ModeLanguage, ds: RelationalDataset, target: str, max_literals: int,
                    depth: int) -> list[str]:
    """What features drawn from `language` cannot express, in words (shown beside the modes)."""
    notes = []
    numeric = []
    fixed = []
    for m in language.modeb:
        try:
            obs = ds.observations(m.predicate)
        except DataError:
            continue
        for i in m.positions("#"):
            col = obs.get(f"a{i}")
            if col is not None and len(col) and col.astype(str).str.match(NUMERIC).all():
                numeric.append(f"{m.predicate} argument {i + 1}")
        has_variant = any(o.predicate == m.predicate and o is not m and o.positions("#") != m.positions("#")
                          for o in language.modeb)
        if len(m.positions("#")) == 1 and not has_variant and len(m.args) > 1:
            fixed.append(f"{m.predicate} argument {m.positions('#')[0] + 1}")
    if numeric:
        notes.append("numbers are matched as constants: no thresholds or comparisons (x <= 2, lumo < -1.5) on "
                     + ", ".join(dict.fromkeys(numeric)))
    if fixed:
        notes.append("these arguments are always one constant (a feature cannot say 'any value' or 'the same value "
                     "as another argument'): " + ", ".join(dict.fromkeys(fixed)))
    notes.append("no negation: a feature cannot say that a fact is absent (a car that is not closed needs a "
                 "predicate of its own, such as open_car)")
    notes.append("constants and variables that are not objects are never shared between literals (no 'the same "
                 "number in two literals', such as as many loads as wheels)")
    unused = [p.name for p in ds.predicates if p.closed and p.arity >= 1 and p.name != target
              and p.name not in {m.predicate for m in language.modeb}]
    if unused:
        notes.append("predicates without a mode (their types never connect to the examples, or left out): "
                     + ", ".join(unused))
    notes.append(f"a feature has at most {max_literals} literals, {depth} layers of new variables deep")
    return notes


def _mostly_known(column: pd.Series, known: set[str] | None) -> bool:
    """Whether at least half of a column's constants are objects an earlier predicate introduced."""
    values = set(column)
    return bool(known) and len(values & known) >= len(values) / 2


def _is_owned(obs: pd.DataFrame, i: int, owner: int) -> bool:
    """Whether every constant in column i occurs with one owner constant only (a part-of argument)."""
    pairs = obs[[f"a{owner}", f"a{i}"]].drop_duplicates()
    return bool(len(pairs)) and bool(pairs[f"a{i}"].is_unique) and pairs[f"a{i}"].nunique() > pairs[f"a{owner}"].nunique() / 2

