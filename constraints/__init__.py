"""Board tops and builds for FPGA prototyping (docs/fpga.md)."""
