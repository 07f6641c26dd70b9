"""Export GPT-2 (Radford et al. 2019; the layout of Hugging Face's ``GPT2LMHeadModel``: token and learned
position embeddings, embedding dropout, ``n_layer`` pre-norm blocks of causal multi-head self-attention (one
``c_attn`` projection to Q, K, V, a causal mask, attention and residual dropout, ``c_proj``) and a 4x-wide
tanh-GELU MLP, a final LayerNorm and the language-model head tied to the token embedding; GPT-2 small:
124,439,808 parameters) written in plain torch and exported with ``torch.onnx.export`` in training mode (the
legacy exporter, as ``tools/export_vit.py``), for ``remc grad`` / ``remc train``. Needs torch only
(``pip install torch==2.13.0``); no download, random weights.

    python tools/export_gpt2.py --batch 1 --seq-len 512 -o gpt2_torch.onnx
"""
from __future__ import annotations

import argparse
import sys


def gpt2(seq_len: int = 1024, layers: int = 12, width: int = 768, heads: int = 12, vocab: int = 50257,
         positions: int = 1024, dropout: float = 0.1):  # noqa: ANN201
    """The GPT-2 module (torch): input ids [N, T] (int64) -> logits [N, T, vocab]."""
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width)
            self.c_proj = nn.Linear(width, width)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)
            # additive causal mask (0 / -1e4, as GPT-2's original code), a constant of the graph
            self.register_buffer("mask", torch.triu(torch.full((seq_len, seq_len), -1e4), diagonal=1),
                                 persistent=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            n, t, d = x.shape
            q, k, v = self.c_attn(x).split(width, dim=2)
            q = q.view(n, t, heads, d // heads).transpose(1, 2)
            k = k.view(n, t, heads, d // heads).transpose(1, 2)
            v = v.view(n, t, heads, d // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5) + self.mask[:t, :t]
            y = self.attn_dropout(att.softmax(dim=-1)) @ v
            y = y.transpose(1, 2).reshape(n, t, d)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(width, eps=1e-5)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(width, eps=1e-5)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * width, width), nn.Dropout(dropout))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, width)
            self.wpe = nn.Embedding(positions, width)
            self.drop = nn.Dropout(dropout)
            self.h = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width, eps=1e-5)
            nn.init.normal_(self.wte.weight, std=0.02)
            nn.init.normal_(self.wpe.weight, std=0.01)
            self.register_buffer("positions", torch.arange(seq_len), persistent=False)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            x = self.drop(self.wte(ids) + self.wpe(self.positions[: ids.shape[1]]))
            x = self.ln_f(self.h(x))
            return x @ self.wte.weight.t()  # the head tied to the token embedding

    return GPT2()


def main(argv: list[str] | None = None) -> int:
    import torch
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    net = gpt2(args.seq_len, args.layers, args.width, args.heads, args.vocab).train()
    ids = torch.randint(0, args.vocab, (args.batch, args.seq_len))
    torch.onnx.export(net, (ids,), args.output, dynamo=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["input_ids"], output_names=["logits"])
    print(f"wrote {args.output}: GPT-2, batch {args.batch}, sequence {args.seq_len}, "
          f"{sum(p.numel() for p in net.parameters())} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
