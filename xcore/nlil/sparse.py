"""Weighted sparse propagation over a fixed edge pattern (TensorLog's operator products for a whole batch of
soft entity vectors at once): the edges of every operator stacked in one CSR pattern, the attention weights
as its values, one product per step for all columns; used by link prediction and by m-NLIL's binary heads.

On CPU the product runs in scipy on the nonzeros of the batch only (a chain from one entity touches its
neighbourhood, not the graph) with a hand-written backward; on another device (CUDA) it is one
`torch.sparse.mm`, differentiated by torch."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch


class _Propagate(torch.autograd.Function):
    """out = W @ V for a sparse W with learned values on a fixed pattern, computed on the nonzeros of V only
    (a chain from one entity touches its neighbourhood, not the graph): scipy sparse-sparse products
    both ways, and the value gradient as one product per (nonzero of V, edge leaving its row)."""

    @staticmethod
    def forward(ctx, w: torch.Tensor, v: torch.Tensor, graph: "SparseGraph") -> torch.Tensor:
        wn, vn = w.detach().numpy(), v.detach().numpy()
        W = sp.csr_matrix((wn, graph.indices, graph.indptr), shape=(graph.n, graph.n))
        V = sp.csr_matrix(vn)
        out = (W @ V).tocoo()
        ctx.save_for_backward(w)
        ctx.graph, ctx.V, ctx.support = graph, V, (out.row, out.col)
        dense = np.zeros(vn.shape, dtype=vn.dtype)
        dense[out.row, out.col] = out.data
        return torch.from_numpy(dense)

    @staticmethod
    def backward(ctx, g: torch.Tensor):
        (w,) = ctx.saved_tensors
        graph, V, (rows, cols) = ctx.graph, ctx.V, ctx.support
        gn = g.detach().numpy()
        G = sp.csr_matrix((gn[rows, cols], (rows, cols)), shape=gn.shape)  # only where the output can be nonzero
        WT = sp.csr_matrix((w.detach().numpy()[graph.perm], graph.t_indices, graph.t_indptr),
                           shape=(graph.n, graph.n))
        gv = np.asarray((WT @ G).toarray(), dtype=gn.dtype)
        Vc = V.tocoo()
        start, deg = graph.t_indptr[Vc.row], np.diff(graph.t_indptr)[Vc.row]
        rep = np.repeat(np.arange(len(Vc.data)), deg)
        k = start[rep] + np.arange(len(rep)) - np.repeat(np.cumsum(deg) - deg, deg)  # position in W^T's CSR
        contrib = gn[graph.t_indices[k], Vc.col[rep]] * Vc.data[rep]
        gw = np.bincount(graph.perm[k], weights=contrib, minlength=len(graph.src)).astype(gn.dtype)
        return torch.from_numpy(gw), torch.from_numpy(gv), None


class SparseGraph:
    """The stacked TensorLog operators of a graph: the distinct (object, subject) pairs of all edges in CSR
    order, which operator each edge is, and the pair it adds to; dense when the graph is nearly full."""

    backend: str = "scipy"
    """"scipy" (CPU: products on the batch's nonzeros) or "torch" (torch.sparse.mm; always used off the CPU)"""

    def __init__(self, src: np.ndarray, dst: np.ndarray, op: np.ndarray, n: int) -> None:
        self.n = n
        key = dst.astype(np.int64) * n + src
        pairs, pair_of = np.unique(key, return_inverse=True)
        self.dst, self.src = pairs // n, pairs % n
        self.pair_of = torch.as_tensor(pair_of.reshape(-1), dtype=torch.long)
        self.op = torch.as_tensor(op, dtype=torch.long)
        self.dense = n * n <= 8 * len(pairs)
        W = sp.csr_matrix((np.ones(len(pairs), np.float32), (self.dst, self.src)), shape=(n, n))
        self.indices, self.indptr = W.indices, W.indptr
        T = W.T.tocsr()
        self.t_indices, self.t_indptr = T.indices, T.indptr
        self.perm = np.lexsort((self.dst, self.src))  # CSR order of the transpose
        self.flat = torch.as_tensor(self.dst * n + self.src, dtype=torch.long)

        self._on: dict[str, tuple[torch.Tensor, ...]] = {}

    def _tensors(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        """pair_of, op, flat and the (row, col) index of the pattern on `device`, moved once."""
        key = str(device)
        if key not in self._on:
            index = torch.as_tensor(np.stack([self.dst, self.src]), dtype=torch.long)
            self._on[key] = tuple(t.to(device) for t in (self.pair_of, self.op, self.flat, index))
        return self._on[key]

    def apply(self, weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """sum_k weights[k] M_k^T v for (N, B) columns `v`, `weights` per operator (K,)."""
        pair_of, op, flat, index = self._tensors(v.device)
        w = torch.zeros(len(self.src), dtype=v.dtype, device=v.device).index_add(0, pair_of, weights[op])
        if self.dense:
            W = torch.zeros(self.n * self.n, dtype=v.dtype, device=v.device).index_put((flat,), w)
            return W.reshape(self.n, self.n) @ v
        if self.backend == "torch" or v.device.type != "cpu":
            return torch.sparse.mm(torch.sparse_coo_tensor(index, w, (self.n, self.n), is_coalesced=True, check_invariants=False), v)
        return _Propagate.apply(w, v, self)
