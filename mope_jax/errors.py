"""The library's error types: each one is a problem with the user's input or files, and its
message is one line that names the fix. The CLI prints these as ``error: ...`` and exits 2;
any other exception is a bug and keeps its traceback.

No imports from the rest of the package, so every module can use these.
"""

from __future__ import annotations


class MopeError(Exception):
    """Base of every error the CLI reports in one line (exit status 2)."""


class ConfigError(MopeError, ValueError):
    """A bad configuration value or override."""


class DataError(MopeError, ValueError):
    """A bad data input (missing, empty or non-UTF-8 file; vocabulary mismatch...)."""


class TrainingError(MopeError, RuntimeError):
    """A run cannot go on (non-finite loss, another config in the run directory...)."""


class CheckpointError(TrainingError):
    """No intact checkpoint to restore, or one cannot be written (e.g. the disk is full)."""


class RunLockedError(TrainingError):
    """Another live process holds the run directory."""


class UsageError(MopeError, ValueError):
    """A bad command-line value or combination of options."""


class CampaignError(MopeError, ValueError):
    """A bad campaign request.

    Unknown experiment, scale or row, stale records, or no repository root.
    """


class ClaimsError(MopeError, ValueError):
    """The claims ledger cannot be judged from the files as they are (e.g. a results file an
    analysis judges from is missing)."""
