"""ESMS accuracy on LastFM-size data: held-out MSE/MAE of the best model beside single-predicate baselines.

    python bench/esms_accuracy.py                          # lastfm preset, print the table
    python bench/esms_accuracy.py --preset bench --iterations 50
    python bench/esms_accuracy.py --results bench/RESULTS.md   # also update the "ESMS accuracy" section

Data: `lastfm_preset("lastfm", seed=0)` (the size of the HetRec LastFM data: 1,892 users, 17,632
items, 92,000 ratings, 20% held out, top-50 similarities; synthetic, planted process). The held-out
ratings are split by `three_way_split` (60/20/20, seed 0): ESMS learns PPLL weights on the
training part, picks the model with the lowest validation MSE, and the best model is grounded on
the test dataset (training and validation labels observed) for MAP on the test ratings.

Baselines predict each test rating from one predicate alone: the mean observed rating
(constant), the user's and the item's average rating, and the two latent-factor predictions
(`sgd_rating`, `bpmf_rating`). All use only observed (non-held-out) ratings.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.grounding import machine  # noqa: E402
from xcore.data.generators import lastfm_preset  # noqa: E402
from xcore.psl import ESMSSearch, PSLModel, prediction_metrics, three_way_split  # noqa: E402

PAPER = {"mae": 0.177, "mse": 0.043}
"""ESMS on the real LastFM data (Embar, Srinivasan, Getoor, UAI 2022), gamma = 0."""


def baselines(ds, test) -> dict[str, np.ndarray]:
    """Single-predicate predictions for the test ratings (in the order of the test truth table)."""
    truth = test.tables["rating"]["truth"][["a0", "a1", "value"]].reset_index(drop=True)
    mu = float(ds.tables["rating"]["obs"]["value"].mean())
    out = {"constant: mean observed rating": np.full(len(truth), mu)}

    def by(pred: str, on: list[str]) -> np.ndarray:
        t = ds.tables[pred]["obs"].rename(columns={"value": "_p"})
        m = truth[on].merge(t, on=on, how="left")
        return m["_p"].fillna(mu).to_numpy(dtype=np.float64)

    out["avg_user_rating(U)"] = by("avg_user_rating", ["a0"])
    item = ds.tables["avg_item_rating"]["obs"].rename(columns={"a0": "a1"})
    m = truth[["a1"]].merge(item.rename(columns={"value": "_p"}), on="a1", how="left")
    out["avg_item_rating(I)"] = m["_p"].fillna(mu).to_numpy(dtype=np.float64)
    out["sgd_rating(U, I) (latent factors)"] = by("sgd_rating", ["a0", "a1"])
    out["bpmf_rating(U, I) (latent factors)"] = by("bpmf_rating", ["a0", "a1"])
    return out


def run(preset: str, iterations: int, n_jobs: int) -> tuple[str, dict]:
    t = time.perf_counter()
    ds = lastfm_preset(preset, seed=0)
    train, valid, test = three_way_split(ds, "rating", seed=0)
    t_gen = time.perf_counter() - t

    search = ESMSSearch("rating", gamma=0.0, iterations=iterations, rules_per_model=15, block="rated",
                        n_jobs=n_jobs, seed=0)
    t = time.perf_counter()
    search.fit(train, valid)
    t_search = time.perf_counter() - t
    t = time.perf_counter()
    model = PSLModel(search.best_rules_, block="rated", limit=search.ground_limit)
    model.ground(test)
    model.infer()
    t_test = time.perf_counter() - t
    pred = model.predict()
    truth = test.tables["rating"]["truth"][["a0", "a1", "value"]].reset_index(drop=True)
    # the model's predictions in the order of the truth table
    joined = truth.merge(pred[["a0", "a1", "prediction"]], on=["a0", "a1"], how="left")
    if joined["prediction"].isna().any():
        raise RuntimeError("the test model has no prediction for some test ratings")
    y = truth["value"].to_numpy(dtype=np.float64)
    y_esms = joined["prediction"].to_numpy(dtype=np.float64)
    rows = [("ESMS, gamma = 0 (best of the search, MAP on test)", prediction_metrics(y_esms, y))]
    bias = [float(np.mean(y_esms - y))]
    for name, p in baselines(ds, test).items():
        rows.append((f"baseline: {name}", prediction_metrics(p, y)))
        bias.append(float(np.mean(p - y)))
    best_base = min(rows[1:], key=lambda r: r[1]["mse"])
    best_mae = min(r[1]["mae"] for r in rows[1:])
    esms = rows[0][1]

    lines = [f"Data: {ds.description} (generated and split in {t_gen:.1f} s).",
             f"Split: three_way_split 60/20/20 of the held-out ratings; {len(y):,} test ratings. "
             f"Search: gamma = 0, {iterations} candidates x 15 rules, block `rated`, n_jobs={n_jobs}: "
             f"{t_search:.0f} s; best model on test (grounding + MAP): {t_test:.1f} s.", "",
             "| predictor | test MSE | test MAE | test RMSE | mean error (bias) |", "|---|---:|---:|---:|---:|"]
    for (name, m), b in zip(rows, bias):
        lines.append(f"| {name} | {m['mse']:.4f} | {m['mae']:.4f} | {m['rmse']:.4f} | {b:+.4f} |")
    lines.append(f"| paper: ESMS on the real LastFM data (UAI 2022), gamma = 0 | {PAPER['mse']:.3f} | "
                 f"{PAPER['mae']:.3f} | | |")
    beat = esms["mse"] < best_base[1]["mse"] and esms["mae"] < best_mae
    lines += ["",
              f"ESMS {'beats' if beat else 'does NOT beat'} the best single-predicate baseline "
              f"({best_base[0].removeprefix('baseline: ')}: MSE {best_base[1]['mse']:.4f}; best baseline MAE "
              f"{best_mae:.4f}) on held-out MSE and MAE: MSE {esms['mse']:.4f}, MAE {esms['mae']:.4f}.",
              "The paper's figures come from the real HetRec LastFM data; these data are synthetic with the "
              "same shape, so only the comparison with the baselines is meaningful, not the absolute values.",
              "", f"Best model ({len(search.best_rules_)} rules, validation MSE {search.best_score_:.4f}, "
              f"iteration {search.best_iteration_}):", "", "```",
              *[r.text("psl") for r in search.best_rules_], "```"]
    return "\n".join(lines), {"rows": rows, "beat": beat, "search": t_search}


NOTES = (
    "Notes (checked separately on 2026-11-22, same data and split; not part of this script's output). "
    "The goal \"ESMS beats the best single-predicate baseline\" is not met here: `sgd_rating` alone is better. "
    "The best ESMS model over-predicts (mean error about +0.048): the paper's templates only have positive "
    "heads (`... -> rating`), so every rule is a lower bound on the rating, and PPLL learns each rule's weight "
    "on its own (three weights hit w_max = 100) while the only downward pull is a prior of weight 0.48. "
    "The same best rules on the test data give MSE 0.0336 / MAE 0.1481; `sgd_rating -> rating` with "
    "`~rating` (PPLL weights) gives MSE 0.0280 / MAE 0.1354, and the two-sided pair `sgd_rating -> rating`, "
    "`rating -> sgd_rating` gives MSE 0.0277 / MAE 0.1335 (bias +0.008). Possible fixes (not done here): "
    "templates with negated heads (`_(A,B) & ~... -> ~T(A,B)`), or weights re-fitted jointly for the "
    "selected model."
)


def update_results(path: Path, body: str, info: str, command: str) -> None:
    """Replace (or append) the "## ESMS accuracy" section of the results file."""
    section = (f"## ESMS accuracy\n\nCommand: `{command}` ({time.strftime('%Y-%m-%d')}).\n"
               f"Machine: {info}.\n\n{body}\n\n{NOTES}\n")
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    pattern = re.compile(r"^## ESMS accuracy\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="lastfm", choices=["small", "bench", "lastfm"])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--results", type=Path, help="update the ESMS accuracy section of this file")
    args = parser.parse_args()
    info = machine()
    body, _ = run(args.preset, args.iterations, args.n_jobs)
    print(f"Machine: {info}\n")
    print(body)
    if args.results:
        cmd = "python bench/esms_accuracy.py" + ("" if args.preset == "lastfm" else f" --preset {args.preset}") + \
              ("" if args.iterations == 100 else f" --iterations {args.iterations}")
        update_results(args.results, body, info, cmd)
        print(f"\nwrote {args.results}")


if __name__ == "__main__":
    main()
