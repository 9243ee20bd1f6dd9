"""bench_<size>.md: every section of a bench run as a table (``markdown``), and the number
format and attention note it shares with the README (report_readme.py)."""

from __future__ import annotations

from experiments.bench.report_summary import result_of
from experiments.bench.spec import CAUSAL_FILTER, CONFIGS, PROFILES, REF_ROWS
from mope_jax.provenance import cpu_text


def fmt(x, nd=1):
    """x with nd decimals and thousands separators; "n/a" for None."""
    return "n/a" if x is None else f"{x:,.{nd}f}"


def attention_note(prof: dict) -> str:
    """The attention matmuls' share of op time next to their share of the model FLOPs."""
    t = sum(v for k, v in prof["share"].items() if k.startswith("attention matmuls"))
    return (
        f"The attention's batched matmuls took {100 * t:.0f}% of the op time for "
        f"{100 * prof['attention_flop_share']:.0f}% of the model FLOPs."
    )


def markdown(doc: dict, note: str = "") -> str:
    """bench_<size>.md from the doc (``note``: the rendered-from line ``render`` adds)."""
    recs, summ = doc["records"], doc["summary"]
    L = [
        f"# Benchmarks ({doc['size']})",
        "",
        f"Command: `{doc['command']}`  ",
        f"Date: {doc['date']}  ",
        f"Machine: {cpu_text(doc['env'])}, {doc['env']['cpu_count']} CPUs, "
        f"{doc['env']['platform']}  ",
        f"Versions: jax {doc['env']['jax']}, flax {doc['env']['flax']}, torch "
        f"{doc.get('torch_version', 'n/a')}, python {doc['env']['python']}, commit "
        f"{doc['env']['git_commit']}  ",
        f"Load average (1/5/15 min) before: {doc['load_before']}, after: {doc['load_after']}  ",
        f"Wall time: {doc['wall_s']:.0f} s. f32 matmul peak (2048^3 jnp.dot, this run): "
        f"{fmt(summ['peak_gflops'])} GFLOP/s",
        "",
    ] + ([note, ""] if note else [])
    L += [
        "## Reference model (6 x 256, T=256, 8 heads), batch 16",
        "",
        "| implementation | tokens/s | step (s) | MFU | vs PyTorch | compile (s) "
        "| peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for k, row in summ["reference"].items():
        L.append(
            f"| {REF_ROWS[k]} | {fmt(row['tokens_per_s'], 0)} | {fmt(row['step_s'], 3)} | "
            f"{fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{fmt(row.get('vs_torch'), 2)} | {fmt(row.get('compile_s'))} | "
            f"{fmt(row.get('maxrss_mb'), 0)} |"
        )
    if summ.get("configs"):
        L += [
            "",
            "## The sizes we train: tokens/s, JAX (1 device) and PyTorch eager, side by side",
            "",
            "| config | JAX f32 | JAX f32, attn_layout=bhtd | JAX f32, bhtd + 4 query blocks | "
            "JAX bf16 matmuls | JAX f32, 2 host devices | PyTorch 2 threads | PyTorch 1 thread | "
            "JAX f32 / best PyTorch | bhtd / best PyTorch | bhtd + blocks / best PyTorch | "
            "2 host devices / best PyTorch | 2 host devices, bhtd + blocks / best PyTorch | "
            "JAX f32 on 1 core | JAX 1 core / PyTorch 1 thread | bf16 / f32 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in summ["configs"].items():
            L.append(
                f"| {CONFIGS[name][0]} | {fmt(row['jax'], 0)} | {fmt(row.get('jax-bhtd'), 0)} | "
                f"{fmt(row.get('jax-blocks'), 0)} | "
                f"{fmt(row['jax-bf16'], 0)} | {fmt(row.get('jax-dp2'), 0)} | "
                f"{fmt(row['torch'], 0)} | {fmt(row['torch/1t'], 0)} | "
                f"{fmt(row['jax_vs_torch'], 2)} | {fmt(row.get('bhtd_vs_torch'), 2)} | "
                f"{fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{fmt(row.get('dp2_vs_torch'), 2)} | "
                f"{fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{fmt(row.get('jax-1core'), 0)} | {fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{fmt(row['bf16_vs_f32'], 2)} |"
            )
    L += ["", "## Targets", "", "| target | value | met |", "|---|---:|---|"]
    for k, v in summ["targets"].items():
        L.append(
            f"| {k} {('(' + v['best'] + ')') if 'best' in v else ''} | {fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} |"
        )
    base = result_of(recs.get("jax/1dev"))
    L += [
        "",
        f"## Causal spectral filter ({CAUSAL_FILTER}) at T=256, reference model, batch 16, 1 "
        "device (vs JAX, 1 device, defaults)",
        "",
        "| conv_impl | step (s) | vs baseline | compile (s) |",
        "|---|---:|---:|---:|",
    ]
    for impl in ("fft", "toeplitz"):
        r = result_of(recs.get(f"jax/1dev/{CAUSAL_FILTER}/{impl}"))
        if r and base:
            L.append(
                f"| {impl} | {fmt(r['step_s'], 3)} | {fmt(r['step_s'] / base['step_s'], 2)} | "
                f"{fmt(r.get('compile_s'))} |"
            )
    if "sweep" in summ:
        sw = result_of(recs.get("sweep/1dev")) or {}
        L += [
            "",
            f"## Seed sweeps (`cpu` preset, overrides {sw.get('overrides')}; seeds/hour "
            f"extrapolated from the step time to {sw.get('max_steps')} steps)",
            "",
            "| strategy / seeds | seeds/hour | vs sequential (run/R=1: one seed after another as "
            "train.run trains it) |",
            "|---|---:|---:|",
        ]
        for k, v in summ["sweep"].items():
            L.append(f"| {k} | {fmt(v['seeds_per_hour'], 1)} | {fmt(v['vs_sequential'], 2)} |")
    lay = result_of(recs.get("layout"))
    if lay:
        L += [
            "",
            "## Dense layers on 2-D inputs vs flax nn.Dense on (B,T,E), nanoGPT's character config "
            "(timed alternately in one process)",
            "",
            "| Dense | copy/transpose elements per step | tokens/s |",
            "|---|---:|---:|",
        ]
        for k, v in lay["results"].items():
            L.append(f"| {k} | {v['copy_elements_per_step']:,} | {fmt(v['tokens_per_s'], 0)} |")
        L.append(
            f"\nSpeed-up {fmt(lay['speedup'], 2)}x; first losses bitwise equal: "
            f"{'yes' if lay['bitwise_equal_losses'] else '**no**'}."
        )
    mlp = result_of(recs.get("mlp"))
    if mlp:
        L += [
            "",
            f"## One MLP (E={mlp['n_embd']} -> 4E -> E) forward + backward, {mlp['n_tokens']} "
            "tokens",
            "",
            "| activation | ms | GFLOP/s (matmuls) |",
            "|---|---:|---:|",
        ]
        for k, v in mlp["results"].items():
            L.append(f"| {k} | {fmt(v['ms'], 1)} | {fmt(v['gflops'], 1)} |")
    att = result_of(recs.get("attention"))
    if att:
        L += [
            "",
            f"## One causal attention forward + backward (B={att['batch']}, H={att['heads']}, "
            f"T={att['t']}, D={att['head_dim']})",
            "",
            "| formulation | ms |",
            "|---|---:|",
        ]
        for k, v in att["results"].items():
            L.append(f"| {k} | {fmt(v['ms'], 2)} |")
    for pid, what in PROFILES.items():
        prof = result_of(recs.get(pid))
        if not prof:
            continue
        L += [
            "",
            f"## Profile of one training step: {what} ({prof['overrides']}, jax.profiler, "
            "1 device)",
            "",
            "| group | share of op time |",
            "|---|---:|",
        ]
        for k, v in prof["share"].items():
            L.append(f"| {k} | {100 * v:.1f}% |")
        if "attention_flop_share" in prof:
            L += ["", attention_note(prof)]
    spec = result_of(recs.get("spectral"))
    if spec:
        L += [
            "",
            f"## Spectral filters vs T: forward + backward seconds of one (B={spec['batch']}, T, "
            f"H={spec['heads']}, D={spec['head_dim']}) tensor (kernel taps min(128, T))",
            "",
            "| T | FFT conv | Toeplitz conv | attention scores q k^T |",
            "|---:|---:|---:|---:|",
        ]
        for t, row in spec["seconds"].items():
            L.append(
                f"| {t} | {fmt(row['fft_conv'], 4)} | {fmt(row['toeplitz_conv'], 4)} | "
                f"{fmt(row['attention_scores'], 4)} |"
            )
    var = {
        k.split("/", 1)[1]: (
            result_of(v) or {"error": v.get("error") or "no result", "causal": None}
        )
        for k, v in recs.items()
        if k.startswith("variant/")
    }
    if var:
        first = next((v for v in var.values() if "tokens_per_s" in v), {})
        L += [
            "",
            f"## Variants (reference preset with {doc['sizes']['var_overrides']}: "
            f"{first.get('n_layer')} layer(s), E={first.get('n_embd')}, "
            f"T={first.get('block_size')}, 1 device)",
            "",
            "| variant | causal | tokens/s | vs learned | compile (s) | XLA temp (MiB) |",
            "|---|---|---:|---:|---:|---:|",
        ]
        ref_tps = (var.get("learned") or {}).get("tokens_per_s")
        for k, v in var.items():
            causal = doc.get("variant_causal", {}).get(k, v.get("causal"))
            lab = {True: "yes", False: "**NON-CAUSAL**", None: "?"}[causal]
            if "error" in v:
                L.append(f"| {k} | {lab} | error: {v['error'][:80]} | | | |")
                continue
            L.append(
                f"| {k} | {lab} | {fmt(v['tokens_per_s'], 0)} | "
                f"{fmt(v['tokens_per_s'] / ref_tps if ref_tps else None, 2)} | "
                f"{fmt(v['compile_s'])} | {fmt(v['xla_temp_mb'])} |"
            )
    skipped = [k for k, v in recs.items() if v.get("error")]
    if skipped:
        L += ["", "## Not measured", ""] + [f"- {k}: {recs[k]['error']}" for k in skipped]
    return "\n".join(L) + "\n"
