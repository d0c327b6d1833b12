"""Deep relational machine (issue 15): Aleph checks, planted-rule recovery, Mutagenesis 188 beside the paper.

    python bench/drm.py [--draws 20000] [--planted-seeds 3] [--skip-mutagenesis] [--no-write]

1. The bottom clause of east1 against Aleph's transcript (when /work/shared is present) and the
   classic feature ``has_car(A,B), short(B), closed(B)`` among the features of the ten trains.
2. Planted rule: 100 random trains labelled by ``eastbound(A) :- has_car(A,B), short(B), closed(B)``;
   how often the top explanation of a predicted-eastbound train covers exactly the rule's trains.
3. Mutagenesis 188 with its 10 folds (bundled) and Carcinogenesis (from /work/shared, seeded folds):
   DRM accuracy, fidelity at H5 and H10, how often relevance changes the choice, neighbourhood
   sizes, clause lengths, share with a structured alternative, beside the paper's Fig. 11-13;
   speed of drawing, evaluating and explaining.
Prints markdown tables and writes the section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.grounding import machine  # noqa: E402
from bench.results_file import replace_section  # noqa: E402
from xcore.data.samples import load_sample, sample_data_dir  # noqa: E402
from xcore.drm.carcinogenesis import load_carcinogenesis  # noqa: E402
from xcore.drm.clauses import Clause, Lit, equivalent, subsumes  # noqa: E402
from xcore.drm.features import Evaluator, distinct_columns, draw_features  # noqa: E402
from xcore.drm.mutagenesis import load_mutagenesis  # noqa: E402
from xcore.drm.problem import build_problem  # noqa: E402
from xcore.drm.runs import default_settings, fold_parts  # noqa: E402
from xcore.drm.saturation import bottom_clause  # noqa: E402
from xcore.drm.trains import CLASSIC, generate_trains  # noqa: E402
from xcore.logic.terms import Struct, Var, conjuncts, read_term  # noqa: E402
from xcore.methods.evaluate import fit_predict  # noqa: E402

TRANSCRIPT = Path("/work/shared/data/aleph_reference_transcripts/trains_typescript.txt")
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "Deep relational machine (`xcore.drm`, issue 15)"


def _clause(text: str) -> Clause:
    t = read_term(text)
    head, body = t.args if isinstance(t, Struct) and t.name == ":-" else (t, None)
    conv = lambda s: Lit(s.name, tuple(a if isinstance(a, Var) else str(a) for a in s.args))  # noqa: E731
    return Clause(conv(head), tuple(conv(l) for l in ([] if body is None else conjuncts(body))))


def trains_checks(lines: list[str]) -> None:
    ds = load_sample("trains_michalski10")
    problem = build_problem(ds, (sample_data_dir() / "trains_michalski10" / "train.b").read_text())
    ours = bottom_clause(problem, "east1")
    if TRANSCRIPT.exists():
        m = re.search(r"\[bottom clause\]\n(.*?)\n\[literals\]", TRANSCRIPT.read_text().replace("\r", ""), re.S)
        aleph = _clause(m[1])
        same = len(aleph.body) == len(ours.body) and subsumes(aleph, ours) is not None \
            and subsumes(ours, aleph) is not None
        verdict = f"{'equal' if same else 'DIFFERENT'} up to variable renaming ({len(ours.body) + 1} literals each)"
    else:
        verdict = f"{len(ours.body) + 1} literals (transcript not available here)"
    t0 = time.perf_counter()
    feats = draw_features(problem, 2000, seed=0)
    dt = time.perf_counter() - t0
    classic = [f.definition() for f in feats if equivalent(f.clause, Clause(CLASSIC.head, CLASSIC.body))]
    lines += ["| check | ours | reference |", "|---|---|---|",
              f"| bottom clause of east1 (i = 2) | {verdict} | Aleph transcript: 25 literals |",
              f"| ten trains, 2,000 draws (seed 0) | {len(feats)} features in {dt:.2f} s; classic feature: "
              f"{classic[0] if classic else 'absent'} | `has_car(A,B), short(B), closed(B)` |", ""]


A_, B_, C_ = Var("A"), Var("B"), Var("C")
RULES = {
    "short & closed": CLASSIC,
    "load circle, any count": Clause(Lit("eastbound", (A_,)), (Lit("has_car", (A_, B_)), Lit("load", (B_, "circle", C_)))),
    "long & 3 wheels": Clause(Lit("eastbound", (A_,)), (Lit("has_car", (A_, B_)), Lit("long", (B_,)),
                                                        Lit("wheels", (B_, "3")))),
    "closed & triangle load": Clause(Lit("eastbound", (A_,)), (Lit("has_car", (A_, B_)), Lit("closed", (B_,)),
                                                               Lit("load", (B_, "triangle", C_)))),
}


FOLD_LIMIT = 0  # > 0: run only the first this many folds of the chemistry data sets (--folds)
FOLD_START = 0  # skip this many folds first (--skip-folds: finish a run that ran the first folds)


def cross_validate(ds, s, limit: int = 0) -> list[tuple]:
    """The paper's k-fold protocol through the shared code: per fold of `fold_parts` (the first `limit`
    when > 0), a DRM fitted on the other folds (`xcore.methods.evaluate.fit_predict`), the held-out data
    and its predictions."""
    out = []
    parts = fold_parts(s.estimator(), ds)
    parts = parts[FOLD_START:]
    for test_units in parts[:limit] if limit > 0 else parts:
        c0 = time.process_time()
        est, preds = fit_predict(s.estimator(), ds, test_units)
        out.append((est, est.holdout(ds, test_units)[1], preds))
        print(f"{ds.name} fold {FOLD_START + len(out)}: accuracy {np.mean(preds['prediction'] == preds['truth']):.3f}, linear "
              f"{np.mean((preds['linear_probability'] >= 0.5) == preds['truth']):.3f}, {len(est.features_)} features, "
              f"{len(est.inputs_)} inputs, {time.process_time() - c0:.0f} CPU s", file=sys.stderr, flush=True)
    return out


def _accuracies(folds: list[tuple]) -> tuple[float, float, list[float]]:
    """(out-of-fold accuracy of the networks, of the linear baselines, accuracy per fold)."""
    preds = [p for _, _, p in folds]
    every = np.concatenate([p["prediction"].to_numpy() == p["truth"].to_numpy() for p in preds])
    linear = np.concatenate([(p["linear_probability"].to_numpy() >= 0.5) == p["truth"].to_numpy() for p in preds])
    return float(every.mean()), float(linear.mean()), [float(np.mean(p["prediction"] == p["truth"])) for p in preds]


def planted(lines: list[str], seeds: int) -> None:
    """80 random trains per planted rule and seed, default settings (10 folds): accuracy beside L2 logistic
    regression on the same features and folds, and how often the chosen clause recovers the rule."""
    rows = []
    for name, rule in RULES.items():
        for seed in range(seeds):
            ds = generate_trains(80, seed=seed, rule=rule)
            s = default_settings(ds).replace(explain_rows=80, seed=seed)
            t0 = time.perf_counter()
            folds = cross_validate(ds, s)
            acc, linear, _ = _accuracies(folds)
            good = total = 0
            expressible = True
            for m, test, preds in folds:
                truth = m.problem_.labels.astype(bool)  # the planted rule on the fold's training trains
                expressible &= any((m.X_[:, j].astype(bool) == truth).all() for j in range(m.X_.shape[1]))
                rows_of = m.rows(test)
                for target, p, t in zip(preds["target"], preds["prediction"], preds["truth"]):
                    if p != 1 or t != 1:
                        continue
                    loc = m.local(target, test, rows=rows_of)
                    total += 1
                    if loc.chosen >= 0:
                        cov = np.all(m.X_[:, list(loc.clauses[loc.chosen].features)] == 1, axis=1)
                        good += (cov & truth).sum() / max((cov | truth).sum(), 1) >= 0.8
            rows.append((name, seed, acc, linear, int(np.mean([len(m.features_) for m, _, _ in folds])),
                         expressible, good, total, time.perf_counter() - t0))
            print(f"planted {name} seed {seed}: accuracy {acc:.3f} linear {linear:.3f}, recovered {good}/{total}",
                  flush=True)
    lines += ["80 random trains per rule (`xcore.drm.trains.generate_trains`), default settings: 10 folds "
              "(one DRM per fold, fitted on the other nine through `xcore.methods.evaluate.fit_predict`), "
              "neighbourhoods widened to 30 training instances. Recovered: explanations of held-out trains that "
              "are predicted and truly eastbound whose chosen clause covers the fold's training trains of the rule "
              "with Jaccard >= 0.8; expressible: in every fold one drawn feature covers exactly the rule's "
              "training trains.", "",
              "| planted rule | seed | DRM accuracy | L2 logistic regression (same features, folds) | features "
              "(mean per fold) | rule expressible | recovered | run s |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {n} | {sd} | {a:.3f} | {la:.3f} | {nf} | {'yes' if ex else 'no'} | {g}/{t} = {g / max(t, 1):.2f} | "
              f"{ts:.0f} |" for n, sd, a, la, nf, ex, g, t, ts in rows]
    g, t = sum(r[6] for r in rows), sum(r[7] for r in rows)
    lines += [f"| all | | {np.mean([r[2] for r in rows]):.3f} | {np.mean([r[3] for r in rows]):.3f} | | | "
              f"{g}/{t} = {g / max(t, 1):.2f} | |", "",
              "Before issue 31 (same generator, 80 trains, 4 rules x 3 seeds, as reported in the issue): DRM "
              "0.867 / 0.875 / 0.867 / 0.796 against logistic regression 0.967 / 0.958 / 0.917 / 0.871; "
              "recovered 0% (empty neighbourhoods, fidelity 1.000 everywhere); the two any-count rules not "
              "expressible.", ""]


PAPER = {"Mutagenesis 188": dict(acc="DRM 0.91; OptILP 0.88", acc_v=0.91, h5=0.99, h10=0.96, change=0.82,
                                  nb="5 / 20", lits="1 / 2"),
         "Carcinogenesis (Canc330)": dict(acc="DRM 0.68; OptILP 0.58", acc_v=0.68, h5=0.99, h10=0.92, change=0.77,
                                          nb="3 / 27", lits="1 / 3")}


CHARGES: dict[str, int] = {}  # --charges K: the atoms' charge thresholds at K quantiles (0: none; default: the loaders')


def mutagenesis(lines: list[str], draws: int) -> None:
    ds = load_mutagenesis(**CHARGES)
    chemistry(lines, ds, default_settings(ds).replace(max_draws=draws, explain_rows=1, distinct_inputs=True),
              ("cv_fold",), "the data's 10 folds")


def carcinogenesis(lines: list[str], draws: int) -> None:
    folder = Path("/work/shared/data/carcinogenesis")
    if not folder.exists():
        lines += ["Carcinogenesis: /work/shared is not available here.", ""]
        return
    ds, relevance = load_carcinogenesis(folder, **CHARGES)
    s = default_settings(ds).replace(max_draws=draws, relevance=relevance, explain_rows=1,
                                     distinct_inputs=True)
    chemistry(lines, ds, s, (), "seeded stratified 10 folds (the paper's splits are not published)")


EXPLAIN_LIMIT = 0  # > 0: explain a seeded sample of this many instances per data set (--explain-limit)


def _hamming(lines: list[str], folds: list[tuple]) -> dict[str, list[float]]:
    """Hamming distances between the training compounds of fold 1 (lines), and the mean number of training
    compounds within 5 / 10 of each held-out compound over every fold (as Fig. 13a counts them)."""
    out = {}
    for name in ("all features", "distinct columns"):
        m = folds[0][0]
        X = m.X_ if name == "all features" else m.X_[:, distinct_columns(m.X_)]
        d = np.count_nonzero(X[:, None, :] != X[None, :, :], axis=2)
        off = d[~np.eye(len(d), dtype=bool)]
        counts = []
        for m, test, _ in folds:
            cols = np.arange(m.X_.shape[1]) if name == "all features" else distinct_columns(m.X_)
            held = m.rows(test)[1][:, cols]
            dist = np.count_nonzero(held[:, None, :] != m.X_[None, :, cols], axis=2)
            counts.append(np.stack([(dist <= k).sum(axis=1) for k in (5, 10)], axis=1))
        out[name] = np.concatenate(counts).mean(axis=0).tolist()
        lines.append(f"Hamming distances between the training compounds of fold 1 over {name} ({X.shape[1]}): "
                     f"median {np.median(off):.0f}, 5th percentile {np.percentile(off, 5):.0f}, share of pairs "
                     f"within 5 / 10: {np.mean(off <= 5):.3f} / {np.mean(off <= 10):.3f}.")
    lines.append("")
    return out


def _explanations(folds: list[tuple]) -> tuple[dict, int, int]:
    """Explanation figures at H5, H10, widened to 10 and by default, over the held-out compounds of every
    fold (a seeded sample of EXPLAIN_LIMIT of them when set); (figures, explained, held-out compounds)."""
    held = [(f, t) for f, (_, _, p) in enumerate(folds) for t in p["target"]]
    n = len(held)
    pick = (np.sort(np.random.default_rng(0).choice(n, EXPLAIN_LIMIT, replace=False))
            if 0 < EXPLAIN_LIMIT < n else np.arange(n))
    rows = {f: m.rows(test) for f, (m, test, _) in enumerate(folds)}
    out = {}
    for k in (5, 10, "N10", "N"):
        fids, changes, nbs, lens, structured, times, empty = [], [], [], [], [], [], []
        for i in pick:
            f, target = held[i]
            m, test, _ = folds[f]
            t1 = time.perf_counter()
            loc = (m.local(target, test, min_neighbours=10, rows=rows[f]) if k == "N10"
                   else m.local(target, test, rows=rows[f]) if k == "N"
                   else m.local(target, test, hamming=k, min_neighbours=0, rows=rows[f]))
            times.append(time.perf_counter() - t1)
            nbs.append(len(loc.neighbourhood.members))
            empty.append(not loc.fidelity_defined)
            if loc.chosen >= 0 and loc.fidelity_defined:
                fids.append(loc.clauses[loc.chosen].fidelity)
                changes.append(loc.relevance_changes_choice)
                lens.append(len(loc.clauses[loc.chosen].features))
                structured.append(bool(loc.structured))
        out[k] = dict(empty=np.mean(empty), fidelity=np.mean(fids) if fids else float("nan"), sd=np.std(fids),
                      change=np.mean(changes), nb=np.mean(nbs), length=np.mean(lens), structured=np.mean(structured),
                      time=np.mean(times))
    return out, len(pick), n


def chemistry(lines: list[str], ds, s, exclude: tuple[str, ...], folds_text: str) -> None:
    paper = PAPER[ds.name]
    draws = s.max_draws
    problem = build_problem(ds, exclude=exclude)
    t0 = time.perf_counter()
    feats = draw_features(problem, draws, seed=s.seed, max_literals=s.max_literals, depth=2)
    t_draw = time.perf_counter() - t0
    t0 = time.perf_counter()
    Evaluator(problem).matrix(feats)
    t_eval = time.perf_counter() - t0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    folds = cross_validate(ds, s, FOLD_LIMIT)
    cpu_run, wall_run = time.process_time() - cpu0, time.perf_counter() - wall0
    acc, linear, per_fold = _accuracies(folds)
    distinct = _hamming(lines, folds)
    out, explained, n = _explanations(folds)
    m = folds[0][0]
    lines += [f"**{ds.name}** ({len(problem.examples)} examples, {folds_text}; one DRM per fold, features drawn "
              f"from its training compounds): {len(m.features_)} features in fold 1 from "
              f"{draws:,} draws (depth 2, at most {s.max_literals} literals); explanation rows over "
              f"{explained} of {n} held-out instances{' (a seeded sample)' if explained < n else ''}.", "",
              f"| {ds.name} | ours | paper | gap explained |", "|---|---|---|---|",
              f"| {'10-fold' if len(folds) >= 10 else f'{len(folds)} of 10 folds:'} accuracy (sd over folds) | {acc:.3f} ({np.std(per_fold):.3f}) | {paper['acc']} | "
              f"{_gap(acc, paper['acc_v'])} |",
              f"| L2 logistic regression, same inputs and folds | {linear:.3f} | | |",
              f"| network inputs in fold 1 (the set validation chose; distinct columns: "
              f"{len(distinct_columns(m.X_))}) | {len(m.inputs_)} of {len(m.features_)} | | |",
              f"| chosen networks (layers; weight decay: folds) | {_chosen([f[0] for f in folds])} | | |",
              f"| neighbours by default (widened to {s.min_neighbours}): mean | {out['N']['nb']:.1f} | "
              f"H5 / H10: {paper['nb']} (Fig. 13a) | |",
              f"| by default: fidelity / relevance changes / literals / structured | {out['N']['fidelity']:.3f} / "
              f"{out['N']['change']:.2f} / {out['N']['length']:.1f} / {out['N']['structured']:.2f} | "
              f"H5: {paper['h5']} / {paper['change']} / {paper['lits']} | |",
              f"| mean fidelity, H5 | {out[5]['fidelity']:.3f} ({out[5]['sd']:.3f}) | {paper['h5']} | "
              f"{_gap(out[5]['fidelity'], paper['h5'])} |",
              f"| mean fidelity, H10 | {out[10]['fidelity']:.3f} ({out[10]['sd']:.3f}) | {paper['h10']} | "
              f"{_gap(out[10]['fidelity'], paper['h10'])} |",
              f"| fidelity undefined (no training neighbour), H5 / H10 | {out[5]['empty']:.2f} / "
              f"{out[10]['empty']:.2f} | 0 | |",
              f"| relevance changes the choice, H5 | {out[5]['change']:.2f} | {paper['change']} (Fig. 12b) | "
              f"{_gap(out[5]['change'], paper['change'])} |",
              f"| neighbours H5 / H10 | {out[5]['nb']:.1f} / {out[10]['nb']:.1f} | {paper['nb']} (Fig. 13a) | |",
              f"| neighbours H5 / H10 over the distinct columns | {distinct['distinct columns'][0]:.1f} / "
              f"{distinct['distinct columns'][1]:.1f} | {paper['nb']} (Fig. 13a) | |",
              f"| literals in the chosen clause H5 / H10 | {out[5]['length']:.1f} / {out[10]['length']:.1f} | "
              f"{paper['lits']} (Fig. 13c) | |",
              f"| share with a structured alternative H5 / H10 | {out[5]['structured']:.2f} / "
              f"{out[10]['structured']:.2f} | Fig. 13d | |",
              f"| widened to 10 neighbours: fidelity / relevance changes / literals / structured | "
              f"{out['N10']['fidelity']:.3f} / {out['N10']['change']:.2f} / {out['N10']['length']:.1f} / "
              f"{out['N10']['structured']:.2f} | (not in the paper) | |", "",
              "| speed | ours | goal |", "|---|---|---|",
              f"| drawing features | {draws / t_draw:,.0f} draws/s ({len(feats) / t_draw:,.0f} kept/s) | |",
              f"| evaluating {len(feats):,} features on {len(problem.examples)} compounds | {t_eval:.2f} s "
              f"({t_eval / max(len(feats), 1) * 2000:.2f} s per 2,000) | < 60 s for 2,000 |",
              f"| explanation per instance, H5 / H10 | {out[5]['time'] * 1000:.0f} / {out[10]['time'] * 1000:.0f} ms "
              f"| < 1 s at H10 |",
              f"| whole protocol ({len(folds)} folds, each drawing features and searching {_grid(s)} network "
              f"configurations x {s.inner_folds} validation splits) | {wall_run:.1f} s wall, {cpu_run:.1f} s "
              f"CPU (user+sys of this process), load average after {_load()} | |", ""]


def _chosen(models: list) -> str:
    from collections import Counter
    c = Counter((m.net_.hidden, m.net_.weight_decay) for m in models)
    return "; ".join(f"{'x'.join(map(str, h))}, {wd:g}: {k}" for (h, wd), k in sorted(c.items()))


def _grid(s) -> int:
    return len(s.hidden) * len(s.learning_rates) * len(s.weight_decays)


def _load() -> str:
    import os
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _gap(ours: float, paper: float) -> str:
    return "within 0.03" if abs(ours - paper) <= 0.03 else "see notes below"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=10000, help="MaxDraws (the paper: at most 10,000)")
    ap.add_argument("--planted-seeds", type=int, default=3)
    ap.add_argument("--skip-mutagenesis", action="store_true")
    ap.add_argument("--skip-carcinogenesis", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--explain-limit", type=int, default=0, help="explain a seeded sample of this many instances")
    ap.add_argument("--folds", type=int, default=0, help="run only the first this many folds (chemistry)")
    ap.add_argument("--skip-folds", type=int, default=0, help="skip this many folds first (chemistry)")
    ap.add_argument("--charges", type=int, default=None,
                    help="atom charge thresholds at this many quantiles (0: none; default: Mut188 10, Canc330 0)")
    args = ap.parse_args()
    global EXPLAIN_LIMIT, FOLD_LIMIT, FOLD_START, CHARGES
    EXPLAIN_LIMIT, FOLD_LIMIT, FOLD_START = args.explain_limit, args.folds, args.skip_folds
    CHARGES = {} if args.charges is None else {"charges": args.charges}
    lines = [f"## {HEADING}", "",
             f"`python bench/drm.py --draws {args.draws}` on {machine()}; torch {torch.__version__} (CPU, one "
             f"thread per network), {time.strftime('%Y-%m-%d')}.", ""]
    trains_checks(lines)
    if args.planted_seeds > 0:
        planted(lines, args.planted_seeds)
    if not args.skip_mutagenesis:
        mutagenesis(lines, args.draws)
    if not args.skip_carcinogenesis:
        carcinogenesis(lines, args.draws)
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        replace_section(RESULTS, HEADING, text + NOTES)


NOTES = """
Notes on the gaps (the paper's feature sets, folds for Canc330 and network search are not published).

- **Issue 31** changed four things measured above: (1) neighbourhoods are widened from the paper's
  radius until they hold `min_neighbours` training instances (default half the examples, 4 to 30),
  and fidelity over an empty neighbourhood is undefined (no clause, shown as such) instead of 1.0;
  (2) the network's weight decay is searched too, validation averages the loss curves of 3 inner
  splits, and the chosen network is retrained until its training loss reaches the validation-time
  loss (after at least the chosen number of epochs); L2 logistic regression on the same feature
  matrix and folds is reported beside it; (3) derived modes add a variable for a constant column
  with 3 or more values when the literal has another constant (`load(+car,#shape,-int)`,
  `atm(+drug,-atomid,#element,-atomtype)`), so "a circle load, any count" is a feature; (4)
  `DRMEstimator.predict(new_data)` evaluates the drawn features on new facts and averages the fold
  networks' probabilities (an ensemble of the k cross-validation networks, none refitted).
- **Network inputs** (issue 31): features drawn as different clauses often have the same extension
  (Mut188, 10,000 draws: about 2,100 features, about 200 distinct columns over a fold's training
  compounds). The inner validation chooses the network's inputs between every feature and one column
  per distinct extension (lowest mean validation loss over 3 inner splits); the linear model takes
  the chosen inputs. Averaged over five network seeds this choice equals distinct columns forced
  (0.883 against 0.884 on Mut188, feature seed 0; the section above), so the loss the previous
  session saw (0.874 against 0.895) was network-seed noise of about 0.01-0.03, not a wrong choice.
- **Accuracy** against the paper: our features come from a mode language derived from the data
  (`xcore.drm.problem.derive_language`); Aleph's `gteq`/`lteq` threshold rules are not facts, so
  Mut188's `lumo`/`logp` are quartile bins and the atoms' partial charges are threshold facts at the
  decile cut points (`charge_at_least(atom, t)`; Mut188 by default since issue 31's fourth part, after
  branch drm-mut-31's chemistry tables were measured; Canc330 without them); the
  2-D/3-D distance predicates are absent, and ring/group objects are only tested for existence (no
  predicate consumes their atoms). The linear model on the same inputs is the fair reference for
  the network. Canc330 uses seeded folds over the 337 labelled compounds, not the paper's splits.
- **Fidelity at H5/H10**: with thousands of features the compounds are far apart (the distance
  line before each table), so the paper's fixed H5 and H10 neighbourhoods are mostly empty where the
  paper has 3-27 neighbours (Fig. 13a); fidelity is then undefined (the "fidelity undefined" row) and
  the H5/H10 means are over the non-empty ones only. The default neighbourhood (30 nearest training
  instances, ties at the radius included) is the row "by default".
- **Explanation speed**: `select` compared every pair of tied maximal-fidelity clauses for relevance
  dominance; where features repeat an extension thousands of clauses tie, and one explanation of a
  Mut188 compound at 30 neighbours took over a CPU-minute. It now compares the distinct relevance
  values only (the same choice; a test checks it against the pairwise definition).
- Fidelity counts the instance itself in E+ (Definition 23's neighbourhood contains it).
  "Relevance changes the choice" compares the first maximal-fidelity clause in feature order with
  the <fidelity, relevance> choice (Fig. 12b's comparison).
- DssTox and the four Alzheimer's sets are not run (no loader yet; the Alzheimer's `.b` files use
  Progol's `!-` form, which `xcore.logic.modes` reads).
"""


if __name__ == "__main__":
    main()
