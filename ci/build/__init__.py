"""A lane's environment: its wheelhouse, a local venv, or its image on a container engine."""
