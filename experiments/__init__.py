"""The experiments, one module per study, and their registry.

``CAMPAIGNS`` names the modules that declare ``EXPERIMENT = mope_jax.campaign.Experiment(...)``;
each runs with ``mope-jax campaign run <module> --scale S`` from the repository root.
``ANALYSES`` names the modules that declare ``ANALYSIS = mope_jax.claims.Analysis(...)`` (paper
claims judged from a results JSON). The library imports these modules by name
(``experiments.<module>``) and nothing else of this folder; the other modules are scripts
(run with ``python -m`` and the module's dotted name).
"""

CAMPAIGNS = (
    "anchor_nanogpt",
    "context_extension",
    "foundation",
    "fourierqk",
    "freq_matching",
    "igsm_ops",
    "omega_sigma_control",
    "paper_a",
    "rope_advice_check",
    "scaling",
)
ANALYSES = ("self_similarity",)
