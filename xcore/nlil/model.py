"""Neural Logic Inductive Learning (Yang & Song, ICLR 2020) in torch, with every formula level built.

Primitive statements are operator chains of length up to T from the head's X (operator attention per
step, path attention over lengths), tested by a unary predicate (predicate attention, or "any") for
unary heads or read at Y for binary heads. Level l >= 1 builds `width` formulas, each an and/or
(connective attention) of two attention-mixtures of the previous level's formulas and their
negations (1 - x); the output attends over every formula of every level. Attentions are learned
tables (softmax of logits). `hard=True` replaces every softmax by its argmax: the network then
computes exactly the decoded rule, which tests compare with DuckDB's execution of the rule.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from xcore.errors import ConfigError
from xcore.nlil.graph import Operators, Queries
from xcore.nlil.rules import And, Formula, Not, Or, Rule, Statement, simplify
from xcore.runtime import Progress, throttled


def _attention(logits: torch.Tensor, hard: bool) -> torch.Tensor:
    if not hard:
        return torch.softmax(logits, dim=-1)
    return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)


class NLIL(nn.Module):
    """One NLIL network for one head predicate over one operator bank."""

    def __init__(self, ops: Operators, head: str, arity: int, n_statements: int = 6, path_length: int = 2,
                 depth: int = 2, width: int = 4, seed: int = 0, init_scale: float = 1.0) -> None:
        super().__init__()
        self.ops, self.head, self.arity = ops, head, arity
        self.S, self.T, self.depth, self.width = n_statements, path_length, depth, width
        g = torch.Generator().manual_seed(int(seed))
        def r(*shape):
            return nn.Parameter(torch.randn(*shape, generator=g) * init_scale)
        self.op_logits = r(self.S, self.T, ops.k)
        self.path_logits = r(self.S, self.T + 1)
        self.test_logits = r(self.S, len(ops.unary_names) + 1)  # last = any
        sizes = [self.S] + [width] * depth
        self.left = nn.ParameterList([r(width, 2 * sizes[l]) for l in range(depth)])
        self.right = nn.ParameterList([r(width, 2 * sizes[l]) for l in range(depth)])
        self.conn = nn.ParameterList([r(width, 2) for _ in range(depth)])  # and, or
        self.out_logits = r(sum(sizes))

    # ------------------------------------------------------------------ forward
    def statements(self, x: torch.Tensor | None, hard: bool = False) -> torch.Tensor:
        """Statement values: (S, N) for every entity as X (unary heads, `x` ignored, by backward
        chaining from the test vector), (S, B, N) over every Y for the subjects `x` (binary heads)."""
        path = _attention(self.path_logits, hard)
        if self.arity == 1:
            test = _attention(self.test_logits, hard)
            w = (test[:, :-1] @ self.ops.filters + test[:, -1:]).unsqueeze(1)  # (S, 1, N); "any" adds ones
            h = path[:, self.T, None, None] * w
            for t in range(self.T - 1, -1, -1):  # h_t = p_t w + Op_{t+1}^T h_{t+1}
                h = path[:, t, None, None] * w + self.ops.mixed(h, _attention(self.op_logits[:, t], hard), True)
            return h[:, 0, :].clamp(max=1.0)
        B, n = len(x), self.ops.n
        V = torch.zeros(self.S, B, n)
        V[:, torch.arange(B), x] = 1.0
        chain = path[:, 0, None, None] * V
        for t in range(self.T):
            V = self.ops.mixed(V, _attention(self.op_logits[:, t], hard))
            chain = chain + path[:, t + 1, None, None] * V
        return chain

    def formulas(self, psi: torch.Tensor, hard: bool = False) -> list[torch.Tensor]:
        """Every level's formula values, level 0 (the statements) first."""
        levels, prev = [psi], psi
        for l in range(self.depth):
            cand = torch.cat([prev, 1.0 - prev], dim=0)
            flat = cand.reshape(cand.shape[0], -1)
            L = (_attention(self.left[l], hard) @ flat).reshape(self.width, *prev.shape[1:])
            R = (_attention(self.right[l], hard) @ flat).reshape(self.width, *prev.shape[1:])
            c = _attention(self.conn[l], hard).reshape(self.width, *([1] * (prev.dim() - 1)), 2)
            prev = c[..., 0] * L * R + c[..., 1] * (L + R - L * R)
            levels.append(prev)
        return levels

    def forward(self, x: torch.Tensor | None = None, hard: bool = False) -> torch.Tensor:
        """Head probabilities: (N,) for every entity (unary heads), (B, N) over every Y (binary heads)."""
        allf = torch.cat(self.formulas(self.statements(x, hard), hard), dim=0)
        o = _attention(self.out_logits, hard)
        return torch.tensordot(o, allf, dims=([0], [0])).clamp(0.0, 1.0)

    def score(self, q: Queries, hard: bool = False) -> torch.Tensor:
        """The probability of each labelled query."""
        x = torch.as_tensor(q.x, dtype=torch.long)
        if self.arity == 1:
            return self(None, hard)[x]
        ux, inv = torch.unique(x, return_inverse=True)
        return self(ux, hard)[inv, torch.as_tensor(q.y, dtype=torch.long)]

    def example_losses(self, q: Queries) -> np.ndarray:
        """Binary cross-entropy of each query (no gradient)."""
        with torch.no_grad():
            p = self.score(q).clamp(1e-6, 1 - 1e-6)
            y = torch.as_tensor(q.label)
            return (-(y * p.log() + (1 - y) * (1 - p).log())).numpy()

    # ------------------------------------------------------------------ rule extraction
    def rule(self) -> Rule:
        """The argmax of every attention decoded into one lifted rule."""
        with torch.no_grad():
            sizes = [self.S] + [self.width] * self.depth
            starts = np.cumsum([0] + sizes)
            j = int(self.out_logits.argmax())
            level = int(np.searchsorted(starts, j, side="right") - 1)
            body = self._decode(level, j - int(starts[level]))
        return Rule(self.head, self.arity, simplify(body))

    def _decode(self, level: int, i: int) -> Formula:
        if level == 0:
            t = int(self.path_logits[i].argmax())
            ops = tuple(self.ops.names[int(k)] for k in self.op_logits[i, :t].argmax(-1))
            test = None
            if self.arity == 1:
                u = int(self.test_logits[i].argmax())
                test = None if u == len(self.ops.unary_names) else self.ops.unary_names[u]
            return Statement(ops, test)
        size = self.S if level == 1 else self.width

        def pick(c: int) -> Formula:
            f = self._decode(level - 1, c % size)
            return Not(f) if c >= size else f

        left = pick(int(self.left[level - 1][i].argmax()))
        right = pick(int(self.right[level - 1][i].argmax()))
        return And(left, right) if int(self.conn[level - 1][i].argmax()) == 0 else Or(left, right)


def torch_device(name: str) -> torch.device:
    """The torch device of the `device` setting: "cpu"; "cuda" (ConfigError naming the field when torch sees
    no CUDA GPU); "auto" (CUDA when available, else CPU)."""
    available = torch.cuda.is_available()
    if name == "cpu" or (name == "auto" and not available):
        return torch.device("cpu")
    if name in ("cuda", "auto"):
        if not available:
            raise ConfigError("device 'cuda' needs a CUDA GPU, and torch finds none here "
                              f"(torch {torch.__version__}, torch.cuda.is_available() is False): use "
                              "device=cpu or device=auto", field="device")
        return torch.device("cuda")
    raise ConfigError(f"unknown device {name!r}: use cpu, cuda or auto", field="device")


@contextmanager
def one_thread():
    """Run torch on one thread: NLIL's operations are small, and on a shared 2-core machine intra-op
    threads spin far longer than they compute (measured 2.5 ms against 40-80 ms per epoch)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(model: NLIL, q: Queries, epochs: int = 150, lr: float = 0.05, batch: int = 512, seed: int = 0,
          weights: np.ndarray | None = None, progress: Progress | None = None) -> list[float]:
    """Adam on weighted binary cross-entropy of the labelled queries; seeded minibatches; the loss per epoch."""
    with one_thread():
        return _train(model, q, epochs, lr, batch, seed, weights, progress)


def _train(model: NLIL, q: Queries, epochs: int, lr: float, batch: int, seed: int, weights: np.ndarray | None,
           progress: Progress | None) -> list[float]:
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    g = torch.Generator().manual_seed(int(seed))
    y = torch.as_tensor(q.label, dtype=torch.float32)
    w = torch.ones(len(q)) if weights is None else torch.as_tensor(weights, dtype=torch.float32)
    x = torch.as_tensor(q.x, dtype=torch.long)
    yy = None if q.y is None else torch.as_tensor(q.y, dtype=torch.long)
    losses = []
    tick = throttled(progress)  # every epoch, at most every 0.1 s: a cancel stops within an epoch or so
    for epoch in range(epochs):
        if model.arity == 1:  # one pass scores every entity: full batch
            p = model(None)[x].clamp(1e-6, 1 - 1e-6)
            loss = (w * -(y * p.log() + (1 - y) * (1 - p).log())).sum() / w.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            if tick is not None:
                tick((epoch + 1) / epochs, f"epoch {epoch + 1}/{epochs}, loss {losses[-1]:.4f}")
            continue
        order = torch.randperm(len(q), generator=g)
        total = 0.0
        for s in range(0, len(q), batch):
            idx = order[s:s + batch]
            ux, inv = torch.unique(x[idx], return_inverse=True)  # queries sharing a subject share its chain
            p = model(ux)[inv, yy[idx]].clamp(1e-6, 1 - 1e-6)
            loss = (w[idx] * -(y[idx] * p.log() + (1 - y[idx]) * (1 - p).log())).sum() / w[idx].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx) / len(q)
            if tick is not None:
                tick((epoch + (s + len(idx)) / len(q)) / epochs, f"epoch {epoch + 1}/{epochs}")
        losses.append(total)
    if progress is not None and losses:
        progress(1.0, f"epoch {len(losses)}/{epochs}, loss {losses[-1]:.4f}")
    return losses
