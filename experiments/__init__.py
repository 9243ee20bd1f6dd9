"""The experiments, one module per study. A campaign module declares
``EXPERIMENT = mope_jax.campaign.Experiment(...)`` and runs with
``mope-jax campaign run <module> --scale S`` from the repository root (the CLI imports it as
``experiments.<module>``); the other modules are scripts (``python experiments/<file>.py``)."""
