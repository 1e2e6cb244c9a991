"""The wedge-shuffle protocols (shuffle model and their local baselines)."""
