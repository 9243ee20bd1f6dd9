"""Named configurations. ``get_preset(name)`` returns a fresh, frozen Config.

Scales:
  * ``reference``: the papers' reference model and schedule (DESIGN.md section 0), for a
    GPU/TPU: 4.82M parameters, 5000 steps of 64 x 256 tokens.
  * ``cpu``: a small model that trains in minutes on 2 CPU cores.
  * ``smoke``: seconds; used by the tests.
Data is chosen separately (``--data`` on the command line, or ``data.*`` overrides); every
preset defaults to the built-in synthetic block-copy task, which needs no download.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from mope_jax.attention import registry
from mope_jax.config import Config, ConfigError, DataConfig, ModelConfig, TrainConfig


@dataclass(frozen=True)
class Preset:
    name: str
    build: Callable[[], Config]
    description: str
    target: str  # where it is meant to run; sizes are computed from the config, never typed


def _reference() -> Config:
    return Config(name="reference")


def _cpu() -> Config:
    return Config(
        name="cpu",
        model=ModelConfig(block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0),
        train=TrainConfig(
            batch_size=32,
            max_steps=1500,
            lr=2e-3,
            warmup_steps=100,
            eval_interval=250,
            eval_batches=20,
            log_interval=50,
            checkpoint_interval=250,
        ),
    )


def _smoke() -> Config:
    return Config(
        name="smoke",
        model=ModelConfig(block_size=32, n_layer=1, n_head=2, n_embd=32, dropout=0.1),
        data=DataConfig(num_tokens=5000),
        train=TrainConfig(
            batch_size=4,
            max_steps=20,
            lr=1e-3,
            warmup_steps=5,
            eval_interval=10,
            eval_batches=2,
            log_interval=5,
            checkpoint_interval=10,
            keep_checkpoints=2,
        ),
    )


_PRESETS: dict[str, Preset] = {}


def register_preset(name: str, description: str, target: str):
    def deco(build: Callable[[], Config]):
        if name in _PRESETS:
            raise ValueError(f"preset {name!r} registered twice")
        _PRESETS[name] = Preset(name, build, description, target)
        return build

    return deco


register_preset(
    "reference", "the papers' reference model and schedule (DESIGN.md section 0)", "GPU/TPU"
)(_reference)
register_preset("cpu", "a small model that trains in minutes", "2 CPU cores")(_cpu)
register_preset("smoke", "seconds; used by the tests", "anywhere")(_smoke)


def presets() -> dict[str, Preset]:
    return dict(_PRESETS)


def get_preset(name: str) -> Config:
    if name not in _PRESETS:
        raise ConfigError(
            f"unknown preset {name!r}; `mope-jax presets` lists them: {', '.join(sorted(_PRESETS))}"
        )
    return _PRESETS[name].build()


# --------------------------------------------------------------------------- model variants
# A variant names the model plug points (and, where needed, train fields such as no_decay) on
# top of a scale preset: ``mope-jax train --preset cpu --variant rope``.


@dataclass(frozen=True)
class ModelVariant:
    """A named set of model (and train) fields. ``text`` is the hand-written description; the
    "(NON-CAUSAL)" label of :attr:`description` is derived from the declared causality of the
    registered variants it selects (:mod:`mope_jax.attention.registry`), never typed."""

    name: str
    model: dict
    train: dict
    text: str

    @property
    def model_config(self) -> ModelConfig:
        """The default ModelConfig with this variant's model fields."""
        return dataclasses.replace(ModelConfig(), **self.model)

    @property
    def causal(self) -> bool:
        """True iff every registered variant it selects is declared causal."""
        return registry.declared_causal(self.model_config)

    @property
    def label(self) -> str:
        """ "" for a variant that sees future tokens, else ""."""
        return registry.label(self.model_config)

    @property
    def description(self) -> str:
        return self.text + self.label


_VARIANTS: dict[str, ModelVariant] = {}


def register_variant(name: str, description: str, *, train: dict | None = None, **model_fields):
    """Name a set of fields; ``description`` says what it is (the causality label is added)."""
    if name in _VARIANTS:
        raise ValueError(f"model variant {name!r} registered twice")
    if registry.NONCAUSAL_LABEL.strip() in description:
        raise ValueError(
            f"model variant {name!r}: the NON-CAUSAL label is derived from the registry's "
            "declared causality; leave it out of the description"
        )
    _VARIANTS[name] = ModelVariant(name, dict(model_fields), dict(train or {}), description)


def model_variants() -> dict[str, ModelVariant]:
    return dict(_VARIANTS)


# renamed model variants (the old name may have meant another computation)
_RENAMED = {"a-ega-conv-causal": "a-ega-conv1-causal"}


def apply_variant(cfg: Config, name: str) -> Config:
    if name in _RENAMED:
        raise ValueError(f"variant {name!r} was renamed {_RENAMED[name]!r}; use the new name")
    if name not in _VARIANTS:
        raise ConfigError(
            f"unknown variant {name!r}; `mope-jax presets` lists them: "
            f"{', '.join(sorted(_VARIANTS))}"
        )
    v = _VARIANTS[name]
    return dataclasses.replace(
        cfg,
        name=f"{cfg.name}/{name}",
        model=dataclasses.replace(cfg.model, **v.model),
        train=dataclasses.replace(cfg.train, **v.train),
    )


register_variant("learned", "learned absolute positions (GPT-2; the papers' baseline)")
register_variant("nope", "no positional information at all", pos_encoding="none")
register_variant("sincos", "fixed sinusoidal absolute encoding", pos_encoding="sinusoidal")
register_variant(
    "rope", "RoPE on q/k only (interleaved pairs)", pos_encoding="none", qk_position="rope"
)
register_variant(
    "rope-half",
    "RoPE, NeoX/HF half-split layout",
    pos_encoding="none",
    qk_position="rope",
    rope_layout="half",
)
register_variant("alibi", "ALiBi linear distance bias", pos_encoding="none", attn_bias="alibi")

# Paper A (DESIGN.md section 1): the paper's six rows plus our extensions. Weight decay 0.1 on
# ALL parameters, spectral ones included (decay_group="all"), as the authors ran it.
_A = {"decay_group": "all"}
register_variant(
    "a-baseline", "paper A row 1: learned absolute table", train=_A, pos_encoding="learned"
)
register_variant("a-sincos", "paper A: fixed sin/cos table", train=_A, pos_encoding="sinusoidal")
register_variant(
    "a-rope",
    "paper A: RoPE on q/k PLUS the learned absolute table (as the paper ran it)",
    train=_A,
    pos_encoding="learned",
    qk_position="rope",
)
register_variant(
    "a-mope",
    "paper A: MOPE alone (no learned table), boundary init, clamp",
    train=_A,
    pos_encoding="morlet",
)
register_variant(
    "a-ega1",
    "paper A: learned table + EGA-1 with full-sequence z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega",
)
register_variant(
    "a-ega-morlet",
    "paper A: MOPE + EGA-1, full-sequence z-norm",
    train=_A,
    pos_encoding="morlet",
    attn_bias="ega",
)
register_variant(
    "a-ega-morlet-causal",
    "MOPE + EGA-1 with the causal prefix z-norm",
    train=_A,
    pos_encoding="morlet",
    attn_bias="ega-prefix",
)
register_variant(
    "a-ega1-causal",
    "learned table + EGA-1 with the causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-prefix",
)
register_variant(
    "a-morlet-rope",
    "Morlet-RoPE (Gaussian envelope in r = m - n per head/frequency) + learned table",
    train=_A,
    pos_encoding="learned",
    qk_position="morlet-rope",
)
register_variant(
    "a-mope-center",
    "MOPE with learnable envelope centres b0_i",
    train=_A,
    pos_encoding="morlet",
    mope_center=True,
)
register_variant(
    "a-ega-conv1-causal",
    "learned table + ONE-channel causal conv energy (ours, not the paper's "
    "EGA-C), causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-conv1-prefix",
)
# Paper 1's energy gates (DESIGN.md section 5) on the learned table, as EGA-1: the paper's
# full-sequence z-norm and our causal prefix twin.
register_variant(
    "a-ega-n",
    "learned table + EGA-n (authors' gate mixing, n = model.ega_n), full z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-n",
)
register_variant(
    "a-ega-n-causal",
    "learned table + EGA-n (authors' gate mixing), causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-n-prefix",
)
register_variant(
    "a-ega-c",
    "learned table + EGA-C (squared 2-channel convs, l = 3/7/15/31, gates mixed), full z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-c",
)
register_variant(
    "a-ega-c-causal",
    "learned table + EGA-C (authors'), causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-c-prefix",
)
register_variant(
    "a-ega-m",
    "learned table + EGA-M as the authors compute it (per-head Morlet filters, conv1d tap order, "
    "omega sigma = 5 init + clamp), full z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-m",
)
register_variant(
    "a-ega-m-causal",
    "learned table + EGA-M, causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-m-prefix",
)
register_variant(
    "a-ega-m-shared",
    "learned table + our earlier EGA-M (one filter set per layer shared by the heads, tap j on "
    "lag j), full z-norm; the omega*sigma control's first EGA-M records",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-m-shared",
)
register_variant(
    "a-ega-m-shared-causal",
    "learned table + our earlier EGA-M (layer-shared, tap j on lag j), causal prefix z-norm",
    train=_A,
    pos_encoding="learned",
    attn_bias="ega-m-shared-prefix",
)

# Paper C, FourierQK (DESIGN.md section 2). The recipe differs from paper A's reference: no
# weight tying, no bias on the attention projections (q/k/v and output; LayerNorm and MLP keep
# theirs), no dropout after the attention output projection, warmup 200, weight decay on 2-D
# weights only, 200 eval batches, and the reported number is the best val loss over evals
# (``final.json: best_val_loss``). The same model recipe as AUTHORS_C in
# experiments/fourierqk/scales.py (its reference scale).


def _reference_c() -> Config:
    base = _reference()
    return dataclasses.replace(
        base,
        name="reference-c",
        model=dataclasses.replace(
            base.model,
            tie_embeddings=False,
            use_bias=True,
            attn_proj_bias=False,
            attn_out_dropout=False,
        ),
        train=dataclasses.replace(base.train, warmup_steps=200, decay_group="2d", eval_batches=200),
    )


register_preset(
    "reference-c",
    "paper C's recipe on the reference model: untied head, no bias on q/k/v and the attention "
    "output projection (LayerNorm and MLP keep theirs), no dropout after that projection, "
    "shorter warmup, 2-D-only decay, more eval batches; report best_val_loss",
    "GPU/TPU",
)(_reference_c)

# Learned filter centres / kernel scales never get weight decay (the paper's choice).
# The paper-C rows use paper C's main code's L2 window norm (DESIGN.md section 5); the
# ModelConfig default stays l1 (what older records trained with), so these set it explicitly.
_C_FFT = {"no_decay": ("log_center",)}
_C_KERNEL = {"no_decay": ("log_scale",)}
_L2 = {"filter_norm": "l2"}
register_variant(
    "fourier-qk",
    "Fourier-QK: bilateral FFT filter, 1 learned centre/head, L2 window",
    train=_C_FFT,
    qk_filter="fourier",
    **_L2,
)
register_variant(
    "multifourier-qk",
    "MultiFourier-QK: 4 learned centres/head, L2 windows, scores averaged",
    train=_C_FFT,
    qk_filter="multifourier",
    **_L2,
)
register_variant(
    "random-qk",
    "Random-QK: bilateral FFT filter, fixed random centre/head, L2 window",
    qk_filter="random",
    **_L2,
)
# Paper C's main ablation: the fixed-bin ladder, sigma = 2 bins, L2, centre a constant; rungs
# are bins at T = 256, used at bin * T / 256 (attention/spectral.py: ladder_bin).
for _rung, _bin in (
    ("dc", 0.0),
    ("1", 1.0),
    ("4", 4.0),
    ("16", 16.0),
    ("64", 64.0),
    ("nyquist", 128.0),
):
    register_variant(
        f"fixed-bin-{_rung}",
        f"paper C ladder: constant Gaussian centre at bin {_bin:g} of T=256 "
        f"(bin*T/256 at other T), L2",
        qk_filter="fixed-bin",
        filter_fixed_bin=_bin,
        **_L2,
    )
register_variant(
    "fixed-bin-learned",
    "paper C ladder: learned centre/head, init bin 4 of T=256 (4*T/256), L2",
    train=_C_FFT,
    qk_filter="fixed-bin-learned",
    filter_fixed_bin=4.0,
    **_L2,
)
register_variant(
    "mexhat-window-qk",
    "bilateral FFT, one Mexican-hat window around a learned centre, sum|w| norm; "
    "ours, not MexHat-K4",
    train=_C_FFT,
    qk_filter="mexhat-window",
)
register_variant(
    "mexhat-k4-qk",
    "MexHat-K4 (filter-shape study): 4 admissible spectra/head, learned scales, scores averaged",
    train={"no_decay": ("log_s",)},
    qk_filter="mexhat-k4",
)
register_variant(
    "seedc-collapse-qk",
    "seed C's reading: per-position weight sum_f w(f) cos(2 pi f t/T) on q, k; no irfft, L2 window",
    train=_C_FFT,
    qk_filter="seedc-collapse",
    **_L2,
)
register_variant(
    "xcorr-qk",
    "irfft Morlet cross-correlation scores, the paper's leaking negative result",
    train=_C_FFT,
    qk_position="morlet-xcorr",
)
register_variant(
    "causal-gauss",
    "causal Gaussian kernel on q/k, learned scale/head (zero-padded FFT conv)",
    train=_C_KERNEL,
    qk_filter="causal-gauss",
)
register_variant(
    "causal-mexhat",
    "causal Mexican-hat kernel on q/k, learned scale/head",
    train=_C_KERNEL,
    qk_filter="causal-mexhat",
)
# The authors' causal Morlet (DESIGN.md section 5): K = 128 taps always, unit energy (L2).
_MORLET = {"qk_filter": "causal-morlet", "kernel_norm": "l2", "kernel_len": 128}
register_variant(
    "causal-morlet",
    "causal complex Morlet kernel on q/k (Re, Im stacked), 128 taps, unit energy, "
    "learned scale/head (init a=8)",
    train=_C_KERNEL,
    kernel_scale=8.0,
    **_MORLET,
)
for _a in (2, 4, 8, 16, 32):
    register_variant(
        f"causal-morlet-a{_a}",
        f"causal complex Morlet kernel, fixed scale a={_a} tokens, 128 taps, unit energy",
        kernel_scale=float(_a),
        kernel_learn_scale=False,
        **_MORLET,
    )
register_variant(
    "causal-morlet-l1",
    "causal complex Morlet kernel, our sum-of-envelope norm over min(128, T) taps, "
    "learned scale/head",
    train=_C_KERNEL,
    qk_filter="causal-morlet",
    kernel_norm="l1",
)
register_variant(
    "causal-freq-qk",
    "causal complex kernel, learned frequency in [2, F-2] bins inside the authors' Gaussian "
    "envelope sigma_t = T/(4 pi) tokens (20.4 at T=256), 128 taps, unit energy",
    train={"no_decay": ("log_freq",)},
    qk_filter="causal-freq",
    kernel_len=128,
    kernel_norm="l2",
)
register_variant(
    "causal-freq-qk-a8",
    "causal complex kernel, learned frequency in [2, F-2] bins, 128 taps, unit energy; "
    "ours, not the authors': fixed envelope a = 8 tokens; paper C's fourierqk results "
    "committed before the authors' envelope was adopted used it under the name causal-freq-qk",
    train={"no_decay": ("log_freq",)},
    qk_filter="causal-freq-fixed",
    kernel_len=128,
    kernel_scale=8.0,
    kernel_norm="l2",
)
register_variant(
    "circular-gauss",
    "Gaussian kernel by UNPADDED FFT: wraps the future into the past",
    train=_C_KERNEL,
    qk_filter="circular-gauss",
)
register_variant(
    "fnet",
    "FNet: Re FFT2 over (T, E) in place of attention, parameter-free",
    mixer="fnet",
)
