"""Frozen, typed configuration: model, data and training, plus ``key=value`` overrides.

Configs are never written back to; ``apply_overrides`` returns a new object. Nested fields
are addressed with dots (``model.n_layer=2``, ``train.lr=1e-3``); a bare key is looked up in
model, data and train in that order.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from mope_jax.errors import ConfigError

# ``jax.random.PRNGKey`` keeps the low 32 bits of a seed (without x64): 2**32 gives the key of
# 0 and -1 that of 2**32 - 1, and a seed beyond 64 bits overflows. Seeds are integers in
# [0, SEED_MAX], so that two seeds are always two keys.
SEED_MAX = 2**32 - 1
# DataConfig fields that say where a corpus lives on this machine, not what it is: a run is
# checked against its corpus's digest instead (a moved corpus keeps its runs and records valid).
LOCATION_FIELDS = ("path", "tfds_data_dir", "tfds_manual_dir")
# TrainConfig fields that say how a run is kept, not what it computes: how often it saves, how
# many saves it keeps and how often it logs (the chunk grid; a run depends only on its config
# and seed, never on its chunking: mope_jax.loop). A record made with other values of these is
# the same run (mope_jax.campaign.configs.config_diff).
BOOKKEEPING_FIELDS = ("checkpoint_interval", "keep_checkpoints", "log_interval")


@dataclass(frozen=True)
class ModelConfig:
    """GPT-style decoder; the defaults are the papers' reference model (DESIGN.md section 0).

    The attention block has four plug points, each selected by name from
    :mod:`mope_jax.attention.registry` (which also records whether the variant is causal):
      * ``pos_encoding``: absolute table added to token embeddings (none/learned/sinusoidal/...)
      * ``qk_position``: transform of q and k by position (none/rope/...)
      * ``attn_bias``: additive logit bias or post-softmax key gate (none/alibi/...)
      * ``qk_filter``: filter of q and k along the time axis (none/...)
    and ``mixer`` selects the sublayer itself (attention, or fnet token mixing).

    Each variant's registration declares the fields below that it reads and their allowed
    values; ``validate`` checks every Config against those declarations.
    """

    vocab_size: int = 65
    block_size: int = 256
    n_layer: int = 6
    n_head: int = 8
    n_embd: int = 256
    dropout: float = 0.1
    tie_embeddings: bool = True
    use_bias: bool = True
    # Bias of the attention projections (q/k/v c_attn and the output c_proj; attention/core.py):
    # None (default, every record so far) follows use_bias; True / False sets them alone, whatever
    # use_bias says (paper C's GPT: False with use_bias=True, i.e. LayerNorm and MLP keep theirs).
    attn_proj_bias: bool | None = None
    # Residual dropout after the attention output projection c_proj: True (default, every record
    # so far) applies model.dropout there; False (paper C's GPT) leaves it out. The dropout of the
    # attention probabilities, of the MLP output and of the embeddings is unchanged.
    attn_out_dropout: bool = True
    init_std: float = 0.02
    pos_encoding: str = "learned"
    qk_position: str = "none"
    attn_bias: str = "none"
    qk_filter: str = "none"
    rope_base: float = 10000.0
    rope_layout: str = "interleaved"
    # RoPE context extension (encodings/rope.py): none | pi | ntk | dynamic_ntk | yarn;
    # factor s = L'/L, original_length L (training length; dynamic_ntk and yarn need it).
    rope_scaling: str = "none"
    rope_factor: float = 1.0
    rope_original_length: int = 0
    rope_yarn_alpha: float = 1.0
    rope_yarn_beta: float = 32.0
    gelu_approximate: bool = False
    # "float32", or "bfloat16" (opt-in mixed precision, changes the numbers): matmul inputs
    # rounded to bf16 with float32 accumulation; parameters, residual stream, LayerNorm,
    # softmax and loss stay float32 (attention/core.py).
    compute_dtype: str = "float32"
    # Precision of the float32 matmuls (attention/core.py, applied by GPT to every matmul of
    # the model): "highest" (default: full float32 products; what XLA:CPU does whatever is
    # asked, bitwise, so every CPU record so far) | "tf32" (a GPU's TensorFloat-32 units:
    # inputs rounded to 10 mantissa bits, float32 accumulation). With compute_dtype="bfloat16"
    # the matmul inputs are bf16 already and this field must stay "highest". ``precision`` below
    # names the combination; a campaign scale never mixes two (mope_jax.campaign).
    matmul_precision: str = "highest"
    # Layout of the attention einsums (attention/core.py): "bthd" (default, every record so far)
    # contracts q, k, v in the projection's (B,T,H,D) layout; "bhtd" (opt-in, faster on
    # XLA:CPU) moves the heads next to the batch first. Same math; the dot kernels then sum in
    # another order, so the numbers differ at float32 rounding (experiments/results/bench).
    attn_layout: str = "bthd"
    # Causal attention in query blocks (attention/core.py, blocked_attention): 1 (default, every
    # record so far) scores all (T, T) pairs and masks the future; n > 1 (opt-in, faster) splits
    # the queries into n blocks, each scored only against the keys it can see ((n+1)/(2n) of
    # the pairs). Same math and dropout bits; sums run shorter, so the numbers differ at
    # float32 rounding (tests/test_attention_blocks.py, experiments/results/bench).
    attn_query_blocks: int = 1
    # Paper A, MOPE (pos_encoding="morlet", encodings/morlet.py); defaults = the paper.
    # init: "boundary" (sigma = bound/omega) or "off" (sigma = 2 bound/omega);
    # constraint: "clamp" (the paper's projection) | "penalty" (soft, weight mope_penalty) | "none".
    mope_init: str = "boundary"
    mope_constraint: str = "clamp"
    mope_bound: float = 5.0
    mope_penalty: float = 1.0
    mope_center: bool = False  # learnable envelope centres b0_i (the paper: b0 = 0, fixed)
    # Morlet-RoPE (qk_position="morlet-rope"): sigma per head and per group of frequencies
    # (0 = one per frequency); init sigma_i = morlet_rope_init / theta_i.
    morlet_rope_groups: int = 0
    morlet_rope_init: float = 5.0
    # EGA (attn_bias="ega-n*"): number of energy projections whose gates (ega-n) or energies
    # (ega-n-energymix) are mixed.
    ega_n: int = 4
    ega_conv_len: int = (
        4  # taps of the one-channel causal energy convolution (attn_bias="ega-conv1*")
    )
    # EGA-M (attn_bias="ega-m*", attention/ega_m.py): init "boundary" (sigma = bound/omega, the
    # paper's) | "off" (2 bound/omega); constraint clamp | penalty | none, as MOPE's; the bound
    # is mope_bound and the penalty weight mope_penalty.
    ega_m_init: str = "boundary"
    ega_m_constraint: str = "clamp"
    # Paper C, FourierQK (attention/spectral.py); defaults = the paper.
    # mixer: "attention" or "fnet" (Re FFT2 token mixing in place of attention; non-causal).
    mixer: str = "attention"
    filter_k: int = 4  # centres per head of qk_filter="multifourier"
    filter_bandwidth: float = 2.0  # Gaussian window width b, in frequency bins
    # initial centre of fourier / mexhat-window / causal-freq / seedc-collapse / morlet-xcorr
    filter_init_bin: float = 4.0  # bins (bin 4 = period T/4)
    filter_seed: int = 0  # fixed random centres, rotations and phase surrogates
    # Gaussian/Mexican-hat window norm: "l2" w/||w||_2 (paper C's main code; set by the paper-C
    # variants) | "l1" w/sum|w| (filter-shape study; the default, what older records trained with).
    filter_norm: str = "l1"
    # fixed-bin ladder rung (qk_filter="fixed-bin" / "fixed-bin-learned"), in bins at T=256;
    # used at bin * T / 256 (same period in tokens): 0 = DC, 128 = Nyquist at every T.
    filter_fixed_bin: float = 4.0
    # eval-time controls of the bilateral filters: transform dft | rotation | projection;
    # phase none | phase_rand | phase_rand_indep | amp_only | phase_shift (the authors') |
    # add-shared | add-independent | add-shift (ours, additive) (attention/spectral.py).
    filter_transform: str = "dft"
    filter_phase: str = "none"
    # causal kernels (qk_filter="causal-gauss" / "causal-mexhat" / "causal-morlet" / "causal-freq"
    # / "causal-freq-fixed")
    kernel_len: int = 128  # taps K (l1: cut to T before normalising; l2: K always)
    # a in tokens (init when learned; causal-freq-fixed: its fixed envelope; causal-freq does not
    # read it: its envelope is the authors' T / (4 pi))
    kernel_scale: float = 8.0
    kernel_learn_scale: bool = True  # one learned a per head (log_scale), else fixed
    kernel_w0: float = 6.0  # Morlet w0
    # causal kernels' norm: "l2" unit energy over K taps (the authors' causal Morlet; set by the
    # causal-morlet and causal-freq variants) | "l1" sum_j |h[j]| over min(K, T) taps (ours;
    # the default, what older records trained with).
    kernel_norm: str = "l1"
    conv_impl: str = "fft"  # fft (zero-padded to 2T) | toeplitz | direct

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def precision(self) -> str:
        """The numerics of the model's matmuls in one word: "f32" (float32, full precision),
        "tf32" (float32 through TensorFloat-32 units) or "bf16" (bf16 matmul inputs, float32
        weights, accumulation, residual stream, softmax and loss: mixed precision)."""
        if self.compute_dtype == "bfloat16":
            return "bf16"
        return {"highest": "f32", "tf32": "tf32"}.get(self.matmul_precision, self.matmul_precision)

    def __post_init__(self):
        if self.n_head < 1:
            raise ConfigError(f"model.n_head={self.n_head} must be at least 1")
        if self.n_embd % self.n_head:
            raise ConfigError(
                f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}; "
                "pick n_embd as a multiple of n_head"
            )


@dataclass(frozen=True)
class DataConfig:
    """Where tokens come from.

    source:
      * ``"blocks"``: built-in synthetic block-copy sequences (no download; the default).
      * ``"text"``: a plain UTF-8 text file at ``path`` (character level).
      * ``"tinyshakespeare"``: the ``tiny_shakespeare`` dataset through tensorflow-datasets;
        ``tfds_manual_dir`` may point at a folder holding karpathy's ``input.txt`` (checksum
        verified) so that nothing is downloaded.
    split: ``"paper"`` (first 90% train, last 10% val) or ``"tfds"`` (tfds's own splits).
    """

    source: str = "blocks"
    path: str = ""
    tfds_data_dir: str = ""
    tfds_manual_dir: str = ""
    split: str = "paper"
    train_fraction: float = 0.9
    # synthetic block-copy task
    block_len: int = 16
    num_symbols: int = 16
    num_tokens: int = 200_000
    data_seed: int = 0


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and bookkeeping (DESIGN.md section 0 defaults)."""

    seed: int = 0
    batch_size: int = 64
    max_steps: int = 5000
    lr: float = 3e-4
    warmup_steps: int = 300
    min_lr: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.95
    weight_decay: float = 0.1
    # "all" (paper A), "2d" (paper C: only >=2-D weights); ``no_decay`` excludes parameters
    # whose path contains any of the given names (e.g. "log_omega,log_sigma").
    decay_group: str = "all"
    no_decay: tuple[str, ...] = ()
    grad_clip: float = 1.0
    eval_interval: int = 500
    eval_batches: int = 50
    log_interval: int = 50
    checkpoint_interval: int = 500
    keep_checkpoints: int = 3
    allow_noncausal: bool = False


@dataclass(frozen=True)
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    name: str = "custom"

    def __post_init__(self):
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Config":
        return cls(
            model=_build(ModelConfig, d.get("model", {})),
            data=_build(DataConfig, d.get("data", {})),
            train=_build(TrainConfig, d.get("train", {})),
            name=d.get("name", "custom"),
        )


def without_location(cfg: Config) -> Config:
    """``cfg`` with the corpus's location fields (LOCATION_FIELDS) blanked: what a run is."""
    return dataclasses.replace(
        cfg, data=dataclasses.replace(cfg.data, **{k: "" for k in LOCATION_FIELDS})
    )


def _build(kind, d: dict[str, Any]):
    names = {f.name: f for f in dataclasses.fields(kind)}
    unknown = set(d) - set(names)
    if unknown:
        raise ConfigError(f"unknown {kind.__name__} fields {sorted(unknown)}")
    hints = typing.get_type_hints(kind)
    return kind(**{k: _coerce(hints[k], v, k) for k, v in d.items()})


def _coerce(tp, value: Any, key: str):
    """Turn a JSON value or an override string into the field's declared type."""
    origin = typing.get_origin(tp)
    if origin is tuple:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v] if value else []
        return tuple(str(v) for v in value)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None or value == "None":
            return None
        return _coerce(args[0], value, key)
    if not isinstance(value, str):
        return tp(value) if tp in (int, float) and not isinstance(value, bool) else value
    try:
        if tp is bool:
            low = value.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if tp is int:
            return int(float(value)) if "e" in value.lower() else int(value)
        if tp is float:
            return float(value)
    except ValueError:
        raise ConfigError(
            f"{key}={value!r} is not a valid {tp.__name__}; give e.g. {key}=1"
        ) from None
    return value


_SECTIONS = ("model", "data", "train")

# ``name=`` names the default run folder, runs/<name>-<data source>-s<seed> (``mope-jax
# train``; ``mope-jax sweep``: runs/sweep-<name>): the longest suffix, -tinyshakespeare-s
# followed by a 10-digit seed, is 28 bytes, so a name of NAME_BYTES_MAX bytes keeps the folder
# within the 255-byte file-name limit.
NAME_BYTES_MAX = 255 - len("-tinyshakespeare-s") - len(str(SEED_MAX))


def check_name(value: str) -> None:
    """ConfigError (one line) unless ``value`` makes a good folder name (``name=`` override)."""
    import unicodedata

    shown = value if len(value) <= 40 else value[:40] + "..."
    why = None
    if not value.strip():
        why = "it is empty" if not value else "it is blank"
    elif value != value.strip():
        why = "it starts or ends with whitespace"
    elif "/" in value or "\\" in value:
        why = "it holds a path separator (/ or \\)"
    elif any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in value):
        why = "it holds a control or invisible character"
    elif len(value.encode()) > NAME_BYTES_MAX:
        why = (
            f"it is {len(value.encode())} bytes, over {NAME_BYTES_MAX} (the 255-byte file-name "
            "limit less the -<data>-s<seed> suffix of its folder)"
        )
    if why:
        raise ConfigError(
            f"name={shown!r} is invalid: {why}; the name names the run's folder "
            "(runs/<name>-<data>-s<seed>), so give e.g. name=my-run, or leave name= out"
        )


def apply_overrides(cfg: Config, overrides: list[str] | tuple[str, ...]) -> Config:
    """Return a new Config with ``section.field=value`` (or bare ``field=value``) applied."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(
                f"override {item!r} has no '='; write it as key=value, e.g. train.lr=1e-3"
            )
        key, value = item.split("=", 1)
        key = key.strip()
        if key == "name":
            check_name(value)
            cfg = dataclasses.replace(cfg, name=value)
            continue
        if "." in key:
            section, fname = key.split(".", 1)
            if section not in _SECTIONS:
                raise ConfigError(
                    f"unknown config section {section!r} in {item!r}; use one of {_SECTIONS}"
                )
        else:
            fname = key
            found = [
                s
                for s in _SECTIONS
                if fname in {f.name for f in dataclasses.fields(getattr(cfg, s))}
            ]
            if not found:
                raise ConfigError(
                    f"unknown config key {key!r}; run `mope-jax presets --show NAME` to list "
                    "the keys"
                )
            section = found[0]
        sub = getattr(cfg, section)
        fields = {f.name for f in dataclasses.fields(sub)}
        if fname not in fields:
            raise ConfigError(
                f"unknown key {fname!r} in section {section!r}; "
                f"valid keys: {', '.join(sorted(fields))}"
            )
        hints = typing.get_type_hints(type(sub))
        new_sub = dataclasses.replace(sub, **{fname: _coerce(hints[fname], value, key)})
        cfg = dataclasses.replace(cfg, **{section: new_sub})
    return cfg


# --------------------------------------------------------------------------- validation

# One place where every Config is checked: ``Config.__post_init__`` calls ``validate``, so a
# preset, an override, a sweep's grid point and a config read back from a checkpoint are all
# refused with one ConfigError line before anything is compiled or written.


def _need(ok: bool, key: str, value: Any, rule: str) -> None:
    if not ok:
        raise ConfigError(f"{key}={value!r} is invalid: {rule}")


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def check_model(m: ModelConfig) -> None:
    """The checks of a ModelConfig that the variants declare: every slot names a registered
    variant and every declared option holds an allowed value (``registry.check_model``).

    Importing :mod:`mope_jax.attention` registers the built-in variants; it is imported here,
    when the first Config is validated, so that a script importing only this module gets the
    same one-line ConfigError, and ``import mope_jax.data`` (which needs DataConfig) stays free
    of flax. The attention modules never import this module.
    """
    from mope_jax import attention

    attention.registry.check_model(m)
    _check_eval_switches(m, attention.registry)


# Eval-time switches that only some variants read: set away from its default on a config whose
# variants never read it, the run would measure the unmodified model under the switch's name,
# so it is refused. (Other options a variant does not read are ignored: e.g. the fourierqk
# experiment sets conv_impl=toeplitz on every row of a scale.)
_EVAL_SWITCHES = {
    "filter_phase": "the phase surrogates exist only on",
    "filter_transform": "the metric-distortion controls exist only on",
}


def _check_eval_switches(m: ModelConfig, registry) -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(ModelConfig)}
    selected = registry.model_variants(m)
    for key, what in _EVAL_SWITCHES.items():
        value = getattr(m, key)
        if value == defaults[key] or any(key in v.options for v in selected):
            continue
        readers = [v for v in registry.variants() if key in v.options]
        slots = {v.slot for v in readers}
        who = " / ".join(f"{v.slot} {v.name!r}" for v in selected if v.slot in slots)
        raise ConfigError(
            f"model.{key}={value} is not read by {who} ({what} the bilateral spectral filters "
            f"{', '.join(v.name for v in readers)}); remove it or pick one of those"
        )


def validate(cfg: Config) -> None:
    """Raise ConfigError (one line naming the key and the rule) for a value no run can use."""
    m, d, t = cfg.model, cfg.data, cfg.train
    for key in ("vocab_size", "block_size", "n_layer", "n_embd"):
        _need(getattr(m, key) >= 1, f"model.{key}", getattr(m, key), "it must be at least 1")
    _need(
        _finite(m.dropout) and 0 <= m.dropout < 1,
        "model.dropout",
        m.dropout,
        "it must be in [0, 1)",
    )
    _need(
        _finite(m.init_std) and m.init_std > 0, "model.init_std", m.init_std, "it must be positive"
    )
    _need(
        m.attn_proj_bias is None or isinstance(m.attn_proj_bias, bool),
        "model.attn_proj_bias",
        m.attn_proj_bias,
        "use true, false or None (None: follow model.use_bias)",
    )
    _need(
        isinstance(m.attn_out_dropout, bool),
        "model.attn_out_dropout",
        m.attn_out_dropout,
        "use true or false",
    )
    _need(
        m.attn_query_blocks >= 1,
        "model.attn_query_blocks",
        m.attn_query_blocks,
        "it must be at least 1 (1 = the full score matrix, the default)",
    )
    check_model(m)  # variant names and options, as the variants declare them
    _need(
        m.compute_dtype == "float32" or m.matmul_precision == "highest",
        "model.matmul_precision",
        m.matmul_precision,
        "with model.compute_dtype=bfloat16 the matmul inputs are bf16 already; leave "
        "matmul_precision at highest",
    )

    _need(
        _finite(d.train_fraction) and 0 < d.train_fraction < 1,
        "data.train_fraction",
        d.train_fraction,
        "it must be strictly between 0 and 1, e.g. 0.9",
    )
    _need(d.num_tokens >= 1, "data.num_tokens", d.num_tokens, "it must be at least 1")

    _need(
        isinstance(t.seed, numbers.Integral) and 0 <= t.seed <= SEED_MAX,
        "train.seed",
        t.seed,
        f"seeds are integers in [0, {SEED_MAX}] (jax.random.PRNGKey keeps 32 bits, so another "
        "value would repeat the key of a seed in that range)",
    )
    for key in (
        "batch_size",
        "max_steps",
        "eval_interval",
        "eval_batches",
        "log_interval",
        "checkpoint_interval",
        "keep_checkpoints",
    ):
        _need(getattr(t, key) >= 1, f"train.{key}", getattr(t, key), "it must be at least 1")
    _need(
        _finite(t.lr) and t.lr > 0,
        "train.lr",
        t.lr,
        "it must be a positive number, e.g. train.lr=3e-4",
    )
    _need(_finite(t.min_lr) and 0 <= t.min_lr, "train.min_lr", t.min_lr, "it must be >= 0")
    _need(t.warmup_steps >= 0, "train.warmup_steps", t.warmup_steps, "it must be >= 0")
    _need(
        _finite(t.grad_clip) and t.grad_clip > 0,
        "train.grad_clip",
        t.grad_clip,
        "it must be a positive global-norm bound, e.g. train.grad_clip=1.0",
    )
    _need(
        _finite(t.weight_decay) and t.weight_decay >= 0,
        "train.weight_decay",
        t.weight_decay,
        "it must be >= 0",
    )
    for key in ("beta1", "beta2"):
        v = getattr(t, key)
        _need(_finite(v) and 0 <= v < 1, f"train.{key}", v, "it must be in [0, 1)")
    _need(t.decay_group in ("all", "2d"), "train.decay_group", t.decay_group, "use 'all' or '2d'")
