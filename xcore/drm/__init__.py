"""Deep relational machines with logical local explanations (Srinivasan, Vig & Bain).

- `problem`: the ILP task from a dataset (target, examples, coded facts, modes given or derived);
- `saturation`: Aleph's bottom clause; `clauses`: theta-subsumption, reduction, equivalence;
- `features`: DrawFeatures and the vectorised feature matrix; `network`: the torch MLP;
- `explain` / `relevance`: neighbourhoods, maximal-fidelity clauses, relevance, structuring;
- `method`: the registered method (`SPEC`); `trains` / `mutagenesis`: data.
"""
