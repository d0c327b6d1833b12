"""A relational dataset as TensorLog operators: one sparse adjacency per binary predicate, one 0/1
vector per unary predicate, over one entity index; plus the labelled queries of a head predicate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from xcore.data.dataset import RelationalDataset
from xcore.errors import DataError
from xcore.nlil.rules import FactStore
from xcore.nlil.sparse import SparseGraph


@dataclass
class KB:
    """Entities, unary vectors and binary edge lists of the observed facts (value >= 0.5)."""

    entities: np.ndarray
    unary: dict[str, np.ndarray]
    """predicate -> entity indices where it holds"""
    binary: dict[str, np.ndarray]
    """predicate -> (2, E) array of (subject, object) entity indices"""

    @property
    def n(self) -> int:
        return len(self.entities)

    def index_of(self, names: np.ndarray) -> np.ndarray:
        """Entity indices of entity names (DataError for an unknown name)."""
        pos = pd.Index(self.entities).get_indexer(np.asarray(names, dtype=object))
        if (pos < 0).any():
            raise DataError(f"unknown entity {np.asarray(names)[pos < 0][0]!r}")
        return pos

    def facts(self) -> dict[str, pd.DataFrame]:
        """Fact tables (entity names, columns a0[, a1]) per predicate, for symbolic evaluation."""
        out = {p: pd.DataFrame({"a0": self.entities[ix]}) for p, ix in self.unary.items()}
        out.update({p: pd.DataFrame({"a0": self.entities[e[0]], "a1": self.entities[e[1]]})
                    for p, e in self.binary.items()})
        return out

    def store(self) -> FactStore:
        """The facts registered once in DuckDB, built on first use and kept with the KB (one per fit)."""
        if getattr(self, "_store", None) is None:
            self._store = FactStore(self.facts())
        return self._store

    def operators(self) -> Operators:
        return Operators.of(self)


def kb_from_dataset(ds: RelationalDataset, exclude: tuple[str, ...] = ()) -> KB:
    """The observed unary and binary facts of `ds` (other arities and `exclude`d predicates left out)."""
    ents: list[np.ndarray] = []
    for p in ds.schema:
        for part in ("obs", "targets", "truth"):
            t = ds.tables[p.name][part]
            ents += [t[c].to_numpy(dtype=object) for c in p.columns]
    entities = np.unique(np.concatenate(ents).astype(str)).astype(object) if ents else np.array([], dtype=object)
    index = pd.Index(entities)
    unary, binary = {}, {}
    for p in ds.schema:
        if p.name in exclude or p.arity not in (1, 2):
            continue
        t = ds.tables[p.name]["obs"]
        t = t[t["value"] >= 0.5]
        if not len(t):
            continue
        if p.arity == 1:
            unary[p.name] = np.unique(index.get_indexer(t["a0"].astype(str)))
        else:
            binary[p.name] = np.unique(np.stack([index.get_indexer(t["a0"].astype(str)),
                                                 index.get_indexer(t["a1"].astype(str))]), axis=1)
    return KB(entities, unary, binary)


@dataclass
class Operators:
    """The TensorLog operator bank: identity, each binary predicate forward and inverse, each unary filter.

    Operator k on a soft entity vector v is M_k^T v (M_k the sparse adjacency of "r" or of its
    inverse "r^-1") or u * v for a unary filter "u?". `mixed(V, a)` applies, for each statement i,
    the attention mixture sum_k a[i, k] op_k to its batch V[i].
    """

    names: list[str]
    """operator names: "id", "r" (X -> Y along r(X, Y)), "r^-1" (along r(Y, X)), "u?" (keep where u holds)"""
    src: torch.Tensor
    dst: torch.Tensor
    op: torch.Tensor
    """edge e of operator op[e] moves mass from entity src[e] to dst[e]"""
    filters: torch.Tensor
    """dense (U, N) 0/1"""
    unary_names: list[str]
    n: int

    @classmethod
    def of(cls, kb: KB) -> Operators:
        src, dst, op, names = [], [], [], ["id"]
        for p in sorted(kb.binary):
            s, o = kb.binary[p]
            for name, a, b in ((p, s, o), (f"{p}^-1", o, s)):
                names.append(name)
                src.append(a)
                dst.append(b)
                op.append(np.full(len(a), len(names) - 1))
        cat = (lambda xs: torch.as_tensor(np.concatenate(xs), dtype=torch.long)) if src else \
            (lambda xs: torch.zeros(0, dtype=torch.long))
        unames = sorted(kb.unary)
        filters = torch.zeros(len(unames), kb.n)
        for i, u in enumerate(unames):
            filters[i, torch.as_tensor(kb.unary[u], dtype=torch.long)] = 1.0
        names += [f"{u}?" for u in unames]
        return cls(names, cat(src), cat(dst), cat(op), filters, unames, kb.n)

    def graph(self) -> SparseGraph:
        """The binary operators' edges as one weighted sparse pattern (built once, kept)."""
        if getattr(self, "_graph", None) is None:
            self._graph = SparseGraph(self.src.numpy(), self.dst.numpy(), self.op.numpy(), self.n)
        return self._graph

    @property
    def n_binary(self) -> int:
        return len(self.names) - 1 - len(self.unary_names)

    @property
    def k(self) -> int:
        return len(self.names)

    def matrix(self, name: str) -> torch.Tensor:
        """The sparse (N, N) matrix M_k^T of one binary operator (row = target entity)."""
        k = self.names.index(name)
        m = self.op == k
        idx = torch.stack([self.dst[m], self.src[m]])
        return torch.sparse_coo_tensor(idx, torch.ones(int(m.sum())), (self.n, self.n),
                                       check_invariants=True).coalesce()

    def mixed(self, V: torch.Tensor, a: torch.Tensor, transpose: bool = False) -> torch.Tensor:
        """(S, B, N) soft vectors, (S, K) attention -> (S, B, N): sum_k a[s, k] op_k(V[s]), clamped to [0, 1].

        The binary operators run as one gather/scatter over the edge list (the sparse product M_k^T v
        for all k at once, weighted per edge by its operator's attention); `transpose` applies M_k v
        instead (TensorLog's backward chaining, which scores every entity at once).
        """
        out = a[:, 0, None, None] * V
        if self.n_binary and len(self.op) and not transpose:  # a batch of chains: one sparse product each
            graph = self.graph()
            out = out + torch.stack([graph.apply(a[s], V[s].T).T for s in range(len(V))])
        elif self.n_binary and len(self.op):  # backward chaining from one test vector per statement
            msg = V[:, :, self.dst] * a[:, self.op][:, None, :]
            out = out.index_add(2, self.src, msg)
        if len(self.unary_names):
            weight = a[:, 1 + self.n_binary:] @ self.filters  # (S, N)
            out = out + V * weight[:, None, :]
        return out.clamp(max=1.0)


@dataclass
class Queries:
    """Labelled queries of a head predicate: subject (and object for binary heads) indices and labels."""

    head: str
    arity: int
    x: np.ndarray
    y: np.ndarray | None
    label: np.ndarray

    def __len__(self) -> int:
        return len(self.x)

    def subset(self, mask: np.ndarray) -> Queries:
        return Queries(self.head, self.arity, self.x[mask], None if self.y is None else self.y[mask], self.label[mask])

    def frame(self, kb: KB) -> pd.DataFrame:
        """Entity names and labels (columns x[, y], label) for symbolic evaluation."""
        out = {"x": kb.entities[self.x]}
        if self.y is not None:
            out["y"] = kb.entities[self.y]
        out["label"] = self.label.astype(float)
        return pd.DataFrame(out)

    def atoms(self, kb: KB) -> list[str]:
        """The canonical atom text of every query."""
        xs = kb.entities[self.x]
        if self.y is None:
            return [f"{self.head}({a})" for a in xs]
        return [f"{self.head}({a}, {b})" for a, b in zip(xs, kb.entities[self.y])]


def queries(ds: RelationalDataset, kb: KB, head: str, partition: str, negatives: int = 0,
            seed: int = 0) -> Queries:
    """Labelled queries of `head` from one partition ('obs' or 'truth'); `negatives` random corruptions
    per positive (of the object for binary heads, of the subject among same-typed entities for unary)."""
    p = ds.schema[head]
    if p.arity not in (1, 2):
        raise DataError(f"m-NLIL learns unary or binary heads; {head} has arity {p.arity}")
    t = ds.tables[head][partition]
    x = kb.index_of(t["a0"].astype(str).to_numpy())
    y = kb.index_of(t["a1"].astype(str).to_numpy()) if p.arity == 2 else None
    label = (t["value"].to_numpy() >= 0.5).astype(np.float32)
    if negatives and len(x):
        rng = np.random.default_rng(seed)
        pos = label > 0.5
        k = int(pos.sum()) * negatives
        if p.arity == 2:
            nx_, ny = np.repeat(x[pos], negatives), rng.integers(0, kb.n, k)
            keep = ~np.isin(nx_.astype(np.int64) * kb.n + ny, x[pos].astype(np.int64) * kb.n + y[pos])
            x, y = np.concatenate([x, nx_[keep]]), np.concatenate([y, ny[keep]])
            label = np.concatenate([label, np.zeros(int(keep.sum()), np.float32)])
        else:
            pool = np.setdiff1d(kb.index_of(ds.constants(p.types[0]).astype(str)), x[pos])
            if len(pool):
                extra = rng.choice(pool, size=min(k, len(pool)), replace=False)
                x = np.concatenate([x, extra])
                label = np.concatenate([label, np.zeros(len(extra), np.float32)])
    return Queries(head, p.arity, x, y, label)
