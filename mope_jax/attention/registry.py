"""Registry of attention / encoding variants, each with its causality declaration.

A variant plugs into one of the four slots of the attention block (see ``ModelConfig``):

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

``causal`` is a declaration; :mod:`mope_jax.analysis.causality` measures it. A declared
non-causal variant cannot train a causal LM without ``train.allow_noncausal=true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import flax.linen as nn

from mope_jax.errors import ConfigError
from mope_jax.typing import Array

SLOTS = ("pos_encoding", "qk_position", "attn_bias", "qk_filter", "mixer")


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


@dataclass(frozen=True)
class Variant:
    name: str
    slot: str
    causal: bool
    build: Callable[[Any], nn.Module | None]  # ModelConfig -> module (None = identity)
    doc: str = ""


_REGISTRY: dict[tuple[str, str], Variant] = {}
_RENAMED: dict[tuple[str, str], str] = {}  # (slot, old name) -> new name


def register(slot: str, name: str, *, causal: bool, doc: str = ""):
    """Decorator: register ``build(cfg) -> nn.Module | None`` as variant ``name`` of ``slot``."""
    if slot not in SLOTS:
        raise ValueError(f"unknown slot {slot!r}; one of {SLOTS}")

    def deco(build):
        key = (slot, name)
        if key in _REGISTRY:
            raise ValueError(f"variant {slot}={name} registered twice")
        _REGISTRY[key] = Variant(name=name, slot=slot, causal=causal, build=build, doc=doc)
        return build

    return deco


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
                f"{slot} {name!r} was renamed {_RENAMED[(slot, name)]!r} (issue 12); "
                "use the new name"
            ) from None
        choices = sorted(n for s, n in _REGISTRY if s == slot)
        raise ConfigError(f"unknown {slot} {name!r}; choose one of {choices}") from None


def variants(slot: str | None = None) -> list[Variant]:
    return [v for (s, _), v in sorted(_REGISTRY.items()) if slot is None or s == slot]


def model_variants(model_cfg) -> list[Variant]:
    """The registered variants a ModelConfig uses, one per slot."""
    return [get(slot, getattr(model_cfg, slot)) for slot in SLOTS]


def declared_causal(model_cfg) -> bool:
    """True iff every variant the config selects is declared causal."""
    return all(v.causal for v in model_variants(model_cfg))


def noncausal_parts(model_cfg) -> list[str]:
    return [f"{v.slot}={v.name}" for v in model_variants(model_cfg) if not v.causal]
