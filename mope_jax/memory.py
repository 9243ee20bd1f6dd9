"""Memory estimates, checked before anything is allocated.

An absurd size (``train.batch_size=1000000000``, ``model.n_embd=1000000``, ``--seeds
1000000000``, ``--data repeat:W=8,N=100000000000``) used to end in a ``MemoryError`` or XLA
``RESOURCE_EXHAUSTED`` traceback, or in minutes of silence; these pure functions estimate what
a command will hold and :func:`check` refuses, in one line naming the setting to lower, what
cannot fit in the memory of this machine (or of its accelerator).

The estimate of one training run, in bytes (float32, 4 bytes a value; L layers, E width, H
heads, T block size, V vocabulary, B batch):

* parameters ``P = L (12 E^2 + 13 E) + V E (twice when untied) + T E + 2 E``;
* the train state and its update: ``5 x 4 P`` (parameters, gradient, Adam's two moments, and
  one more copy for the update's temporaries);
* activations kept for the backward pass: ``4 B T (L (24 E + 5 H T) + 5 V + 2 E)``: per layer
  24 E values of a position (layer norms, q k v, the MLP's 4 E hidden values before and after
  the GELU, dropout masks) and 5 H T of the attention scores (scores, softmax, mask, their
  gradients); the logits 5 V. The coefficients are XLA:CPU's ``memory_analysis`` of the train
  step, fitted on small models (B 4..256, T 32..128, E 32..64) within ~10%;
* precision (``ModelConfig.precision``) keys the bytes of an activation value
  (:data:`ACTIVATION_VALUE_BYTES`): 4 at f32 and tf32 (tf32 rounds inside the matmul units
  only); at bf16 also 4, an upper bound: XLA:CPU's ``memory_analysis`` of the bf16 train step
  is within 0.3% of the f32 one (B 16..64, T 64..128, E 32..64: the residual stream, layer
  norms, softmax and loss stay float32 and the CPU backend widens bf16 elementwise work), and
  a GPU backend keeps bf16 matmul outputs, so less; the parameters and Adam state stay float32
  (bf16 here is mixed precision with float32 master weights);
* evaluation (a separate program: the larger of it and the train step's activations counts):
  32 bytes a batch (``lax.map``'s index and loss arrays of both splits: 20 measured, with a
  margin for constants and the allocator)
  and one batch's forward pass (a fifth of the activations above);
* data: 4 bytes a token twice (the host array and its device copy), val included, and 16 bytes
  a token while a synthetic stream is drawn; a text file: 10 bytes a byte (the bytes, the
  decoded text, the int32 ids and the vocabulary pass).

A sweep of R runs holds R states; ``vmap`` also R sets of activations (``map`` and
``sequential`` run one seed at a time, ``shard`` splits the runs over the devices).

Machine memory: ``MemAvailable`` of ``/proc/meminfo`` (else ``os.sysconf`` free pages); on a
GPU/TPU the first device's ``memory_stats()["bytes_limit"]`` for what lives on the device
(the state, activations, evaluation and the device copy of the data); when a backend reports
no limit the device check is skipped. Nothing is refused when the memory cannot be read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mope_jax.errors import ConfigError

GiB = 1024**3
F32 = 4
STATE_COPIES = 5
# bytes of one activation value by ModelConfig.precision (module doc: bf16 counted at 4, an
# upper bound measured on XLA:CPU)
ACTIVATION_VALUE_BYTES = {"f32": 4, "tf32": 4, "bf16": 4}
EVAL_BYTES_PER_BATCH = 32  # 20 measured (XLA temporaries); margin for constants, allocator
TEXT_BYTES_PER_BYTE = 10
STREAM_BYTES_PER_TOKEN = 32  # rope-advice: the int64 stream, its draw and the kernel's counts


@dataclass(frozen=True)
class Estimate:
    """Bytes by part, each with the setting that lowers it; ``device`` parts live on the
    accelerator (on a CPU backend everything is host memory)."""

    parts: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (bytes, setting)
    host_only: frozenset[str] = frozenset()
    # parts held by separate programs (the train step, the evaluation): the larger one counts
    one_of: frozenset[str] = frozenset()

    def need(self, names=None) -> int:
        """Peak bytes of the parts ``names`` (default all): the sum, but only the largest of
        ``one_of``."""
        sel = {k: b for k, (b, _) in self.parts.items() if names is None or k in names}
        alt = [b for k, b in sel.items() if k in self.one_of]
        return sum(b for k, b in sel.items() if k not in self.one_of) + max(alt, default=0)

    @property
    def total(self) -> int:
        return self.need()

    def largest(self, names=None) -> tuple[str, str]:
        items = [(b, k, s) for k, (b, s) in self.parts.items() if names is None or k in names]
        _, name, setting = max(items)
        return name, setting


def num_params(model) -> int:
    """The parameter count of the GPT of ``model`` (a ModelConfig), to within the small
    position-encoding and filter parameters of some variants."""
    L, E, V, T = model.n_layer, model.n_embd, model.vocab_size, model.block_size
    head = 1 if model.tie_embeddings else 2
    return L * (12 * E * E + 13 * E) + head * V * E + T * E + 2 * E


def activation_bytes(model, batch: int) -> int:
    """Bytes the train step keeps for the backward pass of one run (see the module doc)."""
    L, E, H, T, V = model.n_layer, model.n_embd, model.n_head, model.block_size, model.vocab_size
    value = ACTIVATION_VALUE_BYTES[getattr(model, "precision", "f32")]
    return value * batch * T * (L * (24 * E + 5 * H * T) + 5 * V + 2 * E)


def data_bytes(data) -> int:
    """Bytes of the corpus a DataConfig names (a synthetic stream's tokens; a text file's
    size; tinyshakespeare: about a MB, counted as nothing)."""
    if data.source == "blocks":
        n = data.num_tokens + max(data.num_tokens // 10, 64 * data.block_len)
        return synthetic_bytes(n)
    if data.source == "text" and data.path:
        return text_bytes(data.path)
    return 0


def synthetic_bytes(num_tokens: int) -> int:
    return 16 * num_tokens


def text_bytes(path) -> int:
    try:
        return TEXT_BYTES_PER_BYTE * Path(path).expanduser().stat().st_size
    except OSError:  # missing: the loader says so
        return 0


def training(cfg, runs: int = 1, *, vmapped: bool = False, slots: int = 1) -> Estimate:
    """What training ``runs`` runs of ``cfg`` at once holds (``vmapped``: their activations
    too; ``slots``: devices the runs are split over, strategy shard)."""
    m, t = cfg.model, cfg.train
    per_slot = -(-runs // slots)
    state = STATE_COPIES * F32 * num_params(m)
    act = activation_bytes(m, t.batch_size)
    ev = EVAL_BYTES_PER_BATCH * t.eval_batches + act // 5
    model_hint = (
        "model.vocab_size (or model.n_embd)"
        if m.vocab_size * m.n_embd > 12 * m.n_layer * m.n_embd**2
        else "model.n_embd or model.n_layer"
    )
    if runs > 1:
        model_hint = f"--seeds (or {model_hint})"
    copies = per_slot if vmapped else 1
    parts = {
        "parameters and optimizer state": (state * per_slot, model_hint),
        "activations": (act * copies, "train.batch_size (or model.block_size, model.n_layer)"),
        "evaluation": (ev * copies, "train.eval_batches"),
        "data": (
            data_bytes(cfg.data),
            "data.num_tokens" if cfg.data.source == "blocks" else "the corpus size",
        ),
    }
    return Estimate(parts, frozenset({"data"}), frozenset({"activations", "evaluation"}))


def evaluation(cfg, batches: int | None = None) -> Estimate:
    """What ``eval`` of a run of ``cfg`` holds: the restored state (no gradient) and the eval."""
    m, t = cfg.model, cfg.train
    n = t.eval_batches if batches is None else batches
    return Estimate(
        {
            "the restored state": (3 * F32 * num_params(m), "the model (it is the run's)"),
            "evaluation": (
                EVAL_BYTES_PER_BATCH * n + activation_bytes(m, t.batch_size) // 5,
                "--batches",
            ),
        }
    )


# --------------------------------------------------------------------------- the machine


def host_available() -> tuple[int | None, str]:
    """(bytes, where read): MemAvailable of /proc/meminfo, else os.sysconf's free pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "MemAvailable in /proc/meminfo"
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages, size = os.sysconf("SC_AVPHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return pages * size, "free memory (os.sysconf)"
    except (ValueError, OSError, AttributeError):
        pass
    return None, ""


def device_limit() -> tuple[int | None, str]:
    """(bytes, what) of the first accelerator's memory; (None, "") on CPU or when unknown."""
    try:
        import jax

        if jax.default_backend() == "cpu":
            return None, ""
        dev = jax.devices()[0]
        stats = dev.memory_stats() or {}
        limit = stats.get("bytes_limit")
        return (int(limit), f"{dev.device_kind} memory") if limit else (None, "")
    except Exception:  # noqa: BLE001  (no backend, no stats: skip the device check)
        return None, ""


def gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB / 10 else f"{n / 2**20:.1f} MiB"


def refusal(est: Estimate, what: str, available: int, where: str, names=None) -> str | None:
    """The one-line message when ``est`` (its parts ``names``, or all) exceeds ``available``."""
    need = est.need(names)
    if need <= available:
        return None
    shown = ", ".join(
        f"{k} {gib(b)}" for k, (b, _) in est.parts.items() if (names is None or k in names) and b
    )
    _, setting = est.largest(names)
    return (
        f"{what} needs about {gib(need)} ({shown}), more than the {gib(available)} of {where}; "
        f"lower {setting}"
    )


def check(est: Estimate, what: str) -> None:
    """ConfigError (one line: the estimate, the machine's memory, the setting to lower) when
    ``est`` cannot fit; on an accelerator its device parts are checked against the device."""
    limit, kind = device_limit()
    if limit is not None:
        device = [k for k in est.parts if k not in est.host_only]
        msg = refusal(est, what, limit, kind, device)
        if msg:
            raise ConfigError(msg)
        host = [k for k in est.parts if k in est.host_only]
    else:
        host = None
    avail, where = host_available()
    if avail is not None and (host is None or host):
        msg = refusal(est, what, avail, f"memory available on this machine ({where})", host)
        if msg:
            raise ConfigError(msg)


def check_training(cfg, runs: int = 1, *, strategy: str = "map", slots: int = 1) -> None:
    what = "training" if runs == 1 else f"training {runs} runs at once"
    check(training(cfg, runs, vmapped=strategy == "vmap", slots=slots), what)


OOM_HINT = (
    "lower train.batch_size, model.n_embd, model.n_layer, model.block_size, "
    "train.eval_batches or --seeds (or the corpus size)"
)


def is_out_of_memory(e: BaseException) -> bool:
    """MemoryError (numpy's _ArrayMemoryError is one) or XLA's RESOURCE_EXHAUSTED."""
    if isinstance(e, MemoryError):
        return True
    return type(e).__name__ in ("XlaRuntimeError", "JaxRuntimeError") and (
        "RESOURCE_EXHAUSTED" in str(e) or "Out of memory" in str(e)
    )
