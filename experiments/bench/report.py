"""The benchmark's tables: headline numbers and target verdicts computed from a bench JSON's
records (``summarize``), its markdown and the bench README (``render``, the JSON's renderer,
which ``mope-jax report --regenerate`` calls)."""

from __future__ import annotations

from pathlib import Path

from experiments.bench.spec import CAUSAL_FILTER, CONFIGS, PROFILES, REF_ROWS
from mope_jax.provenance import cpu_text


def _attention_note(prof: dict) -> str:
    """The attention matmuls' share of op time next to their share of the model FLOPs."""
    t = sum(v for k, v in prof["share"].items() if k.startswith("attention matmuls"))
    return (
        f"The attention's batched matmuls took {100 * t:.0f}% of the op time for "
        f"{100 * prof['attention_flop_share']:.0f}% of the model FLOPs."
    )


def best_round(recs: dict[str, dict], *rids: str) -> dict | None:
    """The result of tasks ``rids`` or of their later rounds (``rid#2``, ...), the one with the
    most tokens/s; None if none has a result."""
    found = [_r(v) for k, v in recs.items() for rid in rids if k == rid or k.startswith(rid + "#")]
    found = [f for f in found if f is not None]
    return max(found, key=lambda f: f.get("tokens_per_s", 0.0)) if found else None


def config_rows(recs: dict[str, dict], name: str) -> dict[str, dict | None]:
    """The records of one CONFIGS entry: jax, jax-bf16, torch, torch/1t (reference-b16 reuses
    the reference section's)."""
    keys = (
        "jax",
        "jax-bf16",
        "jax-bhtd",
        "jax-blocks",
        "jax-dp2",
        "jax-dp2-blocks",
        "jax-1core",
        "torch",
        "torch/1t",
    )
    ids = {k: [f"cfg/{name}/{k}"] for k in keys}
    if name == "reference-b16":  # its round 1 of these is the reference section's
        for k, ref in (("jax", "jax/1dev"), ("jax-dp2", "jax/dp2"), ("torch", "torch")):
            ids[k].append(ref)
        ids["torch/1t"] = ["torch/1t"]
    return {k: best_round(recs, *v) for k, v in ids.items()}


# --------------------------------------------------------------------------- report


def _r(rec):
    return None if rec is None or rec.get("result") is None else rec["result"]


def summarize(recs: dict[str, dict]) -> dict:
    """Headline numbers and target verdicts, computed from the records."""
    peak = _r(recs.get("peak"))
    peak_gflops = peak["gflops"] if peak else None
    s: dict = {"peak_gflops": peak_gflops, "reference": {}, "targets": {}}
    # the faster PyTorch thread setting is the reference (a PyTorch user would pick it)
    torch_tps = (
        max([(_r(recs.get(k)) or {}).get("tokens_per_s") or 0.0 for k in ("torch", "torch/1t")])
        or None
    )
    for key in REF_ROWS:
        r = _r(recs.get(key))
        if r is None:
            continue
        fpt = _r(recs.get("jax/1dev") or {}) or _r(recs.get("jax/dp2") or {}) or {}
        flops = r.get("flops_per_token", fpt.get("flops_per_token"))
        row = {"tokens_per_s": r["tokens_per_s"], "step_s": r["step_s"]}
        if flops and peak_gflops:
            row["mfu"] = r["tokens_per_s"] * flops / (peak_gflops * 1e9)
        if torch_tps:
            row["vs_torch"] = r["tokens_per_s"] / torch_tps
        for k in ("compile_s", "maxrss_mb", "xla_temp_mb"):
            if k in r:
                row[k] = r[k]
        s["reference"][key] = row
    jax_rows = {k: v for k, v in s["reference"].items() if k.startswith("jax/")}
    if jax_rows:
        best = max(jax_rows, key=lambda k: jax_rows[k]["tokens_per_s"])
        if torch_tps:
            s["targets"]["jax_vs_torch>=1.0"] = {
                "best": best,
                "value": jax_rows[best]["vs_torch"],
                "met": jax_rows[best]["vs_torch"] >= 1.0,
            }
        if "mfu" in jax_rows[best]:
            s["targets"]["mfu>=0.5"] = {
                "best": best,
                "value": jax_rows[best]["mfu"],
                "met": jax_rows[best]["mfu"] >= 0.5,
            }
    s["configs"] = {}
    for name in CONFIGS:
        rows = config_rows(recs, name)
        torch_best = (
            max([(rows[k] or {}).get("tokens_per_s") or 0.0 for k in ("torch", "torch/1t")]) or None
        )
        row = {k: (v or {}).get("tokens_per_s") for k, v in rows.items()}
        row["torch_best"] = torch_best
        row["jax_vs_torch"] = row["jax"] / torch_best if row["jax"] and torch_best else None
        row["bhtd_vs_torch"] = (
            row["jax-bhtd"] / torch_best if row.get("jax-bhtd") and torch_best else None
        )
        row["blocks_vs_torch"] = (
            row["jax-blocks"] / torch_best if row.get("jax-blocks") and torch_best else None
        )
        row["dp2_vs_torch"] = (
            row["jax-dp2"] / torch_best if row.get("jax-dp2") and torch_best else None
        )
        row["dp2_blocks_vs_torch"] = (
            row["jax-dp2-blocks"] / torch_best if row.get("jax-dp2-blocks") and torch_best else None
        )
        row["1core_vs_torch_1t"] = (
            row["jax-1core"] / row["torch/1t"] if row.get("jax-1core") and row["torch/1t"] else None
        )
        row["bf16_vs_f32"] = (
            row["jax-bf16"] / row["jax"] if row["jax-bf16"] and row["jax"] else None
        )
        s["configs"][name] = row
        if row["jax_vs_torch"] is not None:
            s["targets"][f"f32_vs_torch>=1.0 @{name}"] = {
                "value": row["jax_vs_torch"],
                "met": row["jax_vs_torch"] >= 1.0,
            }
    base = _r(recs.get("jax/1dev"))
    ratios = {}
    for impl in ("fft", "toeplitz"):
        r = _r(recs.get(f"jax/1dev/{CAUSAL_FILTER}/{impl}"))
        if base and r:
            ratios[impl] = r["step_s"] / base["step_s"]
    if ratios:  # the target asks for either implementation
        best = min(ratios, key=ratios.get)
        s["targets"]["causal_filter<=1.3x"] = {
            "best": f"{CAUSAL_FILTER}, conv_impl={best}",
            "value": ratios[best],
            "met": ratios[best] <= 1.3,
            "all": ratios,
        }
    sweeps = {}
    for key in ("sweep/1dev", "sweep/dp2"):
        r = _r(recs.get(key))
        if r:
            sweeps.update(r["results"])
    if "run/R=1" in sweeps:
        seq = sweeps["run/R=1"]["seeds_per_hour"]
        s["sweep"] = {
            k: {"seeds_per_hour": v["seeds_per_hour"], "vs_sequential": v["seeds_per_hour"] / seq}
            for k, v in sweeps.items()
        }
        four = {
            k: v
            for k, v in s["sweep"].items()
            if k.endswith("R=4") and not k.startswith(("sequential", "run"))
        }
        if four:
            best = max(four, key=lambda k: four[k]["vs_sequential"])
            s["targets"]["sweep4>=1.5x"] = {
                "best": best,
                "value": four[best]["vs_sequential"],
                "met": four[best]["vs_sequential"] >= 1.5,
            }
    return s


def _fmt(x, nd=1):
    return "n/a" if x is None else f"{x:,.{nd}f}"


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
        f"{_fmt(summ['peak_gflops'])} GFLOP/s",
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
            f"| {REF_ROWS[k]} | {_fmt(row['tokens_per_s'], 0)} | {_fmt(row['step_s'], 3)} | "
            f"{_fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{_fmt(row.get('vs_torch'), 2)} | {_fmt(row.get('compile_s'))} | "
            f"{_fmt(row.get('maxrss_mb'), 0)} |"
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
                f"| {CONFIGS[name][0]} | {_fmt(row['jax'], 0)} | {_fmt(row.get('jax-bhtd'), 0)} | "
                f"{_fmt(row.get('jax-blocks'), 0)} | "
                f"{_fmt(row['jax-bf16'], 0)} | {_fmt(row.get('jax-dp2'), 0)} | "
                f"{_fmt(row['torch'], 0)} | {_fmt(row['torch/1t'], 0)} | "
                f"{_fmt(row['jax_vs_torch'], 2)} | {_fmt(row.get('bhtd_vs_torch'), 2)} | "
                f"{_fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('jax-1core'), 0)} | {_fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{_fmt(row['bf16_vs_f32'], 2)} |"
            )
    L += ["", "## Targets", "", "| target | value | met |", "|---|---:|---|"]
    for k, v in summ["targets"].items():
        L.append(
            f"| {k} {('(' + v['best'] + ')') if 'best' in v else ''} | {_fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} |"
        )
    base = _r(recs.get("jax/1dev"))
    L += [
        "",
        f"## Causal spectral filter ({CAUSAL_FILTER}) at T=256, reference model, batch 16, 1 "
        "device (vs JAX, 1 device, defaults)",
        "",
        "| conv_impl | step (s) | vs baseline | compile (s) |",
        "|---|---:|---:|---:|",
    ]
    for impl in ("fft", "toeplitz"):
        r = _r(recs.get(f"jax/1dev/{CAUSAL_FILTER}/{impl}"))
        if r and base:
            L.append(
                f"| {impl} | {_fmt(r['step_s'], 3)} | {_fmt(r['step_s'] / base['step_s'], 2)} | "
                f"{_fmt(r.get('compile_s'))} |"
            )
    if "sweep" in summ:
        sw = _r(recs.get("sweep/1dev")) or {}
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
            L.append(f"| {k} | {_fmt(v['seeds_per_hour'], 1)} | {_fmt(v['vs_sequential'], 2)} |")
    lay = _r(recs.get("layout"))
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
            L.append(f"| {k} | {v['copy_elements_per_step']:,} | {_fmt(v['tokens_per_s'], 0)} |")
        L.append(
            f"\nSpeed-up {_fmt(lay['speedup'], 2)}x; first losses bitwise equal: "
            f"{'yes' if lay['bitwise_equal_losses'] else '**no**'}."
        )
    mlp = _r(recs.get("mlp"))
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
            L.append(f"| {k} | {_fmt(v['ms'], 1)} | {_fmt(v['gflops'], 1)} |")
    att = _r(recs.get("attention"))
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
            L.append(f"| {k} | {_fmt(v['ms'], 2)} |")
    for pid, what in PROFILES.items():
        prof = _r(recs.get(pid))
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
            L += ["", _attention_note(prof)]
    spec = _r(recs.get("spectral"))
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
                f"| {t} | {_fmt(row['fft_conv'], 4)} | {_fmt(row['toeplitz_conv'], 4)} | "
                f"{_fmt(row['attention_scores'], 4)} |"
            )
    var = {
        k.split("/", 1)[1]: (_r(v) or {"error": v.get("error") or "no result", "causal": None})
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
                f"| {k} | {lab} | {_fmt(v['tokens_per_s'], 0)} | "
                f"{_fmt(v['tokens_per_s'] / ref_tps if ref_tps else None, 2)} | "
                f"{_fmt(v['compile_s'])} | {_fmt(v['xla_temp_mb'])} |"
            )
    skipped = [k for k, v in recs.items() if v.get("error")]
    if skipped:
        L += ["", "## Not measured", ""] + [f"- {k}: {recs[k]['error']}" for k in skipped]
    return "\n".join(L) + "\n"


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
            f"| {k}{' (' + v['best'] + ')' if 'best' in v else ''} | {_fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} | {short} |"
        )
    L += [
        "",
        f"f32 matmul peak measured in this run: {_fmt(summ['peak_gflops'])} GFLOP/s (MFU = model "
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
            f"| {REF_ROWS[k]} | {_fmt(row['tokens_per_s'], 0)} | "
            f"{_fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{_fmt(row.get('vs_torch'), 2)} |"
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
                f"| {CONFIGS[name][0]} | {_fmt(row['jax'], 0)} | {_fmt(row['jax_vs_torch'], 2)} | "
                f"{_fmt(row.get('bhtd_vs_torch'), 2)} | {_fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_vs_torch'), 2)} | {_fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{_fmt(row['bf16_vs_f32'], 2)} |"
            )
    mlp = (_r(recs.get("mlp")) or {}).get("results", {})
    prof = _r(recs.get("profile"))
    pchar = _r(recs.get("profile/nanogpt-char"))
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
            + _attention_note(pchar)
            if pchar
            else ""
        ),
        "* **threefry on CPU**: JAX lowers its PRNG on CPU as a rolled `while` loop (one pass over "
        "the array per iteration); `mope_jax.perf.fast_cpu_threefry` (called by `make_train`) "
        "registers the unrolled lowering JAX uses on GPU/TPU: the same bits (tests/test_perf.py "
        "checks them against a Python Threefry-2x32 and Random123's known answers), one fused loop."
        + (
            f" In this run: {_fmt(tps('jax/1dev'), 0)} vs {_fmt(tps('jax/1dev/rolled'), 0)} "
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
    lay = _r(recs.get("layout"))
    if lay:
        (fa, va), (fb, vb) = lay["results"].items()
        L.append(
            "* **Dense layers on 2-D inputs** (issue 14): flax's `nn.Dense` contracts a (B,T,E) "
            "input, so each weight gradient contracts two axes and XLA:CPU writes a transposed "
            "copy of the activation gradient first; `mope_jax.attention.core.Dense` multiplies x "
            "flattened to (B*T, E), same parameters, same math. At nanoGPT's character config in "
            f"this run: {va['copy_elements_per_step']:,} -> {vb['copy_elements_per_step']:,} "
            f"copied elements per step, {_fmt(va['tokens_per_s'], 0)} -> "
            f"{_fmt(vb['tokens_per_s'], 0)} tokens/s (x{lay['speedup']:.2f}, timed alternately in "
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
            f" In this run: {_fmt(tps('jax/dp2'), 0)} vs {_fmt(tps('jax/1dev'), 0)} tokens/s on "
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
            (_r(recs.get("attention")) or {}).get("layout_gradients_bitwise_equal")
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
                f"{k}: {v['ms']:.1f} ms" for k, v in _r(recs.get("attention"))["results"].items()
            )
            if _r(recs.get("attention"))
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
                return ", ".join(
                    f"{_fmt(cfgs[n].get(key), nd)} ({n})" for n in CONFIGS if n in cfgs
                )

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


def render(doc: dict, json_path) -> dict[str, str]:
    """bench_<size>.md and README.md (README_tiny.md for --tiny) from bench_<size>.json alone
    (``mope-jax report --regenerate``)."""
    from mope_jax.analysis.report import rendered_note

    json_path = Path(json_path)
    note = rendered_note(doc, json_path)
    return {
        json_path.with_suffix(".md").name: markdown(doc, note),
        "README.md" if doc["size"] != "tiny" else "README_tiny.md": readme(
            doc, json_path.name, note
        ),
    }
