"""The claims ledger: each paper claim, the paper's number, and our verdict, from records.

An experiment declares its claims (``Experiment.claims``, or ``ANALYSIS`` for a study that
trains nothing); ``mope-jax report --regenerate experiments/results`` judges them all and writes
``experiments/results/CLAIMS.md`` and the README's ledger and bottom-line blocks. The package,
one concern per file:

  * :mod:`~mope_jax.claims.spec`: the verdict vocabulary and margins, :class:`Claim`,
    :class:`Analysis`, :class:`Verdict`, :class:`Effect` (what experiments declare);
  * :mod:`~mope_jax.claims.rule`: the verdict rule (its docstring is the rule, word for word)
    and the helpers every judge applies it with;
  * :mod:`~mope_jax.claims.judge`: find the claims under a checkout and judge them from records;
  * :mod:`~mope_jax.claims.ledger`: the ledger's markdown, bottom line and forest figure.

``from mope_jax import claims as cl; cl.Claim, cl.judge_difference, ...`` reaches all of them.
"""

from __future__ import annotations

from mope_jax.claims.spec import (  # noqa: F401
    VERDICTS,
    MIN_SEEDS,
    MARGINS,
    ALPHA,
    BASELINE_GAP_NATS,
    MARGIN_NATS,
    FALLING_NATS,
    CHANCE_MARGIN,
    Effect,
    Verdict,
    effect,
    diff_effect,
    Claim,
    Analysis,
    PAPERS,
)
from mope_jax.claims.rule import (  # noqa: F401
    decisive_scale,
    reading_scale,
    holds,
    difference,
    describe,
    causality,
    is_causal,
    seeds_needed,
    judge_difference,
    judge_value,
    judge_estimate,
    fraction_interval,
    margin_p,
    Test,
    collecting,
    precision_pooling,
    effect_drift,
    inconclusive_note,
    combine,
    at_chance,
    describe_verdict,
    untested,
    last_quarter_change,
    matching,
    millions,
    run_tokens,
    ScaleFacts,
    scale_facts,
    scale_note,
)
from mope_jax.claims.judge import (  # noqa: F401
    experiments_with_claims,
    analyses_with_claims,
    Judged,
    claim_order,
    judge_all,
    Reading,
    records_of,
    holm_family,
)
from mope_jax.claims.ledger import (  # noqa: F401
    BEGIN,
    END,
    BOTTOM_BEGIN,
    BOTTOM_END,
    GROUPS,
    ledger,
    bottom_line,
    render,
)
