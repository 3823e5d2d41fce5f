"""Reference models shared by Kiln's unit tests, end-to-end tests and demo.

Small on purpose: they exercise the op set of real models (linear layers,
GELU, attention written out, layer norm, batched matmul) at sizes that compile
and run in seconds.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["MLP", "EncoderBlock", "BatchedMatmul", "example_inputs"]


class MLP(nn.Module):
    """Three Linear layers with GELU between them."""

    def __init__(self, d_in: int = 32, d_hidden: int = 64, d_out: int = 16,
                 approximate: str = "none"):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.fc3 = nn.Linear(d_hidden, d_out)
        self.approximate = approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.gelu(self.fc1(x), approximate=self.approximate)
        x = F.gelu(self.fc2(x), approximate=self.approximate)
        return self.fc3(x)


class EncoderBlock(nn.Module):
    """A pre-norm transformer encoder block with attention written out."""

    def __init__(self, d_model: int = 32, n_heads: int = 4, d_ff: int = 64):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.ff2 = nn.Linear(d_ff, d_model)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.n_heads, self.d_head).permute(0, 2, 1, 3)
        k = self.k(x).view(b, s, self.n_heads, self.d_head).permute(0, 2, 1, 3)
        v = self.v(x).view(b, s, self.n_heads, self.d_head).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_head))
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.o(ctx)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class BatchedMatmul(nn.Module):
    """bmm of two runtime inputs, then a weight matmul and a bias."""

    def __init__(self, k: int = 24, n: int = 20):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n) / math.sqrt(k))
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(torch.bmm(a, b), self.w) + self.bias


def example_inputs(model: nn.Module, batch: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Deterministic inputs of the right shape for one of the models above."""
    g = torch.Generator().manual_seed(seed)
    if isinstance(model, MLP):
        return (torch.randn(batch, model.fc1.in_features, generator=g),)
    if isinstance(model, EncoderBlock):
        return (torch.randn(batch, 8, model.q.in_features, generator=g),)
    if isinstance(model, BatchedMatmul):
        k = model.w.shape[0]
        return (torch.randn(batch, 6, 12, generator=g), torch.randn(batch, 12, k, generator=g))
    raise TypeError(f"no example inputs for {type(model).__name__}")
