"""Privacy accounting beyond one mechanism: amplification by shuffling."""

from .shuffle_amplification import (
    amplified_epsilon,
    clone_probability,
    clones_delta,
    clones_delta_bruteforce,
    closed_form_epsilon,
    local_epsilon_for,
    numerical_epsilon,
)

__all__ = [
    "amplified_epsilon",
    "clone_probability",
    "clones_delta",
    "clones_delta_bruteforce",
    "closed_form_epsilon",
    "local_epsilon_for",
    "numerical_epsilon",
]
