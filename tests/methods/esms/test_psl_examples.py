"""Real projects of linqs/psl-examples, unchanged, against an independent solution.

The config / ``.data`` / ``.psl`` text under ``psl_examples/`` is copied from linqs/psl-examples
(``<project>/cli/``; commits e3e18445 for the JSON configs, 495f3fa2 for entity-resolution's
``.data`` + ``.psl`` pair, b45ed4ff for simple-acquaintances.data, ee0b2bc3 / 6e269830 for
citeseer's pair, 50f5d551 for stance-4forums.psl). Their data is downloaded by scripts in the real
repository, so each test writes small synthetic files with the same names and shapes.

The independent solution enumerates every assignment of constants to a rule's variables in plain
Python (PSL's grounding: body atoms and negated head atoms must exist, other atoms missing count
as 0, arithmetic rules ground where all their atoms exist, term comparisons filter), then solves
the convex program (hinges, squared hinges, hard constraints, values in [0, 1]) with HiGHS's QP.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xcore.data import load
from xcore.data.io.lenient_json import loads as lenient_loads
from xcore.data.io.psl_project import read_project
from xcore.errors import DataError
from xcore.logic.ast import ArithmeticRule, Variable
from xcore.logic.parser import parse_rule, parse_rules
from xcore.psl.cli import main as psl_main
from xcore.psl.java_engine import java_psl_jar

EXAMPLES = Path(__file__).parent / "psl_examples"
DOMAIN = ("0", "1", "2")
"""Constants of the synthetic data ('0'..'2' also cover the constants the rules name, e.g. Prior('0'))."""

RUNNABLE = {
    # project: (the config or .data file given to the loader and the command, the .psl model or None)
    "simple-acquaintances-json": ("simple-acquaintances/cli/simple-acquaintances.json", None),
    "simple-acquaintances-data": ("simple-acquaintances/cli/simple-acquaintances.data",
                                  "simple-acquaintances/cli/simple-acquaintances.psl"),
    "friendship": ("friendship/cli/friendship.json", None),
    "entity-resolution-data": ("entity-resolution/cli/entity-resolution.data",
                               "entity-resolution/cli/entity-resolution.psl"),
    "trust-prediction": ("trust-prediction/cli/trust-prediction.json", None),
    "jester": ("jester/cli/jester.json", None),
    "smokers": ("smokers/cli/smokers.json", None),
    # summation atoms: HasCat(A, +C) = 1 ., Votes(A, +B) <= 1 ., 1: Is(U, A, +L) = 1
    "citeseer-json": ("citeseer/cli/citeseer.json", None),
    "citeseer-data": ("citeseer/cli/citeseer-eval.data", "citeseer/cli/citeseer.psl"),
    "user-modeling": ("user-modeling/cli/user-modeling.json", None),
    "social-network-analysis": ("social-network-analysis/cli/social-network-analysis.json", None),
}

# ---------------------------------------------------------------------- synthetic data
def copy_project(name: str, tmp: Path) -> Path:
    """Copy the project's cli folder into tmp (so data can sit at the paths it names)."""
    shutil.copytree(EXAMPLES / name.split("/")[0] / "cli", tmp / "cli")
    return tmp


def write_synthetic_data(project_file: Path, seed: int = 0, reflexive_targets: bool = True,
                         domain: tuple[str, ...] = DOMAIN, targets_only: frozenset = frozenset()) -> dict:
    """Write every data file the project names; return the inference split's atoms by predicate.

    Per predicate, the tuples over DOMAIN are shuffled in groups (a binary tuple and its mirror
    share a group and a value, so symmetry constraints such as ``Knows(P1, P2) = Knows(P2, P1) .``
    hold on observed atoms, as in the real data): a predicate with targets gets a third of the
    groups as observations (if it has observation files) and the rest as targets, truth for half
    of them; a closed predicate gets 60% as observations (all, if unary: the constants rules name,
    such as Prior('0'), exist). Values are random in [0, 1] (2 places); a reflexive atom of a
    predicate with targets is observed as 1, and without `reflexive_targets` never a target.
    The learn split gets the same files (PSL checks that every named file exists). Predicates in
    `targets_only` get no observations (their files stay empty): random observed values would break
    the project's hard constraints over them, such as ``HasCat(A, +C) = 1 .``, which real data keeps.
    """
    rng = random.Random(seed)
    project = read_project(str(project_file))
    atoms: dict[str, dict] = {}
    for spec in project.predicates.values():
        groups: dict[tuple, list[tuple]] = {}
        for t in itertools.product(domain, repeat=spec.arity):
            groups.setdefault(tuple(sorted(t)) if spec.arity == 2 else t, []).append(t)
        keys = sorted(groups)
        rng.shuffle(keys)
        refs = {p: spec.refs(p, "infer") for p in ("obs", "targets", "truth")}
        if any(r.row is not None for rs in refs.values() for r in rs):  # inline rows: as given
            atoms[spec.name] = _inline_atoms(refs["obs"], refs["targets"])
            continue
        if refs["targets"]:
            cut = len(keys) // 3 if refs["obs"] and spec.name not in targets_only else 0
            obs_keys, target_keys = keys[:cut], keys[cut:]
            if not reflexive_targets and refs["obs"]:  # observed (as 1) instead, so every atom a rule names exists
                obs_keys += [k for k in target_keys if len(set(k)) == 1]
                target_keys = [k for k in target_keys if len(set(k)) > 1]
        else:
            obs_keys, target_keys = (keys if spec.arity == 1 else keys[: int(0.6 * len(keys))]), []
        obs = {}
        for k in obs_keys:
            value = round(rng.random(), 2)
            for t in groups[k]:
                obs[t] = 1.0 if (refs["targets"] and len(set(t)) == 1) else value
        targets = [t for k in target_keys for t in groups[k]]
        rows = {"obs": obs, "targets": {t: None for t in targets},
                "truth": {t: 0.0 if spec.name in targets_only else float(rng.random() < 0.5) for t in targets[::2]}}
        for part, part_rows in rows.items():
            _write_rows(refs[part], project_file, part_rows)
            _write_rows(spec.sources.get((part, "learn"), []), project_file, part_rows)
        atoms[spec.name] = {"obs": obs, "targets": set(targets)}
    return atoms


def _inline_atoms(obs_refs, target_refs) -> dict:
    obs = {}
    for r in obs_refs:
        row = [str(v) for v in r.row]
        k = len(row) if not target_refs else len(target_refs[0].row)
        obs[tuple(row[:k])] = float(row[k]) if len(row) > k else 1.0
    return {"obs": obs, "targets": {tuple(str(v) for v in r.row) for r in target_refs}}


def _write_rows(refs, project_file: Path, rows: dict) -> None:
    """Spread `rows` over the files of `refs` (several files of a partition each get a share)."""
    files = [r for r in refs if r.path]
    items = list(rows.items())
    for i, ref in enumerate(files):
        path = (Path(ref.file).parent / ref.path).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        mine = items[i::len(files)]
        lines = ["\t".join(t) + ("" if v is None else f"\t{v}") for t, v in mine]
        path.write_text("\n".join(lines) + ("\n" if lines else ""))


def hard_summation_predicates(path: Path, model_file: str | None, root: Path) -> frozenset:
    """Predicates summed over by a hard arithmetic rule of the project (`write_synthetic_data`'s `targets_only`)."""
    project = read_project(**({"config": str(path)} if model_file is None else
                              {"data": str(path), "model": str(root / model_file.split("/", 1)[1])}))
    return frozenset(a.predicate for r in project.parsed_rules() if isinstance(r, ArithmeticRule) and r.is_hard
                     for _, a in r.terms if a.sum_variables)


# ---------------------------------------------------------------------- the independent solution
def ground_by_enumeration(rules, atoms: dict):
    """Ground potentials and constraints by enumerating assignments: (soft, hard, target index).

    soft: (weight, squared, coef {target: c}, constant) for max(0, constant + sum c y)^p;
    hard: (coef, constant, relation) for  constant + sum c y  (<=|=|>=)  0.
    Variables range over every constant of the data.
    """
    domain = sorted({c for a in atoms.values() for t in [*a["obs"], *a["targets"]] for c in t})
    index = {(p, t): i for i, (p, t) in enumerate(sorted((p, t) for p, a in atoms.items() for t in a["targets"]))}
    observed = {(p, t): v for p, a in atoms.items() for t, v in a["obs"].items()}

    def exists(p, t):
        return (p, t) in index or (p, t) in observed

    def linear(p, t, c, coef, const):
        """Add c * value(atom) into (coef, const); a missing atom is 0."""
        if (p, t) in index:
            coef[index[p, t]] = coef.get(index[p, t], 0.0) + c
            return const
        return const + c * observed.get((p, t), 0.0)

    soft, hard = [], []
    for rule in rules:
        variables = sorted({v.name for lit in rule.body + rule.head for v in lit.atom.variables})
        for values in itertools.product(domain, repeat=len(variables)):
            env = dict(zip(variables, values))

            def ground(atom):
                return atom.predicate, tuple(env[a.name] if isinstance(a, Variable) else a.value for a in atom.args)

            if isinstance(rule, ArithmeticRule) and rule.has_summation:
                rows = _summation_rows(rule, env, atoms, index, observed, ground, exists, linear)
                if rows is None:
                    continue
                coef, const = rows
                if rule.weight is None:
                    hard.append((coef, const, rule.relation))
                    continue
                if rule.relation in ("<=", "="):
                    soft.append((rule.weight, rule.squared, coef, const))
                if rule.relation in (">=", "="):
                    soft.append((rule.weight, rule.squared, {k: -v for k, v in coef.items()}, -const))
                continue
            if isinstance(rule, ArithmeticRule):
                grounded = [(c, ground(a)) for c, a in rule.terms]
                if not all(exists(*g) for _, g in grounded):
                    continue
                coef, const = {}, rule.constant
                for c, g in grounded:
                    const = linear(*g, c, coef, const)
                parts = [(coef, const, rule.relation)]
                if rule.weight is None:
                    hard.extend(parts)
                    continue
                if rule.relation in ("<=", "="):
                    soft.append((rule.weight, rule.squared, coef, const))
                if rule.relation in (">=", "="):
                    soft.append((rule.weight, rule.squared, {k: -v for k, v in coef.items()}, -const))
                continue
            if not all(_holds(c, env) for c in rule.conditions):
                continue
            clause = [(lit, not lit.negated) for lit in rule.body] + [(lit, lit.negated) for lit in rule.head]
            binding_vars = {v.name for lit, binds in clause if binds for v in lit.atom.variables}
            ok = True
            for lit, binds in clause:
                g = ground(lit.atom)
                unbound = any(v.name not in binding_vars for v in lit.atom.variables)
                if (binds or unbound) and not exists(*g):
                    ok = False
                    break
            if not ok:
                continue
            # distance to satisfaction of the clause: 1 - sum(positive literals) - sum(1 - negated)
            coef, const = {}, 1.0
            for lit, binds in clause:
                g = ground(lit.atom)
                if binds:  # a negated clause literal: -(1 - v)
                    const = linear(*g, 1.0, coef, const - 1.0)
                else:
                    const = linear(*g, -1.0, coef, const)
            if rule.weight is None:
                hard.append((coef, const, "<="))
            else:
                soft.append((rule.weight, rule.squared, coef, const))
    return soft, hard, index


def _summation_rows(rule, env, atoms, index, observed, ground, exists, linear):
    """(coef, constant) of one grounding of a rule with summation atoms (PSL 2.4's semantics: +C
    ranges over the constants at its position among its predicate's atoms; an open atom takes part
    when it exists, a closed one always; the grounding exists when some values make all atoms exist);
    None when there is no such grounding. Filters and cardinalities are not used by psl-examples."""
    from xcore.logic.ast import Constant, SumVariable

    assert not rule.filters
    sums = {t.name: (j, i) for j, (_, a) in enumerate(rule.terms) for i, t in enumerate(a.args)
            if isinstance(t, SumVariable)}
    cands = {}
    for name, (j, i) in sums.items():
        a = rule.terms[j][1]
        tuples = [*atoms[a.predicate]["obs"], *atoms[a.predicate]["targets"]]
        cands[name] = sorted({t[i] for t in tuples
                              if all(t[k] == x.value for k, x in enumerate(a.args) if isinstance(x, Constant))})

    def grounded(a, senv):
        e = {**env, **senv}
        return a.predicate, tuple(e[x.name] if not isinstance(x, Constant) else x.value for x in a.args)

    names = list(sums)
    if not any(all(exists(*grounded(a, dict(zip(names, vals)))) for _, a in rule.terms)
               for vals in itertools.product(*(cands[n] for n in names))):
        return None
    coef, const = {}, rule.constant
    for c, a in rule.terms:
        svars = [x.name for x in a.args if isinstance(x, SumVariable)]
        closed = not atoms[a.predicate]["targets"]
        for vals in itertools.product(*(cands[n] for n in svars)):
            g = grounded(a, dict(zip(svars, vals)))
            if svars and not closed and not exists(*g):
                continue
            const = linear(*g, c, coef, const)
    return coef, const


def _holds(comparison, env) -> bool:
    def value(t):
        return env[t.name] if isinstance(t, Variable) else t.value

    left, right = value(comparison.left), value(comparison.right)
    return {"!=": left != right, "==": left == right, "%": left < right}[comparison.op]


def energy(soft, y: np.ndarray) -> float:
    total = 0.0
    for w, squared, coef, const in soft:
        d = max(0.0, const + sum(c * y[i] for i, c in coef.items()))
        total += w * (d * d if squared else d)
    return total


def violation(hard, y: np.ndarray) -> float:
    worst = 0.0
    for coef, const, rel in hard:
        v = const + sum(c * y[i] for i, c in coef.items())
        worst = max(worst, {"<=": max(v, 0.0), ">=": max(-v, 0.0), "=": abs(v)}[rel])
    return worst


def solve_qp(soft, hard, n: int) -> tuple[float, np.ndarray]:
    """Minimise the energy with HiGHS: y in [0,1], one slack s_k >= max(0, a.y + b) per potential."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    m = len(soft)
    inf = highspy.kHighsInf
    h.addVars(n + m, np.zeros(n + m), np.r_[np.ones(n), np.full(m, inf)])
    h.changeColsCost(n + m, np.arange(n + m, dtype=np.int32),
                     np.r_[np.zeros(n), [0.0 if sq else w for w, sq, _, _ in soft]])
    for k, (_, _, coef, const) in enumerate(soft):  # a.y - s_k <= -b
        idx = np.array(list(coef) + [n + k], dtype=np.int32)
        h.addRow(-inf, -const, len(idx), idx, np.array(list(coef.values()) + [-1.0]))
    for coef, const, rel in hard:
        idx = np.array(list(coef), dtype=np.int32)
        lo = -const if rel in (">=", "=") else -inf
        hi = -const if rel in ("<=", "=") else inf
        h.addRow(lo, hi, len(idx), idx, np.array(list(coef.values()), dtype=float))
    diag = [(n + k, 2.0 * w) for k, (w, sq, _, _) in enumerate(soft) if sq]
    if diag:
        start = np.zeros(n + m, dtype=np.int32)
        cols = {c: v for c, v in diag}
        index, value, count = [], [], 0
        for col in range(n + m):
            start[col] = count
            if col in cols:
                index.append(col)
                value.append(cols[col])
                count += 1
        h.passHessian(n + m, count, highspy.HessianFormat.kTriangular, start, np.array(index, dtype=np.int32),
                      np.array(value))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    y = np.array(h.getSolution().col_value[:n])
    return energy(soft, y), y


# ---------------------------------------------------------------------- helpers
def read_outputs(folder: Path, index: dict, names: dict) -> np.ndarray:
    """The values the command wrote (<PRED>.txt: args TAB value) in the order of `index`."""
    y = np.full(len(index), np.nan)
    for pred in {p for p, _ in index}:
        path = folder / f"{names[pred].upper()}.txt"
        for line in path.read_text().splitlines():
            *args, value = line.split("\t")
            y[index[pred, tuple(args)]] = float(value)
    return y


def run_command(args: list[str]) -> tuple[int, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = psl_main(args + ["--quiet"], stdout=out, stderr=err)
    return code, out.getvalue() + err.getvalue()


# ---------------------------------------------------------------------- tests
def all_rule_texts() -> list[tuple[str, str]]:
    """(source, rule text) for every rule of the copied projects (JSON configs and rule files)."""
    from xcore.data.io.psl_rule_file import parse_rule_file

    out = []
    for path in sorted(EXAMPLES.rglob("*")):
        if path.suffix == ".json":
            doc = lenient_loads(path.read_text(), str(path))
            out += [(path.name, r) for r in doc["rules"]]
        elif path.suffix == ".psl":
            out += [(path.name, r.text) for r in parse_rule_file(path.read_bytes(), str(path))]
    return out


def test_every_real_rule_parses():
    texts = all_rule_texts()
    assert len(texts) > 150
    summations = 0
    for source, text in texts:
        rule = parse_rule(text, dialect="psl")
        assert rule.weight is None or rule.weight > 0, (source, text)
        summations += isinstance(rule, ArithmeticRule) and rule.has_summation
    assert summations == 4  # citeseer (.json and .psl), user-modeling, social-network-analysis


def test_psl_grammar_spellings_of_real_rules():
    """Old spellings PSL's grammar accepts and the projects use: `(A1 - A2)` is !=, `(A ^ B)` is %,
    `& &` split over lines is one and, leading-zero weights, `)->` without a space."""
    stance = parse_rule("1: disagrees(A1, A2) & (A1 - A2) & responds(A1, A2) >> !isProAuth(A2, T) ^2", "psl")
    assert [str(c) for c in stance.conditions] == ["(A1 != A2)"]
    assert [str(c) for c in parse_rule("1: A(X, Y) & (X ^ Y) -> B(X) ^2", "psl").conditions] == ["(X % Y)"]
    assert parse_rule("0025: VALCAT(B, C) & CAT(A, C) -> CAT(B, C) ^2", "psl").weight == 25.0
    assert len(parse_rule("20.0: A(X) & & B(X) -> C(X) ^2", "psl").body) == 2
    assert str(parse_rule("1: Friend(U, V) & Is(V, A, L)-> Is(U, A, L) ^2", "psl")) == \
        "1.0: Friend(U, V) & Is(V, A, L) -> Is(U, A, L) ^2"
    # an arithmetic expression is not a comparison: A(X) - B(X) stays arithmetic
    assert isinstance(parse_rule("2.0: A(X) - B(X) >= 0.5 ^2", "psl"), ArithmeticRule)


def test_multi_line_rules_in_a_psl_file_keep_their_first_line():
    from xcore.data.io.psl_rule_file import parse_rule_file

    path = EXAMPLES / "entity-resolution" / "cli" / "entity-resolution.psl"
    specs = parse_rule_file(path.read_bytes(), str(path))
    assert len(specs) == 9
    assert [s.line for s in specs] == [2, 3, 6, 12, 19, 25, 26, 29, 30]
    transitivity = parse_rule(specs[2].text, "psl")
    assert len(transitivity.body) == 5 and len(transitivity.conditions) == 3
    assert str(transitivity.head[0]) == "SameAuthor(A1, A3)"


@pytest.mark.parametrize("project", sorted(RUNNABLE))
def test_real_project_runs_unchanged_and_matches_the_independent_qp(tmp_path, project):
    main_file, model_file = RUNNABLE[project]
    root = copy_project(main_file, tmp_path)
    path = root / main_file.split("/", 1)[1]
    atoms = write_synthetic_data(path, seed=len(project), targets_only=hard_summation_predicates(path, model_file, root))
    ds = load(str(path))
    names = {p.name: p.name for p in ds.predicates}
    for pred, a in atoms.items():
        assert len(ds.targets(pred)) == len(a["targets"]), pred
        assert ds.predicate(pred).closed == (not a["targets"]), pred
    args = ["--config", str(path)] if model_file is None else \
        ["--data", str(path), "--model", str(root / model_file.split("/", 1)[1])]
    out = tmp_path / "out"
    code, log = run_command(args + ["--output", str(out)])
    assert code == 0, log
    rules = read_project(**({"config": str(path)} if model_file is None else
                            {"data": str(path), "model": str(root / model_file.split("/", 1)[1])})).parsed_rules()
    learned = sorted(out.glob("*-learned.psl"))
    # a config with learn data learns first (PSL's runtime), so the check uses the learned weights
    assert bool(learned) == (model_file is None and read_project(config=str(path)).has_learn_split)
    assert "steps: " in log and ("learn StructuredPerceptron" in log) == bool(learned)
    if learned:
        rules = parse_rules(learned[0].read_text(), dialect="psl")
    soft, hard, index = ground_by_enumeration(rules, atoms)
    assert len(soft) >= 5 and index
    best, _ = solve_qp(soft, hard, len(index))
    open_preds = {p for p, _ in index}
    assert sorted(f.name for f in out.glob("*.txt")) == sorted(f"{p.upper()}.txt" for p in open_preds)
    got = read_outputs(out, index, names)
    assert not np.isnan(got).any()
    assert violation(hard, got) < 1e-5
    assert energy(soft, got) == pytest.approx(best, rel=1e-5, abs=1e-6)


def test_latent_open_predicates_without_atoms_are_refused(tmp_path):
    """trust-prediction/cli/alternate-models (commit a8106260): Trusting/1 and Trustworthy/1 are
    open with no targets; counting their atoms as 0 would be a different model, so it stops."""
    root = copy_project("trust-prediction-latent", tmp_path)
    path = root / "cli" / "trust-prediction-latent-eval.data"
    write_synthetic_data(path)
    with pytest.raises(DataError) as e:
        load(str(path))
    assert "Trusting is open" in str(e.value) and "no targets" in str(e.value) and e.value.line == 3
    code, log = run_command(["--data", str(path), "--model", str(root / "cli" / "trust-prediction-latent.psl")])
    assert code == 2 and "Trusting" in log


def test_entity_resolution_data_declares_types_and_blocking(tmp_path):
    root = copy_project("entity-resolution", tmp_path)
    project = read_project(str(root / "cli" / "entity-resolution.data"))
    assert project.predicates["AUTHORBLOCK"].declared_open is False
    assert project.predicates["SAMEAUTHOR"].declared_open is True
    assert len(project.parsed_rules()) == 9


def test_data_file_predicate_entries_are_checked(tmp_path):
    from xcore.data.io.psl_config import parse_data_file

    bad = [("Knows/2:\n    - open\n    - block\n", "blocking predicate must be closed"),
           ("Knows/2:\n    - open\n    - closed\n", "exactly one of 'open' or 'closed'"),
           ("Knows/2:\n    - closed\n    - types: [A]\n", "1 types for arity 2"),
           ("Knows/2:\n    - sometimes\n", "expected 'open', 'closed', 'block'")]
    for entry, problem in bad:
        text = "predicates:\n  " + entry
        with pytest.raises(DataError) as e:
            parse_data_file(text.encode(), "x.data")
        assert problem in str(e.value) and e.value.line == 2, (entry, str(e.value))


@pytest.mark.slow
def test_command_as_a_subprocess_writes_psl_files(tmp_path):
    root = copy_project("simple-acquaintances", tmp_path)
    data = root / "cli" / "simple-acquaintances.data"
    write_synthetic_data(data)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    r = subprocess.run([sys.executable, "-m", "xcore.psl", "--data", str(data), "--model",
                        str(root / "cli" / "simple-acquaintances.psl"), "--output", str(tmp_path / "out")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "out" / "KNOWS.txt").read_text().splitlines()
    assert lines and all(len(line.split("\t")) == 3 for line in lines)
    r = subprocess.run([sys.executable, "-m", "xcore.psl", "--config",
                        str(EXAMPLES / "citeseer" / "cli" / "citeseer.json")], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------- Java PSL
@pytest.mark.slow
@pytest.mark.parametrize("project", ["simple-acquaintances-json", "trust-prediction", "citeseer-json",
                                     "social-network-analysis", "user-modeling"])
def test_values_match_java_psl(tmp_path, project):
    """Java PSL (the jar bundled in pslpython) on the same unchanged project and data: same energy.
    Both engines only infer here (the learn data is left out of Java's config: its runtime would
    learn first), so that the comparison is of grounding and MAP inference."""
    jar = java_psl_jar()
    if jar is None:
        pytest.skip("Java or pslpython's PSL jar is not available")
    main_file, _ = RUNNABLE[project]
    root = copy_project(main_file, tmp_path)
    path = root / main_file.split("/", 1)[1]
    domain = tuple(str(i) for i in range(5))
    atoms = write_synthetic_data(path, seed=len(project), reflexive_targets=False, domain=domain,
                                 targets_only=hard_summation_predicates(path, None, root))
    doc = lenient_loads(path.read_text(), str(path))
    for spec in doc["predicates"].values():
        for part in ("observations", "targets", "truth"):
            if isinstance(spec, dict) and isinstance(spec.get(part), dict):
                spec[part] = {k: v for k, v in spec[part].items() if k != "learn"}
    doc["options"] = {**doc.get("options", {}), "runtime.db.intids": False, "runtime.log.level": "WARN",
                      "admmreasoner.epsilonabs": 1e-8, "admmreasoner.epsilonrel": 1e-8,
                      "admmreasoner.maxiterations": 100000, "reasoner.objectivebreak": False,
                      "reasoner.variablemovementbreak": False,
                      "runtime.inference.output.results.dir": str(tmp_path / "java_out")}
    java_config = path.with_name("java.json")
    java_config.write_text(json.dumps(doc))
    r = subprocess.run(["java", "-Xmx1g", "-jar", str(jar), str(java_config.name)], cwd=path.parent,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    code, log = run_command(["--config", str(path), "--output", str(tmp_path / "out"), "--no-learn"])
    assert code == 0, log
    rules = read_project(config=str(path)).parsed_rules()
    soft, hard, index = ground_by_enumeration(rules, atoms)
    names = {p: p for p, _ in index}
    ours = read_outputs(tmp_path / "out", index, names)
    java = read_outputs(tmp_path / "java_out", index, names)
    assert violation(hard, java) < 1e-3
    # The values agree to 1e-3, or, where the optimum is not unique (atoms in no active potential
    # may take any value; PSL leaves them where ADMM started), the engines are compared on the
    # objective: both optimal under the same grounding.
    if np.abs(ours - java).max() > 1e-3:
        assert energy(soft, ours) <= energy(soft, java) + 1e-6 * (1 + energy(soft, java))
    assert energy(soft, java) == pytest.approx(energy(soft, ours), rel=1e-4, abs=1e-5)
    assert len(soft) > 50
