"""The deep relational machine's network: a torch MLP (ReLU, dropout) on the 0/1 feature vectors.

Layer sizes and learning rate are chosen on a seeded stratified validation split with early
stopping; the chosen configuration is then retrained on all training data for the best number of
epochs. Everything is seeded (same data and seed, same network).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from xcore.runtime import Progress, throttled


@dataclass
class TrainedNet:
    """A trained MLP with the configuration the validation split chose and its loss curves."""

    model: nn.Module
    hidden: tuple[int, ...]
    lr: float
    epochs: int
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(class 1) for each row of X."""
        self.model.eval()
        with torch.no_grad():
            logits = self.model(torch.as_tensor(X, dtype=torch.float32))
            return torch.softmax(logits, dim=1)[:, 1].numpy().astype(float)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.proba(X) >= 0.5).astype(np.int64)


def _mlp(d: int, hidden: tuple[int, ...], dropout: float) -> nn.Module:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(dropout)]
        d = h
    layers.append(nn.Linear(d, 2))
    return nn.Sequential(*layers)


def _fit(X: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], lr: float, dropout: float, epochs: int,
         seed: int, Xv: np.ndarray | None = None, yv: np.ndarray | None = None,
         patience: int = 0, tick: Progress | None = None) -> tuple[nn.Module, list[float], list[float], int]:
    """Full-batch Adam training; with validation data, stops after `patience` epochs without improvement
    (`tick` hears every epoch: a throttled, cancellable progress)."""
    torch.manual_seed(seed)
    model = _mlp(X.shape[1], hidden, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    xv = None if Xv is None else torch.as_tensor(Xv, dtype=torch.float32)
    yvt = None if yv is None else torch.as_tensor(yv, dtype=torch.long)
    train_curve, val_curve = [], []
    best, best_epoch, best_state = np.inf, 0, None
    for epoch in range(1, epochs + 1):
        if tick is not None:
            tick(epoch / epochs, f"epoch {epoch} of at most {epochs}")
        model.train()
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        train_curve.append(float(loss.item()))
        if xv is not None:
            model.eval()
            with torch.no_grad():
                v = float(loss_fn(model(xv), yvt).item())
            val_curve.append(v)
            if v < best - 1e-6:
                best, best_epoch = v, epoch
                best_state = {k: t.clone() for k, t in model.state_dict().items()}
            elif patience and epoch - best_epoch >= patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    return model, train_curve, val_curve, max(best_epoch, 1)


def stratified_split(y: np.ndarray, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, validation) with about `fraction` of each class in validation (at least one)."""
    val = []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = max(1, int(round(fraction * len(idx)))) if len(idx) > 1 else 0
        val.extend(idx[:k].tolist())
    val_arr = np.array(sorted(val), dtype=np.int64)
    train = np.setdiff1d(np.arange(len(y)), val_arr)
    return train, val_arr


def train_network(X: np.ndarray, y: np.ndarray, hidden_grid: tuple[tuple[int, ...], ...], lrs: tuple[float, ...],
                  dropout: float, max_epochs: int, patience: int, seed: int,
                  val_fraction: float = 0.2, progress: Progress | None = None) -> TrainedNet:
    """Choose sizes and learning rate on a validation split, then retrain on all of X for the best epochs
    (`progress` hears the epochs, so a cancel stops within one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small full-batch problems: one thread is fastest on a shared machine
    try:
        return _train(X, y, hidden_grid, lrs, dropout, max_epochs, patience, seed, val_fraction, throttled(progress))
    finally:
        torch.set_num_threads(threads)


def _train(X: np.ndarray, y: np.ndarray, hidden_grid: tuple[tuple[int, ...], ...], lrs: tuple[float, ...],
           dropout: float, max_epochs: int, patience: int, seed: int, val_fraction: float,
           tick: Progress | None = None) -> TrainedNet:
    rng = np.random.default_rng(seed)
    tr, va = stratified_split(y, val_fraction, rng)
    if len(np.unique(y[tr])) < 2 or not len(va):
        tr, va = np.arange(len(y)), np.arange(len(y))
    best = None
    for hidden in hidden_grid:
        for lr in lrs:
            _, _, vc, ep = _fit(X[tr], y[tr], hidden, lr, dropout, max_epochs, seed, X[va], y[va], patience, tick)
            score = min(vc) if vc else np.inf
            if best is None or score < best[0] - 1e-9:
                best = (score, hidden, lr, ep, vc)
    assert best is not None
    _, hidden, lr, ep, vc = best
    model, tc, _, _ = _fit(X, y, hidden, lr, dropout, ep, seed, tick=tick)
    return TrainedNet(model, tuple(hidden), float(lr), ep, tc, vc)
