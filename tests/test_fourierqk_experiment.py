"""experiments/fourierqk/: paper C's campaign declaration, and a smoke campaign of two rows
that labels and measures what it reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mope_jax.campaign import load_experiment
from mope_jax.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_declaration_carries_paper_c_recipe_at_every_scale():
    exp = load_experiment("fourierqk", REPO)
    assert exp.baseline == "learned" and exp.audit and exp.analyze is not None
    assert [s.name for s in exp.scales] == ["smoke", "cpu", "mid", "reference", "reference-tf32"]
    for s in exp.scales:
        assert s.model["tie_embeddings"] is False and s.train["decay_group"] == "2d"
        steps, every = s.train.get("max_steps", 5000), s.train.get("eval_interval", 500)
        assert steps % every == 0
    mid, ref = exp.scale("mid"), exp.scale("reference")
    assert mid.model["block_size"] == 256 and mid.train["batch_size"] == 16
    # the f32 attention opt-ins (no mid record predates them); paper_a's mid keeps the defaults
    assert (mid.model["attn_layout"], mid.model["attn_query_blocks"]) == ("bhtd", 4)
    assert ref.train["warmup_steps"] == 200 and ref.train["eval_batches"] == 200
    # the authors' float32 at `reference`; TF32 only as its own scale, otherwise the same
    tf32 = exp.scale("reference-tf32")
    assert "matmul_precision" not in ref.model and tf32.model["matmul_precision"] == "tf32"
    assert {k: v for k, v in tf32.model.items() if k != "matmul_precision"} == ref.model
    assert tf32.train == ref.train and ref.train["checkpoint_interval"] == 5000
    assert {"fourier-qk", "multifourier-qk", "causal-morlet", "fixed-bin-dc"} <= {
        r.name for r in exp.rows
    }


@pytest.mark.parametrize("scale_name", ["cpu", "mid"])
def test_fixed_twin_of_fourier_qk_init_is_the_one_compared_at_each_scale(scale_name):
    """The declared comparison 'fixed window at Fourier-QK's init minus the learned window'
    names, at each scale, the ladder rung whose bin at that T is Fourier-QK's initial bin."""
    from mope_jax.attention import spectral
    from mope_jax.campaign import comparisons_at, row_config

    exp = load_experiment("fourierqk", REPO)
    sc = exp.scale(scale_name)
    t = sc.model["block_size"]
    twins = [
        c for c in comparisons_at(exp, sc) if c.b == "fourier-qk" and f"init at T={t})" in c.what
    ]
    assert len(twins) == 1
    fixed = row_config(exp, sc, exp.row(twins[0].a)).model
    learned = row_config(exp, sc, exp.row("fourier-qk")).model
    assert fixed.qk_filter == "fixed-bin"
    assert spectral.ladder_bin(fixed.filter_fixed_bin, t) == learned.filter_init_bin


@pytest.mark.slow
def test_smoke_campaign_records_audit_and_diagnostics(shakespeare_path, tmp_path):
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    for f in ("__init__.py", "_scales.py"):  # the registry and the scales fourierqk imports
        shutil.copy(REPO / "experiments" / f, root / "experiments" / f)
    for name in ("paper_a", "fourierqk"):  # each a module or a package
        src = REPO / "experiments" / name
        if src.is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(src, root / "experiments" / name, ignore=ignore)
        else:
            shutil.copy(src.with_suffix(".py"), root / "experiments" / f"{name}.py")
    argv = ["campaign", "run", "fourierqk", "--scale", "smoke", "--rows", "learned,fourier-qk"]
    rc = main([*argv, "--root", str(root), "--corpus", str(shakespeare_path), "--no-progress"])
    assert rc == 0
    out = root / "experiments" / "results" / "fourierqk" / "smoke"
    learned = json.loads((out / "records" / "learned" / "seed0.json").read_text())
    four = json.loads((out / "records" / "fourier-qk" / "seed0.json").read_text())
    assert learned["causality"]["declared_causal"] and learned["audit"]["causal"]
    assert not four["causality"]["declared_causal"] and not four["audit"]["causal"]  # measured
    assert "phase" not in learned["analysis"] and set(four["analysis"]["phase"]) == {
        "none",
        "phase_rand",
        "phase_rand_indep",
        "amp_only",
        "phase_shift",
        "add-shared",
        "add-independent",
        "add-shift",
    }
    assert four["config"]["model"]["filter_norm"] == "l2"  # the record says which window norm
    assert four["final_val_loss"] < 4.5
    md = (out / "table.md").read_text()
    assert "Fourier-QK (NON-CAUSAL)" in md and "## Diagnostics" in md and "rotation R" in md


def test_mid_and_reference_use_the_authors_recipe_details():
    """DESIGN.md section 5 'Small': the authors' paper-C GPT has no q/k/v or attention-output
    bias (LayerNorm and MLP keep theirs) and no dropout after the attention projection: the
    reference scale's recipe; mid keeps the no-bias-anywhere recipe its committed
    records were trained with. Weight decay 0.2 for the Morlet-scale rows; smoke and cpu keep
    what their committed records were trained with."""
    from experiments import fourierqk as fq

    scales = {s.name: s for s in fq.EXPERIMENT.scales}
    ref = scales["reference"].model
    assert ref["use_bias"] is True and ref["attn_proj_bias"] is False
    assert ref["attn_out_dropout"] is False
    assert scales["mid"].model["use_bias"] is False
    assert "attn_proj_bias" not in scales["mid"].model
    for name in ("mid", "reference"):
        s = scales[name]
        assert s.model["tie_embeddings"] is False
        assert s.row_overrides["causal-morlet-a8"] == ("train.weight_decay=0.2",)
        assert "causal-morlet" not in s.row_overrides  # the learned-scale row keeps 0.1
    for name in ("smoke", "cpu"):
        assert "use_bias" not in scales[name].model and not scales[name].row_overrides


def test_diagnostics_reads_mexhat_k4_peak_periods_from_the_record():
    """MexHat-K4's learned column: the peak periods of the record's spectra, median per window.
    At init they are the paper's 50/26/10/5, and the spectra really peak there (argmax over a
    fine frequency grid), so the column reports where the filters pass most."""
    import importlib

    import numpy as np

    from mope_jax.attention import spectral

    load_experiment("fourierqk", REPO)  # puts the repository's experiments/ on the path
    diag = importlib.import_module("experiments.fourierqk.sections")
    log_s = np.tile(spectral.mexhat_k4_init_log_s(), (4, 1))  # (H,K)
    spectra = spectral.learned_filter_spectra(256, {"log_s": log_s})
    record = {
        "analysis": {"periods": {}, "scales": {}},
        "spectra": {k: np.stack([v, v]).tolist() for k, v in spectra.items()},  # (L,H,K)
    }
    assert diag._learned_text(record) == "peak period median: 50.0/26.0/10.0/5.0"
    t = 4096  # fine grid: argmax bin -> period within a bin's width
    h = np.asarray(spectral.mexhat_k4_spectra(log_s, t))  # (K,H,F)
    peak = t / np.argmax(h[:, 0], axis=-1)
    np.testing.assert_allclose(peak, spectral.PAPER_PERIODS, rtol=0.02)


def test_phase_shift_cells_made_with_the_old_definition_are_marked_and_pointed_to():
    """A record whose surrogate analysis predates the authors' ``phase_shift`` is
    marked † in the campaign table and listed as outdated; the re-run record of the same row
    is not. The single-script cpu file (which cannot be re-run) points to ``cpu/table.md``."""
    import importlib

    load_experiment("fourierqk", REPO)
    fq = importlib.import_module("experiments.fourierqk")
    ex = fq.EXPERIMENT
    mid = REPO / "experiments" / "results" / "fourierqk" / "mid"
    load = lambda p: json.loads(p.read_text())  # noqa: E731
    base = [load(p) for p in sorted((mid / "records" / "learned").glob("seed*.json"))]
    new = [load(p) for p in sorted((mid / "records" / "multifourier-qk").glob("seed*.json"))]
    old = [load(p) for p in sorted((mid / "superseded_issue40" / "multifourier-qk").glob("*.json"))]
    assert len(base) == len(new) == len(old) == 3
    scale = next(s for s in ex.scales if s.name == "mid")

    def row_line(records):
        text = fq.diagnostics_section(ex, scale, base + records)
        lines = text.splitlines()
        head = next(ln for ln in lines if "| phase_shift" in ln).split(" | ")
        col = next(i for i, h in enumerate(head) if h.startswith("phase_shift"))
        rows = [ln for ln in lines if ln.startswith("| `multifourier-qk`")]
        return text, rows[-1].split(" | ")[col]  # the surrogate table's phase_shift cell

    text, cell = row_line(old)
    assert cell.endswith("†") and fq.OLD_PHASE_SHIFT_NOTE in text
    assert all(fq.outdated(r) for r in old)
    text, cell = row_line(new)
    assert "†" not in cell and fq.OLD_PHASE_SHIFT_NOTE not in text
    assert not any(fq.outdated(r) for r in new)

    single = REPO / "experiments" / "results" / "fourierqk" / "fourierqk_cpu.json"
    md = fq.render(load(single), single)
    text = "\n".join(md.values())
    assert fq.OLD_PHASE_SHIFT_NOTE_SINGLE in text and fq.OLD_PHASE_SHIFT_NOTE not in text
    assert "`cpu/table.md`" in fq.OLD_PHASE_SHIFT_NOTE_SINGLE
