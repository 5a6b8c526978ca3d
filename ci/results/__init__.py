"""A run's results: JUnit merged and read back, the run folder's reader, the run's page."""
