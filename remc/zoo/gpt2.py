"""GPT-2 (Radford et al. 2019): a decoder-only transformer language model.

Token embedding (Gather) plus a learned positional embedding, embedding dropout, ``n_layer`` pre-norm
blocks (LayerNorm -> causal multi-head self-attention -> Dropout -> residual Add; LayerNorm -> MLP with
tanh-approximate Gelu -> Dropout -> residual Add), a final LayerNorm and the language-model head tied
to the token embedding (Gemm with transB). Attention: one MatMul for Q, K, V, Split, Reshape and
Transpose to heads, MatMul, scale by 1/sqrt(head_dim), add a constant causal mask (0 / -1e4, as GPT-2),
Softmax, Dropout, MatMul with V. Input "input_ids" int64 [N, T]; output "logits" [N, T, vocab].
GPT-2 small (12 layers, 768 wide, 12 heads, 1024 positions, 50257 tokens) has 124,439,808 weights.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, logits_output


def _layernorm(b: GraphBuilder, x: str, name: str, d: int) -> str:
    prefix = name.replace("/", ".")
    scale = b.param(f"{prefix}.weight", (d,), mean=1.0)
    bias = b.param(f"{prefix}.bias", (d,))
    return b.node("LayerNormalization", [x, scale, bias], name, axis=-1, epsilon=1e-5)


def _dense(b: GraphBuilder, x: str, name: str, fin: int, fout: int, std: float) -> str:
    """MatMul with W [fin, fout] then Add bias (GPT-2's Conv1D); nodes "name/matmul", "name/add"."""
    prefix = name.replace("/", ".")
    w = b.param(f"{prefix}.weight", (fin, fout), std=std)
    y = b.node("MatMul", [x, w], f"{name}/matmul")
    return b.node("Add", [y, b.param(f"{prefix}.bias", (fout,))], f"{name}/add")


def _dropout(b: GraphBuilder, x: str, name: str, ratio: float) -> str:
    return b.dropout(x, name, ratio) if ratio > 0 else x


def _attention(b: GraphBuilder, x: str, s: str, n: int, t: int, d: int, heads: int,
               dropout: float, proj_std: float, *, causal: bool = True) -> str:
    """Self-attention (``causal``: masked) of scope ``s`` on x [n, t, d]; returns [n, t, d] before the
    residual. Reads the constants ``attn.*`` (``_constants``)."""
    qkv = _dense(b, x, f"{s}/c_attn", d, 3 * d, 0.02)
    q, k, v = b.node_multi("Split", [qkv, "attn.split"], f"{s}/split", 3, axis=2)
    heads_shape = "attn.heads_shape"
    q = b.node("Transpose", [b.node("Reshape", [q, heads_shape], f"{s}/q_reshape")],
               f"{s}/q_transpose", perm=[0, 2, 1, 3])
    k = b.node("Transpose", [b.node("Reshape", [k, heads_shape], f"{s}/k_reshape")],
               f"{s}/k_transpose", perm=[0, 2, 3, 1])
    v = b.node("Transpose", [b.node("Reshape", [v, heads_shape], f"{s}/v_reshape")],
               f"{s}/v_transpose", perm=[0, 2, 1, 3])
    scores = b.node("MatMul", [q, k], f"{s}/scores")
    scores = b.node("Mul", [scores, "attn.scale"], f"{s}/scale")
    if causal:
        scores = b.node("Add", [scores, "attn.causal_mask"], f"{s}/mask")
    probs = _dropout(b, b.node("Softmax", [scores], f"{s}/softmax", axis=-1), f"{s}/attn_dropout", dropout)
    y = b.node("MatMul", [probs, v], f"{s}/context")
    y = b.node("Transpose", [y], f"{s}/merge_transpose", perm=[0, 2, 1, 3])
    y = b.node("Reshape", [y, "attn.merge_shape"], f"{s}/merge_reshape")
    y = _dense(b, y, f"{s}/c_proj", d, d, proj_std)
    return _dropout(b, y, f"{s}/resid_dropout", dropout)


def _mlp(b: GraphBuilder, x: str, s: str, d: int, dropout: float, proj_std: float) -> str:
    h = _dense(b, x, f"{s}/c_fc", d, 4 * d, 0.02)
    h = b.node("Gelu", [h], f"{s}/gelu", approximate="tanh")
    h = _dense(b, h, f"{s}/c_proj", 4 * d, d, proj_std)
    return _dropout(b, h, f"{s}/dropout", dropout)


def _constants(b: GraphBuilder, n: int, t: int, d: int, heads: int) -> None:
    """Shapes, split sizes, positions, attention scale and the additive causal mask."""
    b.ints("attn.split", (d, d, d))
    b.ints("attn.heads_shape", (n, t, heads, d // heads))
    b.ints("attn.merge_shape", (n, t, d))
    b.ints("positions", range(t))
    b.ints("lm_head.in_shape", (n * t, d))
    b.const("attn.scale", np.array(1.0 / np.sqrt(d // heads), dtype=np.float32))
    mask = np.triu(np.full((t, t), -1e4, dtype=np.float32), k=1)
    b.const("attn.causal_mask", mask)


def build_gpt2(batch: int, b: GraphBuilder, *, seq_len: int = 1024, n_layer: int = 12,
               n_embd: int = 768, n_head: int = 12, vocab_size: int = 50257, n_positions: int = 1024,
               dropout: float = 0.1) -> onnx.ModelProto:
    """GPT-2: input_ids [batch, seq_len] -> logits [batch, seq_len, vocab_size].

    Depth ``n_layer``, width ``n_embd`` (a multiple of ``n_head``), ``n_positions`` rows of positional
    embedding (at least ``seq_len``); ``dropout`` 0 leaves the Dropout nodes out.
    """
    if n_embd % n_head:
        raise ModelError(f"gpt2: n_embd {n_embd} is not a multiple of n_head {n_head}")
    if seq_len > n_positions:
        raise ModelError(f"gpt2: seq_len {seq_len} exceeds n_positions {n_positions}")
    n, t, d = batch, seq_len, n_embd
    _constants(b, n, t, d, n_head)
    wte = b.param("wte.weight", (vocab_size, d), std=0.02)
    wpe = b.param("wpe.weight", (n_positions, d), std=0.01)
    x = b.node("Add", [b.node("Gather", [wte, "input_ids"], "wte", axis=0),
                       b.node("Gather", [wpe, "positions"], "wpe", axis=0)], "embed")
    x = _dropout(b, x, "embed/dropout", dropout)
    proj_std = 0.02 / np.sqrt(2 * n_layer)
    for i in range(n_layer):
        s = f"h.{i}"
        a = _attention(b, _layernorm(b, x, f"{s}/ln_1", d), f"{s}/attn", n, t, d, n_head, dropout, proj_std)
        x = b.node("Add", [x, a], f"{s}/attn_residual")
        m = _mlp(b, _layernorm(b, x, f"{s}/ln_2", d), f"{s}/mlp", d, dropout, proj_std)
        x = b.node("Add", [x, m], f"{s}/mlp_residual")
    x = _layernorm(b, x, "ln_f", d)
    x = b.node("Reshape", [x, "lm_head.in_shape"], "lm_head/flatten")
    x = b.node("Gemm", [x, wte], "lm_head/gemm", transB=1)
    b.ints("lm_head.out_shape", (n, t, vocab_size))
    b.node("Reshape", [x, "lm_head.out_shape"], "lm_head/reshape", out="logits")
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, [n, t])
    return b.model("gpt2", [ids], [logits_output([n, t, vocab_size])])
