"""The rows and scales of the frequency-matching campaign: the sweep values (block lengths of
the copy task, widths of the repeat task), the model and data settings, the repeat-task
character files under ``runs/paper_b/`` and the mapping between a row's config and its task."""

from __future__ import annotations

from pathlib import Path

from experiments import _paper_b as pb
from mope_jax.campaign import Row, Scale
from mope_jax.config import Config
from mope_jax.data.dependency import block_copy_width, block_repeat_stream, stream_to_text

BLOCKS = (4, 6, 10, 18, 34, 66)  # copy task: B (W = B - 2); 66 at scale "learned" only
WIDTHS = (2, 4, 8, 16, 32)  # repeat task: W (blocks of 2W + 1)
MODEL = dict(block_size=128, n_layer=2, n_head=2, n_embd=64, dropout=0.0)  # + variant "rope"
DATA = dict(source="blocks", num_symbols=16, num_tokens=100_000)


def _train(steps: int, every: int) -> dict:
    return pb.train_fields(steps, every, batch_size=16)


def width_of(task: str, v: int) -> int:
    """W for a sweep value: copy -> v = B and W = B - 2; repeat -> v = W (blocks of 2W + 1)."""
    return block_copy_width(v) if task == "copy" else v


def repeat_file(width: int) -> Path:
    """The repeat-variant stream as a character file under runs/paper_b/ (deterministic, not
    committed; rewritten only when missing or different)."""
    path = pb.RUNS / f"repeat_W{width}.txt"
    text = stream_to_text(block_repeat_stream(100_000, width=width, num_symbols=16, seed=0))
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def task_of(cfg: Config) -> tuple[str, int]:
    """(task, v) of a row's config: copy -> v = B; repeat -> v = W (from the file name)."""
    if cfg.data.source == "blocks":
        return "copy", cfg.data.block_len
    return "repeat", int(Path(cfg.data.path).stem.split("_W")[-1])


ROWS = tuple(
    Row(f"copy-B{b}", "rope", (f"data.block_len={b}",), label=f"copy task, B={b}, W={b - 2}")
    for b in BLOCKS
) + tuple(
    Row(
        f"repeat-W{w}",
        "rope",
        ("data.source=text", f"data.path={repeat_file(w)}"),
        label=f"repeat task, W={w} (blocks of {2 * w + 1})",
    )
    for w in WIDTHS
)
_REPEAT_CPU = ("train.max_steps=300", "train.checkpoint_interval=300")
_FIRST = tuple(r.name for r in ROWS if r.name != "copy-B66")  # the smoke and cpu rows
# scale "learned": a model that learns the copy. Wider (128, 4 heads of D = 32: the same 16
# RoPE frequencies) and trained longer at nanoGPT's lr for width 128; 5 seeds.
MODEL_LEARNED = dict(block_size=128, n_layer=2, n_head=4, n_embd=128, dropout=0.0)
TRAIN_LEARNED = _train(2000, 250) | dict(lr=1e-3, warmup_steps=100, checkpoint_interval=500)
SCALES = (
    Scale("smoke", MODEL, _train(20, 10), seeds=1, rows=_FIRST),
    Scale(
        "cpu",
        MODEL,
        _train(400, 50),
        seeds=3,
        row_overrides={f"repeat-W{w}": _REPEAT_CPU for w in WIDTHS},
        rows=_FIRST,
    ),
    Scale(
        "learned",
        MODEL_LEARNED,
        TRAIN_LEARNED,
        seeds=5,
        # the pilot's copy-B66 seed 0 was flat at ln 16 for all 2000 steps (copy acc 0.125),
        # where copy-B34 learned the copy by step 1000: the widest block gets 3x the steps
        row_overrides={"copy-B66": ("train.max_steps=6000", "train.eval_interval=500")},
    ),
)
