"""Edge-LDP degree protocol: the node-side randomizer and the curator's estimates."""

from .randomizer import DegreeRandomizer, NodeReports, ReleasedValues, as_degrees, projected_kstar_counts

__all__ = ["DegreeRandomizer", "NodeReports", "ReleasedValues", "as_degrees", "projected_kstar_counts"]
