"""Deep relational machines with logical local explanations (Srinivasan, Vig & Bain).

- `problem`: the ILP task from a dataset (target, examples, coded facts, modes given or derived);
- `saturation`: Aleph's bottom clause; `clauses`: theta-subsumption, reduction, equivalence;
- `features`: DrawFeatures and the vectorised feature matrix; `network`: the torch MLP; `linear`: the
  logistic-regression baseline;
- `explain` / `relevance`: neighbourhoods, maximal-fidelity clauses, relevance, structuring;
- `settings`, `estimator`, `explainers/` (one explainer per module), `runs` (default settings, the
  held-out fold, `run`), `tables` (what the page shows), `method` (the registered `SPEC`);
- `trains` / `mutagenesis` / `carcinogenesis`: data.
"""
