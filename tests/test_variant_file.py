"""A variant is one file: its registration declares slot, name, causality, builder, options,
spectral parameters, extractors and traced hparams, and everything else derives from it."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from mope_jax.analysis import spectra
from mope_jax.analysis.causality import audit_registry, format_table
from mope_jax.attention import registry
from mope_jax.config import Config, ConfigError, ModelConfig, apply_overrides
from mope_jax.model import init_params
from mope_jax.presets import ModelVariant, get_preset, model_variants, register_variant
from mope_jax.train import initial_hparams

ROOT = Path(__file__).resolve().parents[1]
TOY = "tests.toy_variant"


@pytest.fixture
def toy():
    """Load tests/toy_variant.py (its one registry call), and forget it afterwards."""
    sys.modules.pop(TOY, None)
    module = importlib.import_module(TOY)
    try:
        yield module
    finally:
        registry.unregister("qk_filter", "toy-mean")
        sys.modules.pop(TOY, None)


def tiny(**fields) -> ModelConfig:
    return ModelConfig(
        **{
            "block_size": 16,
            "n_layer": 2,
            "n_head": 2,
            "n_embd": 16,
            "dropout": 0.0,
            "vocab_size": 11,
            **fields,
        }
    )


def test_a_new_variant_is_one_file(toy):
    # accepted by the config (and its options checked) once its one file is imported
    cfg = apply_overrides(get_preset("smoke"), ["model.qk_filter=toy-mean"])
    assert cfg.model.qk_filter == "toy-mean"
    with pytest.raises(ConfigError, match=r"model.filter_norm='l3' is unknown; choose one of l1"):
        Config(model=tiny(qk_filter="toy-mean", filter_norm="l3"))
    # the audit lists it with its declared causality, and measures the leak
    (row,) = audit_registry(slots=("qk_filter",), names=("toy-mean",), n_layer=1, seq_len=8)
    assert row["variant"] == "toy-mean" and row["declared_causal"] is False
    assert row["causal"] is False and row["status"] == "ok"
    assert "NON-CAUSAL" in format_table([row])
    # labelled wherever a config or a named variant uses it
    m = tiny(qk_filter="toy-mean")
    assert registry.label(m) == " (NON-CAUSAL)" and registry.noncausal_parts(m) == [
        "qk_filter=toy-mean"
    ]
    named = ModelVariant("toy", {"qk_filter": "toy-mean"}, {}, "the toy filter")
    assert named.description == "the toy filter (NON-CAUSAL)" and not named.causal
    # its declared spectral parameter is extracted, stacked over layers
    params = init_params(m, jax.random.PRNGKey(0))
    got = spectra.extract_spectra(m, params)
    assert list(got) == ["toy_mean_log_gain"] and got["toy_mean_log_gain"].shape == (2, 2)
    # its traced field joins the train state of its runs (only of its runs)
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, allow_noncausal=True))
    assert set(initial_hparams(cfg)) >= {"mope_bound", "filter_bandwidth"}
    assert "filter_bandwidth" not in initial_hparams(get_preset("smoke"))
    # and the module reads it from the hparams collection
    from mope_jax.model import GPT

    x = np.zeros((1, 16), np.int32)
    base = GPT(m).apply({"params": params}, x)
    same = GPT(m).apply({"params": params, "hparams": {"filter_bandwidth": 2.0}}, x)
    other = GPT(m).apply({"params": params, "hparams": {"filter_bandwidth": 0.0}}, x)
    np.testing.assert_array_equal(np.asarray(base), np.asarray(same))
    assert not np.array_equal(np.asarray(base), np.asarray(other))


def test_an_unloaded_variant_is_refused_when_the_config_is_built():
    with pytest.raises(ConfigError, match=r"model.qk_filter='toy-mean' is unknown"):
        Config(model=tiny(qk_filter="toy-mean"))


def test_config_alone_refuses_unknown_names_and_options():
    # a script that imports only mope_jax.config gets the one-line ConfigError when it builds
    # the Config, not when a model is traced; mope_jax.data stays free of flax
    script = (
        "import sys\n"
        "import mope_jax.data\n"
        "assert 'flax' not in sys.modules\n"
        "from mope_jax import config\n"
        "for bad in ({'pos_encoding': 'nosuch'}, {'filter_phase': 'nosuch'},\n"
        "            {'attn_bias': 'ega-conv'}):\n"
        "    try:\n"
        "        config.Config(model=config.ModelConfig(**bad))\n"
        "    except config.ConfigError as e:\n"
        "        print(type(e).__name__ + ': ' + str(e))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        "ConfigError: model.pos_encoding='nosuch' is unknown; choose one of "
        + ", ".join(sorted(v.name for v in registry.variants("pos_encoding"))),
        "ConfigError: model.filter_phase='nosuch' is unknown; choose one of "
        + ", ".join(registry.option_table()["filter_phase"]),
        "ConfigError: attn_bias 'ega-conv' was renamed 'ega-conv1'; use the new name",
    ]


def test_every_model_field_is_the_core_s_or_declared_by_a_variant():
    core = {
        "vocab_size",
        "block_size",
        "n_layer",
        "n_head",
        "n_embd",
        "dropout",
        "tie_embeddings",
        "use_bias",
        "init_std",
        "gelu_approximate",
        *registry.SLOTS,
    }
    fields = {f.name for f in dataclasses.fields(ModelConfig)}
    declared = set(registry.option_table())
    assert declared <= fields, declared - fields
    assert fields - core == declared, (fields - core) ^ declared


def test_declared_spectral_parameters_are_the_learned_ones_and_are_extracted():
    standard = {"embedding", "kernel", "bias", "scale"}
    for v in registry.variants():
        m = tiny(**{v.slot: v.name})
        params = init_params(m, jax.random.PRNGKey(0))
        names = {
            getattr(p[-1], "key", "") for p, _ in jax.tree_util.tree_flatten_with_path(params)[0]
        }
        learned = {n for n in names - standard if n.startswith("log_")}
        declared = {p for u in registry.model_variants(m) for p in u.spectral_params}
        assert learned <= declared, (v.name, learned - declared)
        # (some are optional: MOPE's centres, EGA-1's mix weights, a fixed kernel scale)
        assert not v.spectral_params or set(v.spectral_params) & names, (v.name, names)
        got = spectra.extract_spectra(m, params)
        assert bool(got) == bool(v.spectral_params), (v.name, list(got))


def test_preset_labels_are_derived_from_declared_causality():
    variants = model_variants()
    for name, v in variants.items():
        assert v.description.endswith(" (NON-CAUSAL)") == (not v.causal), name
        assert "NON-CAUSAL" not in v.text, name  # never typed by hand
    assert variants["fourier-qk"].description.endswith(" (NON-CAUSAL)")
    assert variants["a-ega1"].description.endswith(" (NON-CAUSAL)")
    assert "NON-CAUSAL" not in variants["causal-gauss"].description
    assert "NON-CAUSAL" not in variants["a-ega1-causal"].description
    with pytest.raises(ValueError, match="derived"):
        register_variant("typed", "a hand-typed label (NON-CAUSAL)", qk_filter="fourier")


def test_presets_listing_takes_the_label_from_the_registry(capsys):
    from mope_jax.cli import main

    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    assert "NON-CAUSAL" in rows["fnet"] and "NON-CAUSAL" not in rows["causal-gauss"]
    assert rows["fnet"].count("NON-CAUSAL") == 1
