"""The rows and scales of the context-extension campaign: the tiny RoPE model, the training
schedules of each scale, the three base rows (language, arithmetic, retrieval) and their
fine-tunes at FT_FACTOR L under each rule."""

from __future__ import annotations

from experiments import _paper_b as pb
from experiments.context_extension.corpora import igsm_file, retrieval_file
from experiments.context_extension.measure import analyze_finetuned
from experiments.context_extension.settings import (
    BASES,
    FT_FACTOR,
    FT_RULES,
    FT_STEPS,
    MID_L,
    MID_MODEL,
    MID_TRAIN,
    RETRIEVAL_L,
    SCALES,
    bases,
    ft_name,
)
from mope_jax.campaign import Row, Scale

MODEL = dict(block_size=64, n_layer=2, n_head=2, n_embd=64, dropout=0.0)  # + variant "rope"


def _train(steps: int) -> dict:
    return pb.train_fields(steps, max(steps // 4, 1), batch_size=32)


def _ft_train(name: str, base: str) -> tuple[str, ...]:
    steps = FT_STEPS[name]
    fields = _train(steps) | dict(lr=1e-3, warmup_steps=10, min_lr=0.0)
    L, batch = bases(name)[base]
    fields["batch_size"] = batch // FT_FACTOR
    out = tuple(f"train.{k}={v}" for k, v in fields.items())
    if name == "mid":  # the row's own lengths are the cpu ones
        out += (
            f"model.block_size={FT_FACTOR * L}",
            f"model.rope_original_length={L}",
        )
    return out


# Not planned at mid: the fine-tunes of ``retrieval``. Its base models did not learn the lookup
# at mid (answer accuracy 0.11 at L, the chance level of one digit in ten, 3 of 3 seeds; as at
# cpu), so fine-tuning them at 2L would compare two rules on a model without the skill.
MID_SKIPPED = ("retrieval-ft-none", "retrieval-ft-pi")


def _mid_scale() -> Scale:
    """mid: every task at L = 256 with _scales.MID's model and schedule (rope variant), every
    row but MID_SKIPPED."""
    data = {
        "arithmetic": (f"data.path={igsm_file('mid')}",),
        "retrieval": (f"data.path={retrieval_file('mid')}",),
    }
    length = (f"model.block_size={MID_L}", "train.batch_size=16")
    row_overrides = {base: data[base] + length for base in ("arithmetic", "retrieval")}
    for base in BASES:
        for rule in FT_RULES:
            row_overrides[ft_name(base, rule)] = data.get(base, ()) + _ft_train("mid", base)
    return Scale(
        "mid",
        MID_MODEL,
        dict(MID_TRAIN),
        seeds=len(SCALES["mid"]["seeds"]),
        row_overrides=row_overrides,
        rows=tuple(
            n
            for n in (*BASES, *(ft_name(b, r) for b in BASES for r in FT_RULES))
            if n not in MID_SKIPPED
        ),
    )


def _scale(name: str) -> Scale:
    if name == "mid":
        return _mid_scale()
    lang, arith = SCALES[name]["steps"]
    data = {
        "language": (),
        "arithmetic": (f"data.path={igsm_file(name)}",),
        "retrieval": (f"data.path={retrieval_file(name)}",),
    }
    longer = []
    if arith != lang:
        longer = [f"train.{k}={v}" for k, v in _train(arith).items() if v != _train(lang)[k]]
    row_overrides = {base: data[base] + tuple(longer) for base in ("arithmetic", "retrieval")}
    for base in BASES:
        for rule in FT_RULES:
            row_overrides[ft_name(base, rule)] = data[base] + _ft_train(name, base)
    return Scale(
        name,
        MODEL,
        _train(lang),
        seeds=len(SCALES[name]["seeds"]),
        row_overrides=row_overrides,
    )


def _ft_row(base: str, rule: str) -> Row:
    L = BASES[base][0]
    return Row(
        ft_name(base, rule),
        "rope",
        (
            f"model.block_size={FT_FACTOR * L}",
            f"model.rope_scaling={rule}",
            f"model.rope_factor={float(FT_FACTOR)}",
            f"model.rope_original_length={L}",
        )
        + (("data.source=text",) if base != "language" else ()),
        label=(
            f"{base} fine-tuned at {FT_FACTOR}L = {FT_FACTOR * L} (mid: {FT_FACTOR * MID_L}) "
            f"with rule {rule}"
        ),
        init_from=base,
        analyze=lambda cfg, state, corpus: analyze_finetuned(cfg, state, corpus),
    )


ROWS = (
    Row("language", "rope", label="TinyShakespeare characters, L = 64 (mid: 256)"),
    Row(
        "arithmetic",
        "rope",
        ("model.block_size=128", "train.batch_size=16", "data.source=text"),
        label="iGSM mod-23 arithmetic (op +), L = 128 (mid: 256)",
    ),
    Row(
        "retrieval",
        "rope",
        (f"model.block_size={RETRIEVAL_L}", "train.batch_size=16", "data.source=text"),
        label=f"key-value retrieval, query at the end, L = {RETRIEVAL_L} (mid: {MID_L})",
    ),
) + tuple(_ft_row(base, rule) for base in BASES for rule in FT_RULES)
