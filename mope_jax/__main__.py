import sys

from mope_jax.cli import main

sys.exit(main())
