"""experiments/fourierqk.py runs end to end at smoke scale and labels what it measures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

EXPERIMENT = Path(__file__).resolve().parents[1] / "experiments" / "fourierqk.py"


def _load():
    spec = importlib.util.spec_from_file_location("fourierqk_experiment", EXPERIMENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_get_config_scales():
    mod = _load()
    for scale in ("smoke", "cpu", "reference"):
        exp = mod.get_config(scale)
        cfg = exp["base"]
        assert (
            cfg.model.tie_embeddings is False and cfg.train.decay_group == "2d"
        )  # paper C's recipe
        assert cfg.train.max_steps % cfg.train.eval_interval == 0
        assert exp["rows"][0] == "learned"
    ref = mod.get_config("reference")["base"]
    assert (
        ref.model.block_size == 256
        and ref.train.warmup_steps == 200
        and ref.train.eval_batches == 200
    )


@pytest.mark.slow
def test_smoke_run_writes_labelled_results(shakespeare_path, tmp_path):
    mod = _load()
    rc = mod.main(
        [
            "--scale",
            "smoke",
            "--data",
            str(shakespeare_path),
            "--rows",
            "learned,fourier-qk",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    res = json.loads((tmp_path / "fourierqk_smoke.json").read_text())
    rows = res["rows"]
    assert rows["learned"]["declared_causal"] and rows["learned"]["diag"]["audit"]["causal"]
    four = rows["fourier-qk"]
    assert not four["declared_causal"] and not four["diag"]["audit"]["causal"]  # measured leak
    assert set(four["diag"]["phase"]) == {
        "none",
        "phase_rand",
        "phase_rand_indep",
        "amp_only",
        "phase_shift",
        "add-shared",
        "add-independent",
        "add-shift",
    }
    assert four["model_overrides"]["filter_norm"] == "l2"  # the record says which window norm
    assert len(four["final_val"]) == 1 and four["final_val"][0] < 4.5
    md = (tmp_path / "fourierqk_smoke.md").read_text()
    assert "Fourier-QK — NON-CAUSAL" in md and "Command:" in md and "Machine:" in md
