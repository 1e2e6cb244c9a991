"""Core numbers: the h-index protocol, the reference algorithm and the densest-subgraph readout."""
