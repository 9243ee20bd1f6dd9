"""Records whose phase surrogates were made with our earlier ``phase_shift`` (which also rotated
the DC and Nyquist bins), not the authors' (``dg.PHASE_SHIFT_DEF``): how to tell them, the
``Experiment.outdated`` hook that lists them, and the notes under the tables that mark their
cells †."""

from __future__ import annotations

from mope_jax.analysis import diagnostics as dg

_OLD_PHASE_SHIFT = (
    "† computed with our earlier `phase_shift`, which also rotated the DC and Nyquist bins "
    "(irfft then scaled them by cos(pi/4)); the authors' keeps them unrotated (issue 40). Not "
    "the authors' surrogate: "
)
OLD_PHASE_SHIFT_NOTE = _OLD_PHASE_SHIFT + "re-running the row replaces it."
# The single-script file cannot be re-run (the script became the campaign): say where the
# authors' surrogate for the same rows is.
OLD_PHASE_SHIFT_NOTE_SINGLE = _OLD_PHASE_SHIFT + (
    "the single-script run that made this file is gone (the script is now the campaign); "
    "`cpu/table.md` has the same rows re-run with the authors' surrogate."
)


def old_phase_shift(analysis: dict) -> bool:
    """True when ``analysis`` holds surrogates made with our earlier ``phase_shift`` (its
    ``phase_shift_def`` is not the authors' ``dg.PHASE_SHIFT_DEF``)."""
    return "phase" in analysis and analysis.get("phase_shift_def") != dg.PHASE_SHIFT_DEF


def outdated(record: dict) -> str | None:
    """Why a record's surrogate analysis is not the authors' (``Experiment.outdated``): made
    with our earlier ``phase_shift`` (the tables mark its cell †); None when current."""
    if old_phase_shift(record.get("analysis") or {}):
        return "phase_shift before issue 40, marked †; SUPERSEDED.md says how to re-run"
    return None
