"""``python -m mope_jax`` and the ``mope-jax`` console script (:func:`run`): ``mope_jax.cli.main``
with Ctrl-C handled from the first line that runs (see :mod:`mope_jax.interrupt`), before the
CLI's own imports and jax's."""

import sys

from mope_jax.interrupt import install


def run() -> int:
    install()
    from mope_jax.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
