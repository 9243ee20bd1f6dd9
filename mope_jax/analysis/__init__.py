"""Analysis: causality audit, learned spectra, diagnostics, statistics, RoPE advice."""
