"""``python -m experiments.fourierqk --scale S [...]``: an alias of
``mope-jax campaign run fourierqk --scale S [...]`` in the repository that holds this package."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    """Run ``mope-jax campaign run fourierqk`` with ``argv`` (default: the command line's) in
    this repository (``--root`` the folder above ``experiments/``)."""
    from mope_jax.cli import campaign_script

    # campaign_script takes the experiment's name from the path's stem and the root two levels
    # up: the package folder experiments/fourierqk gives both
    return campaign_script(str(Path(__file__).resolve().parent), argv)


if __name__ == "__main__":
    sys.exit(main())
