"""ldpgraph: graph analytics under local differential privacy."""

__version__ = "0.1.0"
