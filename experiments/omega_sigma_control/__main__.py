"""``python -m experiments.omega_sigma_control --scale S [...]``: an alias of
``mope-jax campaign run omega_sigma_control --scale S [...]`` in this repository."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    """Alias: ``python -m experiments.omega_sigma_control --scale S [...]`` runs
    ``mope-jax campaign run omega_sigma_control --scale S [...]`` in this repository."""
    from mope_jax.cli import campaign_script

    # campaign_script takes the campaign's name from the path's stem and the repository root
    # from its grandparent: the package folder gives both
    return campaign_script(str(Path(__file__).resolve().parent), argv)


if __name__ == "__main__":
    sys.exit(main())
