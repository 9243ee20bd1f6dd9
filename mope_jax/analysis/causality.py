"""Causality audit: does output t depend on inputs at s > t?

``audit(fn, x)`` measures, for any function from a sequence array (T, E) or (B, T, E) to a
sequence array with the same T axis, the influence matrix

    I[t, s] = max over features (and batch) of |d out[t] / d in[s]|

either exactly from the Jacobian (small T) or, for large T, from forward-mode derivatives
(``jvp-cuts``, the default there): one per probed input position s (I[t, s] ~ max |J[t, s] u|
/ max |u| for a random direction u at s), and one per cut c = 1..T-1 with a random direction
on all positions >= c, whose response at t < c bounds the leak from every s >= c into t
(:func:`influence_cuts`), so no (t, s > t) pair goes unexamined. ``jvp`` is the probed
positions alone (blind to a leak from a position it does not draw). A function ``jax.jvp``
cannot differentiate (a ``jax.custom_vjp`` inside) is audited in reverse mode instead
(``vjp-rows``, :func:`influence_rows`: one vjp per output position, every pair covered). The
leak is max_{s > t} I[t, s]; the verdict compares it with ``tol`` times the largest causal influence
max_{s <= t} I[t, s], so it does not depend on the scale of the function, and FFT rounding
(~1e-7 relative) does not trip it while a 1e-3 coupling does.

``method="perturb"`` (finite differences, out(x + delta) - out(x), formerly the default for
large T) is kept for comparison: its rounding floor is the float32 rounding of the
outputs divided by the size of the perturbation, ~1e-5 relative at T = 256 for a causal FFT
convolution (which mixes every position's rounding into every output), i.e. at the tolerance,
so a causal FFT model can be reported as leaking; the derivative has no such division.

``audit_model(cfg, params)`` does the same for a whole language model (token embeddings ->
logits), and ``audit_registry()`` for every registered variant (``mope-jax audit``). For a
model it also checks **prefix invariance** (:func:`prefix_invariance`): the model called on
the first t tokens must give the first t positions of its output on the whole sequence, for
t = 1, T/2 + 1 and T - 1 (max |difference| / max |logit| <= :data:`PREFIX_TOL`; checked once the
influence audit found no leak: a model that reads the future is not causal either way). A layer
that sizes or normalises a kernel from the length it is handed computes another function on a
shorter sequence without reading the future; "causal" in a model's audit means both: no
dependence on future values, and none on how many tokens follow.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.typing import Array

DEFAULT_TOL = 1e-5
PREFIX_TOL = 1e-4  # relative: float32 rounding of an FFT at two lengths is ~1e-6


@dataclass(frozen=True)
class AuditResult:
    leak: float  # max_{s>t} I[t, s] (absolute); jvp-cuts: or a cut's response, which sums
    # the influence of every input beyond the cut, so it can exceed any one position's
    scale: float  # max_{s<=t} I[t, s], the causal influence it is compared with
    causal: bool  # leak <= tol * scale
    first_leak: tuple[int, int] | None  # earliest (t, s), s > t, with I[t, s] > tol * scale
    method: str  # "jacobian", "jvp-cuts", "vjp-rows", "jvp" or "perturb" (finite differences)
    tol: float
    # a model's prefix check: max relative difference between the model on the first t tokens
    # and the first t positions on all T (None: not checked; a function's audit)
    prefix_rel: float | None = None

    @property
    def leak_rel(self) -> float:
        return self.leak / self.scale if self.scale > 0 else float("inf") if self.leak > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"leak_rel": self.leak_rel}


def _time_axis(x: Array) -> int:
    if x.ndim == 2:
        return 0
    if x.ndim == 3:
        return 1
    raise ValueError(f"audit expects (T, E) or (B, T, E) inputs, got shape {x.shape}")


def influence_jacobian(fn: Callable[[Array], Array], x: Array, *, args: Any = None) -> np.ndarray:
    """Exact I[t, s] (T, S) from the Jacobian of fn at x (``fn(args, x)`` when ``args`` is
    given: see :func:`audit`)."""
    fn, args = _two_arg(fn, args)
    ax = _time_axis(x)
    jac = _programs(fn).jacobian(args, x.astype(jnp.float32))
    jac = np.abs(np.asarray(jac, dtype=np.float64))
    y_nd = jac.ndim - x.ndim
    out_t_axis = ax  # the output has the same leading (B,) T layout
    in_t_axis = y_nd + ax
    # move (t, s) to the front, reduce everything else with max
    jac = np.moveaxis(jac, (out_t_axis, in_t_axis), (0, 1))
    return jac.reshape(jac.shape[0], jac.shape[1], -1).max(-1)


# --------------------------------------------------------------------------- compiled once
# The audit's programs take what ``fn`` is evaluated with (a model's parameters) as arguments,
# never as constants baked into the program: auditing every seed of a row compiles each program
# once (a trained model's parameters closed over would be a new program per seed, and put the
# whole parameter set into its HLO). ``fn(args, x)`` is the two-argument form; a one-argument
# ``fn(x)`` is wrapped (and compiled per call, as it closes over whatever it needs).


def _two_arg(fn: Callable, args: Any) -> tuple[Callable, Any]:
    if args is None:
        return (lambda _, x: fn(x)), ()
    return fn, args


class _Programs:
    """The jitted pieces of an audit of ``fn(args, x)`` (each compiled once per input shape)."""

    def __init__(self, fn: Callable):
        def f32(a, w):
            return fn(a, w).astype(jnp.float32)

        def tangent(a, z, u):
            return jax.jvp(lambda w: f32(a, w), (z,), (u,))[1]

        self.forward = _jit_named(fn, "audit_forward")
        self.jacobian = _jit_named(jax.jacrev(f32, argnums=1), "audit_jacobian")
        self.tangent = _jit_named(tangent, "audit_tangent")
        self.cuts = _jit_named(functools.partial(_cuts_block, f32), "audit_cuts")
        self.rows = _jit_named(functools.partial(_rows_block, f32), "audit_rows")


def _jit_named(f: Callable, name: str) -> Callable:
    """jax.jit of f under ``name`` (what compile logs and counters see)."""

    def named(*a):
        return f(*a)

    named.__name__ = named.__qualname__ = name
    return jax.jit(named)


_PROGRAMS: "weakref.WeakKeyDictionary[Callable, _Programs]" = weakref.WeakKeyDictionary()


def _programs(fn: Callable) -> _Programs:
    """The programs of ``fn``, kept as long as ``fn`` lives (audit_model's model function lives
    as long as its config is in use)."""
    if fn not in _PROGRAMS:
        _PROGRAMS[fn] = _Programs(fn)
    return _PROGRAMS[fn]


def _cuts_block(f32: Callable, a: Any, x: Array, key: Array, cs: Array) -> Array:
    """C[:, c] for the cuts ``cs`` (one row per cut), by forward mode at x: the primal is
    computed once, the tangents of every cut of the block together (vmap)."""
    ax = _time_axis(x)
    T = x.shape[ax]

    def one(c):
        u = _noise_where(key, c, x, jnp.arange(T) >= c, ax)
        d = jax.jvp(lambda w: f32(a, w), (x,), (u,))[1]
        return _max_over_positions(d, ax, T) / jnp.abs(u).max()

    return jax.vmap(one)(cs)


def _rows_block(f32: Callable, a: Any, x: Array, key: Array, ts: Array) -> Array:
    """R[t, :] for the output positions ``ts``, by reverse mode: one forward pass, the
    cotangents of the block together (vmap)."""
    ax = _time_axis(x)
    T = x.shape[ax]
    y, vjp = jax.vjp(lambda w: f32(a, w), x)

    def one(t):
        w = _noise_where(key, t, y, jnp.arange(T) == t, ax)
        (g,) = vjp(w)
        return _max_over_positions(g, ax, T) / jnp.abs(w).max()  # (S,)

    return jax.vmap(one)(ts)


def _probe_positions(key: Array, T: int, num_probes: int) -> list[int]:
    rng = np.random.default_rng(int(jax.random.randint(key, (), 0, 2**31 - 1)))
    drawn = rng.choice(np.arange(1, T), size=min(num_probes, T - 1), replace=False).tolist()
    return sorted({1, T // 2, T - 1, *drawn})


def _noise_where(key: Array, i, a: Array, mask: Array, ax: int) -> Array:
    """N(0, 1) noise of a's shape (draw i of key), zero at the time positions where not mask."""
    noise = jax.random.normal(jax.random.fold_in(key, i), a.shape, a.dtype)
    mask = mask.astype(a.dtype)
    return noise * (mask[:, None] if ax == 0 else mask[None, :, None])


def _max_over_positions(d: Array, ax: int, T: int) -> Array:
    """max |d| over features (and batch) at each time position: (T,); traceable (jnp)."""
    return jnp.moveaxis(jnp.abs(d), ax, 0).reshape(T, -1).max(-1)


def _direction_at(key: Array, i: int, x: Array, s: int, ax: int, scale: float = 1.0) -> Array:
    """scale * N(0, 1) noise of x's shape, zero except at time position s (probe i)."""
    return scale * _noise_where(key, i, x, jnp.arange(x.shape[ax]) == s, ax)


def _max_over_features(d, ax: int, T: int) -> np.ndarray:
    """:func:`_max_over_positions` in float64 numpy, outside jit (a perturbation's difference
    of two outputs is taken in float64)."""
    d = np.abs(np.asarray(d, dtype=np.float64))
    return np.moveaxis(d, ax, 0).reshape(T, -1).max(-1)


def influence_perturb(
    fn: Callable[[Array], Array],
    x: Array,
    *,
    key: Array,
    positions: list[int] | None = None,
    num_probes: int = 16,
    eps: float = 1e-2,
    args: Any = None,
) -> tuple[np.ndarray, list[int]]:
    """Estimated I[t, s] for probe positions s (columns not probed are 0).

    Each probe replaces x at position s by x + eps * noise (noise ~ N(0, 1)) and records
    max |fn(x')[t] - fn(x)[t]| / max |x' - x| at every t.
    """
    fn, args = _two_arg(fn, args)
    forward = _programs(fn).forward
    ax = _time_axis(x)
    T = x.shape[ax]
    if positions is None:
        positions = _probe_positions(key, T, num_probes)
    base = np.asarray(forward(args, x), dtype=np.float64)
    influence = np.zeros((T, T))
    for i, s in enumerate(positions):
        delta = _direction_at(key, i, x, s, ax, eps)
        out = np.asarray(forward(args, x + delta), dtype=np.float64)
        diff = _max_over_features(out - base, ax, T)
        influence[:, s] = diff / float(jnp.abs(delta).max())
    return influence, list(positions)


def influence_jvp(
    fn: Callable[[Array], Array],
    x: Array,
    *,
    key: Array,
    positions: list[int] | None = None,
    num_probes: int = 16,
    args: Any = None,
) -> tuple[np.ndarray, list[int]]:
    """Estimated I[t, s] for probe positions s (columns not probed are 0), from derivatives.

    Each probe draws a direction u ~ N(0, 1) supported on position s only and records
    max |J u [t]| / max |u| at every t, where J u is fn's forward-mode derivative at x in
    direction u (one ``jax.jvp``). The same quantity as ``influence_perturb`` in the limit of
    a small perturbation, without the subtraction of two rounded outputs.
    """
    fn, args = _two_arg(fn, args)
    ax = _time_axis(x)
    T = x.shape[ax]
    if positions is None:
        positions = _probe_positions(key, T, num_probes)
    x = x.astype(jnp.float32)
    tangent = _programs(fn).tangent
    influence = np.zeros((T, T))
    for i, s in enumerate(positions):
        u = _direction_at(key, i, x, s, ax)
        influence[:, s] = _max_over_features(tangent(args, x, u), ax, T) / float(jnp.abs(u).max())
    return influence, list(positions)


def influence_cuts(
    fn: Callable[[Array], Array], x: Array, *, key: Array, chunk: int = 32, args: Any = None
) -> np.ndarray:
    """C[t, c] (T, T) for every cut c = 1..T-1 and output t < c: max |J u_c [t]| / max |u_c|,
    where u_c ~ N(0, 1) is supported on ALL positions s >= c (zero elsewhere).

    Any dependence of an output t on any later input s shows in C[t, c] for every cut
    t < c <= s (the random direction makes an exact cancellation a probability-0 event), so the
    T - 1 cuts cover every (t, s > t) pair, which a sample of probed positions does not. One
    forward-mode derivative of fn at x per cut, ``chunk`` cuts at a time (vmap; the primal is
    computed once per chunk). The largest c with C[t, c] above the threshold is the farthest
    input that reaches t.
    """
    fn, args = _two_arg(fn, args)
    ax = _time_axis(x)
    T = x.shape[ax]
    x = x.astype(jnp.float32)
    block = _programs(fn).cuts
    cuts = np.arange(1, T)
    out = np.zeros((T, T))
    out[:, cuts] = _vmapped_rows(lambda cs: block(args, x, key, cs), cuts, chunk).T
    return np.triu(out, k=1)  # keep t < c only: t >= c is the cut's own causal response


def _vmapped_rows(block: Callable[[Array], Array], idx: np.ndarray, chunk: int) -> np.ndarray:
    """np.concatenate([block(i) for i in chunks of idx]) (len(idx), T): ``chunk`` indices at a
    time, the last chunk padded so that one program is compiled."""
    rows = []
    for i in range(0, len(idx), chunk):
        part = idx[i : i + chunk]
        pad = np.concatenate([part, np.full(chunk - len(part), part[-1])])
        rows.append(np.asarray(block(jnp.asarray(pad)), dtype=np.float64)[: len(part)])
    return np.concatenate(rows)


def influence_rows(
    fn: Callable[[Array], Array], x: Array, *, key: Array, chunk: int = 32, args: Any = None
) -> np.ndarray:
    """R[t, s] (T, T) for EVERY output position t and input position s, from reverse mode:
    max over features (and batch) of |w_t^T J[t, s]| / max |w_t|, where the cotangent
    w_t ~ N(0, 1) is supported on output position t only (one vjp per t, ``chunk`` at a time).

    Like :func:`influence_cuts` it leaves no (t, s > t) pair unexamined (a random cotangent
    makes an exact cancellation a probability-0 event), and it needs no forward mode: the
    audit uses it for models whose forward pass holds a ``jax.custom_vjp`` (Morlet-RoPE's
    hand-written group gradient), which ``jax.jvp`` cannot differentiate.
    """
    fn, args = _two_arg(fn, args)
    ax = _time_axis(x)
    T = x.shape[ax]
    x = x.astype(jnp.float32)
    block = _programs(fn).rows
    return _vmapped_rows(lambda ts: block(args, x, key, ts), np.arange(T), chunk)


def _needs_reverse_mode(err: TypeError) -> bool:
    return "custom_vjp" in str(err)


def verdict(
    influence: np.ndarray,
    *,
    tol: float = DEFAULT_TOL,
    method: str,
    cuts: np.ndarray | None = None,
) -> AuditResult:
    """The audit's verdict from I[t, s] (and, with ``cuts``, from C[t, c] of
    :func:`influence_cuts`: a leak that no probed position showed is reported as (t, c), c the
    farthest cut that still reaches t, i.e. an input at or beyond c reaches t)."""
    T, S = influence.shape
    future = np.triu(np.ones((T, S), bool), k=1)  # s > t
    leak = float(influence[future].max()) if future.any() else 0.0
    scale = float(influence[~future].max()) if (~future).any() else 0.0
    thresh = tol * scale if scale > 0 else tol
    bad = np.argwhere(future & (influence > thresh))
    first = None
    if len(bad):
        # earliest output position t, then the nearest future input s
        order = np.lexsort((bad[:, 1], bad[:, 0]))
        first = (int(bad[order[0], 0]), int(bad[order[0], 1]))
    if cuts is not None and cuts.size:
        leak = max(leak, float(cuts.max()))
        hit = np.argwhere(cuts > thresh)
        if len(hit):
            t = int(hit[:, 0].min())
            c = int(hit[hit[:, 0] == t, 1].max())
            if first is None or t < first[0]:
                first = (t, c)
    return AuditResult(
        leak=leak, scale=scale, causal=first is None, first_leak=first, method=method, tol=tol
    )


def audit(
    fn: Callable[[Array], Array],
    x: Array,
    *,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    key: Array | None = None,
    num_probes: int = 16,
    max_jacobian_elems: int = 2**24,
    args: Any = None,
) -> AuditResult:
    """Audit ``fn`` at ``x`` ((T, E) or (B, T, E)); see the module docstring. ``auto`` picks
    the Jacobian for small problems, else ``jvp-cuts``, or ``vjp-rows`` when ``fn`` cannot be
    differentiated in forward mode (a ``jax.custom_vjp`` inside); the result names the method
    used.

    args: what ``fn`` is evaluated with besides x (e.g. a model's parameters); ``fn(args, x)``
    is then audited as a function of x, and its programs, compiled once per ``fn``, take args
    as an argument: the audits of many parameter sets (the seeds of a row) compile once."""
    key = jax.random.PRNGKey(0) if key is None else key
    fn, args = _two_arg(fn, args)
    kw = dict(tol=tol, key=key, args=args)
    if method == "auto":
        n = int(np.prod(x.shape)) * int(np.prod(jax.eval_shape(fn, args, x).shape))
        if n <= max_jacobian_elems:
            method = "jacobian"
        else:
            try:
                return audit(fn, x, method="jvp-cuts", num_probes=num_probes, **kw)
            except TypeError as err:  # only jax's refusal to jvp a custom_vjp is handled
                if not _needs_reverse_mode(err):
                    raise
                method = "vjp-rows"
    if method == "jacobian":
        return verdict(influence_jacobian(fn, x, args=args), tol=tol, method="jacobian")
    if method == "vjp-rows":
        return verdict(influence_rows(fn, x, key=key, args=args), tol=tol, method="vjp-rows")
    if method in ("jvp", "jvp-cuts", "perturb"):
        probe = influence_perturb if method == "perturb" else influence_jvp
        infl, _ = probe(fn, x, key=key, num_probes=num_probes, args=args)
        cuts = None
        if method == "jvp-cuts":
            cuts = influence_cuts(fn, x, key=jax.random.fold_in(key, 1 << 20), args=args)
        return verdict(infl, tol=tol, method=method, cuts=cuts)
    raise ValueError(
        f"unknown audit method {method!r}; use auto, jacobian, jvp-cuts, vjp-rows, jvp or perturb"
    )


def audit_model(
    cfg,
    params,
    *,
    seq_len: int | None = None,
    key: Array | None = None,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    max_jacobian_elems: int = 2**24,
) -> AuditResult:
    """Audit a whole GPT (token embeddings -> logits) at random tokens, without dropout.

    cfg is a ModelConfig. The input is a continuous offset added to the token embeddings, so
    the Jacobian exists; tokens are drawn at random from the vocabulary. ``method`` and
    ``max_jacobian_elems`` as in :func:`audit` (0: the large-T path at any T).
    """
    key = jax.random.PRNGKey(0) if key is None else key
    T = seq_len or cfg.block_size
    tokens = jax.random.randint(key, (1, T), 0, cfg.vocab_size)
    res = audit(
        _model_fn(cfg),
        jnp.zeros((T, cfg.n_embd), jnp.float32),
        method=method,
        tol=tol,
        key=key,
        max_jacobian_elems=max_jacobian_elems,
        args=(params, tokens),
    )
    if not res.causal:  # it reads the future: not causal whatever its prefixes do
        return res
    rel = prefix_invariance(cfg, params, tokens)
    return dataclasses.replace(res, prefix_rel=rel, causal=rel <= PREFIX_TOL)


def prefix_lengths(T: int) -> tuple[int, ...]:
    """The prefix lengths the audit checks: 1, T/2 + 1 and T - 1 (those below T)."""
    return tuple(sorted({t for t in (1, T // 2 + 1, T - 1) if 1 <= t < T}))


def prefix_invariance(cfg, params, tokens: Array) -> float:
    """max over t in :func:`prefix_lengths` of max |GPT(tokens[:, :t]) - GPT(tokens)[:, :t]|
    divided by max |GPT(tokens)| (0 when T is 1): one program for all the lengths, compiled
    once per config and sequence length (the parameters are an argument)."""
    return float(_prefix_fn(cfg, int(tokens.shape[1]))(params, tokens))


# A program run once (a check, an init): on XLA:CPU the backend's optimisation passes cost more
# than they save. The values are the same function's; only their rounding may differ in the
# last bits, far below every tolerance these programs are judged by.
def _fast_compile() -> dict | None:
    if jax.default_backend() != "cpu":
        return None
    return {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


@functools.lru_cache(maxsize=16)
def _prefix_fn(cfg, T: int) -> Callable:
    """``check(params, tokens) -> relative difference`` of ``GPT(cfg)`` without dropout, jitted
    as ``audit_prefix``."""
    from mope_jax.model import GPT

    model = GPT(cfg)

    def check(params, tokens):
        def logits(x):
            return model.apply({"params": params}, x, deterministic=True).astype(jnp.float32)

        full = logits(tokens)
        scale = jnp.maximum(jnp.abs(full).max(), jnp.finfo(jnp.float32).tiny)
        worst = jnp.float32(0.0)
        for t in prefix_lengths(T):
            worst = jnp.maximum(worst, jnp.abs(logits(tokens[:, :t]) - full[:, :t]).max())
        return worst / scale

    check.__name__ = check.__qualname__ = "audit_prefix"
    return jax.jit(check, compiler_options=_fast_compile())


@functools.lru_cache(maxsize=16)
def _model_fn(cfg) -> Callable:
    """``fn((params, tokens), offset (T, E)) -> logits (T, V)`` of ``GPT(cfg)``: one function
    object per config, so that the audit's programs (keyed by it) compile once per config and
    take each seed's parameters as an argument."""
    from mope_jax.model import GPT

    model = GPT(cfg)

    def fn(args, offset):
        params, tokens = args
        return model.apply(
            {"params": params}, tokens, deterministic=True, embed_offset=offset[None]
        )[0]

    return fn


def _status(declared: bool, res: AuditResult) -> str:
    leaks = res.leak_rel > res.tol
    shifts = res.prefix_rel is not None and res.prefix_rel > PREFIX_TOL
    if declared and leaks:
        return "ERROR: declared causal but leaks"
    if declared and shifts:
        return f"ERROR: declared causal but not prefix-invariant (rel {res.prefix_rel:.1e})"
    if declared == res.causal:
        return "ok"
    return "declared non-causal, no leak measured"


# At the N(0, 0.02) init of a small model the scores q.k/sqrt(D) are ~1e-3, the softmax is
# nearly uniform, and a leak through q or k shows up at only ~1e-5 relative -- at the
# tolerance. The registry audit therefore draws weights with std 0.2, which makes the scores
# O(1) and every path through them visible (leaks ~1e-2), while FFT rounding in the causal
# kernels stays ~1e-9.
AUDIT_INIT_STD = 0.2


def _small(
    model_fields: dict[str, Any], seq_len: int, n_layer: int = 2, init_std: float = AUDIT_INIT_STD
):
    from mope_jax.config import ModelConfig

    fields = dict(
        block_size=seq_len,
        n_layer=n_layer,
        n_head=2,
        n_embd=32,
        dropout=0.0,
        vocab_size=17,
        init_std=init_std,
    )
    return ModelConfig(**(fields | model_fields))


def generic_layernorms(params, key: Array, std: float = AUDIT_INIT_STD):
    """Move every LayerNorm scale (modules ``ln_*``) from its init 1 to 1 + N(0, std^2).

    At init LN(x) has mean exactly 0 over the width E, so a variant that reads mean_E LN(x)
    (EGA-M's scalar signal) sees u = 0 and no path through it exists yet; with unequal scales
    it does, as after training. LN is per position, so no verdict of a causal variant changes.
    """
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    keys = iter(jax.random.split(key, max(len(leaves), 1)))

    def move(path, x):
        names = [getattr(p, "key", "") for p in path]
        k = next(keys)
        if len(names) >= 2 and str(names[-2]).startswith("ln_") and names[-1] == "scale":
            return x + std * jax.random.normal(k, x.shape, x.dtype)
        return x

    return jax.tree_util.tree_map_with_path(move, params)


def audit_registry(
    *,
    seq_len: int = 32,
    n_layer: int = 2,
    tol: float = DEFAULT_TOL,
    seed: int = 0,
    slots: tuple[str, ...] | None = None,
    names: tuple[str, ...] | None = None,
    max_jacobian_elems: int = 2**24,
) -> list[dict[str, Any]]:
    """Audit a small model built around every registered variant (one slot changed at a time
    from the default config; a slot's default variant is audited once, as the baseline row
    pos_encoding=learned). ``slots`` / ``names`` keep only those slots / variant names;
    ``max_jacobian_elems=0`` audits with the large-T methods a trained model gets.

    Returns one dict per variant: slot, variant, declared_causal, the AuditResult fields and
    status ("ok", "ERROR: declared causal but leaks", or "declared non-causal, no leak
    measured").
    """
    from mope_jax.attention import registry
    from mope_jax.config import ModelConfig
    from mope_jax.model import init_params

    default = ModelConfig()
    rows = []
    for v in registry.variants():
        if v.slot != "pos_encoding" and v.name == getattr(default, v.slot):
            continue
        if slots is not None and v.slot not in slots:
            continue
        if names is not None and v.name not in names:
            continue
        cfg = _small({v.slot: v.name}, seq_len, n_layer)
        params = generic_layernorms(  # one init program a variant, not one per eager op
            jax.jit(init_params, static_argnums=0, compiler_options=_fast_compile())(
                cfg, jax.random.PRNGKey(seed)
            ),
            jax.random.PRNGKey(seed + 2),
        )
        res = audit_model(
            cfg,
            params,
            key=jax.random.PRNGKey(seed + 1),
            tol=tol,
            max_jacobian_elems=max_jacobian_elems,
        )
        rows.append(
            {
                "slot": v.slot,
                "variant": v.name,
                "declared_causal": v.causal,
                **res.to_dict(),
                "status": _status(v.causal, res),
            }
        )
    return rows


def audit_model_variants(
    names: list[str] | None = None,
    *,
    seq_len: int = 32,
    n_layer: int = 2,
    tol: float = DEFAULT_TOL,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Audit the model variants of :mod:`mope_jax.presets` (``--variant`` names), which may
    combine several slots and fields, on a small model. Same row format as audit_registry,
    with slot="variant"."""
    from mope_jax.attention import registry
    from mope_jax.model import init_params
    from mope_jax.presets import model_variants

    rows = []
    for name, v in model_variants().items():
        if names is not None and name not in names:
            continue
        cfg = _small(v.model, seq_len, n_layer)
        declared = registry.declared_causal(cfg)
        params = generic_layernorms(  # one init program a variant, not one per eager op
            jax.jit(init_params, static_argnums=0, compiler_options=_fast_compile())(
                cfg, jax.random.PRNGKey(seed)
            ),
            jax.random.PRNGKey(seed + 2),
        )
        res = audit_model(cfg, params, key=jax.random.PRNGKey(seed + 1), tol=tol)
        rows.append(
            {
                "slot": "variant",
                "variant": name,
                "declared_causal": declared,
                **res.to_dict(),
                "status": _status(declared, res),
            }
        )
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """Plain-text table: slot, variant, declared, measured leak (relative), first leak, verdict."""
    head = (
        f"{'slot':<13} {'variant':<20} {'declared':<10} {'leak (rel)':>10}  "
        f"{'first (t,s)':<12} verdict"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        first = "-" if r["first_leak"] is None else f"({r['first_leak'][0]},{r['first_leak'][1]})"
        declared = "causal" if r["declared_causal"] else "NON-CAUSAL"
        measured = "no leak" if r["causal"] else "LEAKS"
        lines.append(
            f"{r['slot']:<13} {r['variant']:<20} {declared:<10} {r['leak_rel']:>10.2e}  "
            f"{first:<12} {measured}: {r['status']}"
        )
    return "\n".join(lines)
