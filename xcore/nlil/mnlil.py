"""m-NLIL (Algorithm 1): several rules per label by alternating NLIL training per cluster with
reassignment of every positive example to the cluster of lowest loss + lambda * distance to its centre.

Node embeddings are fixed structural features (per binary operator and unary predicate, how many
neighbours satisfy it, log-scaled and L2-normalised), so centres live in one space; the paper's
f(x, w_c) from the cluster network is replaced by this shared embedding (stated, not hidden).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from xcore.nlil.graph import KB, Operators, Queries
from xcore.nlil.model import NLIL, train
from xcore.nlil.rules import Or, Rule, fires, quality
from xcore.optional_deps import import_optional
from xcore.runtime import Progress, scaled


def node_embedding(ops: Operators) -> sp.csr_matrix:
    """(N, D) sparse structural embedding: own unary predicates, and per binary operator the count of
    neighbours reached through it that satisfy each unary predicate (log1p, rows L2-normalised).

    Built as sparse products (edges x unary memberships), never as a dense nodes x operators x types
    tensor; only the rows of the queries are made dense (`query_embedding`)."""
    n, nb = ops.n, ops.n_binary
    U = sp.csr_matrix(ops.filters.numpy().T)  # (N, Ku)
    ku = U.shape[1]
    blocks = [U]
    if nb and len(ops.op) and ku:
        src, dst, op = ops.src.numpy(), ops.dst.numpy(), ops.op.numpy() - 1
        A = sp.csr_matrix((np.ones(len(src)), (op.astype(np.int64) * n + dst, src)), shape=(nb * n, n))
        agg = (A @ U).tocoo()  # row k * n + i, column u: neighbours of i through operator k with u
        blocks.append(sp.csr_matrix((agg.data, (agg.row % n, (agg.row // n) * ku + agg.col)), shape=(n, nb * ku)))
    X = sp.hstack(blocks, format="csr").astype(np.float64)
    X.data = np.log1p(X.data)
    norm = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
    return sp.diags(1.0 / np.where(norm > 0, norm, 1.0)) @ X


def query_embedding(emb: sp.csr_matrix | np.ndarray, q: Queries) -> np.ndarray:
    """The dense embedding of each query: of X (unary heads) or of X and Y side by side (binary heads)."""
    rows = (lambda ix: emb[ix].toarray()) if sp.issparse(emb) else (lambda ix: emb[ix])
    return rows(q.x) if q.y is None else np.hstack([rows(q.x), rows(q.y)])


@dataclass
class Config:
    """The NLIL and clustering parameters m-NLIL needs (a plain copy of the method's settings)."""

    statements: int = 6
    path_length: int = 2
    depth: int = 2
    width: int = 4
    clusters: int = 3
    init: str = "kmeans"
    lam: float = 0.1
    rounds: int = 4
    epochs: int = 100
    lr: float = 0.05
    n_jobs: int = 1
    seed: int = 0
    min_cluster: int = 2


@dataclass
class LabelRules:
    """m-NLIL's result for one head: one model and rule per surviving cluster, members, history."""

    head: str
    arity: int
    models: list[NLIL]
    rules: list[Rule]
    members: list[np.ndarray]
    """per cluster, indices (into the training queries) of the positives assigned to it"""
    history: list[dict] = field(default_factory=list)
    loss_curves: list[list[float]] = field(default_factory=list)
    collapse: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    why: str | None = None
    """When fewer distinct rules than clusters asked for came out: why, in words (None otherwise)."""

    def collapse_notes(self) -> list[str]:
        """What a user reads about a collapse: the reason in words first, then what happened round by round."""
        if not self.collapse:
            return []
        if self.why is None:
            return list(self.collapse)
        return [f"{self.why} What happened: {'; '.join(self.collapse)}."]

    @property
    def union(self) -> Rule:
        """The label's rule set as one disjunction."""
        bodies = list(dict.fromkeys(r.body for r in self.rules))  # identical cluster rules once
        body = bodies[0]
        for b in bodies[1:]:
            body = Or(body, b)
        return Rule(self.head, self.arity, body)

    def proba(self, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        """The label's probability: the soft OR (max) over the cluster networks."""
        with torch.no_grad():
            outs = []
            for m in self.models:
                if self.arity == 1:
                    outs.append(m(None)[torch.as_tensor(x, dtype=torch.long)])
                else:
                    full = m(torch.as_tensor(x, dtype=torch.long))
                    outs.append(full[torch.arange(len(x)), torch.as_tensor(y, dtype=torch.long)])
            return torch.stack(outs).max(0).values.numpy().astype(float)

    def all_scores(self, x: np.ndarray) -> np.ndarray:
        """(B, N) scores of every object for subjects `x` (binary heads), max over clusters."""
        with torch.no_grad():
            return torch.stack([m(torch.as_tensor(x, dtype=torch.long)) for m in self.models]).max(0).values.numpy()


def _train_one(args: tuple, progress: Progress | None = None) -> tuple[dict, list[float]]:
    """Train one cluster's network (run in a worker process or inline, where `progress` hears its
    epochs); returns its state and loss curve."""
    ops, head, arity, cfg, state, q, seed = args
    torch.set_num_threads(1)
    m = NLIL(ops, head, arity, cfg.statements, cfg.path_length, cfg.depth, cfg.width, seed=seed)
    if state is not None:
        m.load_state_dict(state)
    losses = train(m, q, epochs=cfg.epochs, lr=cfg.lr, seed=seed, progress=progress)
    return m.state_dict(), losses


def _initial(emb: np.ndarray, q: Queries, kb: KB, ops: Operators, cfg: Config) -> np.ndarray:
    """Initial cluster of each positive: k-means on embeddings, or by the most frequent neighbour class."""
    k = cfg.clusters
    if k == 1 or len(emb) <= 1 or (cfg.init != "frequency" and emb.shape[1] == 0):
        return np.zeros(len(emb), dtype=int)  # no embedding features (no unary filters): one cluster to start
    if cfg.init == "frequency":
        U = ops.filters.numpy()
        nbr = np.zeros((len(q.x), U.shape[0]))
        src, dst = ops.src.numpy(), ops.dst.numpy()
        lookup = np.full(ops.n, -1)
        lookup[q.x] = np.arange(len(q.x))
        rows = lookup[dst]
        ok = rows >= 0
        np.add.at(nbr, rows[ok], U[:, src[ok]].T)
        top = nbr.argmax(1)
        common = np.bincount(top, minlength=U.shape[0]).argsort()[::-1][: k - 1]
        out = np.full(len(top), k - 1)
        for c, t in enumerate(common):
            out[top == t] = c
        return out
    KMeans = import_optional("sklearn.cluster").KMeans  # heavy (sklearn): only k-means initialisation needs it
    k = min(k, len(np.unique(emb, axis=0)))
    return KMeans(n_clusters=max(k, 1), n_init=10, random_state=cfg.seed).fit_predict(emb)


def _start(kb: KB, ops: Operators, q: Queries, cfg: Config, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the positive examples' embedding, their initial clusters numbered 0..k-1)."""
    if cfg.clusters > 1:  # one cluster never uses the embedding
        emb = query_embedding(node_embedding(ops), q.subset(q.label > 0.5))
    else:
        emb = np.zeros((len(pos), 0))
    assign = _initial(emb, q.subset(q.label > 0.5), kb, ops, cfg) if len(pos) else np.zeros(0, int)
    clusters = sorted(set(assign.tolist())) or [0]
    return emb, np.searchsorted(clusters, assign)


def _cluster_jobs(ops: Operators, q: Queries, cfg: Config, states: list[dict | None], assign: np.ndarray,
                  pos: np.ndarray, neg: np.ndarray) -> list[tuple]:
    """One training job per cluster: its positive examples and every negative one."""
    jobs = []
    for c in range(len(states)):
        mask = np.zeros(len(q), dtype=bool)
        mask[pos[assign == c]] = True
        mask[neg] = True
        jobs.append((ops, q.head, q.arity, cfg, states[c], q.subset(mask), cfg.seed + 101 * c))
    return jobs


def _run_jobs(jobs: list[tuple], cfg: Config, stack: ExitStack, pools: list[ProcessPoolExecutor], head: str,
              rnd: int, progress: Progress | None) -> list[tuple[dict, list[float]]]:
    """Train the clusters' networks of one round: in worker processes with `n_jobs` > 1, else in turn."""
    k = len(jobs)
    if cfg.n_jobs > 1 and k > 1:
        if not pools:  # one pool for every round: workers start (and import torch) once
            pools.append(stack.enter_context(ProcessPoolExecutor(max_workers=min(cfg.n_jobs, k),
                                                                 mp_context=mp.get_context("spawn"))))
        return list(pools[0].map(_train_one, jobs))
    return [_train_one(j, None if progress is None else scaled(
        lambda f, m, c=c: progress(f, f"{head}: round {rnd + 1}, cluster {c + 1} of {k}: {m}"),
        (rnd + c / k) / cfg.rounds, (rnd + (c + 1) / k) / cfg.rounds)) for c, j in enumerate(jobs)]


def _reassign(models: list[NLIL], q: Queries, emb: np.ndarray, assign: np.ndarray,
              cfg: Config) -> tuple[np.ndarray, np.ndarray, int, float, np.ndarray]:
    """Algorithm 1's reassignment: each positive example to the cluster minimising its network's loss plus
    `lam` times its distance to the cluster's centre; clusters left below `min_cluster` examples dissolve
    into the nearest survivor. (new assignment over the kept clusters, kept cluster ids, examples moved,
    mean loss, cluster sizes before dissolving)."""
    k = len(models)
    qp = q.subset(q.label > 0.5)
    losses = np.stack([m.example_losses(qp) for m in models], axis=1)  # (P, k)
    centres = np.stack([emb[assign == c].mean(0) if (assign == c).any() else np.zeros(emb.shape[1])
                        for c in range(k)])
    dist = ((emb[:, None, :] - centres[None]) ** 2).sum(-1)
    new = (losses + cfg.lam * dist).argmin(1)
    moved = int((new != assign).sum())
    sizes = np.bincount(new, minlength=k)
    keep = np.flatnonzero(sizes >= min(cfg.min_cluster, len(qp)))
    if not len(keep):  # every cluster fell below the minimum: the largest one survives
        keep = np.array([int(sizes.argmax())])
    if len(keep) < k:
        new = np.searchsorted(keep, keep[(losses + cfg.lam * dist)[:, keep].argmin(1)])
    return new, keep, moved, float(losses.min(1).mean()), sizes


def fit_label(kb: KB, ops: Operators, q: Queries, cfg: Config, progress: Progress | None = None) -> LabelRules:
    """Algorithm 1 for one head: initialise, then alternate training per cluster and reassignment."""
    t0 = time.perf_counter()
    pos, neg = np.flatnonzero(q.label > 0.5), np.flatnonzero(q.label <= 0.5)
    emb, assign = _start(kb, ops, q, cfg, pos)
    k = int(assign.max()) + 1 if len(assign) else 1
    states: list[dict | None] = [None] * k
    history: list[dict] = []
    collapse: list[str] = []
    curves: list[list[float]] = [[] for _ in range(k)]
    train_time = 0.0
    with ExitStack() as stack:
        pools: list[ProcessPoolExecutor] = []
        for rnd in range(cfg.rounds):
            t1 = time.perf_counter()
            results = _run_jobs(_cluster_jobs(ops, q, cfg, states, assign, pos, neg), cfg, stack, pools, q.head,
                                rnd, progress)
            train_time += time.perf_counter() - t1
            states = [r[0] for r in results]
            for c, r in enumerate(results):
                curves[c] += r[1]
            if k == 1 or not len(pos):
                history.append({"round": rnd + 1, "clusters": k, "moved": 0})
                break
            models = [_model(ops, q, cfg, st, cfg.seed + 101 * c) for c, st in enumerate(states)]
            new, keep, moved, mean_loss, sizes = _reassign(models, q, emb, assign, cfg)
            converged = moved == 0 and len(keep) == k
            if len(keep) < k:
                collapse.append(f"round {rnd + 1}: {k - len(keep)} of {k} clusters lost their examples "
                                f"(sizes {sizes.tolist()}); their examples joined the nearest surviving cluster")
                states, curves, k = [states[c] for c in keep], [curves[c] for c in keep], len(keep)
            history.append({"round": rnd + 1, "clusters": k, "moved": moved, "mean_loss": mean_loss})
            if progress is not None:
                progress((rnd + 1) / cfg.rounds, f"{q.head}: round {rnd + 1}, {moved} examples moved, {k} clusters")
            assign = new
            if converged:
                break
    return _finish(kb, ops, q, cfg, states, assign, pos, history, curves, collapse,
                   {"train": train_time, "total": time.perf_counter() - t0})


def _finish(kb: KB, ops: Operators, q: Queries, cfg: Config, states: list, assign: np.ndarray, pos: np.ndarray,
            history: list[dict], curves: list[list[float]], collapse: list[str],
            timings: dict[str, float]) -> LabelRules:
    """The label's rules from the final cluster networks, with the notes on collapsed clusters."""
    k = len(states)
    if k == 1 and cfg.clusters > 1 and len(pos) > 1:
        collapse.append(f"collapsed to a single cluster (asked for {cfg.clusters})")
    models = [_model(ops, q, cfg, s, cfg.seed + 101 * c) for c, s in enumerate(states)]
    rules = [m.rule() for m in models]
    same = len(rules) - len(set(r.body for r in rules))
    if same:
        collapse.append(f"{same} cluster(s) learned the same rule as another cluster")
    members = [pos[assign == c] for c in range(k)] if len(pos) else [np.zeros(0, int)]
    why = collapse_reason(kb, q, rules, cfg) if collapse else None
    return LabelRules(q.head, q.arity, models, rules, members, history, curves, collapse, timings, why)


def collapse_reason(kb: KB, q: Queries, rules: list[Rule], cfg: Config) -> str | None:
    """Why fewer distinct rules than `cfg.clusters` came out, in words, from the rules executed on the
    training queries: one rule already covers (nearly) every positive, too few positives for the clusters'
    minimum size, or clusters whose examples were not separable."""
    distinct = list({r.body: r for r in rules}.values())
    if len(distinct) >= cfg.clusters:
        return None
    pos = q.label > 0.5
    n_pos = int(pos.sum())
    head = (f"{len(distinct)} distinct rule{'s' if len(distinct) != 1 else ''} for {q.head} where "
            f"{cfg.clusters} clusters were asked for")
    if not n_pos:
        return f"{head}: there is no positive training example to divide among clusters."
    fired = kb.store().fires(distinct, q.frame(kb))  # (queries, rules), by DuckDB on the facts
    recall = fired[pos].mean(0)
    precision = (fired & pos[:, None]).sum(0) / np.maximum(fired.sum(0), 1)
    reasons = []
    best = int(recall.argmax())
    if recall[best] >= 0.95:
        reasons.append(f"one rule, {distinct[best].text}, already covers {int(fired[pos, best].sum())} of the "
                       f"{n_pos} positive training examples (precision {precision[best]:.2f}), so the label needs "
                       "no second rule here: every example is explained by it, and the other clusters lost their "
                       "examples to it or learned the same rule")
    if n_pos < cfg.clusters * cfg.min_cluster:
        reasons.append(f"only {n_pos} positive training example{'s' if n_pos != 1 else ''} for {cfg.clusters} "
                       f"clusters of at least {cfg.min_cluster} each")
    if not reasons:
        reasons.append(f"the positives were not separated into groups that different rules explain better (the "
                       f"best rule covers {recall[best]:.0%} of them); the clusters' networks were drawn to the "
                       "same pattern. More rounds, a larger lambda, frequency initialisation or fewer clusters "
                       "may separate them")
    return f"{head}: " + "; and ".join(reasons) + "."


def _model(ops: Operators, q: Queries, cfg: Config, state: dict, seed: int) -> NLIL:
    m = NLIL(ops, q.head, q.arity, cfg.statements, cfg.path_length, cfg.depth, cfg.width, seed=seed)
    m.load_state_dict(state)
    m.eval()
    return m


def rule_table(lr: LabelRules, kb: KB, q: Queries) -> list[dict]:
    """Per cluster rule and for the union: precision, recall, support on `q`, by DuckDB execution."""
    facts, frame = kb.facts(), q.frame(kb)
    rows = []
    for c, r in enumerate([*lr.rules, lr.union]):
        f = fires(r, facts, frame)
        cov = lr.members[c] if c < len(lr.rules) else np.concatenate(lr.members)
        rows.append({"cluster": c if c < len(lr.rules) else -1, "rule": r.text, **quality(f, q.label),
                     "members": len(cov)})
    return rows
