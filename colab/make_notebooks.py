"""Write the Colab notebooks of ``colab/`` from the Python source below, and run them.

    python colab/make_notebooks.py              # (re)write colab/*.ipynb, outputs cleared
    python colab/make_notebooks.py --check      # exit 1 if a committed notebook differs from
                                                # this file
    python colab/make_notebooks.py --time       # execute every notebook on CPU, write
                                                # colab/timings.json

The notebooks are generated, never edited by hand: every cell is a string in this file, so a
review reads Python. They import the library and never redefine it; each has an "Open in
Colab" badge, an install cell that does nothing when ``mope_jax`` is already importable, and
ONE parameter cell (tagged ``parameters``, papermill-style) with small defaults.

``execute`` is what ``tests/test_notebooks.py`` calls, and ``--time`` uses the same function
with the same kernel environment (``JAX_PLATFORMS=cpu`` and two host CPU devices, as in the
test suite), so the recorded times are those of the test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
# Placeholder: replace OWNER with the GitHub account that hosts this repository (the badges
# and the install cells use it; the notebooks also have a REPO_URL variable users can edit).
GITHUB_REPO = "OWNER/mope-jax"
TIMEOUT_S = 300  # per cell, in the tests; the notebooks take well under a minute on CPU


def md(text: str):
    return new_markdown_cell(textwrap.dedent(text).strip())


def code(text: str, **metadata):
    return new_code_cell(textwrap.dedent(text).strip(), metadata=metadata)


def badge(name: str):
    url = f"https://colab.research.google.com/github/{GITHUB_REPO}/blob/main/colab/{name}.ipynb"
    return md(
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"
    )


def install():
    return code(f"""
        # Install mope-jax from GitHub (skipped when it is already importable, e.g. a local
        # checkout).
        import importlib.util

        # EDIT REPO_URL: "OWNER" is a placeholder for the account that hosts the repository.
        REPO_URL = "https://github.com/{GITHUB_REPO}"

        if importlib.util.find_spec("mope_jax") is None:
            get_ipython().run_line_magic("pip", f'install -q "mope-jax[plot] @ git+{{REPO_URL}}"')
        # On a Colab TPU/GPU runtime the preinstalled jax already targets the accelerator.
        # mope-jax needs jax >= 0.10.2: if pip had to upgrade jax above, also run
        # %pip install -U "jax[tpu]" (or "jax[cuda12]") and restart the runtime, or the
        # accelerator is not found (the next cells say so).
        %matplotlib inline
    """)


def parameters(text: str):
    return code(text, tags=["parameters"])


DEVICES = code("""
    import jax

    backend = jax.default_backend()
    print(f"backend: {backend}, {jax.device_count()} device(s), jax {jax.__version__}")
    for d in jax.devices():
        print("  ", d.device_kind, d)
    if backend == "cpu":
        print(
            "No accelerator: Runtime > Change runtime type > TPU (or GPU) for the larger "
            "presets."
        )
""")


# --------------------------------------------------------------------------- 00 quickstart

QUICKSTART = [
    md("""
        # mope-jax quickstart

        Train a small model with two positional encodings on the built-in block-copy task (no
        download), plot the loss curves from `metrics.jsonl`, restore the Orbax checkpoint and
        sample from it. In the task, the last token of every block copies the block's first
        symbol, a fixed distance back, so only a model that knows positions reaches the
        Bayes-optimal loss.
    """),
    install(),
    parameters("""
        # scale preset: "smoke" (seconds), "cpu" (minutes on CPU), "reference" (the papers' model,
        # TPU/GPU)
        PRESET = "smoke"
        # any `mope-jax presets` variant: nope, sincos, alibi, a-mope, causal-gauss, ...
        VARIANTS = ["learned", "rope"]
        # training steps per variant; to scale up: PRESET="cpu", STEPS=1500 (CPU) or
        # PRESET="reference", STEPS=5000 (TPU)
        STEPS = 400
        # key=value overrides on top of the preset: these make the tiny smoke model learn something
        # in seconds (shorter blocks, bigger batches, higher lr). Set OVERRIDES = [] with the larger
        # presets, or e.g. ["data.source=text", "data.path=input.txt"] for TinyShakespeare.
        OVERRIDES = ["data.block_len=8", "train.batch_size=16", "train.lr=3e-3", "model.dropout=0"]
        # run directories (checkpoints, metrics.jsonl, final.json)
        RUN_ROOT = "mope_runs/quickstart"
        SAMPLE_TOKENS = 34  # tokens to generate from the restored checkpoint
    """),
    DEVICES,
    md(
        "## Train\n\n`mope_jax.train.run` trains one config in a run directory (resumable; a fresh "
        "directory here)."
    ),
    code("""
        import shutil
        from pathlib import Path

        from mope_jax.config import apply_overrides
        from mope_jax.presets import apply_variant, get_preset
        from mope_jax.train import run

        shutil.rmtree(RUN_ROOT, ignore_errors=True)
        every = max(STEPS // 4, 1)  # evaluate 4 times; log the training loss 20 times
        schedule = [
            f"train.max_steps={STEPS}",
            f"train.eval_interval={every}",
            f"train.log_interval={max(STEPS // 20, 1)}",
            f"train.checkpoint_interval={STEPS}",
            f"train.warmup_steps={max(STEPS // 10, 1)}",
        ]
        results = {}
        for name in VARIANTS:
            cfg = apply_overrides(apply_variant(get_preset(PRESET), name), schedule + OVERRIDES)
            results[name] = run(cfg, Path(RUN_ROOT) / name, progress=False)
            f = results[name].final
            print(
                f"{cfg.name:<16} val loss {f['final_val_loss']:.4f}  {f['num_params']:,} "
                f"parameters  {f['tokens_per_s']:,.0f} tokens/s  declared causal: "
                f"{f['causality']['declared_causal']}"
            )
    """),
    code("""
        import numpy as np

        from mope_jax.data import block_copy_optimal_loss

        data = results[VARIANTS[0]].cfg.data
        if data.source == "blocks":
            print(
                "block task: Bayes-optimal loss "
                f"{block_copy_optimal_loss(data.block_len, data.num_symbols):.4f} nats/token; a "
                f"uniform guess over the {data.num_symbols + 1} tokens: "
                f"{np.log(data.num_symbols + 1):.4f}"
            )
    """),
    md(
        "## Loss curves\n\nEvery run appends one line per log interval to `metrics.jsonl` "
        "(`mope_jax.train.read_metrics`)."
    ),
    code("""
        import matplotlib.pyplot as plt

        from mope_jax.train import read_metrics

        fig, (ax_tr, ax_val) = plt.subplots(1, 2, figsize=(10, 3.5))
        for name in VARIANTS:
            recs = read_metrics(Path(RUN_ROOT) / name)
            ax_tr.plot([r["step"] for r in recs], [r["loss"] for r in recs], label=name)
            ev = [r for r in recs if "eval_val" in r]
            ax_val.plot(
                [r["step"] for r in ev], [r["eval_val"] for r in ev], marker="o", label=name
            )
        if data.source == "blocks":
            ax_val.axhline(
                block_copy_optimal_loss(data.block_len, data.num_symbols),
                color="k",
                ls=":",
                label="optimal",
            )
        ax_tr.set(
            xlabel="step",
            ylabel="train loss (nats/token)",
            title="training loss (mean per log interval)",
        )
        ax_val.set(xlabel="step", ylabel="val loss (nats/token)", title="validation loss")
        ax_tr.legend()
        ax_val.legend()
        plt.show()
    """),
    md("""
        ## Restore the checkpoint

        `mope_jax.train.load_run` rebuilds the config from the checkpoint's metadata and restores
        the train state (Orbax) against its abstract shape. The restored parameters equal the
        trained ones.
    """),
    code("""
        import logging

        from mope_jax.train import load_run

        # orbax notes each read-only option it overrides
        logging.getLogger("absl").setLevel(logging.ERROR)

        name = VARIANTS[-1]
        cfg_r, state_r, meta = load_run(Path(RUN_ROOT) / name)
        trained = results[name].state.params
        same = all(
            np.array_equal(a, b)
            for a, b in zip(
                jax.tree_util.tree_leaves(trained), jax.tree_util.tree_leaves(state_r.params)
            )
        )
        print(
            f"{name}: restored step {int(state_r.step)}; parameters identical to the trained ones: "
            f"{same}"
        )
        print("checkpoint metadata:", ", ".join(sorted(meta)))
        print("causality record:", meta["causality"])
        assert same
    """),
    md(
        "## Sample\n\n`mope_jax.train.generate` samples after a prompt taken from the validation "
        "split."
    ),
    code("""
        from mope_jax.data import load_corpus
        from mope_jax.train import generate

        corpus = load_corpus(cfg_r.data, cfg_r.model.block_size)
        n_prompt = cfg_r.data.block_len + 1 if cfg_r.data.source == "blocks" else 32
        prompt = np.asarray(corpus.val[:n_prompt])
        out = generate(
            cfg_r, state_r.params, prompt, SAMPLE_TOKENS, jax.random.PRNGKey(0), temperature=0.8
        )
        print("prompt:   ", corpus.decode(prompt))
        print("generated:", corpus.decode(out))
    """),
]


# --------------------------------------------------------------------------- 01 encodings tour

ENCODINGS = [
    md("""
        # A tour of the encodings

        Pictures of the positional encodings and spectral filters of `mope_jax`, computed by the
        library's own functions: Morlet (MOPE) atoms, their sin/cos and RoPE limits, Morlet-RoPE
        envelopes, and the causal and non-causal spectral Q/K filters in time and frequency.
        No training; seconds on a CPU.
    """),
    install(),
    parameters("""
        T = 64  # sequence length (tokens) of every picture; the papers' reference model uses 256
        # (omega rad/token, sigma tokens) MOPE atoms to draw
        PAIRS = [(0.3, 16.7), (0.8, 6.25), (1.5, 3.3), (0.3, 40.0)]
        # RoPE head dim D (D/2 frequencies theta_i = base^(-2i/D)); the reference model has 32
        HEAD_DIM = 16
        KERNEL_SCALE = 4.0  # causal kernel scale a (tokens)
        FILTER_BIN = 4.0  # bilateral Gaussian window centre (bins = cycles per window)
    """),
    code("""
        import jax.numpy as jnp
        import matplotlib.pyplot as plt
        import numpy as np

        from mope_jax.encodings import (
            apply_rope,
            morlet_encoding,
            rope_frequencies,
            sinusoidal_encoding,
        )

        positions = jnp.arange(T)
    """),
    md("""
        ## MOPE atoms

        `morlet_encoding(positions, log_omega, log_sigma)` gives, for each pair, cos(omega b) env(b)
        and sin(omega b) env(b) with env(b) = exp(-b^2 / 2 sigma^2). omega sigma is the number of
        radians the oscillation turns inside one envelope width; paper A's admissibility bound is
        omega sigma >= 5.
    """),
    code("""
        omega = jnp.array([p[0] for p in PAIRS])
        sigma = jnp.array([p[1] for p in PAIRS])
        pe = np.asarray(morlet_encoding(positions, jnp.log(omega), jnp.log(sigma)))  # (T, 2n)
        fig, axes = plt.subplots(1, len(PAIRS), figsize=(3.2 * len(PAIRS), 2.6), sharey=True)
        for i, ax in enumerate(axes):
            ax.plot(pe[:, 2 * i], label="cos part")
            ax.plot(pe[:, 2 * i + 1], label="sin part")
            ax.plot(
                np.exp(-(np.arange(T) ** 2) / (2 * float(sigma[i]) ** 2)),
                "k:",
                lw=1,
                label="envelope",
            )
            ax.set(
                title=(
                    f"omega={float(omega[i]):.2f}, sigma={float(sigma[i]):.1f}\\n"
                    f"omega*sigma={float(omega[i] * sigma[i]):.1f}"
                ),
                xlabel="position b (tokens)",
            )
        axes[0].legend(fontsize=7)
        plt.tight_layout()
        plt.show()
    """),
    md("""
        ## The sin/cos limit

        As sigma -> infinity the envelope is 1 everywhere and MOPE becomes the fixed sinusoidal
        table with the same frequencies. `sinusoidal_encoding` stores (sin, cos) per pair, MOPE
        (cos, sin).
    """),
    code("""
        E = 2 * HEAD_DIM
        omega_sc = 10000.0 ** (-jnp.arange(0, E, 2) / E)  # the sinusoidal frequencies, rad/token
        for big in (1e2, 1e4, 1e6):
            mope = np.asarray(
                morlet_encoding(positions, jnp.log(omega_sc), jnp.full_like(omega_sc, np.log(big)))
            )
            sincos = np.asarray(sinusoidal_encoding(positions, E))
            # (cos, sin) -> (sin, cos) per pair
            swapped = mope.reshape(T, -1, 2)[..., ::-1].reshape(T, E)
            print(
                f"sigma = {big:.0e} tokens: max |MOPE - sinusoidal| = "
                f"{np.abs(swapped - sincos).max():.2e}"
            )
        fig, axes = plt.subplots(1, 2, figsize=(9, 3))
        axes[0].imshow(sincos.T, aspect="auto", cmap="RdBu_r")
        axes[0].set(title="sinusoidal table", xlabel="position", ylabel="channel")
        sig_demo = 5.0 / omega_sc  # every pair on the admissibility boundary omega sigma = 5
        axes[1].imshow(
            np.asarray(morlet_encoding(positions, jnp.log(omega_sc), jnp.log(sig_demo))).T,
            aspect="auto",
            cmap="RdBu_r",
        )
        axes[1].set(title="MOPE, same omegas, sigma = 5 / omega", xlabel="position")
        plt.tight_layout()
        plt.show()
    """),
    md("""
        ## The RoPE limit

        The phase difference of a MOPE pair between positions m and n is omega (m - n): RoPE's
        rotation angle. RoPE's score q(m) . k(n) after `apply_rope` depends only on m - n; MOPE's
        positional similarity pe(m) . pe(n) does too when sigma -> infinity, and decays away from
        the origin otherwise.
    """),
    code("""
        import jax

        key_q, key_k = jax.random.split(jax.random.PRNGKey(0))
        # same q at every position
        q = jnp.broadcast_to(jax.random.normal(key_q, (1, 1, 1, HEAD_DIM)), (1, T, 1, HEAD_DIM))
        k = jnp.broadcast_to(jax.random.normal(key_k, (1, 1, 1, HEAD_DIM)), (1, T, 1, HEAD_DIM))
        scores = jnp.einsum(
            "BTHD,BSHD->BHTS", apply_rope(q, positions), apply_rope(k, positions)
        )[0, 0]  # (T, S)
        theta = rope_frequencies(HEAD_DIM)  # (D/2,) rad/token
        gram = {}
        for label, s in (
            ("MOPE, sigma = 5 / omega", 5.0 / theta),
            ("MOPE, sigma -> inf", jnp.full_like(theta, 1e6)),
        ):
            pe = morlet_encoding(positions, jnp.log(theta), jnp.log(s))  # (T, D)
            gram[label] = pe @ pe.T  # (T, T)
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
        for ax, (title, mat) in zip(axes, [("RoPE score q(m).k(n)", scores), *gram.items()]):
            im = ax.imshow(np.asarray(mat), cmap="RdBu_r")
            ax.set(title=title, xlabel="n", ylabel="m"), fig.colorbar(im, ax=ax, shrink=0.8)
        plt.tight_layout()
        plt.show()
        s = np.asarray(scores)
        print(
            "RoPE: max |score(m, n) - score(m+1, n+1)| =",
            float(np.abs(s[1:, 1:] - s[:-1, :-1]).max()),
        )
    """),
    md("""
        ## Morlet-RoPE envelopes

        Morlet-RoPE (`qk_position="morlet-rope"`) multiplies RoPE frequency i's term by a Gaussian
        envelope in the distance r = m - n, exp(-r^2 / 2 sigma_i^2), with sigma learned per head and
        initialised at sigma_i = 5 / theta_i (`morlet_rope_init`). Below: the initial envelope times
        the rotation cos(theta_i r) for a few frequencies.
    """),
    code("""
        from mope_jax.attention.morlet_rope import morlet_envelope, morlet_rope_init

        log_sigma = morlet_rope_init(HEAD_DIM, 1, HEAD_DIM // 2)[0]  # (F,), one group per frequency
        r = jnp.arange(T, dtype=jnp.float32)[:, None]  # (T, S=1): distances r = m - n >= 0
        env = np.asarray(morlet_envelope(r, jnp.exp(log_sigma)))[:, :, 0]  # (F, T)
        fig, ax = plt.subplots(figsize=(7, 3))
        for i in range(0, HEAD_DIM // 2, 2):
            (line,) = ax.plot(
                np.asarray(r[:, 0]),
                env[i] * np.cos(float(theta[i]) * np.asarray(r[:, 0])),
                label=f"theta_{i}={float(theta[i]):.3f}, sigma={float(jnp.exp(log_sigma[i])):.0f}",
            )
            ax.plot(np.asarray(r[:, 0]), env[i], color=line.get_color(), ls=":", lw=1)
        ax.set(
            xlabel="distance r = m - n (tokens)",
            ylabel="envelope x cos(theta r)",
            title="Morlet-RoPE at init",
        )
        ax.legend(fontsize=7)
        plt.tight_layout()
        plt.show()
    """),
    md("""
        ## Spectral Q/K filters in time and frequency

        Paper C filters q and k along time before the scores. The **bilateral** FFT filter
        multiplies rfft(q) by a real Gaussian window w(f) (`gaussian_window`) and inverts: a
        zero-phase, circular filter whose impulse response is symmetric, so the filtered q at t
        mixes in q at t + j (the future). The **causal** kernels (`kernel_taps`: Gaussian, Mexican
        hat, complex Morlet) have taps at lags j >= 0 only, applied by a zero-padded FFT
        (`causal_conv_fft`); their frequency responses are complex (they are not zero-phase). Rows
        of the (T, T) matrix of each filter show which inputs an output reads.
    """),
    code("""
        from mope_jax.attention.spectral import (
            causal_conv_fft,
            gaussian_window,
            kernel_taps,
            mexhat_window,
            spectral_filter,
        )

        F = T // 2 + 1
        windows = {
            "Gaussian window": np.asarray(gaussian_window(jnp.array([FILTER_BIN]), F, 2.0))[0],
            "Mexican-hat window": np.asarray(mexhat_window(jnp.array([FILTER_BIN]), F, 2.0))[0],
        }
        taps = {
            kind: np.asarray(kernel_taps(kind, jnp.array([KERNEL_SCALE]), T))
            for kind in ("gauss", "mexhat", "morlet")
        }
        fig, axes = plt.subplots(2, 2, figsize=(11, 6))
        for name, w in windows.items():
            axes[0, 0].plot(w, marker=".", label=name)
            h = np.fft.irfft(w, n=T)  # zero-phase impulse response, lag 0 at index 0
            axes[0, 1].plot(np.arange(-T // 2, T // 2), np.roll(h, T // 2), label=name)
        axes[0, 0].set(
            title="bilateral: window w(f) (real, zero phase)",
            xlabel="frequency bin f (cycles / window)",
        )
        axes[0, 1].set(
            title="bilateral: impulse response (two-sided => NON-CAUSAL)",
            xlabel="lag j (tokens); j < 0 = future",
        )
        for kind, h in taps.items():
            for c, part in enumerate(["", " (imag)"][: h.shape[0]]):
                axes[1, 1].plot(h[c, 0], label=kind + part)
            resp = np.abs(np.fft.rfft(h[:, 0], n=2 * T, axis=-1)).sum(0)
            axes[1, 0].plot(np.arange(T + 1) / 2, resp, label=kind)
        axes[1, 0].set(
            title="causal kernels: |frequency response|",
            xlabel="frequency bin f (cycles / T tokens)",
        )
        axes[1, 1].set(
            title=f"causal kernels: taps h[j], a = {KERNEL_SCALE} tokens",
            xlabel="lag j (tokens), j >= 0 only",
        )
        for ax in axes.flat:
            ax.legend(fontsize=7)
        plt.tight_layout()
        plt.show()
    """),
    code("""
        eye = jnp.eye(T)[None, :, None, :]  # (B=1, T, H=1, D=T): column s is the unit impulse at s
        w = jnp.asarray(windows["Gaussian window"])[None]  # (H=1, F)
        h = jnp.asarray(taps["gauss"][0])  # (H=1, K)
        mats = {
            "bilateral Gaussian (spectral_filter)": np.asarray(spectral_filter(eye, w))[0, :, 0, :],
            "causal Gaussian (causal_conv_fft)": np.asarray(causal_conv_fft(eye, h))[0, :, 0, :],
        }
        fig, axes = plt.subplots(1, 2, figsize=(9, 4))
        for ax, (title, m) in zip(axes, mats.items()):
            lim = np.abs(m).max()
            ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.plot([0, T - 1], [0, T - 1], "k:", lw=0.8)
            ax.set(title=title, xlabel="input position s", ylabel="output position t")
            print(
                f"{title}: largest weight on a future input (s > t): "
                f"{np.abs(np.triu(m, 1)).max():.2e}"
            )
        plt.tight_layout()
        plt.show()
    """),
]


# --------------------------------------------------------------------------- 02 multi-seed sweep

SWEEP = [
    md("""
        # Multi-seed sweep on whatever devices the runtime has

        `mope_jax.sweep.sweep` trains R seeds of one config as one compiled program. With
        `strategy="auto"` the seed axis is sharded over all devices (one program per device, run
        concurrently) when R is a multiple of the device count (a TPU v2-8 has 8 cores), otherwise
        `vmap` on an accelerator and `lax.map` on a CPU. Then: the report table with 95% confidence
        intervals and Welch's test against the baseline, and the learned MOPE spectra (omega, sigma)
        of every seed.
    """),
    install(),
    parameters("""
        # "cpu" or "reference" to scale up (reference: the papers' model, for TPU/GPU)
        PRESET = "smoke"
        # the first is the baseline of the table; a-mope learns (omega, sigma)
        VARIANTS = ["learned", "a-mope"]
        # use >= 3 for useful intervals, and a multiple of the device count to shard (e.g. 8 on a
        # v2-8)
        SEEDS = [0, 1]
        STEPS = 200  # steps per seed; with PRESET="reference" the papers' schedule is 5000
        STRATEGY = "auto"  # auto | vmap | map | shard | sequential
        # overrides that make the tiny smoke model learn something in seconds; [] with the larger
        # presets, or e.g. ["data.source=text", "data.path=input.txt"] for TinyShakespeare
        OVERRIDES = ["data.block_len=8", "train.batch_size=16", "train.lr=3e-3", "model.dropout=0"]
        RUN_ROOT = "mope_runs/sweep"
    """),
    DEVICES,
    code("""
        import shutil
        from pathlib import Path

        from mope_jax.config import apply_overrides
        from mope_jax.presets import apply_variant, get_preset
        from mope_jax.sweep import choose_strategy, sweep

        shutil.rmtree(RUN_ROOT, ignore_errors=True)
        every = max(STEPS // 3, 1)
        schedule = [
            f"train.max_steps={STEPS}",
            f"train.eval_interval={every}",
            f"train.log_interval={every}",
            f"train.checkpoint_interval={STEPS}",
            f"train.warmup_steps={max(STEPS // 10, 1)}",
        ]
        print(
            f"{len(SEEDS)} seeds on {jax.device_count()} device(s): strategy "
            f"{choose_strategy(len(SEEDS), STRATEGY)!r}"
        )
        sweeps = {}
        for name in VARIANTS:
            cfg = apply_overrides(apply_variant(get_preset(PRESET), name), schedule + OVERRIDES)
            sweeps[name] = sweep(
                cfg, SEEDS, Path(RUN_ROOT) / name, strategy=STRATEGY, progress=False
            )
            print(
                f"{cfg.name:<14} [{sweeps[name].strategy}] {len(SEEDS)} seeds in "
                f"{sweeps[name].wall_s:.1f} s; val losses "
                + ", ".join(f"{r['final_val_loss']:.4f}" for r in sweeps[name].records)
            )
    """),
    md("""
        ## The report table

        `mope_jax.analysis.report` reads every `final.json` below the run root (one per seed), pools
        the seeds of each config, and prints mean, sample std, the 95% t-interval and Welch's test
        against the baseline; non-causal variants are marked in the last column.
    """),
    code("""
        from IPython.display import Markdown, display

        from mope_jax.analysis.report import load_records, table

        records = load_records([RUN_ROOT])
        baseline = sweeps[VARIANTS[0]].cfg.name
        display(Markdown(table(records, baseline=baseline)))
    """),
    code("""
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        for i, name in enumerate(VARIANTS):
            for r in sweeps[name].records:
                ax.plot(
                    [c["step"] for c in r["curve"]],
                    [c["val"] for c in r["curve"]],
                    color=f"C{i}",
                    alpha=0.7,
                    marker="o",
                    label=f"{name}" if r["seed"] == SEEDS[0] else None,
                )
        ax.set(xlabel="step", ylabel="val loss (nats/token)", title="every seed")
        ax.legend()
        plt.show()
    """),
    md("""
        ## Learned spectra of every seed

        A sweep's checkpoint stores each seed's spectral parameters as named arrays with a leading
        seed axis (`Checkpointer.read_spectra`, no model needed). Paper A claims the learned pairs
        converge to omega sigma = 5; the dotted line is that boundary, the grey crosses the initial
        values.
    """),
    code("""
        import logging

        import numpy as np

        from mope_jax.analysis.spectra import boundary_stats
        from mope_jax.checkpoint import Checkpointer
        from mope_jax.encodings.morlet import morlet_init

        # orbax notes each read-only option it overrides
        logging.getLogger("absl").setLevel(logging.ERROR)
        for name in VARIANTS:
            with Checkpointer(Path(RUN_ROOT) / name / "checkpoints", read_only=True) as ckpt:
                spectra = ckpt.read_spectra()
            print(f"{name}: stored spectra {sorted(spectra) or 'none'}")
            if "mope_omega" not in spectra:
                continue
            omega, sigma = spectra["mope_omega"], spectra["mope_sigma"]  # (R, n) each
            bound = sweeps[name].cfg.model.mope_bound
            fig, ax = plt.subplots(figsize=(5, 4))
            lo, ls = morlet_init(omega.shape[1], init=sweeps[name].cfg.model.mope_init, bound=bound)
            ax.scatter(np.exp(lo), np.exp(ls), marker="x", color="0.6", label="init")
            for r, seed in enumerate(SEEDS):
                ax.scatter(omega[r], sigma[r], s=12, label=f"seed {seed}")
                st = boundary_stats(omega[r], sigma[r], bound)
                print(
                    f"  seed {seed}: on the boundary {st['mope_on_boundary_frac']:.0%}, "
                    f"omega*sigma median {st['mope_product_median']:.2f} (range "
                    f"{st['mope_product_min']:.2f}..{st['mope_product_max']:.2f})"
                )
            w = np.geomspace(omega.min() * 0.8, omega.max() * 1.2, 50)
            ax.plot(w, bound / w, "k:", label=f"omega sigma = {bound:g}")
            ax.set(
                xscale="log",
                yscale="log",
                xlabel="omega (rad/token)",
                ylabel="sigma (tokens)",
                title=f"{name}: learned pairs",
            )
            ax.legend(fontsize=7)
            plt.show()
    """),
]


# --------------------------------------------------------------------------- 03 leakage audit

LEAKAGE = [
    md("""
        # Leakage audit

        A causal language model's output at position t must not depend on inputs after t. Two of the
        papers' mechanisms (paper A's full-sequence EGA z-norm, paper C's bilateral FFT filters)
        break this silently: the attention mask is still applied, but the mixing happened before it.
        Here: the measured causality of every registered variant, the shuffled-validation gap, and
        one influence matrix that shows how a bilateral FFT filter leaks.
    """),
    install(),
    parameters("""
        # Slots to audit: None = every registered variant of every slot (21 now; ~1 min of CPU), the
        # default audits the 8 Q/K filters (paper C); others: "pos_encoding", "qk_position",
        # "attn_bias", "mixer"
        AUDIT_SLOTS = ["qk_filter"]
        AUDIT_SEQ_LEN = 16  # positions of the audited small models (the Jacobian is exact)
        GAP_VARIANTS = ["learned", "fourier-qk"]  # models trained for the shuffled-gap comparison
        PRESET = "smoke"  # to scale up: PRESET="cpu", STEPS=1500, OVERRIDES=[]
        STEPS = 400  # training steps of those models
        # smoke that learns
        OVERRIDES = ["data.block_len=8", "train.batch_size=16", "train.lr=3e-3", "model.dropout=0"]
        T_DEMO = 32  # sequence length of the influence-matrix example
        RUN_ROOT = "mope_runs/leakage"
    """),
    DEVICES,
    md("""
        ## Causality of every variant

        `audit_registry` builds a small model around each registered variant and measures the
        influence I[t, s] = max |d logits[t] / d input[s]| from the exact Jacobian; the leak is the
        largest influence of a future input (s > t) relative to the largest causal one. A variant
        declared causal that leaks is an error.
    """),
    code("""
        from mope_jax.analysis.causality import audit_registry, format_table

        rows = audit_registry(
            seq_len=AUDIT_SEQ_LEN,
            n_layer=1,
            slots=None if AUDIT_SLOTS is None else tuple(AUDIT_SLOTS),
        )
        print(format_table(rows))
        errors = [r for r in rows if r["status"].startswith("ERROR")]
        print(f"\\n{len(rows)} variants audited; {len(errors)} declared causal but leaking")
    """),
    code("""
        import matplotlib.pyplot as plt
        import numpy as np

        fig, ax = plt.subplots(figsize=(7, 0.3 * len(rows) + 1))
        labels = [f"{r['slot']}={r['variant']}" for r in rows]
        leak = [max(r["leak_rel"], 1e-12) for r in rows]
        colors = ["C3" if not r["declared_causal"] else "C0" for r in rows]
        ax.barh(labels, leak, color=colors)
        ax.axvline(rows[0]["tol"], color="k", ls=":", label="tolerance")
        ax.set(
            xscale="log",
            xlabel="relative leak (1e-12 = none)",
            title="measured leak (red: declared NON-CAUSAL)",
        )
        ax.legend()
        plt.tight_layout()
        plt.show()
    """),
    md("""
        ## Why a bilateral FFT filter leaks: one influence matrix

        `spectral_filter` computes irfft(rfft(x) w) along time with a real window w. A real window
        is a zero-phase filter, and the FFT treats the window as a circle: output t is a weighted
        sum of inputs at t - j **and t + j**. `influence_jacobian` shows it directly: nonzero
        entries above the diagonal are future inputs reaching past outputs. The causal kernel
        applied with a zero-padded FFT is exactly lower-triangular; the same kernel with an unpadded
        FFT (`circular_conv_fft`) wraps the last inputs into the first outputs (the top-right
        corner).
    """),
    code("""
        import jax
        import jax.numpy as jnp

        from mope_jax.analysis.causality import influence_jacobian, verdict
        from mope_jax.attention.spectral import (
            causal_conv_fft,
            circular_conv_fft,
            gaussian_window,
            kernel_taps,
            spectral_filter,
        )

        x = jax.random.normal(jax.random.PRNGKey(0), (T_DEMO, 4))  # (T, E): E channels of one head
        # (H=1, F), paper C's window at bin 4
        w = gaussian_window(jnp.array([4.0]), T_DEMO // 2 + 1, 2.0)
        h = kernel_taps("gauss", jnp.array([4.0]), T_DEMO)[0]  # (H=1, K)
        fns = {
            "bilateral FFT filter\\n(fourier-qk)": lambda z: spectral_filter(
                z[None, :, None, :], w
            )[0, :, 0, :],
            "causal kernel, zero-padded FFT\\n(causal-gauss)": lambda z: causal_conv_fft(
                z[None, :, None, :], h
            )[0, :, 0, :],
            "same kernel, unpadded FFT\\n(circular-gauss)": lambda z: circular_conv_fft(
                z[None, :, None, :], h
            )[0, :, 0, :],
        }
        fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
        for ax, (title, fn) in zip(axes, fns.items()):
            infl = influence_jacobian(fn, x)  # (T, S)
            v = verdict(infl, method="jacobian")
            im = ax.imshow(np.log10(infl + 1e-12), cmap="magma", vmin=-8, vmax=0)
            ax.plot([0, T_DEMO - 1], [0, T_DEMO - 1], "c:", lw=0.8)
            ax.set_title(
                f"{title}\\nleak {v.leak_rel:.1e}: {'causal' if v.causal else 'LEAKS'}", fontsize=9
            )
            ax.set(xlabel="input s", ylabel="output t")
        fig.colorbar(im, ax=axes, shrink=0.8, label="log10 I[t, s]")
        plt.show()
    """),
    md("""
        ## The shuffled-validation gap

        Paper C reads a small gap between the loss on shuffled and on ordered validation text as a
        leak sign (a model that reads the future needs less of the past's order).
        `diagnostics.shuffled_gap` permutes the validation tokens once and compares. On the block
        task a leaking model can also fall **below the Bayes-optimal loss**, which no causal model
        can. Non-causal variants need `train.allow_noncausal=true` and are labelled so.
    """),
    code("""
        import shutil
        from pathlib import Path

        from mope_jax.analysis.diagnostics import shuffled_gap
        from mope_jax.config import apply_overrides
        from mope_jax.data import block_copy_optimal_loss, load_corpus
        from mope_jax.presets import apply_variant, get_preset
        from mope_jax.train import run

        shutil.rmtree(RUN_ROOT, ignore_errors=True)
        every = max(STEPS // 2, 1)
        schedule = [
            f"train.max_steps={STEPS}",
            f"train.eval_interval={every}",
            f"train.log_interval={every}",
            f"train.checkpoint_interval={STEPS}",
            f"train.warmup_steps={max(STEPS // 10, 1)}",
            "train.allow_noncausal=true",
        ]
        gaps = {}
        for name in GAP_VARIANTS:
            res = run(
                apply_overrides(apply_variant(get_preset(PRESET), name), schedule + OVERRIDES),
                Path(RUN_ROOT) / name,
                progress=False,
            )
            val = load_corpus(res.cfg.data, res.cfg.model.block_size).val
            gaps[name] = shuffled_gap(
                res.cfg.model, res.state.params, np.asarray(val), num_windows=64
            )
            label = "causal" if res.final["causality"]["declared_causal"] else "NON-CAUSAL"
            g = gaps[name]
            print(
                f"{name:<14} {label:<11} val {g['val']:.4f}  shuffled {g['shuffled']:.4f}  gap "
                f"{g['gap']:+.4f}"
            )
        d = res.cfg.data
        print(
            "Bayes-optimal loss of the block task: "
            f"{block_copy_optimal_loss(d.block_len, d.num_symbols):.4f} nats/token"
        )
    """),
]


# -------------------------------------------------------------------------- 04 RoPE frequency usage

ROPE_USAGE = [
    md("""
        # Which RoPE frequencies does a model use?

        Paper B: on block data whose dependency spans W tokens, the energy-weighted RoPE frequency
        theta_eff falls as theta* = c / W (c ~ 3.02 fitted, pi in theory). Here: a RoPE-only model
        on block data of two widths, the frequency energy p_i of each rotary frequency during
        training (logged at every eval by `mope_jax.analysis.freq_energy`), and the fitted law. The
        full study is `experiments/freq_matching/` (5 widths, 3 seeds, its results in
        `experiments/results/paper_b/`); the defaults here are far too short to test the law.
    """),
    install(),
    parameters("""
        BLOCK_LENS = [6, 18]  # block lengths B of the data; the dependency width is W = B - 2
        SEEDS = [0]  # seeds per width; more seeds give an interval on c
        # training steps; to scale up like experiments.freq_matching at --scale cpu: STEPS=400,
        # BLOCK_LENS=[4, 6, 10, 18, 34], SEEDS=[0, 1, 2], N_EMBD=64, BLOCK_SIZE=128
        STEPS = 300
        EVAL_EVERY = 25  # frequency energy is logged at every eval
        # head dim N_EMBD / N_HEAD = 16: 8 rotary frequencies
        N_EMBD, N_HEAD, N_LAYER, BLOCK_SIZE = 32, 2, 2, 64
        RUN_ROOT = "mope_runs/rope_usage"
    """),
    DEVICES,
    code('''
        import math
        import shutil
        from pathlib import Path

        import numpy as np

        from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
        from mope_jax.data import block_copy_optimal_loss
        from mope_jax.train import run


        def config(block_len: int, seed: int) -> Config:
            """RoPE only (no position table), no dropout: experiments/freq_matching's setup,
            smaller."""
            return Config(
                name=f"rope_usage/B{block_len}",
                model=ModelConfig(
                    block_size=BLOCK_SIZE,
                    n_layer=N_LAYER,
                    n_head=N_HEAD,
                    n_embd=N_EMBD,
                    dropout=0.0,
                    pos_encoding="none",
                    qk_position="rope",
                ),
                data=DataConfig(
                    source="blocks", block_len=block_len, num_symbols=16, num_tokens=20_000
                ),
                train=TrainConfig(
                    seed=seed,
                    batch_size=16,
                    max_steps=STEPS,
                    lr=3e-3,
                    warmup_steps=max(STEPS // 8, 1),
                    eval_interval=EVAL_EVERY,
                    eval_batches=4,
                    log_interval=EVAL_EVERY,
                    checkpoint_interval=STEPS,
                    keep_checkpoints=1,
                ),
            )


        shutil.rmtree(RUN_ROOT, ignore_errors=True)
        runs = {}
        for B in BLOCK_LENS:
            for seed in SEEDS:
                res = run(config(B, seed), Path(RUN_ROOT) / f"B{B}" / f"seed{seed}", progress=False)
                runs[B, seed] = res
                print(
                    f"B={B:3d} (W={B - 2}) seed {seed}: val loss {res.final['final_val_loss']:.4f} "
                    f"(optimal {block_copy_optimal_loss(B, 16):.4f})"
                )
    '''),
    md("""
        ## Frequency energy during training

        At every eval, `train.run` logs `rope_energy_p`: the share p_i of the score energy carried
        by rotary frequency theta_i (mean over heads, per layer), from `metrics.jsonl`. The dashed
        line marks theta = pi / W.
    """),
    code("""
        import matplotlib.pyplot as plt

        from mope_jax.encodings import rope_frequencies
        from mope_jax.train import read_metrics

        # (F,) rad/token, decreasing
        theta = np.asarray(rope_frequencies(N_EMBD // N_HEAD), np.float64)
        fig, axes = plt.subplots(
            1, len(BLOCK_LENS), figsize=(4.5 * len(BLOCK_LENS), 3.4), squeeze=False
        )
        for ax, B in zip(axes[0], BLOCK_LENS):
            recs = [
                r
                for r in read_metrics(Path(RUN_ROOT) / f"B{B}" / f"seed{SEEDS[0]}")
                if "rope_energy_p" in r
            ]
            steps = [r["step"] for r in recs]
            # (evals, F), mean over layers
            P = np.array([np.asarray(r["rope_energy_p"]).mean(0) for r in recs])
            im = ax.imshow(
                P.T,
                aspect="auto",
                origin="lower",
                cmap="viridis",
                extent=(
                    steps[0] - EVAL_EVERY / 2,
                    steps[-1] + EVAL_EVERY / 2,
                    -0.5,
                    len(theta) - 0.5,
                ),
            )
            target = np.interp(
                math.log(math.pi / (B - 2)), np.log(theta[::-1]), np.arange(len(theta))[::-1]
            )
            ax.axhline(target, color="w", ls="--", lw=1)
            ax.set(
                title=f"B={B}, W={B - 2}: p_i over training",
                xlabel="step",
                ylabel="frequency index i (theta_i = 1e4^(-2i/D))",
            )
            fig.colorbar(im, ax=ax, shrink=0.8)
        plt.tight_layout()
        plt.show()
    """),
    md("""
        ## The 1/W law

        `energy_report` measures the final energies on fixed validation windows (`probe_tokens`);
        the log-mean effective frequency is log theta_eff = sum_i p_i log theta_i, averaged over
        layers and heads. As in `experiments/freq_matching/`, c = exp(mean of log theta_eff + log
        W) with a 95% t-interval over runs (`mope_jax.analysis.stats.summarize`), and the free slope
        of log theta_eff on log(1/W) (1 = the 1/W law).
    """),
    code("""
        from mope_jax.analysis.freq_energy import energy_report, probe_tokens
        from mope_jax.analysis.stats import summarize
        from mope_jax.data import load_corpus

        W, log_eff = [], []
        for (B, seed), res in runs.items():
            val = load_corpus(res.cfg.data, res.cfg.model.block_size).val
            rep = energy_report(
                res.cfg.model,
                res.state.params,
                probe_tokens(np.asarray(val), res.cfg.model.block_size),
            )
            W.append(B - 2)
            log_eff.append(rep["log_theta_eff_mean"])
        W, log_eff = np.array(W, np.float64), np.array(log_eff)
        log_c = summarize(log_eff + np.log(W))
        ci = (
            "n/a (one run)"
            if log_c.n < 2
            else f"({math.exp(log_c.ci_low):.3f}, {math.exp(log_c.ci_high):.3f})"
        )
        print(f"c = theta_eff * W = {math.exp(log_c.mean):.3f}, 95% CI {ci}; paper 3.02, theory pi")
        if len(set(W)) > 1:
            slope, intercept = np.polyfit(np.log(1.0 / W), log_eff, 1)
            print(
                f"free fit: slope {slope:.3f} (1 = the 1/W law), c = exp(intercept) = "
                f"{math.exp(intercept):.3f}"
            )
        fig, ax = plt.subplots(figsize=(5, 3.8))
        ax.scatter(W, np.exp(log_eff), label="trained (mean over layers, heads)")
        w = np.geomspace(W.min() * 0.7, W.max() * 1.4, 50)
        ax.plot(w, math.pi / w, "k--", lw=1, label="pi / W (theory)")
        ax.plot(w, math.exp(log_c.mean) / w, "C1:", label=f"{math.exp(log_c.mean):.2f} / W (fit)")
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="dependency width W = B - 2 (tokens)",
            ylabel="theta_eff (rad/token)",
        )
        ax.legend(fontsize=7)
        plt.tight_layout()
        plt.show()
    """),
]

NOTEBOOKS = {
    "00_quickstart": QUICKSTART,
    "01_encodings_tour": ENCODINGS,
    "02_multiseed_sweep": SWEEP,
    "03_leakage_audit": LEAKAGE,
    "04_rope_frequency_usage": ROPE_USAGE,
}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name``: badge first, then the cells above; outputs cleared."""
    nb = new_notebook(cells=[badge(name), *NOTEBOOKS[name]])
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "accelerator": "TPU",
        "colab": {"provenance": [], "name": f"{name}.ipynb"},
    }
    for i, cell in enumerate(nb.cells):  # stable ids: regenerating gives the same file
        cell.id = f"{name[:2]}-{i:02d}"
    nbformat.validate(nb)
    return nb


def text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def write_all(out_dir: Path = HERE) -> list[Path]:
    paths = []
    for name in NOTEBOOKS:
        path = out_dir / f"{name}.ipynb"
        path.write_text(text(build(name)))
        paths.append(path)
    return paths


def stale(out_dir: Path = HERE) -> list[str]:
    """Names of committed notebooks that differ from what this file generates."""
    return [
        n
        for n in NOTEBOOKS
        if not (out_dir / f"{n}.ipynb").exists()
        or (out_dir / f"{n}.ipynb").read_text() != text(build(n))
    ]


# --------------------------------------------------------------------------- execution


def kernel_env() -> dict[str, str]:
    """The kernel's environment: CPU only, and two host devices as in the test suite (so the
    sweep notebook exercises the sharded strategy)."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    flags = env.get("XLA_FLAGS", "")
    if "--xla_force_host_platform_device_count" not in flags:
        env["XLA_FLAGS"] = (flags + " --xla_force_host_platform_device_count=2").strip()
    return env


def execute(
    path: Path, workdir: Path, *, timeout: int = TIMEOUT_S, save_to: Path | None = None
) -> float:
    """Run a notebook top to bottom in ``workdir`` on CPU; raise on any error; wall seconds.

    The kernel is the current interpreter's ``python3`` (ipykernel), started with
    :func:`kernel_env`. ``save_to``: also write the executed notebook (with outputs) there.
    """
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    t0 = time.perf_counter()
    client.execute(env=kernel_env())
    seconds = time.perf_counter() - t0
    if save_to is not None:
        nbformat.write(nb, save_to)
    return seconds


def machine() -> dict[str, object]:
    import jax

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_all(out: Path) -> dict[str, object]:
    """Execute every notebook in a fresh temporary folder; write wall and kernel CPU seconds to
    ``out`` and the table of colab/README.md (between its ``timings`` markers)."""
    before = machine()
    wall, cpu = {}, {}
    for name in NOTEBOOKS:
        c0 = _children_cpu()  # the kernel is a child process; its CPU time is counted once it exits
        with tempfile.TemporaryDirectory() as tmp:
            wall[name] = round(execute(HERE / f"{name}.ipynb", Path(tmp)), 1)
        cpu[name] = round(_children_cpu() - c0, 1)
        print(f"{name}: {wall[name]} s wall, {cpu[name]} s CPU", flush=True)
    payload = {
        "command": "python colab/make_notebooks.py --time",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "what": "seconds to execute each notebook top to bottom at its default parameters (kernel "
        "start included), JAX_PLATFORMS=cpu with 2 host devices: wall clock, and CPU time of the "
        "kernel process (user + system, all threads). TPU/GPU are not measured.",
        "machine": before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "wall_seconds": wall,
        "kernel_cpu_seconds": cpu,
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")
    readme = HERE / "README.md"
    if readme.exists():
        readme.write_text(with_timings(readme.read_text(), payload))
    return payload


START, END = (
    "<!-- timings: written by python colab/make_notebooks.py --time -->",
    "<!-- /timings -->",
)


def with_timings(readme: str, payload: dict) -> str:
    """README text with the table between the timings markers replaced by ``payload``'s."""
    m = payload["machine"]
    rows = ["| notebook | wall s | kernel CPU s |", "|---|---|---|"]
    rows += [
        f"| `{n}.ipynb` | {payload['wall_seconds'][n]} | {payload['kernel_cpu_seconds'][n]} |"
        for n in NOTEBOOKS
    ]
    body = "\n".join(
        [
            START,
            (
                f"Measured {payload['date_utc']} by `{payload['command']}` on {m['platform']} "
                f"({m['cpu_count']} CPUs, load average {m['load_average_1_5_15'][0]} at the start, "
                f"{payload['load_average_after'][0]} at the end; jax {m['jax']}); raw numbers in "
                "[`timings.json`](timings.json)."
            ),
            "",
            *rows,
            END,
        ]
    )
    if START not in readme or END not in readme:
        raise ValueError(f"colab/README.md lacks the markers {START} ... {END}")
    head, rest = readme.split(START, 1)
    return head + body + rest.split(END, 1)[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a committed notebook is not this file's output",
    )
    ap.add_argument(
        "--time",
        action="store_true",
        help="execute every notebook, write colab/timings.json and the table in colab/README.md",
    )
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        if bad:
            print(f"stale notebooks (run python colab/make_notebooks.py): {', '.join(bad)}")
            return 1
        return 0
    if args.time:
        time_all(HERE / "timings.json")
        return 0
    for p in write_all():
        print(f"wrote {p.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
