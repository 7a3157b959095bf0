"""The report stage: the run's report (HTML), its maps, curves and tables."""
