"""Designer: model AI training clusters and predict what limits a training step."""

__version__ = "0.1.0"
