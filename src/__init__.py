"""tma-unit: a hardware model of the address-generation and swizzle unit of NVIDIA's Tensor
Memory Accelerator. Parts: ``tma_unit.model`` (golden model), ``tma_unit.rtl`` (Amaranth
RTL), ``tma_unit.sim`` (co-simulation); ``tma_unit.cli`` is the ``tma-unit`` command."""

__version__ = "0.1.0"
