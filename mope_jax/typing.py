"""Axis glossary and array aliases used in every docstring, einsum and annotation.

    B  batch                    T  query positions          S  key positions
    H  heads                    D  head dim                 E  model width
    F  frequency bins / filters K  filters per head         R  runs (seeds)
    V  vocabulary size          N  corpus length (tokens)

Einsum strings use these letters verbatim, e.g. ``jnp.einsum("BTHD,BSHD->BHTS", q, k)``.
Positions are in tokens; angular frequencies in rad/token.
"""

from __future__ import annotations

from typing import Any

import jax

Array = jax.Array
PRNGKey = jax.Array  # raw uint32[2] keys (jax.random.PRNGKey); checkpoint-friendly
PyTree = Any
Params = Any

__all__ = ["Array", "PRNGKey", "PyTree", "Params"]
