"""Running lanes: the executors (local venv, local image, nodes) and the run folder they fill."""
