"""``python -m experiments.freq_matching --scale S [...]``: an alias of ``mope-jax campaign run
freq_matching --scale S [...]`` in the repository that holds this package."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    """Run the campaign: :func:`mope_jax.cli.campaign_script` takes the campaign's name from the
    package folder's name and the repository root from the folder above ``experiments/``."""
    from mope_jax.cli import campaign_script

    return campaign_script(str(Path(__file__).resolve().parent), argv)


if __name__ == "__main__":
    sys.exit(main())
