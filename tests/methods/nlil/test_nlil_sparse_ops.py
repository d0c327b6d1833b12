"""m-NLIL's operator products on a batch of chains (binary heads) as weighted sparse products, against the
per-edge gather/scatter they replace (values and parameter gradients), on both backends (scipy on the CPU,
torch.sparse as off the CPU); the torch.sparse path trains link prediction exactly as the scipy path; the
`device` setting: cpu, auto without a GPU, and cuda without a GPU a ConfigError naming the field."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xcore.errors import ConfigError
from xcore.methods import run_method
from xcore.nlil.graph import KB, Operators
from xcore.nlil.linkpred import TripleKB, fit_link_predictor
from xcore.nlil.model import torch_device
from xcore.nlil.settings import NLILSettings
from xcore.nlil.sparse import SparseGraph


def bank(n: int = 200, seed: int = 0) -> Operators:
    rng = np.random.default_rng(seed)
    binary = {f"r{i}": np.unique(rng.integers(0, n, (2, 300)), axis=1) for i in range(3)}
    unary = {"u0": np.unique(rng.integers(0, n, 40)), "u1": np.unique(rng.integers(0, n, 25))}
    return Operators.of(KB(np.array([f"e{i}" for i in range(n)], dtype=object), unary, binary))


def gather_scatter(ops: Operators, V: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """The old per-edge path: one message per (statement, query, edge), scattered to the edge's target."""
    out = a[:, 0, None, None] * V
    out = out.index_add(2, ops.dst, V[:, :, ops.src] * a[:, ops.op][:, None, :])
    return (out + V * (a[:, 1 + ops.n_binary:] @ ops.filters)[:, None, :]).clamp(max=1.0)


@pytest.mark.parametrize("backend", ["scipy", "torch"])
def test_batched_sparse_products_equal_the_per_edge_messages(backend):
    ops = bank()
    ops.graph().backend = backend
    S, B = 4, 9
    start = torch.as_tensor(np.random.default_rng(1).integers(0, ops.n, B))
    logits = torch.randn(S, ops.k, generator=torch.Generator().manual_seed(0), requires_grad=True)
    mine, ref = [], []
    for fn, sink in ((ops.mixed, mine), (lambda V, a: gather_scatter(ops, V, a), ref)):
        a = torch.softmax(logits, -1)
        V = torch.zeros(S, B, ops.n)
        V[:, torch.arange(B), start] = 1.0
        out = fn(fn(V, a), a)  # two steps of a chain, as NLIL's statements take them
        up = torch.as_tensor(np.random.default_rng(2).random(out.shape), dtype=torch.float32)
        (grad,) = torch.autograd.grad((out * up).sum(), logits)
        sink += [out.detach(), grad]
    torch.testing.assert_close(mine[0], ref[0])
    torch.testing.assert_close(mine[1], ref[1], rtol=1e-4, atol=1e-5)


def test_link_prediction_trains_the_same_on_the_torch_sparse_path(monkeypatch):
    rng = np.random.default_rng(3)
    n, R = 200, 3
    t = np.unique(np.stack([rng.integers(0, n, 400), rng.integers(0, R, 400), rng.integers(0, n, 400)], 1), axis=0)
    kb = TripleKB(np.array([f"e{i}" for i in range(n)], dtype=object), [f"r{i}" for i in range(R)], t[20:], t[:20])
    losses, scores = {}, {}
    for backend in ("scipy", "torch"):
        monkeypatch.setattr(SparseGraph, "backend", backend)
        lp = fit_link_predictor(kb, rank=2, path_length=2, epochs=3, per_epoch=200, seed=0, device="cpu")
        assert not lp.model.graph.dense
        losses[backend], scores[backend] = lp.losses, lp.scores(0, np.arange(5))
    np.testing.assert_allclose(losses["scipy"], losses["torch"], rtol=1e-4)
    np.testing.assert_allclose(scores["scipy"], scores["torch"], rtol=1e-4, atol=1e-6)


def test_device_setting(monkeypatch):
    assert torch_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch_device("auto") == torch.device("cpu")
    with pytest.raises(ConfigError, match="device 'cuda' needs a CUDA GPU") as e:
        torch_device("cuda")
    assert e.value.field == "device"
    assert NLILSettings().device == "auto"  # the issue: a GPU where present; CPU here
    from xcore.data.generators.scenes import make_scenes

    with pytest.raises(ConfigError, match="needs a CUDA GPU"):
        run_method("nlil", make_scenes(n_scenes=5, seed=0), NLILSettings(device="cuda", epochs=1, rounds=1), cache=None)
