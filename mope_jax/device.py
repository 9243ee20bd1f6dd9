"""What a run did with its device: model FLOPs, the device's peak at the run's precision, MFU;
and the two tools a lent accelerator needs, a count of XLA compilations and a persistent
compilation cache.

Model FLOPs per token (PaLM appendix B's convention; ``experiments/bench`` uses the same count):
forward = 2 (12 E^2 L) for the weight matmuls (q k v 3E^2, output E^2, MLP 8E^2 per layer)
+ 2 E V for the LM head + 4 T E L for the attention scores and A V over the full T x T (the
causal half not discounted); a training step costs 3 forward passes. Embedding lookups, layer
norms, softmax, the optimiser and what a variant adds (FFT filters, gates, envelopes) are not
counted: MFU is the share of the device's peak that the *model's* matmuls would need, the same
yardstick for every variant.

Peaks: dense (no sparsity) matmul rates from the vendors' datasheets, per precision
(``ModelConfig.precision``: f32, tf32, bf16), looked up by ``jax.devices()[0].device_kind``.
A device or precision not in :data:`PEAK_TFLOPS` has no peak, and its MFU is None (never a
guess): CPUs are not listed (their rate depends on the core count, clock and vector units; the
benchmark measures it instead). ``experiments/bench/gpu.py`` measures the achieved matmul rate
beside these numbers.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

# (substring of device_kind, {precision: dense TFLOP/s}); the first match wins, so the more
# specific names come first. Sources: NVIDIA H100/H200 (SXM and PCIe), A100, L4 and T4
# datasheets; Google Cloud TPU system architecture pages (bf16 only).
PEAK_TFLOPS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H100 PCIe", {"f32": 51.0, "tf32": 378.0, "bf16": 756.0}),
    ("H100", {"f32": 67.0, "tf32": 494.7, "bf16": 989.4}),  # SXM (80GB HBM3)
    ("H200", {"f32": 67.0, "tf32": 494.7, "bf16": 989.4}),
    ("A100", {"f32": 19.5, "tf32": 156.0, "bf16": 312.0}),
    ("L4", {"f32": 30.3, "tf32": 60.0, "bf16": 121.0}),
    ("T4", {"f32": 8.1}),  # no TF32 or bf16 units (fp16 tensor cores: 65)
    ("TPU v4", {"bf16": 275.0}),
    ("TPU v5 lite", {"bf16": 197.0}),
    ("TPU v5p", {"bf16": 459.0}),
    ("TPU v6 lite", {"bf16": 918.0}),
)


def train_flops_per_token(n_layer: int, n_embd: int, block_size: int, vocab_size: int) -> float:
    """Training FLOPs per token of the GPT (module docstring): 3 x forward."""
    fwd = 2 * 12 * n_embd**2 * n_layer + 2 * n_embd * vocab_size + 4 * block_size * n_embd * n_layer
    return 3.0 * fwd


def model_flops_per_token(model_cfg) -> float:
    """:func:`train_flops_per_token` of a ModelConfig."""
    m = model_cfg
    return train_flops_per_token(m.n_layer, m.n_embd, m.block_size, m.vocab_size)


def peak_tflops(device_kind: str, precision: str) -> float | None:
    """The datasheet's dense matmul peak of ``device_kind`` at ``precision``; None if unknown."""
    for name, peaks in PEAK_TFLOPS:
        if name.lower() in str(device_kind).lower():
            return peaks.get(precision)
    return None


def device_kind() -> str:
    """``jax.devices()[0].device_kind`` (e.g. 'NVIDIA H200'; 'cpu' on a CPU)."""
    import jax

    d = jax.devices()[0]
    return str(getattr(d, "device_kind", d.platform))


def perf_record(
    model_cfg, tokens_per_s_per_run: float | None, runs: int, devices: int = 1, kind: str = ""
) -> dict[str, Any]:
    """What a record says about the speed of its program: ``runs`` runs trained together (a
    row's seeds as one program, on ``devices`` devices) at ``tokens_per_s_per_run`` each.
    ``mfu`` = runs x tokens/s x FLOPs per token / (devices x peak); None without a peak."""
    kind = kind or device_kind()
    flops = model_flops_per_token(model_cfg)
    precision = model_cfg.precision
    peak = peak_tflops(kind, precision)
    rate = None if tokens_per_s_per_run is None else float(tokens_per_s_per_run) * runs
    mfu = None if peak is None or rate is None else rate * flops / (devices * peak * 1e12)
    return {
        "device_kind": kind,
        "devices": devices,
        "precision": precision,
        "runs_in_program": runs,
        "tokens_per_s": rate,  # all runs of the program together
        "flops_per_token": flops,
        "model_tflops_per_s": None if rate is None else rate * flops / 1e12,
        "peak_tflops": peak,
        "mfu": mfu,
    }


def perf_text(perf: dict[str, Any]) -> str:
    """'1,234,567 tokens/s (3 runs), 12.3 model TFLOP/s, MFU 24% of NVIDIA H200's bf16 peak'."""
    if perf.get("tokens_per_s") is None:
        return "speed not measured"
    text = (
        f"{perf['tokens_per_s']:,.0f} tokens/s ({perf['runs_in_program']} runs), "
        f"{perf['model_tflops_per_s']:.3g} model TFLOP/s"
    )
    if perf.get("mfu") is None:
        return text + f", no {perf['precision']} peak known for {perf['device_kind']}"
    return text + (
        f", MFU {100 * perf['mfu']:.1f}% of {perf['device_kind']}'s {perf['precision']} peak "
        f"({perf['peak_tflops']:g} TFLOP/s)"
    )


# --------------------------------------------------------------------------- compilations

BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@dataclass(eq=False)  # logs are told apart by identity (nested logs may hold equal events)
class CompileLog:
    """The XLA compilations seen while it is active: (program name, seconds) in order."""

    events: list[tuple[str, float]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def seconds(self) -> float:
        return float(sum(s for _, s in self.events))

    def by_name(self) -> Counter:
        return Counter(n for n, _ in self.events)

    def named(self, prefix: str) -> int:
        """How many compilations of programs whose name starts with ``prefix``."""
        return sum(1 for n, _ in self.events if n.startswith(prefix))


_ACTIVE: list[CompileLog] = []
_LOCK = threading.Lock()
_LISTENING = False


def _on_event(event: str, duration: float, **kw) -> None:
    if event != BACKEND_COMPILE_EVENT:
        return
    name = str(kw.get("fun_name", "?"))
    if name.startswith("jit(") and name.endswith(")"):  # 'jit(evaluate)' -> 'evaluate'
        name = name[4:-1]
    with _LOCK:
        for log in _ACTIVE:
            log.events.append((name, float(duration)))


@contextlib.contextmanager
def compile_log() -> Iterator[CompileLog]:
    """Count the programs XLA builds inside the block (``jax.monitoring``'s backend-compile
    event, which names the jitted function): each compiled, or loaded from the persistent
    compilation cache (the event covers both; a load is much shorter), so the count says how
    many programs a piece of code needs whatever the cache holds."""
    global _LISTENING
    import jax.monitoring

    log = CompileLog()
    with _LOCK:
        if not _LISTENING:
            jax.monitoring.register_event_duration_secs_listener(_on_event)
            _LISTENING = True
        _ACTIVE.append(log)
    try:
        yield log
    finally:
        with _LOCK:
            _ACTIVE.remove(log)


def use_compilation_cache(path: str | Path) -> Path:
    """Keep every compiled program in ``path`` (JAX's persistent compilation cache, all
    programs whatever their compile time or size): a second process, or a later loan that
    carries the folder, loads them instead of compiling. Returns the folder."""
    import jax

    path = Path(path).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
