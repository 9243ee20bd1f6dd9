"""experiments/results/bench/README.md (``readme``): the targets and headline numbers of a
bench run, what was measured and tried, and what is left for the missed targets."""

from __future__ import annotations

from experiments.bench.report_summary import result_of
from experiments.bench.report_tables import attention_note, fmt
from experiments.bench.spec import CAUSAL_FILTER, CONFIGS, REF_ROWS
from mope_jax.provenance import cpu_text


def readme(doc: dict, json_name: str, note: str = "") -> str:
    """experiments/results/bench/README.md: the headline numbers of this run, what was tried."""
    summ, recs = doc["summary"], doc["records"]
    ref = summ["reference"]

    def tps(k):
        return ref.get(k, {}).get("tokens_per_s")

    L = [
        "# Performance benchmarks (issues 8 and 14)",
        "",
        f"Made by `{doc['command']}` on {doc['date']} ({cpu_text(doc['env'])}, "
        f"{doc['env']['cpu_count']} CPUs; load average before {doc['load_before']}, after "
        f"{doc['load_after']}). Every number below is read from [`{json_name}`]({json_name}) (the "
        f"tables: [`{json_name[:-5]}.md`]({json_name[:-5]}.md)); the FLOP count and the protocol "
        "are in `experiments/bench/measure.py` and `run.py`.",
        "",
    ]
    L += ([note, ""] if note else []) + [
        "## Targets",
        "",
        "| target | measured | met | short by |",
        "|---|---:|---|---:|",
    ]
    goal = {"jax_vs_torch>=1.0": 1.0, "mfu>=0.5": 0.5, "sweep4>=1.5x": 1.5}
    for k, v in summ["targets"].items():
        g = goal.get(k.split(" @")[0], 1.0 if k.startswith("f32_vs_torch") else None)
        short = (
            ""
            if v["met"]
            else (
                f"{100 * (1 - v['value'] / g):.0f}%"
                if g
                else f"{100 * (v['value'] / 1.3 - 1):.0f}% over"
            )
        )
        L.append(
            f"| {k}{' (' + v['best'] + ')' if 'best' in v else ''} | {fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} | {short} |"
        )
    L += [
        "",
        f"f32 matmul peak measured in this run: {fmt(summ['peak_gflops'])} GFLOP/s (MFU = model "
        "FLOPs/s divided by it; measured in the same run, so a busy machine lowers both). 'vs "
        "PyTorch' divides by the faster of the two PyTorch thread settings.",
        "",
        "## Reference model, batch 16",
        "",
        "| implementation | tokens/s | MFU | vs PyTorch |",
        "|---|---:|---:|---:|",
    ]
    for k, row in ref.items():
        L.append(
            f"| {REF_ROWS[k]} | {fmt(row['tokens_per_s'], 0)} | "
            f"{fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{fmt(row.get('vs_torch'), 2)} |"
        )
    if summ.get("configs"):
        L += [
            "",
            "## The sizes we train (single process"
            + (
                "; each row the best of alternating rounds)"
                if any("#" in k for k in recs)
                else "; one round)"
            ),
            "",
            "| config | JAX f32 tokens/s, 1 device | f32 / best PyTorch | attn_layout=bhtd / best "
            "PyTorch | bhtd + 4 query blocks / best PyTorch | 2 host devices / best PyTorch | "
            "2 host devices, bhtd + blocks / best PyTorch | JAX on 1 core / PyTorch 1 thread | "
            "bf16 matmuls / f32 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in summ["configs"].items():
            L.append(
                f"| {CONFIGS[name][0]} | {fmt(row['jax'], 0)} | {fmt(row['jax_vs_torch'], 2)} | "
                f"{fmt(row.get('bhtd_vs_torch'), 2)} | {fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{fmt(row.get('dp2_vs_torch'), 2)} | {fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{fmt(row['bf16_vs_f32'], 2)} |"
            )
    mlp = (result_of(recs.get("mlp")) or {}).get("results", {})
    prof = result_of(recs.get("profile"))
    pchar = result_of(recs.get("profile/nanogpt-char"))
    L += [
        "",
        "## What was measured and tried",
        "",
        "* **Where the time goes**: a `jax.profiler` trace of one reference step, grouped by the "
        "source of each XLA operation"
        + (
            f" ({prof['overrides']}): "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in prof["share"].items())
            + "."
            if prof
            else " (not measured in this run)."
        )
        + " The random bits are threefry's rounds over a (B,H,T,T) uint32 array per layer for the "
        "attention-dropout masks; the profiled step uses the default (unrolled) lowering."
        + (
            " The same for one step at nanoGPT's character config: "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in pchar["share"].items())
            + ". "
            + attention_note(pchar)
            if pchar
            else ""
        ),
        "* **threefry on CPU**: JAX lowers its PRNG on CPU as a rolled `while` loop (one pass over "
        "the array per iteration); `mope_jax.perf.fast_cpu_threefry` (called by `make_train`) "
        "registers the unrolled lowering JAX uses on GPU/TPU: the same bits (tests/test_perf.py "
        "checks them against a Python Threefry-2x32 and Random123's known answers), one fused loop."
        + (
            f" In this run: {fmt(tps('jax/1dev'), 0)} vs {fmt(tps('jax/1dev/rolled'), 0)} "
            f"tokens/s (x{tps('jax/1dev') / tps('jax/1dev/rolled'):.2f}) on one device."
            if tps("jax/1dev") and tps("jax/1dev/rolled")
            else ""
        ),
        "* **GELU**: `mope_jax.model.gelu` (exact, erf form, one fused expression for Phi(x) + x "
        "phi(x) via `jax.custom_jvp`) replaced `nn.gelu(approximate=False)` (erfc, derivative "
        "rebuilt by autodiff). Same numbers to f32 rounding (tests/test_perf.py); the default is "
        "unchanged in meaning.",
    ]
    if mlp:
        L.append(
            "  One MLP forward+backward in this run: "
            + "; ".join(f"{k}: {v['ms']:.1f} ms" for k, v in mlp.items())
            + ". `gelu_approximate=true` stays an opt-in (it changes the model)."
        )
    lay = result_of(recs.get("layout"))
    if lay:
        (fa, va), (fb, vb) = lay["results"].items()
        L.append(
            "* **Dense layers on 2-D inputs** (issue 14): flax's `nn.Dense` contracts a (B,T,E) "
            "input, so each weight gradient contracts two axes and XLA:CPU writes a transposed "
            "copy of the activation gradient first; `mope_jax.attention.core.Dense` multiplies x "
            "flattened to (B*T, E), same parameters, same math. At nanoGPT's character config in "
            f"this run: {va['copy_elements_per_step']:,} -> {vb['copy_elements_per_step']:,} "
            f"copied elements per step, {fmt(va['tokens_per_s'], 0)} -> "
            f"{fmt(vb['tokens_per_s'], 0)} tokens/s (x{lay['speedup']:.2f}, timed alternately in "
            "one process), first losses bitwise equal: "
            f"{'yes' if lay['bitwise_equal_losses'] else 'NO'}"
            + (
                ""
                if lay["bitwise_equal_losses"]
                else " (largest difference over the "
                f"{len(va['first_losses'])} steps "
                f"{max(abs(x - y) for x, y in zip(va['first_losses'], vb['first_losses'])):.1e}: "
                "the flattened matmuls sum in another order at this size, while at the tiny size "
                "of tests/test_bench.py the losses are bitwise equal; every campaign record was "
                "made after this change, commit 82bc6a3)"
            )
            + "."
        )
    cfgs = summ.get("configs") or {}
    bf = {k: v["bf16_vs_f32"] for k, v in cfgs.items() if v.get("bf16_vs_f32")}
    if bf:
        L.append(
            "* **bf16 matmuls** (`model.compute_dtype=bfloat16`, opt-in: it changes the numbers): "
            "bf16 inputs to every matmul with float32 accumulation, float32 master weights, "
            "LayerNorm, softmax and loss. Tokens/s bf16 / f32 in this run: "
            + ", ".join(f"{k} {v:.2f}x" for k, v in bf.items())
            + "."
        )
    L += [
        "* **Data parallel over 2 host devices**: `make_train(cfg, "
        "batch_sharding=NamedSharding(mesh, P('data')))` shards each batch; XLA partitions the "
        "step and all-reduces the gradients "
        "(`XLA_FLAGS=--xla_force_host_platform_device_count=2`). Same numbers to float tolerance "
        "(tests/test_perf.py)."
        + (
            f" In this run: {fmt(tps('jax/dp2'), 0)} vs {fmt(tps('jax/1dev'), 0)} tokens/s on "
            "one device."
            if tps("jax/dp2") and tps("jax/1dev")
            else ""
        ),
        "* **Donation**: `train.run` already donates the state (`donate_argnums=0`); the benchmark "
        "does too.",
        "* **XLA CPU flags** (`--xla_cpu_use_xnnpack`, `--xla_cpu_experimental_ynn_fusion_type`, "
        "`--xla_cpu_use_onednn`, `--xla_cpu_prefer_vector_width=512`, "
        "`--xla_cpu_multi_thread_eigen`, fast math): tried on the MLP (issue 8) and, in issue 14, "
        "YNNPACK fusions off, `dot,eltwise,reduce`, oneDNN and XNNPACK dot fusions on the "
        "nanoGPT-char step, each in its own process on a machine shared with other jobs: no "
        "difference stood out of the noise (oneDNN and XNNPACK left the loss bit for bit "
        "unchanged, i.e. the same kernels), so nothing is claimed about them; none is used in this "
        "run.",
        "* **Attention formulation**: the hand-written einsum attention is kept. Opt-in "
        "`model.attn_layout=bhtd` (issue 14) moves the heads next to the batch before the "
        "einsums: XLA:CPU's batched dot wants its batch dimensions leading, and one explicit "
        "transpose per operand costs less than the copies it inserts around "
        "`BTHD,BSHD->BHTS`. Same math, but the kernels then sum in another order: gradients "
        "bitwise equal to the default's in this run: "
        + {True: "yes", False: "no", None: "not measured"}[
            (result_of(recs.get("attention")) or {}).get("layout_gradients_bitwise_equal")
        ]
        + " (parameters after 5 training steps at nanoGPT-char differed by up to 4e-9 in a "
        "scratch check), so it is not the default: every committed record used `bthd`. "
        "Opt-in `model.attn_query_blocks=n` (issue 14) computes only the causal key blocks: "
        "the queries in n blocks, each scored against the keys up to its last row, (n+1)/(2n) "
        "of the score matrix; the same dropout bits (one draw, sliced), the same values to "
        "float32 rounding for every model variant (tests/test_attention_blocks.py), but shorter "
        "sums, so not the default either. The 'bhtd + 4 query blocks' column uses both. One "
        "attention forward+backward in this run: "
        + (
            "; ".join(
                f"{k}: {v['ms']:.1f} ms"
                for k, v in result_of(recs.get("attention"))["results"].items()
            )
            if result_of(recs.get("attention"))
            else "not measured"
        )
        + ".",
        "",
        "## Other sections",
        "",
        f"Seed sweeps, the causal spectral filters (`{CAUSAL_FILTER}`, FFT and Toeplitz) at T=256, "
        "the filters' cost vs T = 128 ... 4096 and every model variant (non-causal ones labelled "
        f"NON-CAUSAL) are in [`{json_name[:-5]}.md`]({json_name[:-5]}.md).",
    ]
    not_run = sorted(
        k.split("/", 1)[1] for k, v in recs.items() if k.startswith("variant/") and v.get("error")
    )
    if not_run:
        L += [
            "",
            f"Variants not measured in this run ({len(not_run)}: {', '.join(not_run)}): the quick "
            "run measures them in a fixed order (one of each family first) until its time budget "
            "ends; `python -m experiments.bench.run` (full sizes) measures every variant.",
        ]
    miss = [k for k, v in summ["targets"].items() if not v["met"]]
    if miss:
        L += [
            "",
            "## Missed targets",
            "",
            "Missed in this run: "
            + ", ".join(miss)
            + ". The measured values and the shortfall are in the "
            "table above.",
        ]
        if any(k.startswith("sweep") for k in miss):
            L.append(
                "Seed sweeps: every `mope_jax.sweep` strategy (map, vmap, shard over 2 host "
                f"devices) is in [`{json_name[:-5]}.md`]({json_name[:-5]}.md) next to "
                "one-seed-at-a-time training; none was faster by 1.5x. Not tried: pinning each "
                "host device to its own core."
            )
        if any(k.startswith("f32_vs_torch") for k in miss):

            def per_config(key, nd=2):
                return ", ".join(f"{fmt(cfgs[n].get(key), nd)} ({n})" for n in CONFIGS if n in cfgs)

            nc = cfgs.get("nanogpt-char") or {}
            scaling = ""
            if nc.get("jax-1core") and nc.get("jax") and nc.get("torch") and nc.get("torch/1t"):
                scaling = (
                    f" From one core to two, JAX gained x{nc['jax'] / nc['jax-1core']:.2f} at "
                    f"nanoGPT-char and PyTorch x{nc['torch'] / nc['torch/1t']:.2f}: the gap there "
                    "is both per-core speed and how the second core is used."
                )
            L.append(
                "The sizes we train (issue 14): tried as listed above (2-D Dense, attention "
                "layout, causal query blocks, flags, bf16); the profiles above say where the "
                "nanoGPT-char step's time goes. With both f32 opt-ins (bhtd + 4 query blocks) "
                f"JAX / best PyTorch is {per_config('blocks_vs_torch')}; with them on 2 host "
                f"devices {per_config('dp2_blocks_vs_torch')}. Per core (JAX pinned to one core "
                f"against PyTorch at 1 thread): {per_config('1core_vs_torch_1t')}."
                + scaling
                + " Also tried and dropped (scratch A/B, 2026-12-01, Intel Xeon with AVX-512 "
                "and AMX): drawing the attention-dropout bits only on the causal triangle (rows "
                "i and T-1-i packed into one, half the threefry work; the masks equal "
                "`jax.random.bernoulli`'s where they matter): the packed mask no longer fuses "
                "into its consumers and the step got slower at the reference and `mid` sizes, "
                "and the gradients differed at float32 rounding (XLA fused the backward "
                "differently); oneDNN, XNNPACK and YNNPACK-off XLA flags at nanoGPT-char: no "
                "gain there either, nor (2 rounds each, campaigns paused) "
                "`--xla_cpu_use_thunk_runtime=false` (21.9-22.3k tokens/s), "
                "`--xla_cpu_enable_concurrency_optimized_scheduler=true` (22.3-23.1k) or "
                "`--xla_cpu_parallel_codegen_split_count=8` (22.2-22.8k) against no flags "
                "(21.4-22.0k). The same step on 2 "
                "host devices (batch sharded, `mope-jax sweep --data-parallel 2`) is the row "
                "`jax/dp2` of the reference table. This machine is shared: the same JAX "
                "measurement varied by ~20% between runs minutes apart, which is why the rows "
                "above are the best of alternating rounds. Tried in scratch A/Bs and left out "
                "(2026-12-01, no gain): a custom attention VJP (the rowsum(dO * O) form), scaling "
                "q by 1/sqrt(D) in place of the scores. Not tried for lack of time: a fused "
                "LayerNorm backward, Eigen instead of YNNPACK per dot shape."
            )
        if any(k.startswith(("mfu", "jax_vs")) for k in miss):
            L.append(
                "Reference step: tried as listed above. Not tried for lack of time: a custom VJP "
                "that routes the weight-gradient matmuls (XLA's Eigen dots) to YNNPACK, bf16 "
                "matmuls (would change numerics), a fused attention kernel (Pallas has no CPU "
                "backend)."
            )
    return "\n".join(L) + "\n"
