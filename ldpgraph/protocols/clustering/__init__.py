"""Average local clustering: the two-round protocol and the adaptive one, with their kernels."""
