"""The grid: the scales (peak lr by the integrated-lr rule), the 12 cells per model, the rows
``<model>-wd_<on|off>-init_<boundary|off>-<constraint>`` and the per-model names (variant,
parameter prefix, label)."""

from __future__ import annotations

from experiments._scales import FAST_ATTENTION, MID
from mope_jax.campaign import Row

from .lr_rule import matched_lr


def _once_at_the_end(train: dict) -> dict:
    n = train["max_steps"]
    return train | dict(eval_interval=n, checkpoint_interval=n, log_interval=n)


SCALES = {  # the single-script version's smoke and cpu; mid = the shared MID (experiments/_scales)
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
        train=_once_at_the_end(dict(batch_size=8, max_steps=40, warmup_steps=4, eval_batches=4)),
        seeds=1,
    ),
    "cpu": dict(
        model=dict(block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        train=_once_at_the_end(
            dict(batch_size=16, max_steps=400, warmup_steps=20, eval_batches=20)
        ),
        seeds=1,
    ),
    # with the f32 attention opt-ins (experiments/_scales.py FAST_ATTENTION)
    "mid": dict(model=MID["model"] | FAST_ATTENTION, train=MID["train"], seeds=2),
}
for _s in SCALES.values():
    _s["train"] = _s["train"] | {"lr": matched_lr(_s["train"], _s["model"])}

CELLS = [  # (weight decay on log_omega/log_sigma, init, constraint)
    (wd, init, constraint)
    for wd in ("on", "off")
    for init in ("boundary", "off")
    for constraint in ("clamp", "penalty", "none")
]
MODELS = ("mope", "ega-m")  # whose (omega, sigma) a row learns: MOPE's table or EGA-M's filters
VARIANT = {"mope": "a-mope", "ega-m": "a-ega-m"}
PREFIX = {"mope": "mope", "ega-m": "ega_m"}  # spectra / summary name prefix of each model
LABEL = {"mope": "MOPE", "ega-m": "EGA-M (NON-CAUSAL)"}


def row_name(model: str, wd: str, init: str, constraint: str) -> str:
    return f"{model}-wd_{wd}-init_{init}-{constraint}"


def cell_row(model: str, wd: str, init: str, constraint: str) -> Row:
    pre = PREFIX[model]
    overrides = [f"model.{pre}_init={init}", f"model.{pre}_constraint={constraint}"]
    if wd == "off":
        overrides.append("train.no_decay=log_omega,log_sigma")
    setup = " (the paper's setup)" if (wd, init, constraint) == ("on", "boundary", "clamp") else ""
    return Row(
        row_name(model, wd, init, constraint),
        VARIANT[model],
        tuple(overrides),
        label=f"{LABEL[model]}: wd {wd}, init {init}, {constraint}{setup}",
    )


ROWS = tuple(cell_row(m, *c) for m in MODELS for c in CELLS)
BASELINE = row_name("mope", "on", "boundary", "clamp")


def cell_rows(model: str) -> tuple[str, ...]:
    """The 12 cells' row names of ``model`` ("mope" or "ega-m"), in grid order."""
    return tuple(row_name(model, *c) for c in CELLS)


MOPE_ROWS = cell_rows("mope")


def row_model(row: Row) -> str:
    return next(m for m, v in VARIANT.items() if v == row.variant)


def paper_cell(model: str) -> str:
    """The paper's setup: weight decay on, init on the boundary, the clamp."""
    return row_name(model, "on", "boundary", "clamp")
