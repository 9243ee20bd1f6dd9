"""Context extension (paper B) as a campaign: does PI help on language and hurt exact answers
in arithmetic?

Command:  mope-jax campaign run context_extension --scale cpu [--rows language,arithmetic]
          [--budget-minutes M]   (status: mope-jax campaign status context_extension --scale S;
          ``python -m experiments.context_extension --scale S [...]`` is an alias of the run
          command)
Writes:   experiments/results/context_extension/<scale>/records/<row>/seed<s>.json, table.md
Records:  the campaign record of each seed plus ``analysis`` (``analyze``): the task, the
          training length L, the validation loss at s L for every method and s (over all
          positions and beyond L), for arithmetic the greedy answer and leaf-copy accuracy per
          method and s, and the frequency energy of the model (theta_eff overall and per
          layer, entropy, TV to other windows and to the other domain, theta_eff there).
Runtime per run: smoke (20 steps, 1 seed): measured 16 s for language and 82 s for arithmetic
          (mostly the greedy decoding of the analysis: 96 characters x 10 method/length pairs)
          of campaign wall time, 105 s for the whole smoke command (shared 2-core CPU, load
          ~3); cpu (500 / 800 steps, 3 seeds per row): the single-script version took 1609 s
          for both rows (6 runs) under load 6-16, i.e. ~4-5 min per run. Fine-tune rows at
          smoke (10 steps): 6-10 s per run measured (2-core CPU beside a campaign); the
          zero-shot rows of that same smoke command: 11 s (language), 62 s (arithmetic);
          retrieval 17 s and its fine-tunes 9-10 s (smoke, 32 problems per condition).
          cpu as a campaign (`mope-jax campaign run context_extension --scale cpu`, AVX2
          2-core EPYC, its printed row times): language 68 s, arithmetic 638 s, retrieval
          192 s per 3-seed row; fine-tune rows 37-81 s; ~25 min for all 27 runs.
          mid (every task at L = 256, 4 x 128, 4 heads, dropout 0.1, 2000 steps, lr 1e-3
          warmup 6% + cosine; fine-tunes 1000 steps at 512, batch 8):
          `mope-jax campaign estimate context_extension --scale mid` (Intel Xeon 2 cores,
          campaigns paused) measured 257-261 ms/step for the base rows (9.1-9.3 min
          per run) and 331-352 for the fine-tunes (5.6-5.9 min), 3.1 h of training for the 27
          runs alone, before the analyses (the arithmetic rows' greedy decoding the largest).
          Measured as campaigns (same machine, each beside another campaign, the row times
          they printed): language 4554 s, retrieval 3243 s, arithmetic 7501 s per 3-seed row,
          of which the arithmetic analysis (greedy decoding up to 4L = 1024, 500
          teacher-forced problems per method and length) took ~80 min (from its last
          checkpoint to its records); fine-tunes 1776-1904 s per 3-seed row (language).
Claim (paper B): PI works when the test-time dependency structure is a dilation of the
training one (natural language); on arithmetic (fixed local offsets) it hurts exact answers,
and a lower perplexity under PI does not imply a higher answer accuracy. In the ledger as
B3 / B5 / B6 (module ``claims``): pi - none at 2L, paired over seeds, judged per protocol by
mope_jax.claims' rule; the row's verdict is that of the protocol the claim is about (PI with a
fine-tune: ours, not PI's brief low-rate one, see below), and an arm whose compared accuracy is
at chance is "untestable here" (the rules were fixed before the cpu runs).

Rows: ``language`` (TinyShakespeare, the campaign's default corpus; ``--corpus`` replaces it),
``arithmetic`` (the iGSM text file of the scale, written under ``runs/paper_b/<scale>/`` by
``prepare_data`` before a campaign reads it, if missing or different) and ``retrieval``
(paper B's third setting, mope_jax.data.retrieval: key-value records spread over the context,
the query at the end, examples of exactly L = 128 characters; its answer accuracy is one
forward pass per example, so RETRIEVAL_PROBLEMS = 500 per (method, s) at cpu: a 5-point
difference is resolvable), each with its ``-ft-none`` / ``-ft-pi`` fine-tunes. The retrieval
models did not learn the lookup at cpu or at mid (answer accuracy at L at the chance level of
one digit in ten, every seed; the tables show it), so that setting tests nothing about the
extension methods, and mid does not plan its fine-tunes (MID_SKIPPED). Baseline:
``language``, the domain where the paper says PI works, against which arithmetic is the
contrast. The two rows differ in data and length, so their val-loss difference in the campaign
table tests nothing; the study is in the sections: the extension table (every method at
s = 1, 2, 4; mean +- sd [95% t-interval] over seeds), the paired differences of each method to
plain extrapolation ("none", same checkpoint, same windows) and the frequency-energy table.

Setup (our choices; the paper's are not public):
  * models: RoPE only (the ``rope`` variant: no position table), 2 layers, width 64, 2 heads
    (D = 32), no dropout, AdamW lr 3e-3; seeds trained together with mope_jax.sweep (mid:
    experiments/_scales.MID's model and schedule, every task at L = 256, FT_STEPS 1000);
  * language: TinyShakespeare characters (first 90% train), trained at L = 64, batch 32;
  * arithmetic: the clean-room iGSM generator (mope_jax.data.igsm), mod 23, op + only (the
    smallest table, 529 facts, so that a tiny model can learn some of it), 1-2 operations,
    written to a text file (60k characters at smoke, 1M at cpu) and trained as characters at
    L = 128, batch 16 (one 1-operation problem with its solution is ~105 characters, so
    L = 64 could not hold one); cpu: 500 steps for language, 800 for arithmetic
    (``Scale.row_overrides``);
  * zero-shot: s = L'/L in {1, 2, 4}; every method is an eval-time config override of the same
    checkpoint (mope_jax.encodings.rope.extend_context): none (plain extrapolation), pi, ntk,
    yarn (dynamic_ntk equals ntk for full windows of length s L, see METHODS);
  * loss: mean next-token loss over all positions of 16 fixed validation windows of length
    L' (and over positions >= L only, the part beyond the training length);
  * answer accuracy (arithmetic): 32 (smoke: 16) fresh 1-operation problems; each prompt is
    preceded by other complete problems so that it ends at position L' - 96, then 96
    characters are decoded greedily; exact match of the number after '#'. Also the leaf
    accuracy: the share of the problem's stated values that the generated solution copies
    correctly ("Define A as a; so a=5."), a pure positional lookup without arithmetic;
  * teacher-forced accuracy (arithmetic, igsm.forced_accuracy): FORCED_PROBLEMS = 500 (smoke:
    32) fresh 1-operation problems per (method, s), each whole problem right-aligned at the
    end of an L' window after other problems, one forward pass: the share of problems whose
    operation result ("=21+13=11.": the 11) is predicted right given the correct text before
    it (also the copied operands and the '#' answer). 500 problems resolve a ~5-point
    difference, which the 32 greedy problems cannot;
  * frequency energy of each model on its own data, on other windows and on the other domain
    (stability across prompts and domains), every seed;
  * fine-tuned: rows ``<task>-ft-none`` and ``<task>-ft-pi`` start each seed from the final
    parameters of row ``<task>`` (``Row.init_from``) and train FT_STEPS more steps at 2L under
    that rule (AdamW lr 1e-3, 10 warmup steps, cosine to 0, fresh optimiser state, half the
    batch); evaluated at 2L on the windows and problems of the zero-shot ``2x`` columns
    (``analyze_finetuned``). Not PI's protocol (Chen et al. 2023 fine-tune briefly at a low
    rate): at mid ours is 1000 steps at the pretraining learning rate, half the pretraining
    tokens (cpu: 200 steps at a third of it, 25-40%); the ledger and the tables state it from
    the config (``_ft_budget``).
Figures: ``mope-jax report --regenerate`` draws ``<scale>/extension.png`` (loss and accuracy
against the eval length per rule; :func:`figures`) beside the library's
(mope_jax.analysis.figures).

Package: ``settings`` (methods, lengths, problem counts, fine-tune rule), ``corpora`` (the
generated training texts and the shared TinyShakespeare), ``measure`` (the ``analyze`` hooks),
``rows`` (model, schedules, rows and scales), ``summary`` (per-seed summaries and cell
format), ``budget`` (the fine-tunes' budget against the pretraining), ``sections`` (the table
sections), ``claims`` (the B3 / B5 / B6 judges), ``forest`` (the claims' forest figure and the
ledger's reading), ``figures`` (the figures hook), ``legacy`` (``render`` of the single-script
run's JSON), ``__main__`` (the run alias); this module declares ``EXPERIMENT``.
"""

from __future__ import annotations

from experiments.context_extension.corpora import write_data
from experiments.context_extension.claims import _claims
from experiments.context_extension.figures import figures
from experiments.context_extension.forest import claims_forest
from experiments.context_extension.legacy import markdown, render
from experiments.context_extension.measure import analyze, analyze_finetuned
from experiments.context_extension.rows import ROWS, _scale
from experiments.context_extension.sections import (
    energy_section,
    extension_section,
    finetune_section,
    paired_section,
)
from experiments.context_extension.settings import (
    FACTORS,
    FT_FACTOR,
    FT_RULES,
    METHODS,
    SCALES,
    ft_name,
)
from experiments.context_extension.summary import summarise
from mope_jax.campaign import Experiment

EXPERIMENT = Experiment(
    name="context_extension",
    title="Paper B: RoPE context extension on language vs arithmetic",
    rows=ROWS,
    scales=tuple(_scale(n) for n in SCALES),
    baseline="language",
    claim=(
        "paper B: PI works when the test-time dependency structure is a dilation of the "
        "training one (natural language); on arithmetic (fixed local offsets) it hurts exact "
        "answers, and a lower perplexity under PI does not imply a higher answer accuracy. "
        "The two rows differ in data and length, so their val-loss difference below tests "
        "nothing; the study is in the sections."
    ),
    analyze=analyze,
    sections=(extension_section, paired_section, finetune_section, energy_section),
    claims=_claims(),
    paper_scale="not stated (abstract only)",
    figures=figures,
    prepare_data=write_data,
)


__all__ = [
    "EXPERIMENT",
    "FACTORS",
    "FT_FACTOR",
    "FT_RULES",
    "METHODS",
    "ROWS",
    "SCALES",
    "analyze",
    "analyze_finetuned",
    "claims_forest",
    "energy_section",
    "extension_section",
    "figures",
    "finetune_section",
    "ft_name",
    "markdown",
    "paired_section",
    "render",
    "summarise",
    "write_data",
]
