"""Registry of attention / encoding variants: everything a variant is, declared in one place.

A variant plugs into one of the five slots of the model (see ``ModelConfig``):

=============  ========================================  ===================================
slot           module call                               returns
=============  ========================================  ===================================
pos_encoding   ``m(positions)``                          (T, E) table added to embeddings
qk_position    ``m(q, k, positions)``                    ``(q, k)``, or raw scores (B,H,T,S)
attn_bias      ``m(xn, positions, deterministic)``       :class:`AttnBias`
qk_filter      ``m(q, k)``                               ``(q, k)``, filtered along T
mixer          ``m(xn, positions, deterministic=...)``   (B,T,E); replaces the attention
                                                         sublayer (``attention`` = None)
=============  ========================================  ===================================

q and k are (B, T, H, D). A qk_filter may change the last dim (e.g. stack K filter outputs or
real and imaginary parts); the score is still divided by sqrt(head_dim).

One call of :func:`register`, in the family's own module, declares the whole variant:

* ``slot`` and ``name``: what ``model.<slot>=<name>`` selects;
* ``causal``: a declaration, measured by :mod:`mope_jax.analysis.causality`. A declared
  non-causal variant cannot train a causal LM without ``train.allow_noncausal=true``, and every
  listing derives its "(NON-CAUSAL)" label from it (:func:`label`);
* the builder ``build(model_cfg) -> nn.Module | None`` (the decorated function);
* ``options``: the ModelConfig fields the builder reads, each with its allowed values (a tuple)
  or None (any value of the field's type). Every Config is checked against the union of all
  declarations when it is built (:func:`check_model`, called by ``config.validate``);
* ``spectral_params``: the names of its learned spectral parameters;
* ``spectra`` / ``summary``: ``fn(model_cfg, params)`` giving the named arrays stored with each
  checkpoint and the scalars logged at each eval (:mod:`mope_jax.analysis.spectra` calls those of
  the variants the config selects). Without ``spectra``, declared ``spectral_params`` are
  extracted as they are, stacked over layers (:func:`default_spectra`);
* ``hparams``: ModelConfig fields the module reads from the ``hparams`` variable collection
  (:mod:`mope_jax.hparams`), which a training step fills with traced scalars of the train state.

This module imports nothing from :mod:`mope_jax.config` (config imports it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params

if TYPE_CHECKING:
    import flax.linen as nn

SLOTS = ("pos_encoding", "qk_position", "attn_bias", "qk_filter", "mixer")
NONCAUSAL_LABEL = " (NON-CAUSAL)"

Extractor = Callable[[Any, Params], dict[str, np.ndarray]]
Summary = Callable[[Any, Params], dict[str, Any]]


@dataclass(frozen=True)
class AttnBias:
    """What an ``attn_bias`` variant contributes.

    add:      additive logit bias, broadcastable to (B, H, T, S), or None.
    log_gate: log of a key gate g in (0, 1], broadcastable to (B, H, T, S), or None. It is
              applied AFTER softmax and dropout and renormalised:
              A_ij <- A_ij g_ij / max(sum_j' A_ij' g_ij', 1e-8)   (EGA, DESIGN.md section 1);
              without dropout this equals softmax(s + log g).
    """

    add: Array | None = None
    log_gate: Array | None = None


@dataclass(frozen=True, eq=False)
class Variant:
    """One registered variant (see the module docstring for each field)."""

    name: str
    slot: str
    causal: bool
    build: Callable[[Any], nn.Module | None]  # ModelConfig -> module (None = identity)
    doc: str = ""
    options: Mapping[str, tuple | None] = field(default_factory=dict)
    spectral_params: tuple[str, ...] = ()
    spectra: Extractor | None = None
    summary: Summary | None = None
    hparams: tuple[str, ...] = ()

    @property
    def extractor(self) -> Extractor | None:
        """The function giving this variant's stored spectra, or None (nothing to store)."""
        if self.spectra is not None:
            return self.spectra
        if self.spectral_params:
            return lambda model_cfg, params: default_spectra(self, params)
        return None


_REGISTRY: dict[tuple[str, str], Variant] = {}
_RENAMED: dict[tuple[str, str], str] = {}  # (slot, old name) -> new name
# ModelConfig field -> (allowed values or None, who declared it first)
_OPTIONS: dict[str, tuple[tuple | None, str]] = {}


def _declare_option(key: str, allowed, owner: str) -> None:
    allowed = None if allowed is None else tuple(allowed)
    if key in _OPTIONS and _OPTIONS[key][0] != allowed:
        raise ValueError(
            f"{owner} declares model.{key} with values {allowed}, but {_OPTIONS[key][1]} "
            f"declared {_OPTIONS[key][0]}; one field, one set of values"
        )
    _OPTIONS.setdefault(key, (allowed, owner))


def register_option(key: str, allowed: tuple | None, *, owner: str) -> None:
    """Declare a ModelConfig field that no variant owns (e.g. the core's compute_dtype) with
    its allowed values, so that :func:`check_model` checks it."""
    _declare_option(key, allowed, owner)


def register(
    slot: str,
    name: str,
    *,
    causal: bool,
    doc: str = "",
    options: Mapping[str, tuple | None] | None = None,
    spectral_params: tuple[str, ...] = (),
    spectra: Extractor | None = None,
    summary: Summary | None = None,
    hparams: tuple[str, ...] = (),
):
    """Decorator: register ``build(cfg) -> nn.Module | None`` as variant ``name`` of ``slot``,
    with everything else the variant is (module docstring)."""
    if slot not in SLOTS:
        raise ValueError(f"unknown slot {slot!r}; one of {SLOTS}")
    options = dict(options or {})
    for key in hparams:
        options.setdefault(key, None)

    def deco(build):
        key = (slot, name)
        if key in _REGISTRY:
            raise ValueError(f"variant {slot}={name} registered twice")
        for opt, allowed in options.items():
            _declare_option(opt, allowed, f"{slot}={name}")
        _REGISTRY[key] = Variant(
            name=name,
            slot=slot,
            causal=causal,
            build=build,
            doc=doc,
            options=options,
            spectral_params=tuple(spectral_params),
            spectra=spectra,
            summary=summary,
            hparams=tuple(hparams),
        )
        return build

    return deco


def unregister(slot: str, name: str) -> None:
    """Remove a variant (tests that register a throwaway one). Its options stay declared only
    while another variant or the core still declares them."""
    _REGISTRY.pop((slot, name), None)
    owner = f"{slot}={name}"
    for key, (allowed, first) in list(_OPTIONS.items()):
        if first != owner:
            continue
        others = [v for v in _REGISTRY.values() if key in v.options]
        if others:
            _OPTIONS[key] = (allowed, f"{others[0].slot}={others[0].name}")
        else:
            del _OPTIONS[key]


def rename(slot: str, old: str, new: str) -> None:
    """Record that variant ``old`` of ``slot`` is now called ``new``: asking for the old name
    fails with one line naming the new one (a renamed variant may compute something else)."""
    _RENAMED[(slot, old)] = new


def get(slot: str, name: str) -> Variant:
    try:
        return _REGISTRY[(slot, name)]
    except KeyError:
        if (slot, name) in _RENAMED:
            raise ConfigError(
                f"{slot} {name!r} was renamed {_RENAMED[(slot, name)]!r}; use the new name"
            ) from None
        choices = sorted(n for s, n in _REGISTRY if s == slot)
        raise ConfigError(f"unknown {slot} {name!r}; choose one of {choices}") from None


def variants(slot: str | None = None) -> list[Variant]:
    return [v for (s, _), v in sorted(_REGISTRY.items()) if slot is None or s == slot]


def option_table() -> dict[str, tuple | None]:
    """Every declared ModelConfig option: field -> allowed values (None: any value)."""
    return {key: allowed for key, (allowed, _) in _OPTIONS.items()}


def check_model(m) -> None:
    """ModelConfig check run by ``config.validate``: every slot names a registered variant, and
    every declared option holds one of its declared values. ConfigError (one line) else."""
    for slot in SLOTS:
        name = getattr(m, slot, None)
        if (slot, name) in _RENAMED:
            get(slot, name)  # raises the one line naming the new name
        known = sorted(v.name for v in variants(slot))
        if name not in known:
            raise ConfigError(f"model.{slot}={name!r} is unknown; choose one of {', '.join(known)}")
    for key, allowed in option_table().items():
        if not hasattr(m, key):
            raise ConfigError(
                f"{_OPTIONS[key][1]} reads model.{key}, which ModelConfig does not have; "
                "add the field to ModelConfig"
            )
        value = getattr(m, key)
        if allowed is not None and value is not None and value not in allowed:
            raise ConfigError(
                f"model.{key}={value!r} is unknown; choose one of {', '.join(map(str, allowed))}"
            )


def model_variants(model_cfg) -> list[Variant]:
    """The registered variants a ModelConfig uses, one per slot."""
    return [get(slot, getattr(model_cfg, slot)) for slot in SLOTS]


def declared_causal(model_cfg) -> bool:
    """True iff every variant the config selects is declared causal."""
    return all(v.causal for v in model_variants(model_cfg))


def noncausal_parts(model_cfg) -> list[str]:
    return [f"{v.slot}={v.name}" for v in model_variants(model_cfg) if not v.causal]


def label(model_cfg) -> str:
    """ " (NON-CAUSAL)" for a config that selects a declared non-causal variant, else ""."""
    return "" if declared_causal(model_cfg) else NONCAUSAL_LABEL


def model_hparams(model_cfg) -> tuple[str, ...]:
    """The ModelConfig fields the selected variants read from the ``hparams`` collection."""
    out: list[str] = []
    for v in model_variants(model_cfg):
        out += [h for h in v.hparams if h not in out]
    return tuple(out)


# --------------------------------------------------------------------------- spectra helpers


def layer_names(params: Params) -> list[str]:
    """The model's layers ``h_0, h_1, ...`` in order."""
    return sorted((k for k in params if k.startswith("h_")), key=lambda k: int(k[2:]))


def per_layer(params: Params, module: str, name: str) -> np.ndarray | None:
    """Parameter ``name`` of the attention module ``module`` of every layer, stacked (L, ...);
    None if no layer has it (a module may lack a parameter: EGA-1 has no mix weights)."""
    found = [
        np.asarray(params[k]["attn"][module][name])
        for k in layer_names(params)
        if name in params[k].get("attn", {}).get(module, {})
    ]
    return np.stack(found) if found else None


def _find(tree: Any, name: str) -> Any:
    """The first parameter called ``name`` in a params subtree (depth first), or None."""
    if not isinstance(tree, Mapping):
        return None
    if name in tree and not isinstance(tree[name], Mapping):
        return tree[name]
    for sub in tree.values():
        got = _find(sub, name)
        if got is not None:
            return got
    return None


def default_spectra(variant: Variant, params: Params) -> dict[str, np.ndarray]:
    """A variant's declared ``spectral_params`` as stored, ``<name>_<param>`` with '-' read as
    '_': the top-level module's array for a pos_encoding, else stacked over layers (L, ...)."""
    prefix = variant.name.replace("-", "_")
    out: dict[str, np.ndarray] = {}
    for p in variant.spectral_params:
        if variant.slot == "pos_encoding":
            value = _find({k: v for k, v in params.items() if not k.startswith("h_")}, p)
            if value is not None:
                out[f"{prefix}_{p}"] = np.asarray(value)
            continue
        sub = "attn" if variant.slot != "mixer" else None
        found = []
        for k in layer_names(params):
            tree = params[k].get(sub, {}) if sub else params[k]
            value = _find(tree, p)
            if value is not None:
                found.append(np.asarray(value))
        if found and len(found) == len(layer_names(params)):
            out[f"{prefix}_{p}"] = np.stack(found)
    return out
