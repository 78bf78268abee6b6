"""Co-simulation: the RTL checked against the golden model."""
