"""PyTorch reference of ``mope_jax.model.GPT`` (baseline variant), for a side-by-side speed
ratio and a numerical cross-check. Needs the optional extra ``torch`` (``pip install
mope-jax[torch]``, the CPU wheel).

Same architecture as the Flax model with ``pos_encoding="learned"`` and no other plug-in:
pre-LN blocks (LayerNorm eps 1e-5 with bias), fused qkv projection split as q|k|v, heads of
D = E/H, causal ``F.scaled_dot_product_attention`` (scale 1/sqrt(D)), exact GELU (or tanh
if ``gelu_approximate``), MLP 4E, dropout after the embedding sum, the attention
probabilities and both residual branches, final LayerNorm, tied LM head, biases
everywhere. ``load_flax_params`` copies a Flax parameter tree into it (Dense kernels (in,
out) become Linear weights (out, in)).

``model.use_bias=false`` drops every Linear and LayerNorm bias, as nanoGPT's ``bias=False``.

Training step timed here (eager, as a PyTorch user would write it): random windows,
forward, cross-entropy, backward, clip_grad_norm_(train.grad_clip), AdamW(train.beta1/beta2,
train.weight_decay on every parameter for train.decay_group="all", on the >= 2-D ones only
for "2d", as nanoGPT's configure_optimizers).
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, e: int, h: int, dropout: float, approximate: bool, bias: bool = True):
        super().__init__()
        self.h, self.dropout, self.approximate = h, dropout, approximate
        self.ln_1 = nn.LayerNorm(e, eps=1e-5, bias=bias)
        self.c_attn = nn.Linear(e, 3 * e, bias=bias)
        self.attn_proj = nn.Linear(e, e, bias=bias)
        self.ln_2 = nn.LayerNorm(e, eps=1e-5, bias=bias)
        self.c_fc = nn.Linear(e, 4 * e, bias=bias)
        self.mlp_proj = nn.Linear(4 * e, e, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, e = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(e, dim=-1)
        q, k, v = (
            a.view(b, t, self.h, e // self.h).transpose(1, 2) for a in (q, k, v)
        )  # (B,H,T,D)
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)  # (B,H,T,D)
        y = y.transpose(1, 2).reshape(b, t, e)  # (B,T,E)
        x = x + F.dropout(self.attn_proj(y), p, self.training)
        hmid = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh" if self.approximate else "none")
        return x + F.dropout(self.mlp_proj(hmid), p, self.training)


class TorchGPT(nn.Module):
    """tokens (B,T) int64 -> logits (B,T,V)."""

    def __init__(self, cfg):
        super().__init__()
        if (cfg.pos_encoding, cfg.qk_position, cfg.attn_bias, cfg.qk_filter, cfg.mixer) != (
            "learned",
            "none",
            "none",
            "none",
            "attention",
        ):
            raise ValueError(
                "the torch reference implements the baseline GPT only (learned positions)"
            )
        if cfg.attn_proj_bias is not None or not cfg.attn_out_dropout:
            raise ValueError(
                "the torch reference follows model.use_bias everywhere and keeps the dropout "
                "after the attention projection; leave attn_proj_bias and attn_out_dropout at "
                "their defaults"
            )
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList(
            Block(cfg.n_embd, cfg.n_head, cfg.dropout, cfg.gelu_approximate, cfg.use_bias)
            for _ in range(cfg.n_layer)
        )
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=1e-5, bias=cfg.use_bias)
        self.lm_head = (
            None if cfg.tie_embeddings else nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        )
        for name, prm in self.named_parameters():
            if prm.dim() >= 2:
                nn.init.normal_(prm, std=cfg.init_std)
            elif name.endswith("bias"):
                nn.init.zeros_(prm)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(t, device=tokens.device))[None]  # (B,T,E)
        x = F.dropout(x, self.cfg.dropout if self.training else 0.0, self.training)
        for blk in self.blocks:
            x = blk(x)
        x = self.ln_f(x)
        return x @ self.wte.weight.T if self.lm_head is None else self.lm_head(x)


def load_flax_params(model: TorchGPT, params) -> None:
    """Copy a Flax ``GPT`` parameter tree (mope_jax.model.init_params) into ``model``."""

    def t(a) -> torch.Tensor:
        return torch.from_numpy(np.array(a, dtype=np.float32))

    def linear(dst: nn.Linear, src) -> None:
        dst.weight.copy_(t(src["kernel"]).T)  # (in, out) -> (out, in)
        if dst.bias is not None:
            dst.bias.copy_(t(src["bias"]))

    def norm(dst: nn.LayerNorm, src) -> None:
        dst.weight.copy_(t(src["scale"]))
        if dst.bias is not None:
            dst.bias.copy_(t(src["bias"]))

    with torch.no_grad():
        model.wte.weight.copy_(t(params["wte"]["embedding"]))
        model.wpe.weight.copy_(t(params["wpe"]["table"]))
        for i, blk in enumerate(model.blocks):
            p = params[f"h_{i}"]
            norm(blk.ln_1, p["ln_1"])
            linear(blk.c_attn, p["attn"]["c_attn"])
            linear(blk.attn_proj, p["attn"]["c_proj"])
            norm(blk.ln_2, p["ln_2"])
            linear(blk.c_fc, p["mlp"]["c_fc"])
            linear(blk.mlp_proj, p["mlp"]["c_proj"])
        norm(model.ln_f, params["ln_f"])
        if model.lm_head is not None:
            model.lm_head.weight.copy_(t(params["lm_head"]["kernel"]).T)


def loss(model: TorchGPT, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy in nats; x, y (B,T) int64."""
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def param_groups(model: TorchGPT, tr) -> list[dict]:
    """AdamW groups: weight decay on every parameter (decay_group "all") or on >= 2-D ones
    ("2d")."""
    params = list(model.parameters())
    if tr.decay_group == "all":
        return [{"params": params, "weight_decay": tr.weight_decay}]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": tr.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


# the precisions of mope_jax's ModelConfig.precision, as PyTorch spells them: (allow TF32 in
# matmuls, autocast dtype or None); bf16 keeps float32 weights (autocast, as the paper A scripts
# with fp16 and a GradScaler; bf16 needs no scaler)
PRECISIONS = {"f32": (False, None), "tf32": (True, None), "bf16": (False, torch.bfloat16)}


def time_training(
    overrides: list[str],
    steps: int,
    reps: int,
    threads: int,
    *,
    preset: str = "reference",
    device: str = "cpu",
    precision: str = "f32",
) -> dict:
    """Tokens/s of eager training steps of ``preset`` plus overrides on ``device`` (``cpu`` or
    ``cuda``) at ``precision`` (f32, tf32, bf16: :data:`PRECISIONS`), best of ``reps`` groups
    of ``steps`` steps after one warm-up group; CUDA work is synchronised before each clock
    read."""
    import contextlib
    import resource

    from mope_jax.config import apply_overrides
    from mope_jax.presets import get_preset

    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: one of {sorted(PRECISIONS)}")
    tf32, autocast = PRECISIONS[precision]
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    cfg = apply_overrides(get_preset(preset), overrides)
    m, tr = cfg.model, cfg.train
    model = TorchGPT(m).train().to(device)
    opt = torch.optim.AdamW(param_groups(model, tr), lr=tr.lr, betas=(tr.beta1, tr.beta2))
    data = torch.from_numpy(np.random.default_rng(0).integers(0, m.vocab_size, 100_000))
    data = data.to(device)
    bsz, t = tr.batch_size, m.block_size
    offsets = torch.arange(t + 1, device=device)

    def cast():
        if autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device, dtype=autocast)

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def step():
        starts = torch.randint(0, data.numel() - t, (bsz, 1), device=device)
        win = data[starts + offsets]  # (B,T+1)
        x, y = win[:, :-1], win[:, 1:]
        opt.zero_grad(set_to_none=True)
        with cast():
            value = loss(model, x, y)
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tr.grad_clip)
        opt.step()
        return value.detach()

    t0 = time.perf_counter()
    first = [float(step()) for _ in range(steps)]  # warm-up (allocator, kernels)
    warm_s = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        times.append(time.perf_counter() - t0)
    s = min(times)
    return {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "precision": precision,
        "preset": preset,
        "threads": threads,
        "n_params": sum(p.numel() for p in model.parameters()),
        "batch_size": bsz,
        "block_size": t,
        "steps_per_call": steps,
        "step_s": s / steps,
        "tokens_per_s": steps * bsz * t / s,
        "all_call_seconds": times,
        "warmup_s": warm_s,
        "first_loss": first[0],
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "sdpa_note": f"F.scaled_dot_product_attention(is_causal=True) on {device}",
    }
