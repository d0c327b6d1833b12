"""Object embeddings for Markov logic (Obj2Vec-style skip-gram, as used by I-Explain).

Two objects are *context* of each other when they occur together in a ground formula that the
evidence supports. Every such ground clause of the full grounding (``MLNModel.mln_.program``,
before evidence folding) contributes all ordered pairs of distinct constants among its atoms'
arguments (its variable bindings and the rule's own constants, e.g. the word in
``has_word(r, "great") => positive(r)``) as (centre, context) pairs. Word constants are part of
the vocabulary, so reviews that share words get similar vectors (skip-gram learns second-order
similarity: objects with the same contexts end up close).

Which ground clauses count (`context`):

* ``"body"`` (default): the evidence satisfies the clause's observed conditions -- every body
  atom (clause-negative literal) that is observed is true; open (query) atoms do not matter. This
  keeps the formulas of test objects, whose only open atom is the query.
* ``"satisfied"``: the evidence alone makes the clause true (some observed literal is true). This
  is the literal reading, but it drops e.g. ``has_word(r, w) => positive(r)`` for every test
  review ``r`` (``positive(r)`` is open), so test objects are embedded from few formulas.
* ``"all"``: every ground clause.

Training: skip-gram with negative sampling (noise distribution unigram^0.75 of the contexts),
mini-batches of pairs, Adam, on CPU (one thread: the operations are tiny) with a private seeded
`torch.Generator` (the global torch RNG is not touched), so results are reproducible for a seed. The returned vectors are the input
embeddings of the domain's objects scaled to unit length (Euclidean distance is then monotone in
cosine similarity). With no pairs at all the vectors are seeded random normal vectors
(``fallback=True`` and a `note` says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from xcore.errors import XcoreError
from xcore.logic.ast import Constant
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import GroundProgram
from xcore.optional_deps import import_optional
from xcore.runtime import Progress, throttled, torch_threads

CONTEXTS: tuple[str, ...] = ("body", "satisfied", "all")
"""Which ground clauses provide co-occurrence pairs (see the module docstring)."""


@dataclass
class ObjectEmbedding:
    """Unit-length vectors for the objects (constants) of one argument type."""

    names: np.ndarray
    """(n,) object names (constant strings), in the store's sorted constant order."""
    vectors: np.ndarray
    """(n, dim) float64 unit vectors, row i for ``names[i]``."""
    domain_type: str
    constant_ids: np.ndarray
    """(n,) store constant ids of the objects."""
    n_pairs: int = 0
    """Number of (centre, context) pairs trained on."""
    fallback: bool = False
    """True when there were no pairs and the vectors are seeded random normal vectors."""
    n_isolated: int = 0
    """Objects of the domain that occur in no pair (their vectors stay at their random start)."""
    losses: list[float] = field(default_factory=list)
    """Mean training loss per epoch."""
    note: str = ""

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return int(len(self.names))

    def index_of(self, names: object) -> np.ndarray:
        """Row of each object name (vectorised); raises `XcoreError` for unknown names."""
        names = np.atleast_1d(np.asarray(names, dtype=object))
        if not len(self.names):
            raise XcoreError(f"the embedding of type {self.domain_type!r} has no objects")
        pos = np.minimum(np.searchsorted(self.names, names), len(self.names) - 1)
        ok = self.names[pos] == names
        if not np.all(ok):
            bad = names[~ok][0]
            raise XcoreError(f"{bad!r} is not an object of type {self.domain_type!r}")
        return pos.astype(np.int64)

    def vector(self, name: str) -> np.ndarray:
        """The vector of one object."""
        return self.vectors[int(self.index_of([name])[0])]


# ---------------------------------------------------------------------- co-occurrence pairs
def _rule_constant_ids(rule, store: AtomStore) -> np.ndarray:
    """Constant ids of the constants written in a rule (those the store knows), distinct."""
    ids = {store.constant_id(a.value) for lit in rule.literals for a in lit.atom.args if isinstance(a, Constant)}
    return np.array(sorted(i for i in ids if i >= 0), dtype=np.int64)


def _supported_rows(atom_ids: np.ndarray, signs: np.ndarray, store: AtomStore, context: str) -> np.ndarray:
    """Bool (n,): ground clauses that count as contexts under `context`."""
    n = atom_ids.shape[0]
    if context == "all":
        return np.ones(n, dtype=bool)
    observed = np.append(~store.is_target, True)  # a missing atom (-1) is closed-world evidence
    value_true = np.append(np.where(store.is_target, False, np.nan_to_num(store.value) >= 0.5), False)
    obs, true = observed[atom_ids], value_true[atom_ids]
    if context == "body":
        negative = (np.asarray(signs) < 0)[None, :]
        return ~(negative & obs & ~true).any(axis=1)
    # "satisfied": some observed literal is true
    return (obs & (true == (np.asarray(signs) > 0)[None, :])).any(axis=1)


def cooccurrence_pairs(program: GroundProgram, context: str = "body") -> tuple[np.ndarray, np.ndarray]:
    """(centre, context) constant-id arrays: all ordered pairs of distinct constants of every
    ground clause that counts under `context` (one pair per clause and ordered constant pair)."""
    if context not in CONTEXTS:
        raise XcoreError(f"unknown context {context!r}; use one of {', '.join(CONTEXTS)}")
    store = program.store
    centres, contexts = [], []
    for g in program:  # one pass per rule, vectorised over its ground clauses
        if g.n == 0:
            continue
        rows = _supported_rows(np.asarray(g.atom_ids), g.signs, store, context)
        if not rows.any():
            continue
        consts = _rule_constant_ids(g.rule, store)
        M = np.concatenate([np.asarray(g.bindings, dtype=np.int64)[rows],
                            np.broadcast_to(consts, (int(rows.sum()), len(consts)))], axis=1)
        if M.shape[1] < 2:
            continue
        M = np.sort(M, axis=1)
        M[:, 1:][M[:, 1:] == M[:, :-1]] = -1  # each distinct constant once per clause
        w = M.shape[1]
        a, b = np.nonzero(~np.eye(w, dtype=bool))
        c, x = M[:, a].ravel(), M[:, b].ravel()
        ok = (c >= 0) & (x >= 0)
        centres.append(c[ok])
        contexts.append(x[ok])
    if not centres:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(centres), np.concatenate(contexts)


# ---------------------------------------------------------------------- skip-gram
def _train_skipgram(centre: np.ndarray, context: np.ndarray, n_vocab: int, dim: int, epochs: int,
                    negatives: int, batch_size: int, lr: float, seed: int,
                    tick: Progress | None = None) -> tuple[np.ndarray, list[float]]:
    """Skip-gram with negative sampling; returns the (n_vocab, dim) input embeddings and losses."""
    torch = import_optional("torch")  # heavy: loaded only when embeddings are trained


    with torch_threads(1):  # tiny dense ops: thread start-up costs more than it saves (~10x here)
        return _skipgram_steps(torch, centre, context, n_vocab, dim, epochs, negatives, batch_size, lr, seed, tick)


def _skipgram_steps(torch, centre, context, n_vocab, dim, epochs, negatives, batch_size, lr, seed, tick=None):
    """The training loop (Adam written out: importing torch.optim pulls in torch._dynamo, ~3 s)."""
    g = torch.Generator().manual_seed(int(seed))
    w_in = ((torch.rand(n_vocab, dim, generator=g, dtype=torch.float32) - 0.5) / dim).requires_grad_()
    w_out = torch.zeros(n_vocab, dim, dtype=torch.float32).requires_grad_()
    params = [w_in, w_out]
    m1 = [torch.zeros_like(p) for p in params]
    m2 = [torch.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    freq = np.bincount(context, minlength=n_vocab).astype(np.float64) ** 0.75
    noise = torch.from_numpy(freq / freq.sum())
    c_all, x_all = torch.from_numpy(centre), torch.from_numpy(context)
    P = len(centre)
    losses = []
    step = 0
    for epoch in range(epochs):
        perm = torch.randperm(P, generator=g)
        total = 0.0
        for lo in range(0, P, batch_size):  # one step per mini-batch of pairs
            idx = perm[lo:lo + batch_size]
            c, x = c_all[idx], x_all[idx]
            neg = torch.multinomial(noise, len(idx) * negatives, replacement=True, generator=g)
            neg = neg.view(len(idx), negatives)
            u = w_in[c]
            pos = torch.nn.functional.logsigmoid((u * w_out[x]).sum(-1))
            ng = torch.nn.functional.logsigmoid(-(u[:, None, :] * w_out[neg]).sum(-1)).sum(-1)
            loss = -(pos + ng).mean()
            for p in params:
                p.grad = None
            loss.backward()
            step += 1
            with torch.no_grad():
                for p, a, b in zip(params, m1, m2):
                    a.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                    b.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                    denom = (b / (1 - beta2 ** step)).sqrt_().add_(eps)
                    p.addcdiv_(a, denom, value=-lr / (1 - beta1 ** step))
            total += float(loss.detach()) * len(idx)
            if tick is not None:
                tick((epoch + (lo + len(idx)) / P) / epochs, f"skip-gram epoch {epoch + 1} of {epochs}")
        losses.append(total / P)
    return w_in.detach().numpy().astype(np.float64), losses


def _unit(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norm > 0, norm, 1.0)


def embed_objects(model, domain_type: str, dim: int = 16, epochs: int = 20, seed: int = 0,
                  context: str = "body", negatives: int = 5, batch_size: int | None = None,
                  lr: float = 0.05, max_pairs: int = 2_000_000, progress: Progress | None = None) -> ObjectEmbedding:
    """Skip-gram embeddings of the objects of type `domain_type` from their co-occurrence in the
    ground formulas of a grounded `MLNModel` (or a `GroundMLN` with its program); `progress` hears
    the training steps."""
    mln = getattr(model, "mln_", model)
    if mln is None:
        raise XcoreError("ground the model first: MLNModel(...).ground(dataset)")
    program = getattr(mln, "program", None)
    if program is None or mln.store is None:
        raise XcoreError("object embeddings need a network grounded from a dataset (with its atom store)")
    for name, v in (("dim", dim), ("epochs", epochs), ("negatives", negatives), ("max_pairs", max_pairs)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise XcoreError(f"embed_objects: {name} must be an integer >= 1, got {v!r}")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise XcoreError(f"embed_objects: batch_size must be an integer >= 1, got {batch_size!r}")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
        raise XcoreError(f"embed_objects: lr must be a positive number, got {lr!r}")
    store = mln.store
    domain = check_domain_type(store, domain_type)
    names = store.constants[domain]
    centre, ctx = cooccurrence_pairs(program, context)
    rng = np.random.default_rng(seed)
    note = ""
    if len(centre) > max_pairs:  # seeded subsample keeps training time bounded
        keep = np.sort(rng.choice(len(centre), size=max_pairs, replace=False))
        centre, ctx = centre[keep], ctx[keep]
        note = f"trained on a random {max_pairs:,} of the co-occurrence pairs"
    if len(centre) == 0:
        vectors = _unit(rng.standard_normal((len(domain), int(dim))))
        return ObjectEmbedding(names, vectors, domain_type, domain.astype(np.int64), 0, True, len(domain), [],
                               "no objects co-occur in a supported ground formula: random vectors from the seed")
    vocab, inv = np.unique(np.concatenate([centre, ctx, domain.astype(np.int64)]), return_inverse=True)
    P = len(centre)
    c_v, x_v, d_v = inv[:P], inv[P:2 * P], inv[2 * P:]
    bs = int(batch_size) if batch_size is not None else int(np.clip(P // 50, 256, 65_536))
    w, losses = _train_skipgram(c_v.astype(np.int64), x_v.astype(np.int64), len(vocab), int(dim), int(epochs),
                                int(negatives), bs, float(lr), seed, throttled(progress))
    isolated = int((~np.isin(d_v, c_v)).sum())
    return ObjectEmbedding(names, _unit(w[d_v]), domain_type, domain.astype(np.int64), P, False, isolated,
                           losses, note)


def check_domain_type(store: AtomStore, domain_type: str) -> np.ndarray:
    """Sorted constant ids of the objects of `domain_type`; `XcoreError` for an unknown/empty type."""
    if not isinstance(domain_type, str) or domain_type not in store.domains or len(store.domain(domain_type)) == 0:
        known = ", ".join(sorted(t for t, d in store.domains.items() if len(d))) or "none"
        raise XcoreError(f"unknown domain type {domain_type!r}; the dataset's argument types are: {known}")
    return store.domain(domain_type)
