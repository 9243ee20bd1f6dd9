"""Analysis: causality audit, learned spectra, diagnostics, statistics."""
