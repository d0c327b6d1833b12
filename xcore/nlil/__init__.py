"""m-NLIL: several interpretable first-order rules per label from graph-structured data (on Neural Logic
Inductive Learning), executed symbolically for precision/recall, and a post-hoc explainer of a GCN.

Modules: `graph` (TensorLog operators over a dataset), `model` (the NLIL network and its training),
`rules` (rule text and DuckDB execution), `mnlil` (Algorithm 1), `kg` (filtered ranks),
`linkpred` (link prediction on knowledge graphs: Neural-LP-style path rules, filtered MRR and Hits@1/3/10),
`gnn` (GCN, GNNExplainer, fidelity), `comparison` (rules against GNNExplainer), `viz` (rule patterns);
the registered method: `settings`, `heads` (which heads a run trains), `estimator`, `explainers/` (one
explainer per module), `runs` (the held-out split and `run`), `linkruns` (link-prediction runs),
`method` (the `SPEC`).
"""
