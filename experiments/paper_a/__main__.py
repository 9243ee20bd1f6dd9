"""``python -m experiments.paper_a --scale S [...]``: an alias of
``mope-jax campaign run paper_a --scale S [...]`` in the repository that holds this package."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    """Run ``mope-jax campaign run paper_a`` with ``argv`` (default: the command line)."""
    from mope_jax.cli import campaign_script

    # campaign_script names the campaign by the path's stem and takes the repository root two
    # folders up: the package folder experiments/paper_a gives both
    return campaign_script(str(Path(__file__).resolve().parent), argv)


if __name__ == "__main__":
    sys.exit(main())
