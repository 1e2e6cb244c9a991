"""Edge-orientation triangle counting (the deployed protocol, the global and reference variants)."""
