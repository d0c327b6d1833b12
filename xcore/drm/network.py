"""The deep relational machine's network: a torch MLP (ReLU, dropout) on the 0/1 feature vectors.

The paper's protocol (Section 5.1): layer sizes, learning rate and weight decay (an L2 penalty, as
in Adam's ``weight_decay``) are chosen on validation data that is part of the training data; the
chosen model is then retrained on all training data until its training loss reaches the training
loss the chosen model had at its best validation epoch. Validation uses `inner` stratified splits
whose loss curves are averaged (a single split of ~14 examples picked 3 to 47 epochs at random),
and the retraining runs at least the chosen number of epochs (with weight decay the training loss
dips below its settled value within the first epochs). Everything is seeded. The default grid (one layer
of 32, lr 0.01, weight decays 0.001-0.03, dropout 0.2) stays: decays up to 0.1 and dropout 0.5 were within
noise or better on Mutagenesis 188 but worse on Carcinogenesis (issue 31, bench/RESULTS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold
from torch import nn

from xcore.runtime import Progress, throttled


@dataclass
class TrainedNet:
    """A trained MLP with the configuration validation chose and its loss curves."""

    model: nn.Module
    hidden: tuple[int, ...]
    lr: float
    epochs: int
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    weight_decay: float = 0.0
    target_loss: float = float("nan")
    """The training loss of the chosen model at its best validation epoch (the retraining's goal)."""
    columns: np.ndarray | None = None
    """The input columns validation chose (of the candidate column sets); `proba` takes X[:, columns]."""
    set_losses: list[float] = field(default_factory=list)
    """The best mean validation loss of each candidate column set, in the order given."""
    set_accuracies: list[float] = field(default_factory=list)
    """The mean validation accuracy of each column set's best configuration at its best epoch."""
    members: list[nn.Module] = field(default_factory=list)
    """Further retrainings of the chosen configuration from other seeds; `proba` averages them with `model`."""

    def proba(self, X: np.ndarray) -> np.ndarray:
        """P(class 1) for each row of X (the mean over `model` and `members`)."""
        xt = torch.as_tensor(X, dtype=torch.float32)
        out = []
        with torch.no_grad():
            for m in [self.model, *self.members]:
                m.eval()
                out.append(torch.softmax(m(xt), dim=1)[:, 1].numpy().astype(float))
        return np.mean(out, axis=0)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.proba(X) >= 0.5).astype(np.int64)


def _mlp(d: int, hidden: tuple[int, ...], dropout: float) -> nn.Module:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(dropout)]
        d = h
    layers.append(nn.Linear(d, 2))
    return nn.Sequential(*layers)


def _curves(X: np.ndarray, y: np.ndarray, Xv: np.ndarray, yv: np.ndarray, hidden: tuple[int, ...], lr: float,
            wd: float, dropout: float, epochs: int, seed: int,
            tick: Progress | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training loss, validation loss and validation accuracy after each of `epochs` full-batch Adam
    steps (`tick` hears every epoch: a throttled, cancellable progress)."""
    torch.manual_seed(seed)
    model = _mlp(X.shape[1], hidden, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    xv, yvt = torch.as_tensor(Xv, dtype=torch.float32), torch.as_tensor(yv, dtype=torch.long)
    tc, vc, va = np.zeros(epochs), np.zeros(epochs), np.zeros(epochs)
    for e in range(epochs):
        if tick is not None:
            tick((e + 1) / epochs, f"epoch {e + 1} of {epochs}")
        model.train()
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        tc[e] = loss.item()
        model.eval()
        with torch.no_grad():
            out = model(xv)
            vc[e] = loss_fn(out, yvt).item()
            va[e] = (out.argmax(dim=1) == yvt).float().mean().item()
    return tc, vc, va


def _retrain(X: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], lr: float, wd: float, dropout: float,
             target: float, min_epochs: int, cap: int, seed: int,
             tick: Progress | None = None) -> tuple[nn.Module, list[float]]:
    """Train on all of X until the training loss reaches `target` (after at least `min_epochs`)."""
    torch.manual_seed(seed)
    model = _mlp(X.shape[1], hidden, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    curve: list[float] = []
    for epoch in range(1, cap + 1):
        if tick is not None:
            tick(min(epoch / max(min_epochs, 1), 1.0), f"retraining: epoch {epoch}")
        model.train()
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        curve.append(float(loss.item()))
        if epoch >= min_epochs and curve[-1] <= target:
            break
    return model, curve


def _splits(y: np.ndarray, inner: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified validation splits (all data twice when a class is too small to split)."""
    k = min(inner, int(np.bincount(y, minlength=2).min()))
    if k < 2:
        every = np.arange(len(y))
        return [(every, every)]
    return list(StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def train_network(X: np.ndarray, y: np.ndarray, hidden_grid: tuple[tuple[int, ...], ...], lrs: tuple[float, ...],
                  dropout: float, max_epochs: int, seed: int, weight_decays: tuple[float, ...] = (0.0,),
                  inner: int = 3, progress: Progress | None = None,
                  column_sets: tuple[np.ndarray, ...] | None = None, retrains: int = 1) -> TrainedNet:
    """Choose the input columns (one of `column_sets`; default every column), sizes, learning rate and
    weight decay by validation, then retrain on all rows (the paper's protocol) from `retrains` seeds
    whose probabilities are averaged; `progress` hears the epochs, so a cancel stops within one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small full-batch problems: one thread is fastest on a shared machine
    sets = column_sets or (np.arange(X.shape[1], dtype=np.int64),)
    try:
        return _train(X, y, sets, hidden_grid, lrs, weight_decays, dropout, max_epochs, seed, inner,
                      throttled(progress), retrains)
    finally:
        torch.set_num_threads(threads)


def _train(X: np.ndarray, y: np.ndarray, sets: tuple[np.ndarray, ...], hidden_grid: tuple[tuple[int, ...], ...],
           lrs: tuple[float, ...], wds: tuple[float, ...], dropout: float, max_epochs: int, seed: int, inner: int,
           tick: Progress | None = None, retrains: int = 1) -> TrainedNet:
    splits = _splits(y, inner, seed)
    best = None
    set_losses, set_accs = [], []
    for c, cols in enumerate(sets):
        Xc = X[:, cols]
        set_best, set_acc = float("inf"), float("nan")
        for hidden in hidden_grid:
            for lr in lrs:
                for wd in wds:
                    curves = [_curves(Xc[tr], y[tr], Xc[va], y[va], hidden, lr, wd, dropout, max_epochs, seed, tick)
                              for tr, va in splits]
                    tc = np.mean([cv[0] for cv in curves], axis=0)
                    vc = np.mean([cv[1] for cv in curves], axis=0)
                    va = np.mean([cv[2] for cv in curves], axis=0)
                    e = int(np.argmin(vc))
                    if vc[e] < set_best:
                        set_best, set_acc = float(vc[e]), float(va[e])
                    if best is None or vc[e] < best[0] - 1e-9:
                        best = (float(vc[e]), tuple(hidden), float(lr), float(wd), e + 1, float(tc[e]), vc, c)
        set_losses.append(set_best)
        set_accs.append(set_acc)
    assert best is not None
    _, hidden, lr, wd, epochs, target, vc, c = best
    Xc = X[:, sets[c]]
    model, curve = _retrain(Xc, y, hidden, lr, wd, dropout, target, epochs, 2 * max_epochs, seed, tick)
    members = [_retrain(Xc, y, hidden, lr, wd, dropout, target, epochs, 2 * max_epochs, seed + r, tick)[0]
               for r in range(1, retrains)]
    return TrainedNet(model, hidden, lr, len(curve), curve, [float(v) for v in vc], wd, target,
                      np.asarray(sets[c], dtype=np.int64), set_losses, set_accs, members)
