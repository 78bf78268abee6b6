"""Amaranth RTL of the unit: one file per hardware block."""
